package analysis

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"
)

// simulateStuck measures runs as recommend does: on the simulator, a
// buried queueing run stopped once provably stuck.
func simulateStuck(ctx context.Context, runs []grid.Run) ([]Record, error) {
	out := make([]Record, len(runs))
	err := runner.Execute(ctx, 0, len(runs), func(i int) runner.Job { return runner.Job{Run: runs[i], StopStuck: true} },
		func(i int, o *runner.Outcome) error {
			r := o.Job.Run
			out[i] = Record{Record: dataset.Record{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed, Cell: r.Cell, Result: o.Result}}
			return o.Err
		})
	return out, err
}

// smallEnvelope is a few servers of each kind, small enough for tests.
func smallEnvelope() []Server {
	return []Server{
		{}, {RejectCost: 0.5},
		{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: time.Second},
		{Service: "fixed", ServiceTime: 50 * time.Millisecond, Timeout: 2 * time.Second, Load: 0.5},
		{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: 5 * time.Second, Load: 0.2},
	}
}

func smallSpace() []sim.Policy {
	var ps []sim.Policy
	for _, b := range []time.Duration{500 * time.Millisecond, 2 * time.Second} {
		for _, c := range []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute} {
			ps = append(ps, sim.Policy{Kind: sim.Decorrelated, Base: b, Cap: c}.Normalize(),
				sim.Policy{Kind: sim.GRPC, Base: b, Cap: c, Multiplier: 2, Width: 0.2}.Normalize())
		}
	}
	return append(ps, sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second, RetryBudget: 0.1, BudgetMinRPS: 10, ClientsPerProcess: 100}.Normalize(),
		sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second, MaxAttempts: 4}.Normalize())
}

func envelopeBase(capacity float64, clients int, outage time.Duration) sim.Scenario {
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt = capacity, clients, outage
	sc.Horizon = sc.RecoverAt + 5*time.Minute
	return sc
}

// exhaustive judges every candidate on every server over n seeds and
// returns the one that recovers everywhere (defeating servers aside) with
// the least worst regret: what the pruned search must answer when it
// screens and ranks on the same seeds.
func exhaustive(t *testing.T, base sim.Scenario, env []Server, space []sim.Policy, skip []int, n int) (sim.Policy, float64) {
	t.Helper()
	j := &judger{ctx: context.Background(), q: Query{Capacity: base.Capacity, Objective: ByT99}, measure: simulateStuck, memo: map[string]*Record{}}
	var best *Candidate
	for _, p := range space {
		c := &Candidate{Policy: p, On: make([]*Recovery, len(env))}
		ok := true
		for i, s := range env {
			if slices.Contains(skip, i) {
				continue
			}
			r, err := j.recovery(s.Cell(base, sim.Policy{}), p, n)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Recovers() {
				ok = false
				break
			}
			c.On[i] = &r
			c.Score = math.Max(c.Score, r.Regret)
		}
		if ok && (best == nil || ranking(c, best) < 0) {
			best = c
		}
	}
	if best == nil {
		return sim.Policy{}, math.Inf(1)
	}
	return best.Policy, best.Score
}

// The pruned search answers what measuring every candidate on every
// server answers, when both use the same seeds; and removing candidates
// that neither win nor keep a server in play (the one that shows a
// server is not defeating) never changes its answer. (Removing the only
// candidate that comes back on a server makes that server defeating, and
// the answer is then judged without it: a different question.)
func TestEnvelopeSearchIsExhaustive(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(41)
	answered := 0
	defer func() {
		if answered < 3 {
			t.Errorf("only %d trials had an answer: the test no longer compares answers", answered)
		}
	}()
	for trial := range 4 {
		base := envelopeBase(float64(40+int(rng.Float64()*80)), 200+int(rng.Float64()*800), time.Duration(10+int(rng.Float64()*50))*time.Second)
		env, space := smallEnvelope(), smallSpace()
		s := EnvelopeSeeding{Screen: 2, Final: 2}
		q := Query{Capacity: base.Capacity, Objective: ByT99}
		got, err := SearchEnvelope(context.Background(), base, env, space, q, s, simulateStuck)
		if err != nil {
			t.Fatal(err)
		}
		want, score := exhaustive(t, base, env, space, got.Defeating, 2)
		if got.Winner == nil {
			if !math.IsInf(score, 1) {
				t.Fatalf("trial %d: no answer, yet %v recovers everywhere (worst regret %.2f)", trial, want, score)
			}
			continue
		}
		t.Logf("trial %d: %v (worst regret %.2f), %d defeating, %d runs", trial, want, score, len(got.Defeating), got.Runs)
		answered++
		if got.Winner.Policy != want || math.Abs(got.Winner.Score-score) > 1e-12 {
			t.Fatalf("trial %d: search %v (%.3f), exhaustive %v (%.3f)", trial, got.Winner.Policy, got.Winner.Score, want, score)
		}
		// The candidates that keep a server in play: for each server not
		// defeating, one that never gives up and recovers there.
		keep := map[sim.Policy]bool{want: true}
		for i := range env {
			if slices.Contains(got.Defeating, i) {
				continue
			}
			for _, c := range got.Candidates {
				if r := c.On[i]; r != nil && r.Recovers() && !c.Policy.LetsClientsGiveUp() {
					keep[c.Policy] = true
					break
				}
			}
		}
		for range 2 {
			var sub []sim.Policy
			for _, p := range space {
				if keep[p] || rng.Float64() < 0.5 {
					sub = append(sub, p)
				}
			}
			again, err := SearchEnvelope(context.Background(), base, env, sub, q, s, simulateStuck)
			if err != nil {
				t.Fatal(err)
			}
			if again.Winner == nil || again.Winner.Policy != want {
				t.Fatalf("trial %d: removing candidates that did not win changed the answer from %v to %+v", trial, want, again.Winner)
			}
		}
	}
}

// The final ranking leaves a contender once it is slower somewhere than
// the best complete contender at its worst: its winner is the one that
// measuring every contender (every candidate the final gave more seeds
// to) on every server kept (defeating ones aside), on the final seeds,
// gives; and a contender
// left out of the ranking indeed does worse than the winner there.
func TestFinalIsExhaustive(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(7)
	compared := 0
	for trial := range 4 {
		base := envelopeBase(float64(40+int(rng.Float64()*80)), 200+int(rng.Float64()*800), time.Duration(10+int(rng.Float64()*50))*time.Second)
		env, space := smallEnvelope(), smallSpace()
		s := EnvelopeSeeding{Screen: 1, Final: 3}
		q := Query{Capacity: base.Capacity, Objective: ByT99, Margin: 0.1} // contenders within 40 % of the best
		got, err := SearchEnvelope(context.Background(), base, env, space, q, s, simulateStuck)
		if err != nil {
			t.Fatal(err)
		}
		if got.Winner == nil || len(got.Ranked) == 0 {
			continue
		}
		j := &judger{ctx: context.Background(), q: q, measure: simulateStuck, memo: map[string]*Record{}}
		var best *Candidate
		contenders := 0
		for _, c := range got.Candidates {
			if !slices.ContainsFunc(c.On, func(r *Recovery) bool { return r != nil && r.Agg != nil && len(r.Agg.Seeds) == s.Final }) {
				continue // not a contender
			}
			contenders++
			worst, cc := 0.0, &Candidate{Policy: c.Policy, On: make([]*Recovery, len(env))}
			for i, srv := range env {
				if slices.Contains(got.Defeating, i) {
					continue
				}
				r, err := j.recovery(srv.Cell(base, sim.Policy{}), c.Policy, s.Final)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Recovers() {
					worst = math.Inf(1)
					break
				}
				worst = math.Max(worst, r.Regret)
				cc.On[i] = &r
			}
			if !slices.Contains(got.Ranked, c) && worst <= got.Winner.Score {
				t.Errorf("trial %d: %v left the ranking (%s), yet its worst regret everywhere is %.3f, the winner's %.3f", trial, c.Policy, c.Out, worst, got.Winner.Score)
			}
			if cc.Score = worst; !math.IsInf(worst, 1) && (best == nil || ranking(cc, best) < 0) {
				best = cc
			}
		}
		t.Logf("trial %d: %d contenders, %d ranked, winner %v (%.3f)", trial, contenders, len(got.Ranked), got.Winner.Policy, got.Winner.Score)
		if best == nil || best.Policy != got.Winner.Policy || math.Abs(best.Score-got.Winner.Score) > 1e-12 {
			t.Fatalf("trial %d: the final ranked %v (%.3f); every contender everywhere gives %+v", trial, got.Winner.Policy, got.Winner.Score, best)
		}
		if contenders > 1 {
			compared++
		}
	}
	if compared < 2 {
		t.Errorf("only %d trials had more than one contender: the test no longer compares rankings", compared)
	}
}

// A candidate that is best when rejections are free but never recovers
// when a 429 costs a quarter of a request is never the answer over an
// envelope that holds both; over free rejections alone it is (so the
// test fails if the envelope is reduced to free rejections).
func TestBestOnFreeRejectionsAloneIsNotTheAnswer(t *testing.T) {
	t.Parallel()
	base := envelopeBase(80, 4000, 2*time.Minute) // issue 21's 40,000 clients at 800 req/s, a tenth of each
	base.Horizon = base.RecoverAt + 10*time.Minute
	planted := sim.Policy{Kind: sim.GRPC, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 10 * time.Second, Width: 0.2}.Normalize()
	space := []sim.Policy{planted,
		sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}.Normalize(),
		sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: time.Minute}.Normalize(),
		sim.Policy{Kind: sim.APICore, Base: time.Second, Multiplier: 2, Cap: time.Minute}.Normalize(),
	}
	q := Query{Capacity: base.Capacity, Objective: ByT99}
	s := EnvelopeSeeding{Screen: 2, Final: 4}
	free, err := SearchEnvelope(context.Background(), base, []Server{{}}, space, q, s, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	if free.Winner == nil || free.Winner.Policy != planted {
		t.Fatalf("over free rejections the answer is %+v, not the planted %v: the plant no longer tests anything", free.Winner, planted)
	}
	both, err := SearchEnvelope(context.Background(), base, []Server{{}, {RejectCost: 0.25}}, space, q, s, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	if r := both.Candidates[0].On[1]; r == nil || r.Recovers() {
		t.Fatalf("the planted candidate recovers at a 25 %% rejection cost (%+v): the plant no longer tests anything", r)
	}
	if both.Winner == nil || both.Winner.Policy == planted {
		t.Fatalf("over free and 25 %% rejection costs the answer is %+v", both.Winner)
	}
}

// On a queueing server buried by its own traffic, where no backoff that
// never gives up comes back, the search answers the curve with a retry
// budget, which does (by failing the outage's requests), and names the
// server as one only such policies come back on.
func TestBudgetRecoversWhereBackoffAloneFails(t *testing.T) {
	t.Parallel()
	base := envelopeBase(200, 500, time.Minute)
	srv := Server{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: 2 * time.Second, Load: 0.7}
	curve := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}
	budget := curve
	budget.RetryBudget, budget.BudgetMinRPS, budget.ClientsPerProcess = 0.1, 10, 100
	space := []sim.Policy{curve.Normalize(), sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute}.Normalize(), budget.Normalize()}
	got, err := SearchEnvelope(context.Background(), base, []Server{srv}, space, Query{Capacity: base.Capacity, Objective: ByT99}, EnvelopeSeeding{Screen: 2, Final: 3}, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Candidates[:2] {
		if r := c.On[0]; r != nil && r.Recovers() {
			t.Fatalf("%v recovers on %s: the server no longer buries backoff alone", c.Policy, srv.Label())
		}
	}
	if got.Winner == nil || got.Winner.Policy != budget.Normalize() {
		t.Fatalf("answer %+v, want the budget %v", got.Winner, budget.Normalize())
	}
	if len(got.Defeating) != 0 || len(got.OnlyGivingUp) != 1 || got.GiveUpRecovers[0] == nil {
		t.Fatalf("defeating %v, only by giving up %v (%v): want the server named as one only giving up recovers on, and kept", got.Defeating, got.OnlyGivingUp, got.GiveUpRecovers)
	}
}

// A margin holds just inside and not just outside: measured again from
// scratch on the same seeds, the answer recovers at Inside and not at
// Outside, for random questions and policies; and the candidate to
// switch to recovers at Outside.
func TestMarginsHoldJustInsideNotOutside(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(43)
	env := smallEnvelope()
	space := smallSpace()
	checked := 0
	for trial := range 8 {
		base := envelopeBase(float64(50+int(rng.Float64()*100)), 300+int(rng.Float64()*700), time.Duration(10+int(rng.Float64()*40))*time.Second)
		p := space[int(rng.Float64()*float64(len(space)))]
		q := Query{Capacity: base.Capacity, Objective: ByT99}
		axes := MarginAxes(env, func(i int) bool { return i < 3 }) // the counting servers and the queue without load
		ms, _, err := Margins(context.Background(), base, p, axes, space, q, 2, simulateStuck)
		if err != nil {
			t.Fatal(err)
		}
		fresh := &judger{ctx: context.Background(), q: q, measure: simulateStuck, memo: map[string]*Record{}}
		for _, m := range ms {
			if math.IsNaN(m.Inside) {
				continue
			}
			in, err := fresh.recovery(m.Axis.server(m.Inside).Cell(base, sim.Policy{}), p, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !in.Recovers() {
				t.Fatalf("trial %d: %v: %s %g is inside the margin, yet it does not recover: %s", trial, p, m.Axis.Key, m.Inside, in.Why)
			}
			if math.IsNaN(m.Outside) {
				continue
			}
			out, err := fresh.recovery(m.At.Cell(base, sim.Policy{}), p, 2)
			if err != nil {
				t.Fatal(err)
			}
			if out.Recovers() {
				t.Fatalf("trial %d: %v: %s %g is outside the margin, yet it recovers", trial, p, m.Axis.Key, m.Outside)
			}
			if math.Abs(m.Outside-m.Inside) > m.Axis.Resolution*(1+1e-9) {
				t.Fatalf("trial %d: %s margin %g … %g, wider than its resolution %g", trial, m.Axis.Key, m.Inside, m.Outside, m.Axis.Resolution)
			}
			if m.SwitchTo != nil {
				sw, err := fresh.recovery(m.At.Cell(base, sim.Policy{}), m.SwitchTo.Policy, 2)
				if err != nil {
					t.Fatal(err)
				}
				if !sw.Recovers() {
					t.Fatalf("trial %d: switch to %v past the %s margin, which does not recover there", trial, m.SwitchTo.Policy, m.Axis.Key)
				}
			}
			checked++
		}
	}
	if checked < 3 {
		t.Fatalf("only %d margins with an outside: the test no longer checks both sides", checked)
	}
}

// The search over stored runs answers what the search over the simulator
// answers when the store holds every run it may ask for: the same winner,
// on the same seeds, separated or not alike (the report's Use table
// relies on it to show recommend's answer).
func TestSearchStoredIsSearch(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(47)
	for trial := range 4 {
		sc := envelopeBase(float64(30+int(rng.Float64()*100)), 100+int(rng.Float64()*400), time.Duration(5+int(rng.Float64()*30))*time.Second)
		space := grid.CandidateSpace(sc)[:40]
		q := Query{Capacity: sc.Capacity, Clients: sc.Clients, Outage: sc.RecoverAt, Objective: ByT99}
		s := Seeding{Initial: 3, Max: 12}
		want, _, err := Search(context.Background(), space, q, s, simulate)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := simulate(context.Background(), Runs(space, 1, s.Max))
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := SearchStored(space, q, s, Aggregates(recs))
		if err != nil || !ok {
			t.Fatalf("trial %d: %v, stored %v", trial, err, ok)
		}
		if (want.Best == nil) != (got.Best == nil) || (want.Best != nil && (want.Best.CellKey != got.Best.CellKey ||
			len(want.Best.Seeds) != len(got.Best.Seeds) || want.Separated() != got.Separated() || want.Best.Summary(T99) != got.Best.Summary(T99))) {
			t.Fatalf("trial %d: search %+v, over stored runs %+v", trial, want.Best, got.Best)
		}
		if len(want.Ranked) != len(got.Ranked) {
			t.Fatalf("trial %d: %d ranked, over stored runs %d", trial, len(want.Ranked), len(got.Ranked))
		}
		for i := range want.Ranked {
			if w, g := want.Ranked[i], got.Ranked[i]; w.CellKey != g.CellKey || len(w.Seeds) != len(g.Seeds) {
				t.Fatalf("trial %d: rank %d: %s on %d seeds, over stored runs %s on %d", trial, i, w.Cell.Policy.Short(), len(w.Seeds), g.Cell.Policy.Short(), len(g.Seeds))
			}
		}
		if _, ok, _ := SearchStored(space, q, s, Aggregates(recs[:len(recs)/2])); ok {
			t.Fatalf("trial %d: half the runs stored, yet the search found all it asked for", trial)
		}
	}
}

// The search for servers where only candidates that give up come back
// tries each family's gentlest first: the longest cap, then the longest
// first delay. On a server where decorrelated jitter from 2 s, at most
// 2 min, comes back and the same from 500 ms does not, a candidate that
// never gives up is the answer (with the first delay left out of the
// order, the server was called one only giving up brings back, and an
// attempt limit won).
func TestDefeatingTriesTheGentlestFirst(t *testing.T) {
	t.Parallel()
	if c := gentler(sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute}.Normalize(),
		sim.Policy{Kind: sim.Decorrelated, Base: 500 * time.Millisecond, Cap: 2 * time.Minute}.Normalize()); c >= 0 {
		t.Fatalf("gentler: a 2 s first delay is not gentler than 500 ms at the same cap (%d)", c)
	}
	base := Request{Outage: 5 * time.Second, Window: 20 * time.Minute}.Scenario(2000, 1000)
	srv := Server{Service: "fixed", ServiceTime: 20 * time.Millisecond, Timeout: time.Second, Load: 0.5}
	short := sim.Policy{Kind: sim.Decorrelated, Base: 500 * time.Millisecond, Cap: 2 * time.Minute}.Normalize()
	long := sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute}.Normalize()
	limited := sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute, MaxAttempts: 4}.Normalize()
	q := Query{Capacity: base.Capacity, Objective: ByT99}
	got, err := SearchEnvelope(context.Background(), base, []Server{srv}, []sim.Policy{short, long, limited}, q, EnvelopeSeeding{Screen: 1, Final: 2}, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	j := &judger{ctx: context.Background(), q: q, measure: simulateStuck, memo: map[string]*Record{}}
	for p, want := range map[sim.Policy]bool{short: false, long: true} {
		if r, err := j.recovery(srv.Cell(base, sim.Policy{}), p, 1); err != nil || r.Recovers() != want {
			t.Fatalf("%v recovers %v on the server (err %v): the test's premise is gone", p.Short(), r.Recovers(), err)
		}
	}
	if len(got.OnlyGivingUp) > 0 || got.Winner == nil || got.Winner.Policy.LetsClientsGiveUp() {
		t.Errorf("only giving up %v, winner %v: want %v, which never gives up", got.OnlyGivingUp, got.Winner, long.Short())
	}
}
