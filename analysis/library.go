package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// LibraryVerdict says whether a library's defaults are fine in a scenario.
type LibraryVerdict struct {
	Preset  *Aggregate
	Verdict string // "fine here", or what to change
	Better  *Aggregate
	Fine    bool
	// Tied: slower than the recommended policy, but not told apart from it
	// at these seeds (it is among the recommendation's Ties): neither fine
	// nor to be changed until more seeds say which.
	Tied bool
	// Ratio is the preset's t99 after recovery over the best's; NaN when
	// the preset does not finish.
	Ratio float64
}

// FineFactor: a feasible preset whose t99 after recovery is within this
// factor of the recommended policy's is "fine here".
const FineFactor = 1.2

// LibraryVerdicts judges every library preset among the aggregates that
// match q against the recommendation for q (Recommend's rules: feasible,
// within the traffic budget). Times are after recovery, so that a long
// outage does not make a slow library look fine.
func LibraryVerdicts(aggs []*Aggregate, q Query) []LibraryVerdict {
	rec, err := Recommend(aggs, q)
	if err != nil {
		return nil
	}
	var out []LibraryVerdict
	for _, a := range rec.Ranked {
		if a.Cell.Policy.Preset != "" {
			out = append(out, Judge(rec, a))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Preset.Cell.Policy.Preset < out[j].Preset.Cell.Policy.Preset })
	return out
}

// Judge says how candidate a (a library's defaults, or the user's own
// policy) does against the recommendation rec of its scenario.
func Judge(rec *Recommendation, a *Aggregate) LibraryVerdict {
	v := LibraryVerdict{Preset: a, Ratio: math.NaN()}
	best := rec.Best
	t99 := a.Summary(T99)
	if t99.Finished() && best != nil {
		v.Ratio = t99.Mean / best.Summary(T99).Mean
	}
	why := rec.Query.Infeasible(a)
	switch {
	case best == nil:
		v.Verdict = "no feasible policy to compare with: " + rec.NoAnswer
	case a == best:
		v.Fine = true
		v.Verdict = "fine here: it is the recommended policy"
	case why != "":
		v.Better = best
		v.Verdict = why + "; switch to " + best.Cell.Policy.Plain()
	case !a.Cell.Policy.Jittered():
		v.Better = best
		fix := "switch to " + best.Cell.Policy.Plain()
		if b := sameFamily(a, rec.Ranked[:rec.Feasible]); b != nil && b.Cell.Policy.Jittered() && b.Summary(T99).Mean <= FineFactor*best.Summary(T99).Mean {
			v.Better, fix = b, fmt.Sprintf("set %s (t99 %.1f s)", paramChanges(a.Cell, b.Cell), b.Summary(T99).Mean)
		}
		v.Verdict = fmt.Sprintf("t99 %.1f s after recovery (%.2f× the recommended policy's %.1f s), but without jitter the clients that failed together stay in step: another outage length or capacity re-creates the herd (the article's finding), so it is never recommended; %s",
			t99.Mean, v.Ratio, best.Summary(T99).Mean, fix)
	case v.Ratio <= FineFactor:
		v.Fine = true
		v.Verdict = fmt.Sprintf("fine here: t99 %.1f s after recovery, %.2f× the recommended policy's (%.1f s)", t99.Mean, v.Ratio, best.Summary(T99).Mean)
	case rec.tied(a):
		v.Tied = true
		v.Verdict = fmt.Sprintf("t99 %.1f s after recovery, %.2f× the recommended policy's, but not told apart from it at %d seeds: more seeds would say whether to change it", t99.Mean, v.Ratio, len(a.Seeds))
	default:
		v.Better = best
		if b := sameFamily(a, rec.Ranked[:rec.Feasible]); b != nil && b.Summary(T99).Mean <= FineFactor*best.Summary(T99).Mean {
			v.Better = b
			v.Verdict = fmt.Sprintf("t99 %.1f s after recovery, %.2f× the recommended policy's; set %s (t99 %.1f s)", t99.Mean, v.Ratio, paramChanges(a.Cell, b.Cell), b.Summary(T99).Mean)
		} else {
			v.Verdict = fmt.Sprintf("t99 %.1f s after recovery, %.2f× the recommended policy's; switch to %s", t99.Mean, v.Ratio, best.Cell.Policy.Plain())
		}
	}
	return v
}

// tied reports whether a is among the candidates not separated from the
// recommended policy (Ties).
func (r *Recommendation) tied(a *Aggregate) bool {
	for _, c := range r.Ties {
		if c.Other == a {
			return true
		}
	}
	return false
}

// sameFamily returns the best feasible candidate of a's family, other than a.
func sameFamily(a *Aggregate, feasible []*Aggregate) *Aggregate {
	for _, b := range feasible {
		if b.Cell.Policy.Kind == a.Cell.Policy.Kind && b != a && b.Cell.Scenario == a.Cell.Scenario {
			return b
		}
	}
	return nil
}

// paramChanges lists the policy parameters that differ, in the words of
// `--mine` and the libraries: "base 1s → 500ms, cap 2m0s → 5s, jitter ±50 % → ±20 %".
func paramChanges(from, to grid.Cell) string {
	f, t := from.Policy, to.Policy
	var ch []string
	add := func(name string, a, b any) {
		if a != b {
			ch = append(ch, fmt.Sprintf("%s %v → %v", name, a, b))
		}
	}
	add("base", f.Base, t.Base)
	add("multiplier", f.Multiplier, t.Multiplier)
	add("cap", f.Cap, t.Cap)
	add("jitter", f.JitterWords(), t.JitterWords())
	add("attempts", attemptsWords(f.MaxAttempts), attemptsWords(t.MaxAttempts))
	add("give up after", elapsedWords(f.MaxElapsed), elapsedWords(t.MaxElapsed))
	// Every other policy parameter (retry_on, token buckets, budgets,
	// client components …) in sweeps.toml's words: a change that is not
	// said would make the verdict's t99 a claim about another policy.
	for i := range grid.Params {
		p := &grid.Params[i]
		if !p.Policy || saidInWords[p.Key] {
			continue
		}
		if a, b := p.Of(&from), p.Of(&to); a != b && !p.SwitchedOff(&to) {
			ch = append(ch, fmt.Sprintf("%s %s → %s", p.Key, offWords(a), offWords(b)))
		}
	}
	if len(ch) == 0 {
		return "nothing: same parameters"
	}
	return strings.Join(ch, ", ")
}

// saidInWords are the policy parameters paramChanges says in words above
// (the policy's family and preset are the candidates', a fleet's mix is
// not a policy's).
var saidInWords = map[string]bool{"policy": true, "preset": true, "mix": true, "base_s": true, "multiplier": true, "cap_s": true,
	"width": true, "max_attempts": true, "max_elapsed_s": true}

// offWords writes a policy parameter's value: "off" for a component's zero,
// "any" for retry_on's.
func offWords(v any) string {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return "off"
		}
	case int64:
		if x == 0 {
			return "off"
		}
	case bool:
		if !x {
			return "off"
		}
	case string:
		if x == "" { // retry_on's zero, the only text among them: every rejection retried
			return "any"
		}
	}
	return fmt.Sprint(v)
}

func attemptsWords(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func elapsedWords(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return d.String()
}

// GroupAggregate is one policy group of a mixed fleet over its seeds.
type GroupAggregate struct {
	Group  int
	Share  float64
	Label  string
	T99    Summary // over the seeds where the group reached 99 %
	GaveUp Summary
	Alone  *Aggregate // the same policy without the mix, same scenario; nil if absent
	// Effect is the group's t99 minus Alone's, paired by seed over the
	// seeds both ran (the same seed gives the same initial draws): Diff
	// with its 95 % interval. Seeds is 0 without a paired comparison.
	// Group and Alone are each side's t99 over those same seeds, so that
	// Diff = Group.Mean − Alone.Mean: Alone's own summary holds every seed
	// the dataset has of it (the default sweep's 30, say, where the mix
	// has 20), and the group's T99 every seed where the group finished.
	Effect struct {
		Seeds          int
		Diff, Lo, High float64
		Group, Alone   Summary
	}
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
				if ga.Alone != nil {
					e := &ga.Effect
					e.Seeds, e.Diff, e.Lo, e.High, e.Group, e.Alone = pairedGroup(rs, ga.Alone, a.Cell.Scenario.RecoverAt)
				}
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
	GaveUp     [][]float64 // [outage][capacity]: clients that gave up, mean per run; NaN where there is no cell
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
			row, gave := make([]float64, len(g.Capacities)), make([]float64, len(g.Capacities))
			for i, c := range g.Capacities {
				row[i], gave[i] = math.NaN(), math.NaN()
				for _, a := range cells[k] {
					if a.Cell.Scenario.RecoverAt == o && a.Cell.Scenario.Capacity == c {
						s := a.Summary(T99)
						row[i] = float64(s.N) / float64(s.N+s.Unfinished)
						gave[i] = a.Summary(GaveUp).Mean
					}
				}
			}
			g.Recovered = append(g.Recovered, row)
			g.GaveUp = append(g.GaveUp, gave)
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

// pairedGroup compares a group's t99 after recovery with the policy alone,
// seed by seed over the seeds where both reached it: the mean difference
// and its Student-t 95 % interval, and each side's t99 over those seeds.
func pairedGroup(rows []dataset.GroupRow, alone *Aggregate, recoverAt time.Duration) (n int, diff, lo, hi float64, group, by Summary) {
	per := alone.PerSeed(T99)
	var d, g, a []float64
	for _, r := range rows {
		i := sort.Search(len(alone.Seeds), func(i int) bool { return alone.Seeds[i] >= r.Seed })
		if i < len(alone.Seeds) && alone.Seeds[i] == r.Seed && r.Result.T99.Reached && !math.IsNaN(per[i]) {
			t := (r.Result.T99.At - recoverAt).Seconds()
			d, g, a = append(d, t-per[i]), append(g, t), append(a, per[i])
		}
	}
	s := Summarize(d, 0)
	return s.N, s.Mean, s.Lo, s.Hi, Summarize(g, 0), Summarize(a, 0)
}
