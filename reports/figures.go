package reports

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// RankingRows is the most policies the ranking figure shows.
const RankingRows = 16

// chooseFigures draws what the data can show, about the reference
// scenario (Decision.Reference) and its family: a figure is kept only when
// the dataset holds what it needs (plots.Figure.Degenerate is "").
func chooseFigures(single []*analysis.Aggregate, r *Report, timelines func(map[string]bool) (map[string][]dataset.TimelineRow, error)) ([]Figure, error) {
	ref := r.Decision.Reference
	if ref < 0 {
		for i, s := range r.Scenarios {
			if s.All != nil {
				ref = i
				break
			}
		}
	}
	if ref < 0 {
		return nil, nil
	}
	s := r.Scenarios[ref]
	rec := s.All
	name := scenarioName(s)
	var figs []plots.Figure
	why := func(a *analysis.Aggregate) string { return shortWhy(rec.Query.Infeasible(a), a) }
	figs = append(figs, plots.Ranking(name, rec.Ranked, rec.Feasible, why, RankingRows))
	pareto, _ := plots.Pareto(name, rec.Ranked, rec.Feasible)
	figs = append(figs, pareto)

	reps := representatives(rec)
	if timelines != nil && len(reps) > 0 {
		want := map[string]bool{}
		for _, a := range reps {
			want[grid.Run{Cell: a.Cell, Seed: a.Seeds[0]}.Key()] = true
		}
		tls, err := timelines(want)
		if err != nil {
			return nil, err
		}
		until := window(reps)
		before := math.Min(rec.Scenario.RecoverAt.Seconds(), 10)
		figs = append(figs, plots.Herd(name, reps, tls, before, until), plots.Recovery(name, reps, tls, until))
	}

	var fam []*analysis.Aggregate // the reference family: every capacity
	for _, a := range single {
		if analysis.FamilyOf(a.Cell.Scenario) == s.Family {
			fam = append(fam, a)
		}
	}
	famName := s.Family.String()
	for _, k := range sim.Kinds() {
		if widths(fam, k) >= 2 {
			figs = append(figs, plots.Param(famName, fam, k, true))
		}
	}
	// Caps, for the families whose widths the figures above do not show
	// (their lines are already one per cap).
	figs = append(figs, plots.Caps(famName, fam, func(p sim.Policy) bool { return widths(fam, p.Kind) < 2 }))
	if k, cp, ok := heatCells(fam); ok {
		figs = append(figs, plots.Heatmap(famName, fam, k, cp))
	}
	all := append([]*analysis.Aggregate(nil), single...)
	for _, ax := range plots.Axes {
		f := plots.Against(ax, but(ax.Name, s), all, reps, 6)
		figs = append(figs, f)
	}
	var out []Figure
	seen := map[string]int{}
	for _, f := range figs {
		if f.Degenerate() != "" {
			continue
		}
		seen[f.Name]++
		if n := seen[f.Name]; n > 1 {
			f.Name = fmt.Sprintf("%s-%d", f.Name, n)
		}
		out = append(out, Figure{Figure: f, PNG: "plots/" + f.Name + ".png", SVG: "plots/" + f.Name + ".svg"})
	}
	return out, nil
}

// representatives are the policies the per-policy figures show in a
// scenario: each policy shape at the article's cap (60 s) where measured,
// else at its fastest; when that makes more than plots.MaxPanels, one per
// family at the article's settings (analysis.Representatives), presets
// left to their own table.
func representatives(rec *analysis.Recommendation) []*analysis.Aggregate {
	var out []*analysis.Aggregate
	idx := map[sim.Policy]int{}
	for _, a := range rec.Ranked {
		sh := analysis.Shape(a.Cell.Policy)
		i, ok := idx[sh]
		if !ok {
			idx[sh] = len(out)
			out = append(out, a)
			continue
		}
		if a.Cell.Policy.Cap == time.Minute && out[i].Cell.Policy.Cap != time.Minute {
			out[i] = a
		}
	}
	if len(out) > plots.MaxPanels {
		var plain []*analysis.Aggregate
		for _, a := range rec.Ranked {
			if a.Cell.Policy.Preset == "" {
				plain = append(plain, a)
			}
		}
		out = analysis.Representatives(plain, func(*analysis.Aggregate) bool { return true })
		if len(out) > plots.MaxPanels {
			out = out[:plots.MaxPanels]
		}
	}
	return out
}

// window is how long after recovery the herd and recovery figures run: past
// the slowest finishing representative's mean t99 by a tenth, but at most
// three times the median, so that one slow policy does not squeeze the
// rest; at least 30 s.
func window(reps []*analysis.Aggregate) float64 {
	var ts []float64
	for _, a := range reps {
		if s := a.Summary(analysis.T99); s.Finished() {
			ts = append(ts, s.Max)
		}
	}
	if len(ts) == 0 {
		return 120
	}
	sort.Float64s(ts)
	u := math.Min(ts[len(ts)-1]*1.1, 3*ts[len(ts)/2])
	return math.Ceil(math.Max(u, 30)/10) * 10
}

func widths(aggs []*analysis.Aggregate, k sim.Kind) int {
	ws := map[[2]float64]map[float64]bool{}
	most := 0
	for _, a := range aggs {
		p := a.Cell.Policy
		if p.Kind != k || p.Preset != "" {
			continue
		}
		key := [2]float64{a.Cell.Scenario.Capacity, p.Cap.Seconds()}
		if ws[key] == nil {
			ws[key] = map[float64]bool{}
		}
		ws[key][p.Width] = true
		most = max(most, len(ws[key]))
	}
	return most
}

// heatCells picks the width-jitter family (else the first with widths) and
// the cap (60 s where measured, else the most measured) for the capacity ×
// width heat map; ok is false without two capacities and two widths.
func heatCells(aggs []*analysis.Aggregate) (sim.Kind, time.Duration, bool) {
	for _, k := range append([]sim.Kind{sim.WidthJitter}, sim.Kinds()...) {
		caps := map[time.Duration]map[[2]float64]bool{}
		for _, a := range aggs {
			p := a.Cell.Policy
			if p.Kind == k && p.Preset == "" {
				if caps[p.Cap] == nil {
					caps[p.Cap] = map[[2]float64]bool{}
				}
				caps[p.Cap][[2]float64{a.Cell.Scenario.Capacity, p.Width}] = true
			}
		}
		best, n := time.Duration(-1), 0
		for cp, cells := range caps {
			xs, ys := map[float64]bool{}, map[float64]bool{}
			for c := range cells {
				xs[c[0]], ys[c[1]] = true, true
			}
			if len(xs) < 2 || len(ys) < 2 {
				continue
			}
			if cp == time.Minute || (best != time.Minute && (len(cells) > n || (len(cells) == n && cp < best))) {
				best, n = cp, len(cells)
			}
		}
		if best >= 0 {
			return k, best, true
		}
	}
	return "", 0, false
}

// but names a scenario without the parameter a figure varies.
func but(axis string, s Scenario) string {
	q := s.Query
	parts := []string{capacityWords(q.Capacity), num.Plural(q.Clients, "client"), fmt.Sprintf("%v outage", q.Outage)}
	switch axis {
	case "capacity":
		parts = parts[1:]
	case "clients":
		parts = append(parts[:1], parts[2])
	case "outage":
		parts = parts[:2]
	}
	if q.RetryAfter > 0 {
		parts = append(parts, fmt.Sprintf("Retry-After %v", q.RetryAfter))
	}
	if q.Server != "" {
		parts = append(parts, q.Server)
	}
	return strings.Join(parts, ", ")
}

// shortWhy is why a candidate is not feasible, in a few words.
func shortWhy(why string, a *analysis.Aggregate) string {
	var parts []string
	if strings.Contains(why, "give up") {
		parts = append(parts, "clients give up")
	}
	if strings.Contains(why, "did not bring") {
		parts = append(parts, "not finished")
	}
	if strings.Contains(why, "budget") {
		parts = append(parts, fmt1(perClient(a))+" requests per client")
	}
	return strings.Join(parts, ", ")
}
