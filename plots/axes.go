package plots

import (
	"fmt"
	"sort"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// Figures of t99 against a parameter the sweeps vary: a scenario's
// (capacity, clients, outage) or a policy's cap.

// ScenarioAxis is a scenario parameter a figure can put on its x axis.
type ScenarioAxis struct {
	Name  string // "capacity"
	Label string
	Get   func(sim.Scenario) float64
	Set   func(*sim.Scenario, float64)
}

// Axes are the scenario parameters a sweep varies that t99 is drawn against.
var Axes = []ScenarioAxis{
	{"capacity", "capacity after recovery (requests/s, log scale)", func(s sim.Scenario) float64 { return s.Capacity }, func(s *sim.Scenario, v float64) { s.Capacity = v }},
	{"clients", "clients that failed during the outage (log scale)", func(s sim.Scenario) float64 { return float64(s.Clients) }, func(s *sim.Scenario, v float64) { s.Clients = int(v) }},
	{"outage", "outage length (s, log scale)", func(s sim.Scenario) float64 { return s.RecoverAt.Seconds() }, func(s *sim.Scenario, v float64) {
		s.RecoverAt = time.Duration(v * float64(time.Second))
	}},
}

// Against is t99 after recovery against a scenario parameter, one line per
// policy of reps (the same policy in the same scenario but for the axis),
// split into panels of at most perPanel lines.
func Against(ax ScenarioAxis, family string, aggs, reps []*analysis.Aggregate, perPanel int) Figure {
	f := Figure{Name: "t99-" + ax.Name, Title: fmt.Sprintf("t99 after recovery against %s — %s", ax.Name, family),
		X: Axis{Label: ax.Label, Log: true}, Y: Axis{Label: "t99 after recovery (s), mean with 95 % band (log scale)", Log: true}}
	var xs []float64
	seen := map[float64]bool{}
	var series []Series
	var drawn []sim.Policy
	left := 0
	for _, r := range reps {
		var pts []Point
		for _, a := range aggs {
			if !sameBut(ax, a.Cell, r.Cell) {
				continue
			}
			v := ax.Get(a.Cell.Scenario)
			if !seen[v] {
				seen[v] = true
				xs = append(xs, v)
			}
			s := a.Summary(analysis.T99)
			if !s.Finished() {
				left++
				continue
			}
			pts = append(pts, Point{X: v, Y: s.Mean, Lo: s.Lo, Hi: s.Hi})
			f.from(a)
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		if len(pts) > 0 {
			series = append(series, Series{Points: pts, Colour: len(series)})
			drawn = append(drawn, r.Cell.Policy)
		}
	}
	for i, n := range shortNames(drawn) {
		series[i].Name = n
	}
	sort.Float64s(xs)
	f.X.Ticks = xs
	if perPanel < 1 {
		perPanel = len(series)
	}
	panels := (len(series) + perPanel - 1) / max(perPanel, 1)
	per := (len(series) + panels - 1) / max(panels, 1) // balanced: 7 lines at 6 a panel are 4 + 3
	for i := 0; i < len(series); i += per {
		j := min(i+per, len(series))
		title := ""
		if panels > 1 {
			title = fmt.Sprintf("policies %d–%d of %d", i+1, j, len(series))
		}
		f.Panels = append(f.Panels, Panel{Title: title, Series: series[i:j]})
	}
	f.Caption = fmt.Sprintf("%s: t99 after recovery against %s, a line per policy at fixed settings, with 95 %% bands; both axes on log scales.", family, ax.Name)
	if left > 0 {
		f.Caption += fmt.Sprintf(" A line stops where a run never brought 99 %% of clients back (%s).", num.Plural(left, "cell"))
	}
	return f
}

func sameBut(ax ScenarioAxis, a, b grid.Cell) bool {
	sa, sb := a.Scenario, b.Scenario
	v := ax.Get(sa)
	ax.Set(&sb, v)
	// A run's window after recovery is what a sweep fixes, not its horizon.
	sb.Horizon = sb.RecoverAt + (b.Scenario.Horizon - b.Scenario.RecoverAt)
	return a.Policy == b.Policy && !a.Mixed() && sa == sb
}

// Caps is t99 after recovery against the cap in one family, a panel per
// capacity, a line per policy shape (a policy but for its cap) that keep
// admits; shapes measured at fewer than two caps are left out.
func Caps(family string, aggs []*analysis.Aggregate, keep func(sim.Policy) bool) Figure {
	f := Figure{Name: "t99-cap", Title: "t99 after recovery against the cap — " + family,
		X: Axis{Label: "cap: the longest delay (s, log scale)", Log: true}, Y: Axis{Label: "t99 after recovery (s), mean with 95 % band (log scale)", Log: true}}
	drawn, several := capsCells(aggs, keep)
	byCap := map[float64]map[sim.Policy][]Point{}
	var cs []float64
	var shapes []sim.Policy
	seen := map[sim.Policy]bool{}
	left := 0
	for _, a := range drawn {
		p := a.Cell.Policy
		c := a.Cell.Scenario.Capacity
		if byCap[c] == nil {
			byCap[c] = map[sim.Policy][]Point{}
			cs = append(cs, c)
		}
		s := a.Summary(analysis.T99)
		if !s.Finished() {
			left++
			continue
		}
		sh := analysis.Shape(p)
		if !seen[sh] {
			seen[sh] = true
			shapes = append(shapes, sh)
		}
		byCap[c][sh] = append(byCap[c][sh], Point{X: p.Cap.Seconds(), Y: s.Mean, Lo: s.Lo, Hi: s.Hi})
		f.from(a)
	}
	sort.Float64s(cs)
	if len(cs) > MaxPanels {
		cs = cs[:MaxPanels]
	}
	f.Panels, f.X.Ticks = capsPanels(cs, shapes, byCap)
	f.Caption = fmt.Sprintf("%s: t99 after recovery against the cap, a line per policy, a panel per capacity; bands are 95 %% intervals, both axes on log scales.", family)
	if several > 0 {
		f.Caption += fmt.Sprintf(" A family measured at several bases or multipliers is drawn at the one measured most (%s left out).", num.Plural(several, "other setting"))
	}
	if left > 0 {
		f.Caption += fmt.Sprintf(" Left out: %s with runs that never brought 99 %% of clients back.", num.Plural(left, "cell"))
	}
	return f
}

// capsCells are the cells Caps draws, in aggs' order, and how many
// settings it leaves out: of the policies with a cap, not presets, that
// keep admits, a line per policy shape, and of a family measured at
// several bases or multipliers only the setting measured most
// (mostMeasured): more lines than colours otherwise.
func capsCells(aggs []*analysis.Aggregate, keep func(sim.Policy) bool) ([]*analysis.Aggregate, int) {
	var capped []*analysis.Aggregate
	for _, a := range aggs {
		if p := a.Cell.Policy; p.Cap != 0 && p.Preset == "" && keep(p) {
			capped = append(capped, a)
		}
	}
	setting := func(p sim.Policy) sim.Policy { sh := analysis.Shape(p); sh.Width = 0; return sh } // widths are named in the legend
	settingOf := map[sim.Kind]sim.Policy{}
	several := 0
	for _, a := range capped {
		k := a.Cell.Policy.Kind
		if _, ok := settingOf[k]; !ok {
			sh, n := mostMeasured(capped, k, setting)
			settingOf[k] = sh
			several += n - 1
		}
	}
	var out []*analysis.Aggregate
	for _, a := range capped {
		if p := a.Cell.Policy; setting(p) == settingOf[p.Kind] {
			out = append(out, a)
		}
	}
	return out, several
}

// capsPanels are Caps' panels, one per capacity of cs with a line to draw:
// a line per policy shape measured at two caps or more there, its points
// from byCap; and the x axis's ticks, every cap measured at those
// capacities.
func capsPanels(cs []float64, shapes []sim.Policy, byCap map[float64]map[sim.Policy][]Point) ([]Panel, []float64) {
	var panels []Panel
	ticks := map[float64]bool{}
	names := policyNames(shapes, analysis.ShapeLabel)
	for _, c := range cs {
		pn := Panel{Title: fmt.Sprintf("%g requests/s", c)}
		for i, sh := range shapes {
			for _, pt := range byCap[c][sh] {
				ticks[pt.X] = true
			}
			ps := byCap[c][sh]
			if len(ps) < 2 {
				continue
			}
			sort.Slice(ps, func(i, j int) bool { return ps[i].X < ps[j].X })
			pn.Series = append(pn.Series, Series{Name: names[i], Points: ps, Colour: i})
		}
		if len(pn.Series) > 0 {
			panels = append(panels, pn)
		}
	}
	return panels, sortedKeys(ticks)
}
