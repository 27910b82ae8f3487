package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/internal/num"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/herdsweep/herdsweep/sim"
)

// Objective is what a recommendation optimises.
type Objective string

// Objectives.
const (
	ByT99  Objective = "t99"  // fastest recovery: the time after recovery at which 99 % of clients are back
	ByPeak Objective = "peak" // gentlest on the server: peak requests/s after recovery
	BySent Objective = "sent" // least traffic: requests sent after recovery
)

// Objectives lists them in the order `--objective` documents.
var Objectives = []Objective{ByT99, ByPeak, BySent}

// Metric returns the metric the objective ranks by.
func (o Objective) Metric() (Metric, error) {
	switch o {
	case ByT99:
		return T99, nil
	case ByPeak:
		return Peak, nil
	case BySent:
		return Sent, nil
	}
	return Metric{}, fmt.Errorf("objective %q: want t99, peak or sent", o)
}

// DefaultBudget is the traffic a policy may send after recovery, in
// requests per client of the fleet (on average at most three rejections
// each), before it counts as burying the server. It is a property of the
// candidate alone (its own traffic and the fleet's size), never of the
// other candidates, so that adding or removing a candidate cannot move the
// line. On the counting server rejections are free, so shorter caps and
// bases are faster until this budget binds: it is the knob that says
// "without burying the server". Measured (`sweep recommend --budget 4|8`,
// 6 seeds, six scenarios at 60–480 req/s and 2,000–10,000 clients): at 4
// the answer's t99 is at most 6 % longer than at 8 (the same answer at
// 120 req/s and 2,000 clients), while it sends 23–45 % fewer requests and
// peaks up to 44 % lower.
const DefaultBudget = 4

// DefaultMargin is the relative difference below which two policies are
// called equivalent in t99 (and the confidence statement's margin).
const DefaultMargin = 0.02

// Query says which scenario to recommend for, and the rules of the answer.
type Query struct {
	Capacity   float64       // requests/s, required
	Clients    int           // 0: any
	Outage     time.Duration // RecoverAt; 0: any
	RetryAfter time.Duration // the server's Retry-After; only cells with this one match
	Objective  Objective
	// Server describes a server that does more than count ("" for the
	// article's); only cells of the same kind of server match.
	Server string

	// AllowGiveUp admits policies under which clients give up.
	AllowGiveUp bool
	// Budget is the most requests per client a policy may send after
	// recovery (mean over seeds); 0 means DefaultBudget.
	Budget float64
	// Margin is the relative difference called "equivalent"; 0 means
	// DefaultMargin.
	Margin float64
}

func (q Query) budget() float64 {
	if q.Budget > 0 {
		return q.Budget
	}
	return DefaultBudget
}

func (q Query) margin() float64 {
	if q.Margin > 0 {
		return q.Margin
	}
	return DefaultMargin
}

// Matches reports whether aggregate a is a candidate for q: one policy
// (not a mixed fleet) in exactly q's scenario.
func (q Query) Matches(a *Aggregate) bool {
	sc := a.Cell.Scenario
	return sc.Capacity == q.Capacity && (q.Clients == 0 || sc.Clients == q.Clients) && (q.Outage == 0 || sc.RecoverAt == q.Outage) &&
		sc.RetryAfter == q.RetryAfter && serverLabel(sc) == q.Server && !a.Cell.Mixed()
}

// Infeasible says why a candidate cannot be the answer, in numbers; "" when
// it can. A candidate is feasible when every run brought 99 % of the
// clients back within the window after recovery, no client gave up (unless
// q allows it), and its traffic after recovery is within q's budget.
func (q Query) Infeasible(a *Aggregate) string {
	var why []string
	t := a.Summary(T99)
	if t.N == 0 || t.Unfinished > 0 {
		sc := a.Cell.Scenario
		why = append(why, fmt.Sprintf("%d of %s did not bring 99 %% of clients back within %v after recovery", t.Unfinished, num.Plural(t.N+t.Unfinished, "run"), sc.Horizon-sc.RecoverAt))
	}
	if g := a.Summary(GaveUp); g.Max > 0 && !q.AllowGiveUp {
		why = append(why, fmt.Sprintf("clients give up (%s of %s per run on average, up to %s)", num.Short(g.Mean), num.Short(float64(a.Cell.Scenario.Clients)), num.Short(g.Max)))
	}
	if per := a.Summary(Sent).Mean / float64(a.Cell.Scenario.Clients); per > q.budget() {
		why = append(why, fmt.Sprintf("sends %.1f requests per client after recovery, above the budget of %g", per, q.budget()))
	}
	return strings.Join(why, "; ")
}

// Comparison is a candidate against the best, paired by seed: the
// difference other − best on the objective over the seeds both ran.
type Comparison struct {
	Other     *Aggregate
	Seeds     int
	Diff      float64 // mean of the per-seed differences
	Lo, Hi    float64 // Student-t 95 % interval of Diff; NaN below 2 seeds
	Identical bool    // the same value in every seed: the parameters that differ do not act here
	// PBetter is the probability, by the paired t distribution, that the
	// other candidate is better than the best by more than the margin.
	PBetter float64
}

// Separated reports whether the other candidate is worse than the best
// beyond sampling error (its paired interval lies above 0).
func (c Comparison) Separated() bool { return c.Identical || c.Lo > 0 }

// Paired compares other with best on metric m over their common seeds.
func Paired(best, other *Aggregate, m Metric, margin float64) Comparison {
	c := Comparison{Other: other, Lo: math.NaN(), Hi: math.NaN()}
	bs, os := best.PerSeed(m), other.PerSeed(m)
	var d []float64
	for i, j := 0, 0; i < len(best.Seeds) && j < len(other.Seeds); {
		switch {
		case best.Seeds[i] < other.Seeds[j]:
			i++
		case best.Seeds[i] > other.Seeds[j]:
			j++
		default:
			if !math.IsNaN(bs[i]) && !math.IsNaN(os[j]) {
				d = append(d, os[j]-bs[i])
			}
			i++
			j++
		}
	}
	c.Seeds = len(d)
	if len(d) == 0 {
		c.Diff = math.NaN()
		return c
	}
	c.Diff = stat.Mean(d, nil)
	c.Identical = true
	for _, x := range d {
		if x != 0 {
			c.Identical = false
		}
	}
	if len(d) < 2 {
		return c
	}
	sd := stat.StdDev(d, nil)
	se := sd / math.Sqrt(float64(len(d)))
	tq := t975(len(d) - 1)
	c.Lo, c.Hi = c.Diff-tq*se, c.Diff+tq*se
	edge := -margin * best.Summary(m).Mean
	if se == 0 {
		if c.Diff < edge {
			c.PBetter = 1
		}
	} else {
		c.PBetter = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.CDF((edge - c.Diff) / se)
	}
	return c
}

// Recommendation is the answer for one query: a value that `sweep
// recommend` and the report render, never compute.
type Recommendation struct {
	Query    Query
	Scenario sim.Scenario // the scenario the candidates ran in
	Metric   Metric
	Ranked   []*Aggregate // the feasible candidates, best first; then the infeasible ones
	Feasible int          // how many of Ranked are feasible
	Best     *Aggregate   // nil when no candidate is feasible
	// Against is every other feasible candidate against the best, paired,
	// in rank order; Ties are those not separated from it, Same those with
	// identical results in every seed.
	Against []Comparison
	Ties    []Comparison
	Same    []Comparison
	// Confidence is a lower bound (Bonferroni over the other feasible
	// candidates, paired t) on the probability that no candidate beats
	// Best by more than Query's margin.
	Confidence float64
	Pareto     []*Aggregate      // the feasible candidates not dominated on (t99, peak, sent)
	Why        map[string]string // cell key → why that candidate is infeasible
	// NoAnswer says, when no candidate is feasible, why in numbers and
	// what would make one feasible.
	NoAnswer string
	Warnings []string
}

// Ranked order: the objective's mean, then peak, then traffic, then the
// cell's parameters: a total order that depends on the candidate alone,
// so that the winner is the same whatever else is in the set.
func less(a, b *Aggregate, m Metric) bool { return lessBy(a, b, m, nil) }

// lessBy is less with the cells' canonical forms looked up in canon when
// it holds them (a sort compares each candidate many times, and ties on
// every metric are common: parameters that do not act at a scenario).
func lessBy(a, b *Aggregate, m Metric, canon map[*Aggregate]string) bool {
	for _, k := range []Metric{m, T99, Peak, Sent} {
		x, y := a.Summary(k).Mean, b.Summary(k).Mean
		if k.Key == Peak.Key && m.Key == Peak.Key { // a peak the server can serve is as good as any lower one
			c := a.Cell.Scenario.Capacity
			x, y = math.Max(x, c), math.Max(y, c)
		}
		if x != y && !math.IsNaN(x) && !math.IsNaN(y) {
			return x < y
		}
	}
	if ca, ok := canon[a]; ok {
		if cb, ok := canon[b]; ok {
			return ca < cb
		}
	}
	return a.Cell.Canonical() < b.Cell.Canonical()
}

// Recommend decides among the aggregates that match q. The rule has three
// properties the tests check: the answer is always feasible (or there is
// none); removing or adding a candidate that does not win never changes the
// winner (each candidate is judged on its own runs, then the best of a
// fixed order wins); and the same runs give the same answer whatever else
// was measured. It errs only when no cell matches.
func Recommend(aggs []*Aggregate, q Query) (*Recommendation, error) {
	m, err := q.Objective.Metric()
	if err != nil {
		return nil, err
	}
	rec := &Recommendation{Query: q, Metric: m, Why: map[string]string{}}
	var ok, bad []*Aggregate
	for _, a := range aggs {
		if !q.Matches(a) {
			continue
		}
		if why := q.Infeasible(a); why != "" {
			rec.Why[a.CellKey] = why
			bad = append(bad, a)
		} else {
			ok = append(ok, a)
		}
	}
	if len(ok)+len(bad) == 0 {
		return nil, fmt.Errorf("no cells with capacity %g requests/s%s", q.Capacity, q.describeRest())
	}
	rec.Scenario = append(ok, bad...)[0].Cell.Scenario
	canon := make(map[*Aggregate]string, len(ok)+len(bad))
	for _, a := range append(ok, bad...) {
		canon[a] = a.Cell.Canonical()
	}
	sort.SliceStable(ok, func(i, j int) bool { return lessBy(ok[i], ok[j], m, canon) })
	sort.SliceStable(bad, func(i, j int) bool { return lessBy(bad[i], bad[j], T99, canon) })
	rec.Ranked = append(ok, bad...)
	rec.Feasible = len(ok)
	if len(ok) == 0 {
		rec.NoAnswer = noAnswer(bad, q)
		return rec, nil
	}
	rec.Best = ok[0]
	pc := 1.0
	for _, a := range ok[1:] {
		c := Paired(rec.Best, a, m, q.margin())
		c.Identical = c.Identical && sameRuns(rec.Best, a) // equal on the objective alone is not "the same runs"
		rec.Against = append(rec.Against, c)
		switch {
		case c.Identical:
			rec.Same = append(rec.Same, c)
		case !c.Separated():
			rec.Ties = append(rec.Ties, c)
		}
		pc -= c.PBetter
	}
	rec.Confidence = math.Max(0, pc)
	rec.Pareto = Pareto(ok)
	if n := len(rec.Best.Seeds); n < MinSeedsForInterval {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%s: too few for a 95 %% interval", num.Plural(n, "seed")))
	}
	if clampedAny(rec.Ranked) {
		rec.Warnings = append(rec.Warnings, "a 95 % interval that would reach below 0 is printed from 0: no metric is negative")
	}
	if w := winnerChanges(ok, m); w != "" {
		rec.Warnings = append(rec.Warnings, w)
	}
	return rec, nil
}

// clampedAny reports whether one of aggs has an interval printed from 0.
func clampedAny(aggs []*Aggregate) bool {
	for _, a := range aggs {
		if a.Clamped() {
			return true
		}
	}
	return false
}

// sameRuns reports whether a and b gave the same t99, t50, peak, traffic and
// give-ups in every seed both ran.
func sameRuns(a, b *Aggregate) bool {
	for _, m := range []Metric{T99, T50, Peak, Sent, GaveUp} {
		x, y := a.PerSeed(m), b.PerSeed(m)
		for i, j := 0, 0; i < len(a.Seeds) && j < len(b.Seeds); {
			switch {
			case a.Seeds[i] < b.Seeds[j]:
				i++
			case a.Seeds[i] > b.Seeds[j]:
				j++
			default:
				if x[i] != y[j] && !(math.IsNaN(x[i]) && math.IsNaN(y[j])) {
					return false
				}
				i++
				j++
			}
		}
	}
	return true
}

// TiedWithin is the largest relative difference, at the upper end of its
// paired interval, of a candidate not separated from the best: "tied
// within X %". 0 when every other candidate is separated.
func (r *Recommendation) TiedWithin() float64 {
	w := 0.0
	for _, c := range r.Ties {
		if h := c.Hi / r.Best.Summary(r.Metric).Mean; h > w {
			w = h
		}
	}
	return w
}

// Separated reports whether the winner is told apart from every other
// feasible candidate (identical ones aside).
func (r *Recommendation) Separated() bool { return r.Best != nil && len(r.Ties) == 0 }

// Contenders are the best, the candidates not separated from it and its
// identical twins: the ones more seeds could reorder.
func (r *Recommendation) Contenders() []*Aggregate {
	if r.Best == nil {
		return nil
	}
	out := []*Aggregate{r.Best}
	for _, c := range append(append([]Comparison(nil), r.Ties...), r.Same...) {
		out = append(out, c.Other)
	}
	return out
}

// Impossible says, when no retry policy at all can bring 99 % of the
// clients back within the window after recovery (the server serves at
// most Capacity requests/s and each client needs one), why in numbers and
// what would make it possible; "" otherwise.
func Impossible(sc sim.Scenario) string {
	window := (sc.Horizon - sc.RecoverAt).Seconds()
	need := 0.99 * float64(sc.Clients) / sc.Capacity
	if need > window {
		return fmt.Sprintf("%s %s at least %s s to be served at %s requests/s (99 %% of them, one request each); the window after recovery is %s s: no retry policy can finish. Only a capacity ≥ %s requests/s, or a window ≥ %s s (--window), makes it possible",
			num.Plural(sc.Clients, "client"), num.Agree(sc.Clients, "needs", "need"), num.Short(need), num.Short(sc.Capacity), num.Short(window), num.Short(math.Ceil(0.99*float64(sc.Clients)/window)), num.Short(math.Ceil(need)))
	}
	return ""
}

// noAnswer explains why no candidate is feasible and what would change it.
func noAnswer(bad []*Aggregate, q Query) string {
	if why := Impossible(bad[0].Cell.Scenario); why != "" {
		return why
	}
	var reasons []string
	giveUp, slow, loud := 0, 0, 0
	least := math.Inf(1)
	for _, a := range bad {
		why := q.Infeasible(a)
		if strings.Contains(why, "give up") {
			giveUp++
		}
		if strings.Contains(why, "did not bring") {
			slow++
		}
		if strings.Contains(why, "budget") {
			loud++
			least = math.Min(least, a.Summary(Sent).Mean/float64(a.Cell.Scenario.Clients))
		}
	}
	reasons = append(reasons, fmt.Sprintf("%s: %d leave clients unserved at the end of the window, %d have clients give up, %d exceed the traffic budget of %g requests per client", noneFeasible(len(bad)), slow, giveUp, loud, q.budget()))
	if loud > 0 && !math.IsInf(least, 1) {
		reasons = append(reasons, fmt.Sprintf("the least traffic among those is %.1f requests per client: `sweep recommend --budget %g` would admit it", least, math.Ceil(least*10)/10))
	}
	if giveUp > 0 && !q.AllowGiveUp {
		reasons = append(reasons, "`sweep recommend --allow-give-up` admits the policies under which clients give up")
	}
	return strings.Join(reasons, "; ")
}

// noneFeasible is "none of 3 candidates is feasible", or "the one
// candidate is not feasible".
func noneFeasible(n int) string {
	if n == 1 {
		return "the one candidate is not feasible"
	}
	return "none of " + num.Plural(n, "candidate") + " is feasible"
}

func (q Query) describeRest() string {
	var s []string
	if q.Clients > 0 {
		s = append(s, num.Plural(q.Clients, "client"))
	}
	if q.Outage > 0 {
		s = append(s, fmt.Sprintf("a %v outage", q.Outage))
	}
	if q.RetryAfter > 0 {
		s = append(s, fmt.Sprintf("Retry-After %v", q.RetryAfter))
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// Pareto returns the aggregates not dominated on the means of (t99, peak,
// sent): no other is as good on all three and better on one. Pass only
// feasible candidates: a policy whose clients all gave up sends nothing
// and would dominate on traffic. Input order is kept.
func Pareto(as []*Aggregate) []*Aggregate {
	vals := func(a *Aggregate) [3]float64 { return [3]float64{value(a, T99), value(a, Peak), value(a, Sent)} }
	var front []*Aggregate
	for _, a := range as {
		va := vals(a)
		dominated := false
		for _, b := range as {
			vb := vals(b)
			if vb[0] <= va[0] && vb[1] <= va[1] && vb[2] <= va[2] && (vb[0] < va[0] || vb[1] < va[1] || vb[2] < va[2]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, a)
		}
	}
	return front
}

// value is a candidate's mean on m: +Inf when any run lacks it.
func value(a *Aggregate, m Metric) float64 {
	s := a.Summary(m)
	if s.Unfinished > 0 || s.N == 0 {
		return math.Inf(1)
	}
	return s.Mean
}

// winnerChanges says, when the best candidate on m is not the same for every
// seed the candidates share, who wins how often.
func winnerChanges(as []*Aggregate, m Metric) string {
	if len(as) < 2 {
		return ""
	}
	// The seeds every candidate ran: an intersection of sorted lists (a
	// cell's seeds are ascending), walked, not hashed: a report ranks
	// thousands of seeds per candidate.
	seeds := slices.Clone(as[0].Seeds)
	for _, a := range as[1:] {
		n, j := 0, 0
		for _, s := range seeds {
			for j < len(a.Seeds) && a.Seeds[j] < s {
				j++
			}
			if j < len(a.Seeds) && a.Seeds[j] == s {
				seeds[n] = s
				n++
			}
		}
		seeds = seeds[:n]
	}
	if len(seeds) < 2 {
		return ""
	}
	per := make([][]float64, len(as)) // PerSeed decodes: once per candidate
	for k, a := range as {
		per[k] = a.PerSeed(m)
	}
	at := make([]int, len(as)) // each candidate's index of the seed in hand
	wins := map[*Aggregate]int{}
	for _, seed := range seeds {
		var best *Aggregate
		bv := math.Inf(1)
		for k, a := range as {
			for a.Seeds[at[k]] < seed {
				at[k]++
			}
			v := per[k][at[k]]
			if !math.IsNaN(v) && v < bv {
				best, bv = a, v
			}
		}
		if best != nil {
			wins[best]++
		}
	}
	if len(wins) <= 1 {
		return ""
	}
	var parts []string
	shown := 0
	for _, a := range as { // in rank order, not map order
		if n := wins[a]; n > 0 && shown < 4 {
			parts = append(parts, fmt.Sprintf("%s in %d", a.Cell.Policy.Short(), n))
			shown++
		}
	}
	if len(wins) > shown {
		parts = append(parts, num.PluralOf(len(wins)-shown, "other", "others"))
	}
	return fmt.Sprintf("the %s winner changes between seeds (expected when candidates are close): %s, over the %s every candidate ran", m.Title, strings.Join(parts, "; "), num.Plural(len(seeds), "seed"))
}

// Situation is one row of the article's table 5, regenerated from data.
type Situation struct {
	Situation   string
	Recommended string
	Reason      string
	Cell        *Aggregate // nil when the data has no candidate
}

// Table5 regenerates the article's "situation → recommended → reason"
// from the aggregates that match q (its Objective and RetryAfter are not
// used: the third row compares the cells with a Retry-After). Every row
// picks among feasible candidates only, by the rules of Recommend.
func Table5(aggs []*Aggregate, q Query) []Situation {
	var out []Situation
	pick := func(situation string, q Query, keep func(*Aggregate) bool, reason func(a *Aggregate) string, missing string) {
		rec, err := Recommend(filter(aggs, keep), q)
		if err != nil || rec.Best == nil {
			out = append(out, Situation{Situation: situation, Recommended: "—", Reason: missing})
			return
		}
		out = append(out, Situation{situation, rec.Best.Cell.Policy.Plain(), reason(rec.Best), rec.Best})
	}
	all := func(*Aggregate) bool { return true }
	noRA := q
	noRA.RetryAfter = 0
	noRA.Objective = ByPeak
	pick("server has no spare capacity", noRA, all, func(a *Aggregate) string {
		return fmt.Sprintf("lowest peak among feasible policies: %s req/s, %.1f× capacity", num.Short(a.Summary(Peak).Mean), a.Summary(Peak).Mean/q.Capacity)
	}, "no feasible cell without Retry-After at this capacity")
	noRA.Objective = ByT99
	pick("fastest user recovery", noRA, all, func(a *Aggregate) string {
		return fmt.Sprintf("t99 %.1f s after recovery, sending %.1f requests per client (budget %g)", a.Summary(T99).Mean, a.Summary(Sent).Mean/float64(a.Cell.Scenario.Clients), q.budget())
	}, "no feasible cell without Retry-After at this capacity")
	// With a Retry-After: the clients that read it, at any Retry-After the data has.
	var ras []time.Duration
	for _, a := range aggs {
		if ra := a.Cell.Scenario.RetryAfter; ra > 0 && !containsDur(ras, ra) {
			ras = append(ras, ra)
		}
	}
	sort.Slice(ras, func(i, j int) bool { return ras[i] < ras[j] })
	var best *Aggregate
	for _, ra := range ras {
		qr := q
		qr.RetryAfter, qr.Objective = ra, ByT99
		rec, err := Recommend(filter(aggs, func(a *Aggregate) bool { return ReadsRetryAfter(a.Cell.Policy) }), qr)
		if err == nil && rec.Best != nil && (best == nil || less(rec.Best, best, T99)) {
			best = rec.Best
		}
	}
	if best == nil {
		out = append(out, Situation{Situation: "server can send Retry-After", Recommended: "—", Reason: "no feasible cell with a Retry-After and a client that reads it at this capacity"})
	} else {
		out = append(out, Situation{"server can send Retry-After", best.Cell.Policy.Plain(),
			fmt.Sprintf("t99 %.1f s after recovery with Retry-After %v", best.Summary(T99).Mean, best.Cell.Scenario.RetryAfter), best})
	}
	out = append(out, smallestChange(filter(aggs, func(a *Aggregate) bool {
		qq := q
		qq.RetryAfter = 0
		return qq.Matches(a) && qq.Infeasible(a) == ""
	})))
	return out
}

func containsDur(xs []time.Duration, x time.Duration) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// smallestChange compares ±10 % width jitter with the narrowest wider one
// that comes within 5 % of the best width's t99, at the same cap (the
// article's cap, 60 s, when the data has it). cands are feasible.
func smallestChange(cands []*Aggregate) Situation {
	s := Situation{Situation: "smallest code change", Recommended: "—", Reason: "no feasible width-jitter cells at ±10 % and wider at this capacity"}
	var base *Aggregate
	for _, a := range cands {
		if a.Cell.Policy.Kind == sim.WidthJitter && a.Cell.Policy.Width == 0.1 {
			if base == nil || a.Cell.Policy.Cap == time.Minute {
				base = a
			}
		}
	}
	if base == nil {
		return s
	}
	capWords := "cap " + base.Cell.Policy.Cap.String()
	var wider []*Aggregate
	for _, a := range cands {
		p := a.Cell.Policy
		if p.Kind == sim.WidthJitter && p.Cap == base.Cell.Policy.Cap && p.Width > 0.1 {
			wider = append(wider, a)
		}
	}
	if len(wider) == 0 {
		return s
	}
	bestT := math.Inf(1)
	for _, a := range append(wider, base) {
		bestT = math.Min(bestT, a.Summary(T99).Mean)
	}
	sort.SliceStable(wider, func(i, j int) bool { return wider[i].Cell.Policy.Width < wider[j].Cell.Policy.Width })
	if base.Summary(T99).Mean <= 1.05*bestT {
		s.Recommended = "keep ±10 % jitter (" + capWords + "): no wider jitter is 5 % faster here"
		s.Reason = fmt.Sprintf("t99 %.1f s after recovery at ±10 %%, best width %.1f s", base.Summary(T99).Mean, bestT)
		s.Cell = base
		return s
	}
	for _, a := range wider {
		if a.Summary(T99).Mean <= 1.05*bestT {
			s.Recommended = fmt.Sprintf("widen ±10 %% jitter to %s or more (%s)", sim.Percent(a.Cell.Policy.Width), capWords)
			s.Reason = fmt.Sprintf("t99 %.1f s → %.1f s after recovery", base.Summary(T99).Mean, a.Summary(T99).Mean)
			s.Cell = a
			return s
		}
	}
	s.Reason = "no wider jitter comes within 5 % of the best t99 here"
	return s
}

func filter(as []*Aggregate, keep func(*Aggregate) bool) []*Aggregate {
	var out []*Aggregate
	for _, a := range as {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// Groups lists the distinct scenarios of the aggregates (one-policy cells),
// as queries by capacity, clients, outage, Retry-After and server, in
// ascending order of each.
func Groups(aggs []*Aggregate) []Query {
	seen := map[Query]bool{}
	var out []Query
	for _, a := range aggs {
		if a.Cell.Mixed() {
			continue
		}
		sc := a.Cell.Scenario
		q := Query{Capacity: sc.Capacity, Clients: sc.Clients, Outage: sc.RecoverAt, RetryAfter: sc.RetryAfter, Objective: ByT99, Server: serverLabel(sc)}
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Capacity != b.Capacity {
			return a.Capacity < b.Capacity
		}
		if a.Clients != b.Clients {
			return a.Clients < b.Clients
		}
		if a.Outage != b.Outage {
			return a.Outage < b.Outage
		}
		if a.RetryAfter != b.RetryAfter {
			return a.RetryAfter < b.RetryAfter
		}
		return a.Server < b.Server
	})
	return out
}

// ReadsRetryAfter reports whether the policy waits for the server's
// Retry-After (in some form): sim.Policy.ReadsRetryAfter, its one owner.
func ReadsRetryAfter(p sim.Policy) bool { return p.ReadsRetryAfter() }
