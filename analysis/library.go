package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

// LibraryVerdict says whether a library's defaults are fine in a scenario.
type LibraryVerdict struct {
	Preset  *Aggregate
	Verdict string // "fine here", or what to change
	Better  *Aggregate
}

// FineFactor: a preset whose t99 is within this factor of the best cell of
// its scenario, with a peak no worse than the best's, is "fine here".
const FineFactor = 1.2

// LibraryVerdicts judges every library preset among the aggregates that
// match q, against the best cell there (by t99, among those that send at
// most GentleFactor× the least traffic).
//
// A preset is fine when it brings 99 % back within FineFactor of the best
// t99 without sending more than GentleFactor× the least traffic. It is
// compared with cells of exactly its scenario (the same Retry-After too).
func LibraryVerdicts(aggs []*Aggregate, q Query) []LibraryVerdict {
	cands := filter(aggs, func(a *Aggregate) bool { return q.Matches(a) && !a.Cell.Mixed() })
	var out []LibraryVerdict
	for _, a := range cands {
		if a.Cell.Policy.Preset == "" {
			continue
		}
		same := filter(cands, func(b *Aggregate) bool { return b.Cell.Scenario == a.Cell.Scenario && b.Summary(T99).Finished() })
		least := math.Inf(1)
		for _, b := range same {
			least = math.Min(least, b.Summary(Sent).Mean)
		}
		best := append([]*Aggregate(nil), gentle(same)...)
		rank(best, T99)
		v := LibraryVerdict{Preset: a}
		t99, quit := a.Summary(T99), a.Summary(GaveUp)
		note := ""
		if quit.Mean >= 0.5 {
			note = fmt.Sprintf("%.0f of %d clients give up per run; ", quit.Mean, a.Cell.Scenario.Clients)
		}
		switch {
		case len(best) == 0:
			v.Verdict = "no finished cell to compare with"
		case t99.Finished() && t99.Mean <= FineFactor*best[0].Summary(T99).Mean && a.Summary(Sent).Mean <= GentleFactor*least:
			v.Verdict = "your library's defaults are fine here"
		case t99.Finished() && t99.Mean <= FineFactor*best[0].Summary(T99).Mean:
			v.Better = best[0]
			v.Verdict = fmt.Sprintf("fast, but it sends %.1f× the least traffic: switch to %s", a.Summary(Sent).Mean/least, best[0].Cell.Policy.Describe())
		default:
			v.Better = sameFamily(a, best)
			if v.Better != nil {
				v.Verdict = note + "set " + paramChanges(a.Cell, v.Better.Cell)
			} else {
				v.Better = best[0]
				v.Verdict = note + "switch to " + best[0].Cell.Policy.Describe()
			}
		}
		out = append(out, v)
	}
	return out
}

// sameFamily returns the best of ranked in a's family that beats a by more
// than FineFactor, or nil.
func sameFamily(a *Aggregate, ranked []*Aggregate) *Aggregate {
	for _, b := range ranked {
		if b.Cell.Policy.Kind == a.Cell.Policy.Kind && b != a && b.Cell.Scenario == a.Cell.Scenario &&
			(!a.Summary(T99).Finished() || b.Summary(T99).Mean*FineFactor < a.Summary(T99).Mean) {
			return b
		}
	}
	return nil
}

// paramChanges lists the policy parameters that differ, "cap_s 30 → 60".
func paramChanges(from, to experiments.Cell) string {
	var ch []string
	for _, p := range experiments.Params {
		if !p.Policy || p.Key == "preset" || p.Key == "mix" {
			continue
		}
		a, b := p.Get(from), p.Get(to)
		if a != b {
			ch = append(ch, fmt.Sprintf("%s %v → %v", p.Key, fmtv(a), fmtv(b)))
		}
	}
	if len(ch) == 0 {
		return "nothing: same parameters"
	}
	return strings.Join(ch, ", ")
}

func fmtv(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// GroupAggregate is one policy group of a mixed fleet over its seeds.
type GroupAggregate struct {
	Group   int
	Share   float64
	Label   string
	T99     Summary // over the seeds where the group reached 99 %
	GaveUp  Summary
	Alone   *Aggregate // the same policy without the mix, same scenario; nil if absent
	Clients int
}

// MixedFleet is a mixed cell with its groups.
type MixedFleet struct {
	Cell   *Aggregate
	Groups []GroupAggregate
}

// MixedFleets summarises the groups of every mixed cell, from the groups
// table's rows, with the main policy alone beside it when the data has it.
func MixedFleets(aggs []*Aggregate, rows []dataset.GroupRow) []MixedFleet {
	byCell := map[string]map[int][]dataset.GroupRow{}
	for _, r := range rows {
		if byCell[r.CellKey] == nil {
			byCell[r.CellKey] = map[int][]dataset.GroupRow{}
		}
		byCell[r.CellKey][r.Group] = append(byCell[r.CellKey][r.Group], r)
	}
	var out []MixedFleet
	for _, a := range aggs {
		gs, ok := byCell[a.CellKey]
		if !ok || !a.Cell.Mixed() {
			continue
		}
		mf := MixedFleet{Cell: a}
		for g := range len(gs) {
			rs := gs[g]
			if len(rs) == 0 {
				continue
			}
			var t99, quit []float64
			unf := 0
			for _, r := range rs {
				if r.Result.T99.Reached {
					t99 = append(t99, (r.Result.T99.At - a.Cell.Scenario.RecoverAt).Seconds()) // after recovery, as every time the analysis reports
				} else {
					unf++
				}
				quit = append(quit, float64(r.Result.GaveUp))
			}
			ga := GroupAggregate{Group: g, Share: rs[0].Share, Label: rs[0].Label, T99: Summarize(t99, unf), GaveUp: Summarize(quit, 0), Clients: rs[0].Result.Clients}
			if g == 0 {
				alone := a.Cell
				alone.Mix = [sim.MaxGroups - 1]sim.Group{}
				ga.Alone = find(aggs, alone.Key())
			}
			mf.Groups = append(mf.Groups, ga)
		}
		out = append(out, mf)
	}
	return out
}

func find(aggs []*Aggregate, key string) *Aggregate {
	for _, a := range aggs {
		if a.CellKey == key {
			return a
		}
	}
	return nil
}

// RecoveryGrid is, for one policy on a server that does more than count,
// the share of seeds that brought 99 % of clients back, over outage length
// × capacity.
type RecoveryGrid struct {
	Policy     string
	Server     string // e.g. "reject cost 0.5"
	Outages    []time.Duration
	Capacities []float64
	Recovered  [][]float64 // [outage][capacity]; NaN where there is no cell
}

// RecoveryGrids builds a grid per (policy, server) for the cells whose
// server does more than count, and marks the cells that never recover.
func RecoveryGrids(aggs []*Aggregate) []RecoveryGrid {
	type key struct{ policy, server string }
	var order []key
	cells := map[key][]*Aggregate{}
	for _, a := range aggs {
		sc := a.Cell.Scenario
		if sc.RejectCost == 0 && sc.RampUp == 0 && !sc.RetryAfterBacklog && sc.RetryAfterMax == 0 {
			continue
		}
		k := key{PolicyLabel(a.Cell), serverLabel(sc)}
		if _, ok := cells[k]; !ok {
			order = append(order, k)
		}
		cells[k] = append(cells[k], a)
	}
	var out []RecoveryGrid
	for _, k := range order {
		g := RecoveryGrid{Policy: k.policy, Server: k.server}
		seenO, seenC := map[time.Duration]bool{}, map[float64]bool{}
		for _, a := range cells[k] {
			sc := a.Cell.Scenario
			if !seenO[sc.RecoverAt] {
				seenO[sc.RecoverAt] = true
				g.Outages = append(g.Outages, sc.RecoverAt)
			}
			if !seenC[sc.Capacity] {
				seenC[sc.Capacity] = true
				g.Capacities = append(g.Capacities, sc.Capacity)
			}
		}
		sort.Slice(g.Outages, func(i, j int) bool { return g.Outages[i] < g.Outages[j] })
		sort.Float64s(g.Capacities)
		for _, o := range g.Outages {
			row := make([]float64, len(g.Capacities))
			for i, c := range g.Capacities {
				row[i] = math.NaN()
				for _, a := range cells[k] {
					if a.Cell.Scenario.RecoverAt == o && a.Cell.Scenario.Capacity == c {
						s := a.Summary(T99)
						row[i] = float64(s.N) / float64(s.N+s.Unfinished)
					}
				}
			}
			g.Recovered = append(g.Recovered, row)
		}
		out = append(out, g)
	}
	return out
}

func serverLabel(sc sim.Scenario) string {
	var parts []string
	if sc.RejectCost > 0 {
		parts = append(parts, fmt.Sprintf("a 429 costs %g of a request", sc.RejectCost))
	}
	if sc.RampUp > 0 {
		parts = append(parts, fmt.Sprintf("capacity ramps from %g%% over %v", 100*sc.RampFrom, sc.RampUp))
	}
	if sc.RetryAfterBacklog {
		parts = append(parts, "Retry-After from the backlog")
	}
	if sc.RetryAfterMax > 0 {
		parts = append(parts, fmt.Sprintf("Retry-After U(%v, %v)", sc.RetryAfter, sc.RetryAfterMax))
	}
	return strings.Join(parts, ", ")
}
