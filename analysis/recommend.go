package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Objective is what a recommendation optimises.
type Objective string

// Objectives.
const (
	ByT99  Objective = "t99"  // fastest recovery: the time 99 % of clients are back
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

// Query says which scenario to recommend for.
type Query struct {
	Capacity  float64       // requests/s, required
	Clients   int           // 0: any
	Outage    time.Duration // RecoverAt; 0: any
	Objective Objective
	// Server describes a server that does more than count ("" for the
	// article's); only cells of the same kind of server match.
	Server string
}

// Matches reports whether aggregate a is a candidate for q.
func (q Query) Matches(a *Aggregate) bool {
	sc := a.Cell.Scenario
	return sc.Capacity == q.Capacity && (q.Clients == 0 || sc.Clients == q.Clients) && (q.Outage == 0 || sc.RecoverAt == q.Outage) &&
		serverLabel(sc) == q.Server
}

// Recommendation is the answer for one query.
type Recommendation struct {
	Query    Query
	Ranked   []*Aggregate // every candidate, best first on the objective; unfinished last
	Best     *Aggregate
	Ties     []*Aggregate // candidates whose interval overlaps Best's on the objective
	Pareto   []*Aggregate // not dominated on the means of t99, peak and sent
	Warnings []string
}

// value is what a candidate is ranked by: +Inf when any run lacks it.
func value(a *Aggregate, m Metric) float64 {
	s := a.Summary(m)
	if s.Unfinished > 0 || s.N == 0 {
		return math.Inf(1)
	}
	return s.Mean
}

// Recommend ranks the aggregates that match q.
func Recommend(aggs []*Aggregate, q Query) (*Recommendation, error) {
	m, err := q.Objective.Metric()
	if err != nil {
		return nil, err
	}
	rec := &Recommendation{Query: q}
	for _, a := range aggs {
		if q.Matches(a) {
			rec.Ranked = append(rec.Ranked, a)
		}
	}
	if len(rec.Ranked) == 0 {
		return nil, fmt.Errorf("no cells with capacity %g requests/s%s", q.Capacity, q.describeRest())
	}
	rank(rec.Ranked, m)
	contenders := rec.Ranked // who may win: for t99, only the policies that do not bury the server
	if q.Objective == ByT99 {
		// Fastest, without burying the server: the policies that multiply
		// the traffic rank after those that do not.
		ok := map[*Aggregate]bool{}
		for _, a := range gentle(rec.Ranked) {
			ok[a] = true
		}
		var loud []*Aggregate
		kept := rec.Ranked[:0:0]
		for _, a := range rec.Ranked {
			if ok[a] || !a.Summary(T99).Finished() {
				kept = append(kept, a)
			} else {
				loud = append(loud, a)
			}
		}
		contenders = kept
		if len(loud) > 0 {
			fin := filter(kept, func(a *Aggregate) bool { return a.Summary(T99).Finished() })
			unf := filter(kept, func(a *Aggregate) bool { return !a.Summary(T99).Finished() })
			rec.Ranked = append(append(fin, loud...), unf...)
			for _, a := range loud {
				if len(fin) > 0 && a.Summary(T99).Mean < fin[0].Summary(T99).Mean {
					rec.Warnings = append(rec.Warnings, fmt.Sprintf("%s recovers in %.1f s but sends %.1f× the traffic after recovery of %s: ranked after the policies that do not bury the server",
						a.Cell.Policy.Describe(), a.Summary(T99).Mean, a.Summary(Sent).Mean/fin[0].Summary(Sent).Mean, fin[0].Cell.Policy.Describe()))
				}
			}
		}
	}
	rec.Best = rec.Ranked[0]
	if math.IsInf(value(rec.Best, m), 1) {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("no candidate brings 99 %% of clients back within the horizon at %g requests/s", q.Capacity))
	}
	for _, a := range contenders {
		if a != rec.Best && !math.IsInf(value(a, m), 1) && a.Summary(m).Overlaps(rec.Best.Summary(m)) {
			rec.Ties = append(rec.Ties, a)
		}
	}
	if len(rec.Ties) > 0 {
		rec.Warnings = append(rec.Warnings, fmt.Sprintf("%d other candidate(s) cannot be told apart from the best on %s at %d seeds", len(rec.Ties), m.Title, len(rec.Best.Seeds)))
	}
	rec.Pareto = Pareto(rec.Ranked)
	if w := winnerChanges(contenders, m); w != "" {
		rec.Warnings = append(rec.Warnings, w)
	}
	for _, a := range rec.Ranked[:1] {
		rec.Warnings = append(rec.Warnings, a.Warnings...)
	}
	return rec, nil
}

func (q Query) describeRest() string {
	var s []string
	if q.Clients > 0 {
		s = append(s, fmt.Sprintf("%d clients", q.Clients))
	}
	if q.Outage > 0 {
		s = append(s, fmt.Sprintf("a %v outage", q.Outage))
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// rank sorts by the metric's mean, unfinished last; ties keep input order.
func rank(as []*Aggregate, m Metric) {
	sort.SliceStable(as, func(i, j int) bool { return value(as[i], m) < value(as[j], m) })
}

// Pareto returns the aggregates not dominated on (t99, peak, sent): no other
// is as good on all three and better on one. Unfinished cells are
// dominated by any finished one. Input order is kept.
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

// winnerChanges says, when the best candidate on m is not the same for every
// seed the candidates share, who wins how often.
func winnerChanges(as []*Aggregate, m Metric) string {
	common := map[uint32]int{}
	for _, a := range as {
		for _, s := range a.Seeds {
			common[s]++
		}
	}
	var seeds []uint32
	for s, n := range common {
		if n == len(as) {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) < 2 || len(as) < 2 {
		return ""
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	wins := map[*Aggregate]int{}
	for _, seed := range seeds {
		var best *Aggregate
		bv := math.Inf(1)
		for _, a := range as {
			i := sort.Search(len(a.Seeds), func(i int) bool { return a.Seeds[i] >= seed })
			v := a.PerSeed(m)[i]
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
	for _, a := range as { // in rank order, not map order
		if n := wins[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s in %d", a.Cell.Policy.Describe(), n))
		}
	}
	return fmt.Sprintf("the %s winner changes between seeds: %s of %d", m.Title, strings.Join(parts, ", "), len(seeds))
}

// Situation is one row of the article's table 5, regenerated from data.
type Situation struct {
	Situation   string
	Recommended string
	Reason      string
	Cell        *Aggregate // nil when the data has no candidate
}

// raAware are the families that read a Retry-After.
var raAware = map[sim.Kind]bool{sim.RAExact: true, sim.RAFullJitter: true, sim.RALowerBound: true, sim.ArticleClient: true, sim.HTTPRetry: true}

// Table5 regenerates the article's "situation → recommended → reason"
// from the aggregates that match q (its Objective is not used).
func Table5(aggs []*Aggregate, q Query) []Situation {
	cands := filter(aggs, q.Matches)
	noRA := filter(cands, func(a *Aggregate) bool { return a.Cell.Scenario.RetryAfter == 0 })
	withRA := filter(cands, func(a *Aggregate) bool {
		return a.Cell.Scenario.RetryAfter > 0 && raAware[a.Cell.Policy.Kind] && (a.Cell.Policy.Kind != sim.HTTPRetry || a.Cell.Policy.HonorRetryAfter)
	})
	var out []Situation
	pick := func(situation string, as []*Aggregate, m Metric, reason func(a *Aggregate) string, missing string) {
		as = filter(as, func(a *Aggregate) bool { return a.Summary(T99).Finished() })
		if len(as) == 0 {
			out = append(out, Situation{Situation: situation, Recommended: "—", Reason: missing})
			return
		}
		as = append([]*Aggregate(nil), as...)
		rank(as, m)
		out = append(out, Situation{situation, as[0].Cell.Policy.Describe(), reason(as[0]), as[0]})
	}
	pick("server has no spare capacity", noRA, Peak, func(a *Aggregate) string {
		return fmt.Sprintf("lowest peak (%.0f req/s, %.1f× capacity)", a.Summary(Peak).Mean, a.Summary(Peak).Mean/q.Capacity)
	}, "no finished cell without Retry-After at this capacity")
	pick("fastest user recovery", gentle(noRA), T99, func(a *Aggregate) string {
		return fmt.Sprintf("t99 %.1f s, the best among policies that do not multiply the traffic (≤ %g× the least sent after recovery)", a.Summary(T99).Mean, GentleFactor)
	}, "no finished cell without Retry-After at this capacity")
	pick("server can send Retry-After", withRA, T99, func(a *Aggregate) string {
		return fmt.Sprintf("t99 %.1f s (Retry-After %v)", a.Summary(T99).Mean, a.Cell.Scenario.RetryAfter)
	}, "no cell with a Retry-After and a client that reads it at this capacity (see the retry-after sweep)")
	out = append(out, smallestChange(noRA))
	return out
}

// smallestChange compares ±10 % width jitter with the narrowest wider one
// that comes within 5 % of the best width's t99, at the same cap.
func smallestChange(cands []*Aggregate) Situation {
	s := Situation{Situation: "smallest code change", Recommended: "—", Reason: "no width-jitter cells at ±10 % and wider at this capacity"}
	var base *Aggregate
	for _, a := range cands {
		if a.Cell.Policy.Kind == sim.WidthJitter && a.Cell.Policy.Width == 0.1 && a.Summary(T99).Finished() {
			if base == nil || a.Cell.Policy.Cap == time.Minute {
				base = a
			}
		}
	}
	if base == nil {
		return s
	}
	var wider []*Aggregate
	for _, a := range cands {
		p := a.Cell.Policy
		if p.Kind == sim.WidthJitter && p.Cap == base.Cell.Policy.Cap && p.Width > 0.1 && a.Summary(T99).Finished() {
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
		s.Recommended = "keep ±10 % jitter: no wider jitter is 5 % faster here"
		s.Reason = fmt.Sprintf("t99 %.1f s at ±10 %%, best width %.1f s", base.Summary(T99).Mean, bestT)
		s.Cell = base
		return s
	}
	for _, a := range wider {
		if a.Summary(T99).Mean <= 1.05*bestT {
			s.Recommended = fmt.Sprintf("widen ±10 %% jitter to ±%.0f %% or more", 100*a.Cell.Policy.Width)
			s.Reason = fmt.Sprintf("t99 %.1f s → %.1f s", base.Summary(T99).Mean, a.Summary(T99).Mean)
			s.Cell = a
			return s
		}
	}
	s.Reason = "no wider jitter comes within 5 % of the best t99 here"
	return s
}

// GentleFactor bounds the traffic of the policies "fastest user recovery"
// may pick: at most this many times the requests after recovery of the
// least-sending finished policy. A fixed 1 s interval brings clients back
// fast by sending eight times as much; it is not an answer to "without
// burying the server".
const GentleFactor = 1.5

// gentle keeps the finished aggregates whose mean traffic after recovery is
// within GentleFactor of the least.
func gentle(as []*Aggregate) []*Aggregate {
	least := math.Inf(1)
	for _, a := range as {
		if a.Summary(T99).Finished() {
			least = math.Min(least, a.Summary(Sent).Mean)
		}
	}
	return filter(as, func(a *Aggregate) bool { return a.Summary(Sent).Mean <= GentleFactor*least })
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

// Groups lists the distinct scenarios of the aggregates, as queries by
// capacity, clients and outage, in ascending order of each.
func Groups(aggs []*Aggregate) []Query {
	seen := map[Query]bool{}
	var out []Query
	for _, a := range aggs {
		sc := a.Cell.Scenario
		q := Query{Capacity: sc.Capacity, Clients: sc.Clients, Outage: sc.RecoverAt, Objective: ByT99, Server: serverLabel(sc)}
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
		return a.Server < b.Server
	})
	return out
}

// Capacities lists the capacities of the aggregates, ascending.
func Capacities(aggs []*Aggregate) []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, a := range aggs {
		if c := a.Cell.Scenario.Capacity; !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Float64s(out)
	return out
}
