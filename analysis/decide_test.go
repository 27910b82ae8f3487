package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"
)

// randomAggregates builds n candidates at one scenario with random
// per-seed outcomes: some unfinished runs, some give-ups, traffic from
// gentle to burying, ties and identical twins.
func randomAggregates(rng *rand.Rand, n, seeds int) []*Aggregate {
	sc := sim.Article()
	var recs []Record
	for i := range n {
		p := sim.Policy{Kind: sim.GRPC, Base: time.Duration(1+i) * time.Millisecond, Multiplier: 2, Cap: time.Minute, Width: 0.5}
		c := grid.Cell{Scenario: sc, Policy: p}
		base := 20 + 60*rng.Float64()
		if rng.IntN(8) == 0 && i > 0 { // a twin of the previous candidate's level
			base = 40
		}
		unfinished := rng.IntN(6) == 0
		gaveUp := 0
		if rng.IntN(6) == 0 {
			gaveUp = 1 + rng.IntN(50)
		}
		perClient := 1 + 10*rng.Float64()
		for s := 1; s <= seeds; s++ {
			r := grid.Run{Cell: c, Seed: uint32(s)}
			res := sim.Result{Clients: sc.Clients, PeakRPS: 100 + 900*rng.Float64(), SentAfterRecovery: int64(perClient * float64(sc.Clients)), GaveUp: gaveUp}
			if !(unfinished && s == seeds) {
				res.T99 = sim.Milestone{At: sc.RecoverAt + time.Duration((base+rng.NormFloat64())*1e9), Reached: true}
			}
			recs = append(recs, Record{Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Cell: c, Result: res}})
		}
	}
	return Aggregates(recs)
}

// Whatever the objective and the candidates, the answer is feasible: no
// give-up, every run finished, within the budget. When any candidate is
// feasible there is an answer.
func TestRecommendIsAlwaysFeasible(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		aggs := randomAggregates(rng, 1+rng.IntN(12), 2+rng.IntN(6))
		q := Query{Capacity: 120, Objective: Objectives[trial%3], AllowGiveUp: trial%7 == 0}
		rec, err := Recommend(aggs, q)
		if err != nil {
			t.Fatal(err)
		}
		anyFeasible := false
		for _, a := range aggs {
			anyFeasible = anyFeasible || q.Infeasible(a) == ""
		}
		if rec.Best == nil {
			if anyFeasible || rec.NoAnswer == "" {
				t.Fatalf("trial %d: no answer (%q) though a candidate is feasible: %v", trial, rec.NoAnswer, anyFeasible)
			}
			continue
		}
		if why := q.Infeasible(rec.Best); why != "" {
			t.Fatalf("trial %d: the answer is infeasible: %s", trial, why)
		}
		if s := rec.Best.Summary(GaveUp); s.Max > 0 && !q.AllowGiveUp {
			t.Fatalf("trial %d: clients give up under the answer", trial)
		}
		for _, a := range rec.Pareto {
			if q.Infeasible(a) != "" {
				t.Fatalf("trial %d: an infeasible candidate on the Pareto front", trial)
			}
		}
	}
}

// Removing candidates that did not win never changes the winner, on
// random candidate sets and random subsets of them.
func TestRecommendIndependentOfIrrelevantAlternatives(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		aggs := randomAggregates(rng, 2+rng.IntN(14), 5)
		q := Query{Capacity: 120, Objective: Objectives[trial%3]}
		full, err := Recommend(aggs, q)
		if err != nil || full.Best == nil {
			continue
		}
		for range 5 {
			var sub []*Aggregate
			for _, a := range aggs {
				if a == full.Best || rng.IntN(2) == 0 {
					sub = append(sub, a)
				}
			}
			rng.Shuffle(len(sub), func(i, j int) { sub[i], sub[j] = sub[j], sub[i] })
			got, err := Recommend(sub, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Best != full.Best {
				t.Fatalf("trial %d: removing non-winners changed the winner from %s to %s", trial, full.Best.Cell.Policy, got.Best.Cell.Policy)
			}
		}
	}
}

func simulate(ctx context.Context, runs []grid.Run) ([]Record, error) {
	out := make([]Record, len(runs))
	err := runner.Execute(ctx, 0, len(runs), func(i int) runner.Job { return runner.Job{Run: runs[i]} },
		func(i int, o *runner.Outcome) error {
			r := o.Job.Run
			out[i] = Record{Record: dataset.Record{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed, Cell: r.Cell, Result: o.Result}}
			return o.Err
		})
	return out, err
}

func smallScenario(capacity float64, clients int) sim.Scenario {
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt = capacity, clients, 10*time.Second
	sc.Horizon = sc.RecoverAt + 10*time.Minute
	return sc
}

// The search adds seeds only to contenders, answers from the candidate
// space, and gives the same answer whatever a cache holds besides the
// exact runs it asks for.
func TestSearchOnTheSimulator(t *testing.T) {
	t.Parallel()
	sc := smallScenario(40, 300)
	space := grid.CandidateSpace(sc)
	q := Query{Capacity: sc.Capacity, Clients: sc.Clients, Outage: sc.RecoverAt, Objective: ByT99}
	asked := 0
	counting := func(ctx context.Context, runs []grid.Run) ([]Record, error) {
		asked += len(runs)
		return simulate(ctx, runs)
	}
	rec, aggs, err := Search(context.Background(), space, q, Seeding{Initial: 4, Max: 16}, counting)
	if err != nil || rec.Best == nil {
		t.Fatalf("Search: %v, %+v", err, rec)
	}
	if asked <= 4*len(space) && !rec.Separated() {
		t.Errorf("asked %d runs for %d candidates and no separation: the contenders got no more seeds", asked, len(space))
	}
	if len(rec.Best.Seeds) == 4 && !rec.Separated() {
		t.Errorf("best has 4 seeds without being separated")
	}
	for _, a := range aggs {
		if len(a.Seeds) > 16 {
			t.Errorf("%s ran %d seeds, max 16", a.Cell.Policy, len(a.Seeds))
		}
	}
	// A cache with other seeds and other cells than the search asks for
	// changes nothing.
	extra, err := simulate(context.Background(), append(Runs(space[:20], 17, 30), Runs([]grid.Cell{{Scenario: sc, Policy: sim.DefaultPolicy(sim.Fixed)}}, 1, 16)...))
	if err != nil {
		t.Fatal(err)
	}
	cache := map[string]Record{}
	for _, r := range extra {
		cache[r.RunKey] = r
	}
	cached := func(ctx context.Context, runs []grid.Run) ([]Record, error) {
		out, err := simulate(ctx, runs)
		for i, r := range runs {
			if c, ok := cache[r.Key()]; ok {
				out[i] = c
			}
		}
		return out, err
	}
	again, _, err := Search(context.Background(), space, q, Seeding{Initial: 4, Max: 16}, cached)
	if err != nil || again.Best.Cell != rec.Best.Cell || len(again.Best.Seeds) != len(rec.Best.Seeds) {
		t.Errorf("with a cache: %v, best %v on %d seeds; without: %v on %d", err, again.Best.Cell.Policy, len(again.Best.Seeds), rec.Best.Cell.Policy, len(rec.Best.Seeds))
	}
}

// Times after recovery do not depend on how long the outage lasted: a
// fixed 5 s retry after outages of 30 s and 10 min (both multiples of the
// interval) is the same run shifted, seed for seed.
func TestTimesAfterRecoveryIndependentOfOutage(t *testing.T) {
	t.Parallel()
	var got [2][]float64
	for i, outage := range []time.Duration{30 * time.Second, 10 * time.Minute} {
		sc := smallScenario(120, 2000)
		sc.RecoverAt = outage
		sc.Horizon = outage + 20*time.Minute
		c := grid.Cell{Scenario: sc, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
		recs, err := simulate(context.Background(), Runs([]grid.Cell{c}, 1, 5))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = Aggregates(recs)[0].PerSeed(T99)
	}
	for s := range got[0] {
		if got[0][s] != got[1][s] || math.IsNaN(got[0][s]) {
			t.Errorf("seed %d: t99 after recovery %v after a 30 s outage, %v after 10 min", s+1, got[0][s], got[1][s])
		}
	}
}

func TestImpossibleAndGrid(t *testing.T) {
	t.Parallel()
	sc := smallScenario(50, 100000)
	sc.Horizon = sc.RecoverAt + 20*time.Minute
	if why := Impossible(sc); !strings.Contains(why, "100,000 clients need at least 1,980 s") || !strings.Contains(why, "capacity ≥ 83 requests/s") {
		t.Errorf("Impossible(100,000 clients at 50 req/s) = %q", why)
	}
	if why := Impossible(smallScenario(120, 2000)); why != "" {
		t.Errorf("Impossible(2,000 clients at 120 req/s) = %q", why)
	}
	g := Grid(250, 2000)
	if len(g) != 4 || g[0] != 250 || g[1] != 500 || g[2] != 1000 || g[3] != 2000 {
		t.Errorf("Grid(250, 2000) = %v", g)
	}
	if g := Grid(300, 300); len(g) != 1 {
		t.Errorf("Grid(300, 300) = %v", g)
	}
}

// TestSearchRangeAnswers pins SearchRange's answers, word for word and
// bit for bit (candidates named by their policy): a winner over two points, a range with a point no policy
// can serve (the search stops there), and one where no policy is feasible
// at any point.
func TestSearchRangeAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		points []sim.Scenario
		q      Query
		want   string
	}{
		{"a winner", []sim.Scenario{smallScenario(40, 300), smallScenario(160, 300)}, Query{Objective: ByT99}, "winner \"api-core base=500ms cap=5s multiplier=2\", worst regret 1.022388059701493, mean 1.0111940298507465, 149 feasible, no answer \"\"; at 40: best \"api-core base=500ms cap=5s multiplier=2\", winner \"api-core base=500ms cap=5s multiplier=2\", regret 1; at 160: best \"api-core base=2s cap=5s multiplier=2\", winner \"api-core base=500ms cap=5s multiplier=2\", regret 1.022388059701493"},
		{"an impossible point", []sim.Scenario{smallScenario(40, 300), smallScenario(0.3, 300), smallScenario(160, 300)}, Query{Objective: ByT99}, "winner \"\", worst regret 0, mean 0, 0 feasible, no answer \"at 0.3 req/s and 300 clients: 300 clients need at least 990 s to be served at 0.3 requests/s (99 % of them, one request each); the window after recovery is 600 s: no retry policy can finish. Only a capacity ≥ 1 requests/s, or a window ≥ 990 s (--window), makes it possible\"; at 40: best \"api-core base=500ms cap=5s multiplier=2\", winner \"none\", regret 0"},
		{"nothing feasible", []sim.Scenario{smallScenario(40, 300), smallScenario(160, 300)}, Query{Objective: ByT99, Budget: 1e-9}, "winner \"\", worst regret 0, mean 0, 0 feasible, no answer \"[at 40 req/s and 300 clients: none of 153 candidates is feasible: 4 leave clients unserved at the end of the window, 4 have clients give up, 150 exceed the traffic budget of 1e-09 requests per client; the least traffic among those is 1.1 requests per client: `sweep recommend --budget 1.1` would admit it; `sweep recommend --allow-give-up` admits the policies under which clients give up at 160 req/s and 300 clients: none of 153 candidates is feasible: 3 leave clients unserved at the end of the window, 3 have clients give up, 150 exceed the traffic budget of 1e-09 requests per client; the least traffic among those is 1.0 requests per client: `sweep recommend --budget 1` would admit it; `sweep recommend --allow-give-up` admits the policies under which clients give up]\"; at 40: best \"none\", winner \"none\", regret 0; at 160: best \"none\", winner \"none\", regret 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rb, err := SearchRange(context.Background(), tt.points, tt.q, Seeding{Initial: 3, Max: 3}, simulate)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "winner %q, worst regret %v, mean %v, %d feasible, no answer %q", rb.Winner.Policy.String(), rb.WorstRegret, rb.MeanRegret, rb.Feasible, rb.NoAnswer)
			name := func(a *Aggregate) string {
				if a == nil {
					return "none"
				}
				return a.Cell.Policy.String()
			}
			for _, p := range rb.Points {
				fmt.Fprintf(&b, "; at %v: best %q, winner %q, regret %v", p.Scenario.Capacity, name(p.Best), name(p.Winner), p.Regret)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("answer\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// Over a range, the answer is feasible at every point and its regret is
// the worst ratio to each point's best.
func TestSearchRange(t *testing.T) {
	t.Parallel()
	points := []sim.Scenario{smallScenario(40, 300), smallScenario(160, 300)}
	rb, err := SearchRange(context.Background(), points, Query{Objective: ByT99}, Seeding{Initial: 3, Max: 3}, simulate)
	if err != nil || rb.NoAnswer != "" {
		t.Fatalf("SearchRange: %v, %q", err, rb.NoAnswer)
	}
	worst := 0.0
	for _, p := range rb.Points {
		if p.Winner.Cell.Policy != rb.Winner.Policy || p.Regret < 1 {
			t.Errorf("point %g: winner %v regret %g", p.Scenario.Capacity, p.Winner.Cell.Policy, p.Regret)
		}
		if r := p.Winner.Summary(T99).Mean / p.Best.Summary(T99).Mean; math.Abs(r-p.Regret) > 1e-12 {
			t.Errorf("regret %g, want %g", p.Regret, r)
		}
		worst = math.Max(worst, p.Regret)
	}
	if worst != rb.WorstRegret {
		t.Errorf("worst regret %g, want %g", rb.WorstRegret, worst)
	}
}
