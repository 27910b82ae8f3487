package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/herdsweep/herdsweep/sim"
)

// Effect is what a client component (sim/components.go) did, judged on
// t99 after recovery and on the clients that gave up, against the same
// backoff without it in the same scenario.
type Effect uint8

// The effects, in the order a report counts them.
const (
	Helps    Effect = iota // faster (t99 intervals apart), or finished where the backoff alone did not, or in clearly more seeds
	Costs                  // slower (t99 intervals apart), or did not finish where the backoff alone did, or in clearly fewer seeds
	GivesUp                // clients gave up that did not without it
	NoChange               // t99 intervals overlap, or neither finished in every seed and the seeds finished are not clearly apart
	nEffects
)

// Effects lists the effects in report order.
var Effects = []Effect{Helps, Costs, GivesUp, NoChange}

func (e Effect) String() string {
	return [...]string{"faster", "slower", "clients give up", "no clear change"}[e]
}

// ControlPair is one cell with client components beside the cell of the
// same backoff, scenario and limits without them.
type ControlPair struct {
	With, Without *Aggregate
}

// Effect judges the pair. Giving up comes first: a component that refuses
// retries (retry throttling, a retry cap, a budget) ends clients' requests,
// which no t99 shows as a gain; it counts when clients give up that never
// did without it, or clearly more (95 % intervals apart).
func (p ControlPair) Effect() Effect {
	wg, og := p.With.Summary(GaveUp), p.Without.Summary(GaveUp)
	if wg.Mean > og.Mean && (og.Mean == 0 || !wg.Overlaps(og)) {
		return GivesUp // clearly more: 500 of 500 against 499.75 of 500 is not
	}
	w, o := p.With.Summary(T99), p.Without.Summary(T99)
	switch {
	case w.Finished() && !o.Finished():
		return Helps
	case !w.Finished() && o.Finished():
		return Costs
	case !w.Finished() || !o.Finished():
		switch FinishApart(w, o) {
		case +1:
			return Helps
		case -1:
			return Costs
		}
		return NoChange
	case w.Overlaps(o):
		return NoChange
	case w.Mean < o.Mean:
		return Helps
	}
	return Costs
}

// FinishApart compares how many seeds reached a milestone in two cells:
// +1 when a finished in clearly more seeds than b, −1 in clearly fewer,
// 0 when the counts cannot be told apart. "Clearly" is Fisher's exact
// test, two-sided, p < 0.05, on the 2×2 table of finished and unfinished
// seeds: 7 of 10 against 0 of 10 is apart (p ≈ 0.003), 6 of 10 against 3 of
// 10 is not (p ≈ 0.37).
func FinishApart(a, b Summary) int {
	if a.N == b.N && a.Unfinished == b.Unfinished || fisherTwoSided(a.N, a.Unfinished, b.N, b.Unfinished) >= 0.05 {
		return 0
	}
	// Compare the shares finished without dividing: a.N/(a.N+a.U) vs b.N/(b.N+b.U).
	if a.N*(b.N+b.Unfinished) > b.N*(a.N+a.Unfinished) {
		return +1
	}
	return -1
}

// fisherTwoSided is the two-sided p value of Fisher's exact test on the
// table [[a b] [c d]]: the probability, with the margins fixed, of a table
// no more likely than this one (hypergeometric, summed over the first
// cell).
func fisherTwoSided(a, b, c, d int) float64 {
	r1, r2, k := a+b, c+d, a+c
	lchoose := func(n, r int) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(r + 1))
		z, _ := math.Lgamma(float64(n - r + 1))
		return x - y - z
	}
	total := lchoose(r1+r2, k)
	prob := func(x int) float64 { return math.Exp(lchoose(r1, x) + lchoose(r2, k-x) - total) }
	observed := prob(a)
	p := 0.0
	for x := max(0, k-r2); x <= min(k, r1); x++ {
		if q := prob(x); q <= observed*(1+1e-9) {
			p += q
		}
	}
	return math.Min(p, 1)
}

// ControlRow is one backoff with one set of components across the
// capacities of a ControlTable; Pairs[i] is nil where not measured.
type ControlRow struct {
	Policy sim.Policy // with its components, without its cap's meaning changed
	Pairs  []*ControlPair
}

// ControlTable holds the components measured in one world (a scenario
// but for its capacity).
type ControlTable struct {
	Scenario   sim.Scenario // the first cell's, for its name; Capacity varies
	Capacities []float64
	Rows       []ControlRow
}

// ClientControls pairs every single-policy cell with client components
// with the cell of the same policy without them (sim.Policy.
// WithoutComponents) in the same scenario, and tables the pairs by world
// (scenario but capacity), in the order cells first appear. Cells whose
// bare policy was not measured are left out.
func ClientControls(aggs []*Aggregate) []ControlTable {
	type world struct {
		sc     sim.Scenario
		policy sim.Policy
	}
	bare := map[world]*Aggregate{}
	for _, a := range aggs {
		if !a.Cell.Mixed() && a.Cell.Policy.ComponentsShort() == "" {
			bare[world{a.Cell.Scenario, a.Cell.Policy}] = a
		}
	}
	var tables []ControlTable
	index := map[sim.Scenario]int{}
	for _, a := range aggs {
		p := a.Cell.Policy
		if a.Cell.Mixed() || p.ComponentsShort() == "" {
			continue
		}
		o := bare[world{a.Cell.Scenario, p.WithoutComponents()}]
		if o == nil {
			continue
		}
		w := a.Cell.Scenario
		w.Capacity = 0
		ti, ok := index[w]
		if !ok {
			ti = len(tables)
			index[w] = ti
			tables = append(tables, ControlTable{Scenario: a.Cell.Scenario})
		}
		t := &tables[ti]
		if !containsFloat(t.Capacities, a.Cell.Scenario.Capacity) {
			t.Capacities = append(t.Capacities, a.Cell.Scenario.Capacity)
		}
		ri := -1
		for i, r := range t.Rows {
			if r.Policy == p {
				ri = i
			}
		}
		if ri < 0 {
			ri = len(t.Rows)
			t.Rows = append(t.Rows, ControlRow{Policy: p})
		}
		t.Rows[ri].Pairs = append(t.Rows[ri].Pairs, &ControlPair{With: a, Without: o})
	}
	for i := range tables {
		t := &tables[i]
		sort.Float64s(t.Capacities)
		for r := range t.Rows {
			byCap := make([]*ControlPair, len(t.Capacities))
			for _, pr := range t.Rows[r].Pairs {
				for c, cp := range t.Capacities {
					if pr.With.Cell.Scenario.Capacity == cp {
						byCap[c] = pr
					}
				}
			}
			t.Rows[r].Pairs = byCap
		}
	}
	return tables
}

func containsFloat(xs []float64, x float64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Count is how many pairs of tables had each effect, indexed by Effect.
func Count(tables []ControlTable) [nEffects]int {
	var n [nEffects]int
	for _, t := range tables {
		for _, r := range t.Rows {
			for _, p := range r.Pairs {
				if p != nil {
					n[p.Effect()]++
				}
			}
		}
	}
	return n
}

// ControlLabel names a row: the backoff in a few words and its components.
func ControlLabel(p sim.Policy) string {
	return fmt.Sprintf("%s%s", ShortName(p.WithoutComponents()), p.ComponentsShort())
}
