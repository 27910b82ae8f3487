package analysis

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// Recovery is how one candidate did on one server over its seeds. What
// "recovers" means is said here once: on the counting server, and on a
// queueing server without open-loop traffic, 99 % of the clients are back
// within the window after recovery in every seed, no client gives up
// (unless the query allows it) and the traffic stays within the query's
// budget (Query.Infeasible); on a queueing server with open-loop traffic,
// the run is back to its own steady state (sim's recovery rule,
// Result.Recovered) in every seed: clients that give up there are part
// of that steady state, as the requests of any server with timeouts are.
type Recovery struct {
	Agg   *Aggregate
	Time  float64 // mean over seeds, s after recovery: t99, or the time back to steady state; NaN when it does not recover
	Ideal float64 // the server's Ideal, s
	// Regret is Time over Ideal: how many times the least possible time
	// the candidate takes; +Inf when it does not recover.
	Regret float64
	Why    string // why it does not recover, in numbers; "" when it does
	// NotModelled: the server's chain of services cannot run the
	// candidate (NotModelled says why, in Why); it was not measured there.
	NotModelled bool
}

// Recovers reports whether the candidate recovers on the server.
func (r Recovery) Recovers() bool { return r.Why == "" }

// Recovery judges aggregate a, one candidate on one server.
func (q Query) Recovery(a *Aggregate) Recovery {
	sc := a.Cell.Scenario
	r := Recovery{Agg: a, Ideal: Ideal(sc), Time: math.NaN(), Regret: math.Inf(1)}
	if sim.HasSteadyState(sc) {
		b := a.Summary(Recovered)
		if b.N == 0 || b.Unfinished > 0 {
			r.Why = fmt.Sprintf("not back to its steady state within %v after recovery in %d of %s", sc.Horizon-sc.RecoverAt, b.Unfinished, num.Plural(b.N+b.Unfinished, "run"))
			return r
		}
		r.Time = b.Mean
	} else {
		if r.Why = q.Infeasible(a); r.Why != "" {
			return r
		}
		r.Time = a.Summary(T99).Mean
	}
	r.Regret = r.Time / r.Ideal
	return r
}

// envelopeMetrics are the metrics an envelope's aggregates carry.
func envelopeMetrics(sc sim.Scenario) []Metric {
	if sc.Concurrency > 0 {
		return AllMetrics()
	}
	return Metrics
}

// Candidate is one policy judged over an envelope of servers.
type Candidate struct {
	Policy sim.Policy
	On     []*Recovery // aligned with the envelope's servers; nil where not measured
	// Score is the worst regret over the servers measured: over all of
	// them once Complete.
	Score float64
	// Out says why the candidate is not the answer, when it is known not
	// to be: "does not recover on SERVER: why", or "regret ≥ R on SERVER".
	Out string
}

// Complete reports whether c was measured, and recovers, on every server
// of env but those skipped.
func (c *Candidate) complete(skip []bool) bool {
	for i, r := range c.On {
		if skip != nil && skip[i] {
			continue
		}
		if r == nil || !r.Recovers() {
			return false
		}
	}
	return true
}

// RecoversOn counts the servers c recovers on.
func (c *Candidate) RecoversOn() int {
	n := 0
	for _, r := range c.On {
		if r != nil && r.Recovers() {
			n++
		}
	}
	return n
}

func (c *Candidate) rescore(skip []bool) {
	c.Score = 0
	for i, r := range c.On {
		if r == nil || (skip != nil && skip[i]) || !r.Recovers() {
			continue
		}
		c.Score = math.Max(c.Score, r.Regret)
	}
}

// Envelope is the answer over a set of servers: the policy that recovers
// on every one of them with the least worst regret, or, when none does,
// the servers that defeat every candidate and the best compromise.
type Envelope struct {
	Query   Query
	Base    sim.Scenario // the question, on the counting server
	Servers []Server
	Space   int // candidates searched
	// Winner recovers on every server but Defeating; nil when no candidate
	// does.
	Winner *Candidate
	// Ranked are the candidates that recover on every server but
	// Defeating, by Score, measured on Seeds seeds.
	Ranked []*Candidate
	// Left are the contenders that left the final ranking once slower on
	// a server, or failing there, on Seeds seeds (their Out says which).
	Left []*Candidate
	// Defeating are the servers left out of the answer (indexes into
	// Servers): those on which no candidate recovers, and, when no
	// candidate recovers on every other server, those on which only
	// candidates that let clients give up recover; GiveUpRecovers names
	// one of those for each such server.
	Defeating      []int
	GiveUpRecovers map[int]*Candidate
	// OnlyGivingUp are the servers on which only candidates that let
	// clients give up recover (in Defeating too when they were left out).
	OnlyGivingUp []int
	// NotEverySeed are the servers left out (in Defeating too) because no
	// contender came back there in every one of the final seeds, though
	// some came back on the screened ones.
	NotEverySeed []int
	// Tried are the candidates that never give up tried on every server
	// before it is called defeating.
	Tried []*Candidate
	// Compromise: no candidate recovers on every server, and the winner
	// is the best over the servers that leave one; what it loses on the
	// others is in its On.
	Compromise bool
	Seeds      int // seeds of the final ranking
	Screened   int // seeds every candidate was screened on
	Candidates []*Candidate
	NoAnswer   string
	Runs       int // runs asked of the measure
}

// EnvelopeSeeding: every candidate is screened on Screen seeds, server by
// server, and is dropped at its first failure or once its regret passes
// the best complete candidate's; the contenders then run Final seeds.
type EnvelopeSeeding struct{ Screen, Final int }

// DefaultEnvelopeSeeding screens on 1 seed and ranks the contenders on
// 10.
var DefaultEnvelopeSeeding = EnvelopeSeeding{Screen: 1, Final: 10}

// envelopeSearch holds one search's state.
type envelopeSearch struct {
	ctx     context.Context
	q       Query
	base    sim.Scenario
	servers []Server
	cells   []grid.Cell // each server's cell (Server.Cell), without a policy
	order   []int       // servers in the order they are measured
	cands   []*Candidate
	j       *judger // measures each run once
}

// SearchEnvelope answers q over the servers env for base: every
// candidate policy of space is judged on every server (Query.Recovery),
// and the one that recovers on all of them with the least worst regret
// wins. Screening: cheap servers first (the counting server, harsher
// first, then queueing servers without, then with open-loop traffic), a
// candidate leaves at its first failure, and once one candidate recovers
// everywhere, a candidate whose regret on a server already exceeds that
// one's worst leaves too: it cannot win. The answer is the one an
// exhaustive measurement of every candidate on every screened seed
// gives (TestEnvelopeSearchIsExhaustive).
func SearchEnvelope(ctx context.Context, base sim.Scenario, env []Server, space []sim.Policy, q Query, s EnvelopeSeeding, measure Measure) (*Envelope, error) {
	if len(env) == 0 || len(space) == 0 {
		return nil, fmt.Errorf("an envelope needs servers and candidates")
	}
	if s.Screen < 1 || s.Final < s.Screen {
		return nil, fmt.Errorf("envelope seeding %d, %d: want 1 ≤ screen ≤ final", s.Screen, s.Final)
	}
	return searchEnvelope(&judger{ctx: ctx, q: q, measure: measure, memo: map[string]*Record{}}, base, env, space, s)
}

// searchEnvelope is SearchEnvelope measuring with j (whose memo it
// shares); the answer's Runs counts what j measured for it.
func searchEnvelope(j *judger, base sim.Scenario, env []Server, space []sim.Policy, s EnvelopeSeeding) (*Envelope, error) {
	ctx, q, before := j.ctx, j.q, j.runs
	e := &envelopeSearch{ctx: ctx, q: q, base: base, servers: env, j: j}
	for _, srv := range env {
		c := srv.Cell(base, sim.Policy{})
		if err := c.Scenario.Validate(); err != nil {
			return nil, fmt.Errorf("server %s: %w", srv.Label(), err)
		}
		e.cells = append(e.cells, c)
	}
	e.order = serverOrder(env)
	for _, p := range space {
		e.cands = append(e.cands, &Candidate{Policy: p, On: make([]*Recovery, len(env))})
	}
	e.markNotModelled()
	ans := &Envelope{Query: q, Base: base, Servers: env, Space: len(space), Screened: s.Screen, Seeds: s.Final, Candidates: e.cands}
	if why := Impossible(base); why != "" {
		ans.NoAnswer = why
		return ans, nil
	}
	// Servers on which nothing comes back are left out of the screening
	// (and named); if no candidate then recovers on every other server, the
	// servers on which only candidates that let clients give up come back
	// are left out too, and named with one of those.
	none, onlyGivingUp, err := e.defeating(s.Screen, ans)
	if err != nil {
		return nil, err
	}
	skip := make([]bool, len(env))
	for _, i := range none {
		skip[i] = true
	}
	ans.Defeating = none
	if len(none) == len(env) {
		ans.NoAnswer = "no candidate recovers on any server of the envelope"
		ans.Runs = e.j.runs - before
		return ans, nil
	}
	// Where only candidates that let clients give up come back, only they
	// can recover everywhere: they are screened first, alone.
	if len(onlyGivingUp) > 0 {
		if err := e.screen(skip, s.Screen, sim.Policy.LetsClientsGiveUp); err != nil {
			return nil, err
		}
	}
	if len(onlyGivingUp) == 0 || (!anyComplete(e.cands, skip) && len(none)+len(onlyGivingUp) < len(env)) {
		for _, i := range onlyGivingUp {
			skip[i] = true
		}
		ans.Defeating = append(ans.Defeating, onlyGivingUp...)
		if err := e.screen(skip, s.Screen, nil); err != nil {
			return nil, err
		}
	}
	ans.OnlyGivingUp = onlyGivingUp
	ans.Compromise = len(ans.Defeating) > 0
	if err := e.final(skip, s, ans); err != nil {
		return nil, err
	}
	if w := ans.Winner; w != nil { // what the answer loses where nothing that never gives up recovers
		for _, i := range ans.Defeating {
			if w.On[i] == nil {
				if err := e.judge([]*Candidate{w}, i, s.Screen); err != nil {
					return nil, err
				}
			}
		}
	}
	ans.Runs = e.j.runs - before
	return ans, nil
}

// serverOrder is the order servers are measured in: the counting server
// (harshest first), counting servers behind services, queueing servers
// without, then with open-loop traffic (shortest timeout first): cheap
// and discriminating first.
func serverOrder(env []Server) []int {
	class := func(s Server) int {
		switch {
		case s.Chained(): // a counting server, each run dearer for its services
			return 1
		case !s.Queueing():
			return 0
		case s.Load == 0 && s.Arrival == 0:
			return 2
		}
		return 3
	}
	order := make([]int, len(env))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := env[a], env[b]
		if c := cmp.Compare(class(x), class(y)); c != 0 {
			return c
		}
		if c := cmp.Compare(y.RejectCost, x.RejectCost); c != 0 {
			return c
		}
		return cmp.Compare(x.Timeout, y.Timeout)
	})
	return order
}

func anyComplete(cs []*Candidate, skip []bool) bool {
	for _, c := range cs {
		if c.complete(skip) {
			return true
		}
	}
	return false
}

// judge measures the candidates on server i over seeds 1…n (what the
// memo lacks, in one batch) and records their recoveries.
func (e *envelopeSearch) judge(cs []*Candidate, i, n int) error {
	if len(cs) == 0 {
		return nil
	}
	ps := make([]sim.Policy, len(cs))
	for k, c := range cs {
		ps[k] = c.Policy
	}
	rs, err := e.j.recoveries(e.cells[i], ps, n)
	if err != nil {
		return err
	}
	for k, c := range cs {
		r := rs[k]
		c.On[i] = &r
	}
	return nil
}

// screen measures the candidates (those only accepts; nil: all) still in, server by server in e.order
// (those skip marks aside), seed by seed up to n, dropping a candidate at
// its first failure and, once some candidate recovers everywhere, any
// whose regret exceeds that one's worst. The first server's three best
// candidates run through every server first, so that the bound exists
// early.
func (e *envelopeSearch) screen(skip []bool, n int, only func(sim.Policy) bool) error {
	var in []*Candidate
	for _, c := range e.cands {
		if only == nil || only(c.Policy) {
			c.Out = ""
			in = append(in, c)
		}
	}
	if len(in) == 0 {
		return nil
	}
	servers := make([]int, 0, len(e.order))
	for _, i := range e.order {
		if skip == nil || !skip[i] {
			servers = append(servers, i)
		}
	}
	first := servers[0]
	if err := e.round(in, first, n); err != nil {
		return err
	}
	in = e.keep(in, first, math.Inf(1))
	probes := slices.Clone(in)
	slices.SortStableFunc(probes, func(a, b *Candidate) int { return cmp.Compare(a.On[first].Regret, b.On[first].Regret) })
	probes = probes[:min(3, len(probes))]
	for _, i := range servers[1:] {
		if err := e.round(probes, i, n); err != nil {
			return err
		}
		probes = e.keep(probes, i, math.Inf(1))
	}
	// The rest in the order where the best complete probe is slowest
	// against the least possible time first: there the bound prunes most.
	rest := servers[1:]
	if best := e.best(probes, skip); best != nil {
		rest = slices.DeleteFunc(e.binding(best, skip), func(i int) bool { return i == first || !slices.Contains(servers, i) })
	}
	for _, i := range rest {
		bound := e.bound(skip)
		in = e.prune(in, bound)
		if err := e.round(in, i, n); err != nil {
			return err
		}
		in = e.keep(in, i, bound)
	}
	return nil
}

// round measures cs on server i seed by seed up to n: a candidate that
// fails on a seed is not measured on the next, one measured already is
// not measured again.
func (e *envelopeSearch) round(cs []*Candidate, i, n int) error {
	for seed := 1; seed <= n; seed++ {
		var todo []*Candidate
		for _, c := range cs {
			if r := c.On[i]; r == nil || (r.Recovers() && len(r.Agg.Seeds) < seed) {
				todo = append(todo, c)
			}
		}
		if err := e.judge(todo, i, seed); err != nil {
			return err
		}
	}
	return nil
}

// prune returns the candidates of cs whose regret on no server measured
// exceeds bound; the others get their Out.
func (e *envelopeSearch) prune(cs []*Candidate, bound float64) []*Candidate {
	var out []*Candidate
	for _, c := range cs {
		ok := true
		for i, r := range c.On {
			if r != nil && r.Recovers() && r.Regret > bound {
				c.Out = fmt.Sprintf("%.2f× the least possible time on %s, more than %.2f×, the worst of one that recovers everywhere", r.Regret, e.servers[i].Label(), bound)
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

// keep returns the candidates of cs still in after server i: those that
// recover there with a regret below bound; the others get their Out.
func (e *envelopeSearch) keep(cs []*Candidate, i int, bound float64) []*Candidate {
	var out []*Candidate
	for _, c := range cs {
		r := c.On[i]
		switch {
		case r == nil:
			out = append(out, c)
		case r.NotModelled:
			c.Out = fmt.Sprintf("%s: %s", e.servers[i].Label(), r.Why)
		case !r.Recovers():
			c.Out = fmt.Sprintf("does not recover on %s: %s", e.servers[i].Label(), r.Why)
		case r.Regret > bound:
			c.Out = fmt.Sprintf("%.2f× the least possible time on %s, more than %.2f×, the worst of one that recovers everywhere", r.Regret, e.servers[i].Label(), bound)
		default:
			out = append(out, c)
		}
	}
	return out
}

// best is the complete candidate of cs with the least worst regret; nil
// when none is complete.
func (e *envelopeSearch) best(cs []*Candidate, skip []bool) *Candidate {
	var b *Candidate
	for _, c := range cs {
		if c.complete(skip) {
			c.rescore(skip)
			if b == nil || c.Score < b.Score {
				b = c
			}
		}
	}
	return b
}

// bound is the least worst regret of the candidates complete so far
// (+Inf when none is).
func (e *envelopeSearch) bound(skip []bool) float64 {
	b := math.Inf(1)
	for _, c := range e.cands {
		if c.complete(skip) {
			c.rescore(skip)
			b = math.Min(b, c.Score)
		}
	}
	return b
}

// defeating finds, before the screening, the servers on which nothing
// comes back (none) and those on which only candidates that let clients
// give up do (onlyGivingUp, each with one of those in
// ans.GiveUpRecovers), so that the screening spends no runs where no
// candidate can be complete. On each server it tries the gentlest
// candidate of each family (the longest delays) and every one with a
// client component or of no known longest delay, gentlest first, those
// that never give up before those that do, until one recovers on every
// screened seed (sim.Hopeless settles many without a run). That a
// shorter delay would not do better is not a law: near the edge of a
// server's capacity a shorter cap sometimes comes back where a longer one
// did not; the answer says which candidates were tried (Tried).
func (e *envelopeSearch) defeating(n int, ans *Envelope) (none, onlyGivingUp []int, err error) {
	ans.GiveUpRecovers = map[int]*Candidate{}
	for _, i := range e.order {
		c, err := e.firstToRecover(i, n, false)
		if err != nil {
			return nil, nil, err
		}
		if c != nil {
			continue
		}
		if c, err = e.firstToRecover(i, n, true); err != nil {
			return nil, nil, err
		}
		if c == nil {
			none = append(none, i)
			continue
		}
		onlyGivingUp = append(onlyGivingUp, i)
		ans.GiveUpRecovers[i] = c
	}
	ans.Tried = e.representatives(false)
	return none, onlyGivingUp, nil
}

// firstToRecover tries the representatives of the candidates that let
// clients give up, or of those that never do, on server i, gentlest
// first, and returns the first that recovers there; nil when none does.
func (e *envelopeSearch) firstToRecover(i, n int, givingUp bool) (*Candidate, error) {
	for _, c := range e.representatives(givingUp) {
		if c.On[i] == nil {
			if err := e.round([]*Candidate{c}, i, n); err != nil {
				return nil, err
			}
		}
		if c.On[i].Recovers() {
			return c, nil
		}
	}
	return nil, nil
}

// representatives are the candidates defeating tries, gentlest first:
// of those that let clients give up (or of those that never do), the one
// with the longest bounded delay of each family, and every one with a
// client component or without a known longest delay.
func (e *envelopeSearch) representatives(givingUp bool) []*Candidate {
	best := map[sim.Kind]*Candidate{}
	var out []*Candidate
	for _, c := range e.cands {
		p := c.Policy
		if p.LetsClientsGiveUp() != givingUp {
			continue
		}
		if _, ok := p.MaxDelay(); !ok || p.BreakerRatio > 0 || p.ThrottleK > 0 || p.AWSAdaptive {
			out = append(out, c)
			continue
		}
		if b := best[p.Kind]; b == nil || gentler(p, b.Policy) < 0 {
			best[p.Kind] = c
		}
	}
	for _, c := range e.cands {
		if best[c.Policy.Kind] == c {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *Candidate) int { return gentler(a.Policy, b.Policy) })
	return out
}

// gentler orders candidates for the search of a defeating server,
// gentlest first (negative when a is gentler than b): a client component
// or limit first (they hold requests back), then the longest bounded delay
// (none known counts as longest), then the longest first delay (Base: at
// the same cap, a herd that starts 2 s apart spreads where one that starts
// 500 ms apart may not).
func gentler(a, b sim.Policy) int {
	holds := func(p sim.Policy) bool {
		return p.LetsClientsGiveUp() || p.BreakerRatio > 0 || p.ThrottleK > 0 || p.AWSAdaptive
	}
	longest := func(p sim.Policy) float64 {
		if d, ok := p.MaxDelay(); ok {
			return d.Seconds()
		}
		return math.Inf(1)
	}
	if ha, hb := holds(a), holds(b); ha != hb {
		if ha {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(longest(b), longest(a)); c != 0 {
		return c
	}
	return cmp.Compare(b.Base, a.Base)
}

// final runs the contenders (the complete candidates whose screened
// score is within a factor of the best's, at most 8) on s.Final seeds on
// every server not skipped, and ranks those that still recover
// everywhere. When none is complete (a compromise over servers that
// conflict), the candidate that recovers on the most servers wins.
//
// The contenders are ranked as a ranking-and-selection procedure
// spends seeds: the best screened runs on every server first, which
// bounds the winner's worst regret; each other then runs server by
// server, the servers where the first was slowest against the least
// possible time first, and leaves (its Out says where) once its regret
// on one exceeds the least worst regret of those complete: its own worst
// can only be larger, so it cannot win. The winner is the one ranking
// every contender everywhere would give (TestFinalIsExhaustive); Ranked
// holds the contenders that stayed.
func (e *envelopeSearch) final(skip []bool, s EnvelopeSeeding, ans *Envelope) error {
	final := map[*Candidate]bool{} // judged on s.Final seeds, or left
	bound := math.Inf(1)
	for {
		var cont []*Candidate
		for _, c := range e.cands {
			if !final[c] && c.complete(skip) {
				c.rescore(skip)
				cont = append(cont, c)
			}
		}
		if len(cont) == 0 {
			break
		}
		slices.SortStableFunc(cont, func(a, b *Candidate) int { return cmp.Compare(a.Score, b.Score) })
		best := cont[0].Score
		n := 0
		for n < len(cont) && n < 8 && cont[n].Score <= best*(1+4*e.q.margin()) {
			n++
		}
		cont = cont[:max(n, 1)]
		for _, c := range cont {
			c.Out = "" // complete on the screened seeds: a contender, whatever the screening's bound said
		}
		order := e.binding(cont[0], skip)
		for _, group := range [][]*Candidate{cont[:1], cont[1:]} {
			in := group
			for _, i := range order {
				if err := e.judge(in, i, s.Final); err != nil {
					return err
				}
				in = e.keep(in, i, bound)
			}
			for _, c := range group {
				final[c] = true
				if c.Out != "" || !c.complete(skip) {
					ans.Left = append(ans.Left, c)
					continue
				}
				c.rescore(skip)
				ans.Ranked = append(ans.Ranked, c)
				bound = math.Min(bound, c.Score)
			}
		}
		if len(ans.Ranked) > 0 {
			break
		}
		// Every contender failed on the extra seeds: the next ones by their
		// screened score get them in turn.
	}
	if len(ans.Ranked) == 0 {
		// Every contender failed somewhere: the compromise weighs where
		// each recovers on every seed, so each is measured on the final
		// seeds everywhere, as it left before the servers after its first
		// failure.
		for _, i := range e.order {
			if skip[i] {
				continue
			}
			var cs []*Candidate
			for _, c := range e.cands {
				if final[c] {
					cs = append(cs, c)
				}
			}
			if err := e.judge(cs, i, s.Final); err != nil {
				return err
			}
		}
		ans.Left = nil
		return e.lucky(skip, s, ans, final)
	}
	slices.SortStableFunc(ans.Ranked, ranking)
	ans.Winner = ans.Ranked[0]
	return nil
}

// ranking orders complete candidates: the least worst regret first;
// among equals (several back within the first window of a server with
// open-loop traffic, all at regret 0), the one that loses the least of the
// demand there (the greatest least goodput share), then by spec.
func ranking(a, b *Candidate) int {
	if c := cmp.Compare(a.Score, b.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(b.LeastGoodput(), a.LeastGoodput()); c != 0 {
		return c
	}
	return cmp.Compare(a.Policy.String(), b.Policy.String())
}

// LeastGoodput is c's least mean goodput share over the queueing servers
// it comes back on (1 when none measures it).
func (c *Candidate) LeastGoodput() float64 {
	g := 1.0
	for _, r := range c.On {
		if r != nil && r.Recovers() && r.Agg != nil && r.Agg.Has(GoodputShare) {
			g = math.Min(g, r.Agg.Summary(GoodputShare).Mean)
		}
	}
	return g
}

// binding orders the servers not skipped by c's regret there, largest
// first (e.order breaks ties): where a contender is likeliest to be
// slower than the best.
func (e *envelopeSearch) binding(c *Candidate, skip []bool) []int {
	var order []int
	for _, i := range e.order {
		if !skip[i] {
			order = append(order, i)
		}
	}
	regret := func(i int) float64 {
		if r := c.On[i]; r != nil && r.Recovers() {
			return r.Regret
		}
		return math.Inf(1)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(regret(b), regret(a)) })
	return order
}

// lucky answers when every candidate that recovered everywhere on the
// screened seeds failed somewhere on more: the servers on which none of
// those recovers on every seed are left out too (named), and the best of
// them over the rest wins.
func (e *envelopeSearch) lucky(skip []bool, s EnvelopeSeeding, ans *Envelope, final map[*Candidate]bool) error {
	if len(final) == 0 {
		return e.fallback(skip, ans)
	}
	for _, i := range e.order {
		if skip[i] {
			continue
		}
		some := false
		for c := range final {
			if r := c.On[i]; r != nil && r.Recovers() {
				some = true
				break
			}
		}
		if !some {
			skip[i] = true
			ans.Defeating = append(ans.Defeating, i)
			ans.NotEverySeed = append(ans.NotEverySeed, i)
		}
	}
	ans.Compromise = true
	for _, c := range e.cands {
		if final[c] && c.complete(skip) {
			c.rescore(skip)
			ans.Ranked = append(ans.Ranked, c)
		}
	}
	if len(ans.Ranked) == 0 {
		return e.fallback(skip, ans)
	}
	slices.SortStableFunc(ans.Ranked, ranking)
	ans.Winner = ans.Ranked[0]
	return nil
}

// fallback answers when no candidate recovers on every server left: the
// one that recovers on the most, then with the least worst regret there.
func (e *envelopeSearch) fallback(skip []bool, ans *Envelope) error {
	ans.Compromise = true
	var best *Candidate
	for _, c := range e.cands {
		c.rescore(skip)
		if c.RecoversOn() == 0 {
			continue
		}
		if best == nil || c.RecoversOn() > best.RecoversOn() || (c.RecoversOn() == best.RecoversOn() && c.Score < best.Score) {
			best = c
		}
	}
	if best == nil {
		ans.NoAnswer = "no candidate recovers on any server of the envelope"
		return nil
	}
	ans.Winner = best
	ans.Ranked = []*Candidate{best}
	return nil
}
