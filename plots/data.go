package plots

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// TimelineOf returns the timeline of an aggregate's first seed, if the
// dataset recorded one.
func TimelineOf(a *analysis.Aggregate, tls map[string][]dataset.TimelineRow) []dataset.TimelineRow {
	if len(a.Seeds) == 0 {
		return nil
	}
	return tls[grid.Run{Cell: a.Cell, Seed: a.Seeds[0]}.Key()]
}

// MaxPanels is the most small multiples a figure has.
const MaxPanels = 9

// Herd is requests arriving per second around recovery, a panel per policy
// (its first seed), with the capacity and the moment the server is back.
// Time is counted from recovery, from −before to until seconds.
func Herd(scenario string, reps []*analysis.Aggregate, tls map[string][]dataset.TimelineRow, before, until float64) Figure {
	var capacity float64
	f := Figure{Name: "herd", Title: "The herd around recovery: requests arriving per second — " + scenario,
		X: Axis{Label: "time since the server is back (s)"}, Y: Axis{Label: "requests arriving per second"},
		VLines: []Ref{{0, "server back"}},
	}
	titles := shortNames(policiesOf(reps))
	for i, a := range reps {
		rows := TimelineOf(a, tls)
		if len(rows) == 0 || len(f.Panels) == MaxPanels {
			continue
		}
		capacity = a.Cell.Scenario.Capacity
		f.fromSeed(a.Seeds[0])
		rec := a.Cell.Scenario.RecoverAt.Seconds()
		per := map[int]int{}
		for _, r := range rows {
			t := r.T - rec
			if t < -before || t >= until {
				continue
			}
			per[int(math.Floor(t))] += r.Arrivals
		}
		s := Series{Colour: 0}
		for sec := int(math.Floor(-before)); sec < int(math.Ceil(until)); sec++ {
			s.Points = append(s.Points, Point{X: float64(sec), Y: float64(per[sec]), Lo: nan(), Hi: nan()})
		}
		f.Panels = append(f.Panels, Panel{Title: titles[i], Series: []Series{s}})
	}
	f.HLines = []Ref{{capacity, fmt.Sprintf("capacity %g requests/s", capacity)}}
	f.Caption = fmt.Sprintf("%s, each policy's first seed, summed over whole seconds, from %g s before the server is back to %g s after. Where a policy's arrivals stay far above the capacity line after recovery, the server keeps answering 429 although it is up; a policy that keeps its clients apart arrives near the line.", scenario, before, until)
	return f
}

// Recovery is the fraction of clients served against the time since
// recovery, one line per policy (its first seed), with the 99 % line.
func Recovery(scenario string, reps []*analysis.Aggregate, tls map[string][]dataset.TimelineRow, until float64) Figure {
	f := Figure{Name: "recovery", Title: "Clients back over time — " + scenario,
		X: Axis{Label: "time since the server is back (s)"}, Y: Axis{Label: "clients served (fraction)"},
		HLines: []Ref{{0.99, "99 % back (t99)"}}, VLines: []Ref{{0, "server back"}},
	}
	var out []string
	names := shortNames(policiesOf(reps))
	for i, a := range reps {
		rows := TimelineOf(a, tls)
		if len(rows) == 0 {
			continue
		}
		f.fromSeed(a.Seeds[0])
		rec := a.Cell.Scenario.RecoverAt.Seconds()
		n := float64(a.Cell.Scenario.Clients)
		s := Series{Name: names[i], Colour: i}
		done := 0
		s.Points = append(s.Points, Point{X: -math.Min(5, rec), Y: 0, Lo: nan(), Hi: nan()})
		for _, r := range rows { // only ticks with arrivals are stored: a step per row
			t := r.T - rec
			if t >= until {
				break
			}
			if r.Served == 0 || t < s.Points[len(s.Points)-1].X {
				continue
			}
			s.Points = append(s.Points, Point{X: t, Y: float64(done) / n, Lo: nan(), Hi: nan()})
			done += r.Served
			s.Points = append(s.Points, Point{X: t, Y: float64(done) / n, Lo: nan(), Hi: nan()})
		}
		s.Points = append(s.Points, Point{X: until, Y: float64(done) / n, Lo: nan(), Hi: nan()})
		if float64(done)/n < 0.99 {
			out = append(out, s.Name)
		}
		f.first().Series = append(f.first().Series, s)
	}
	f.Caption = fmt.Sprintf("%s, each policy's first seed. A curve crosses the dashed 99 %% line at its t99; the further left, the sooner users are back.", scenario)
	if len(out) > 0 {
		f.Caption += fmt.Sprintf(" Below 99 %% at %g s, the right edge: %s.", until, joinNames(out))
	}
	return f
}

// policiesOf returns the aggregates' policies, in order.
func policiesOf(aggs []*analysis.Aggregate) []sim.Policy {
	out := make([]sim.Policy, len(aggs))
	for i, a := range aggs {
		out[i] = a.Cell.Policy
	}
	return out
}

// first returns the figure's first panel, adding it if needed.
func (f *Figure) first() *Panel {
	if len(f.Panels) == 0 {
		f.Panels = append(f.Panels, Panel{})
	}
	return &f.Panels[0]
}

func joinNames(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// Ranking is every policy shape's best cell in one scenario (at most max,
// fastest first), t99 after recovery with its 95 % interval; the
// infeasible hollow and grey, with why in the category's words.
func Ranking(scenario string, ranked []*analysis.Aggregate, feasible int, why func(*analysis.Aggregate) string, max int) Figure {
	f := Figure{Name: "ranking", Title: "t99 after recovery, best cap of each policy — " + scenario,
		X: Axis{Label: "t99 after recovery (s), mean with 95 % interval (log scale)", Log: true}}
	type row struct {
		a  *analysis.Aggregate
		ok bool
	}
	var rows, infeasible []row
	seen := map[sim.Policy]bool{}
	unfinished := 0
	for i, a := range ranked {
		sh := analysis.Shape(a.Cell.Policy)
		if seen[sh] {
			continue
		}
		seen[sh] = true
		if !a.Summary(analysis.T99).Finished() {
			unfinished++
			continue
		}
		if i < feasible {
			rows = append(rows, row{a, true})
		} else {
			infeasible = append(infeasible, row{a, false})
		}
	}
	// The fastest feasible, then the fastest of the rest: at most max in
	// all, and room for up to a third of them not feasible.
	keep := min(len(rows), max-min(len(infeasible), max/3))
	rows = append(rows[:keep], infeasible[:min(len(infeasible), max-keep)]...)
	ok, bad := Series{Name: "feasible", Colour: 0, Mark: Dot}, Series{Name: "not feasible", Colour: -1, Mark: Hollow}
	n := len(rows)
	f.Y.Categories = make([]string, n)
	pols := make([]sim.Policy, n)
	for i, r := range rows {
		pols[i] = r.a.Cell.Policy
	}
	labels := shortNames(pols)
	for i, r := range rows {
		y := float64(n - 1 - i)
		label := labels[i]
		if !r.ok {
			label += " (" + why(r.a) + ")"
		}
		f.Y.Categories[n-1-i] = label
		f.from(r.a)
		s := r.a.Summary(analysis.T99)
		pt := Point{X: s.Mean, Y: y, Lo: s.Lo, Hi: s.Hi}
		if r.ok {
			ok.Points = append(ok.Points, pt)
		} else {
			bad.Points = append(bad.Points, pt)
		}
	}
	f.Panels = []Panel{{Series: []Series{ok, bad}}}
	f.Caption = fmt.Sprintf("%s: each policy at its fastest cap, the fastest feasible first, then the fastest of those not feasible (hollow grey, the reason in brackets); at most %d rows, at most a third not feasible.", scenario, max)
	if unfinished > 0 {
		f.Caption += fmt.Sprintf(" Left out: %s with runs that never brought 99 %% of clients back (no t99 to draw).", num.PluralOf(unfinished, "policy", "policies"))
	}
	return f
}

// Pareto is peak load against t99 in one scenario: every candidate, the
// front of those no feasible candidate beats on both drawn as a line with
// numbers, named in the legend.
func Pareto(scenario string, ranked []*analysis.Aggregate, feasible int) (Figure, []*analysis.Aggregate) {
	f := Figure{Name: "pareto", Title: "Fast or gentle: peak load against t99 — " + scenario,
		X: Axis{Label: "t99 after recovery (s), mean (log scale)", Log: true},
		Y: Axis{Label: "peak arrivals after recovery (requests/s, log scale)", Log: true}}
	front := analysis.Front(ranked[:feasible], analysis.T99, analysis.Peak)
	on := map[*analysis.Aggregate]bool{}
	for _, a := range front {
		on[a] = true
	}
	others := Series{Name: "feasible", Colour: 7, Mark: Dot}
	bad := Series{Name: "not feasible", Colour: -1, Mark: Hollow}
	fs := Series{Name: "front: none faster and gentler", Colour: 3, Mark: Front}
	for i, a := range ranked {
		t, pk := a.Summary(analysis.T99), a.Summary(analysis.Peak)
		if !t.Finished() || analysis.AllGaveUp(a) || pk.Mean <= 0 {
			continue
		}
		f.from(a)
		pt := Point{X: t.Mean, Y: pk.Mean, Lo: nan(), Hi: nan()}
		switch {
		case on[a]:
		case i < feasible:
			others.Points = append(others.Points, pt)
		default:
			bad.Points = append(bad.Points, pt)
		}
	}
	names := shortNames(policiesOf(front))
	for i, a := range front {
		fs.Points = append(fs.Points, Point{X: a.Summary(analysis.T99).Mean, Y: a.Summary(analysis.Peak).Mean, Lo: nan(), Hi: nan()})
		fs.Labels = append(fs.Labels, fmt.Sprint(i+1))
		f.Notes = append(f.Notes, fmt.Sprintf("%d  %s", i+1, names[i]))
	}
	f.Panels = []Panel{{Series: []Series{others, bad, fs}}}
	f.Caption = fmt.Sprintf("%s: one point per candidate (mean over seeds). The red line joins the feasible candidates that no other feasible one beats on both t99 and peak (%d of %d feasible), numbered from the fastest; down and to the left is better on both. Candidates whose clients all gave up, or that never brought 99 %% back, have no point.", scenario, len(front), feasible)
	return f, front
}

// Param is t99 after recovery against a policy parameter (jitter width or
// cap) in one family, a panel per capacity, a line per value of the other
// parameter; kind's cells only.
func Param(family string, aggs []*analysis.Aggregate, kind sim.Kind, byWidth bool) Figure {
	name, other := "cap", "width"
	xl := "cap (s, log scale)"
	if byWidth {
		name, other = "width", "cap"
		xl = "jitter width (± fraction of the delay)"
	}
	f := Figure{Name: "t99-" + name + "-" + string(kind), Title: fmt.Sprintf("t99 after recovery against %s, %s — %s", name, kind, family),
		X: Axis{Label: xl, Log: !byWidth}, Y: Axis{Label: "t99 after recovery (s), mean with 95 % band (log scale)", Log: true}}
	// A line per cap (or width) means every other parameter is the same:
	// of a family measured at several bases, multipliers … (recommend's
	// candidate space), only the setting measured most is drawn, the
	// article's base 1 s ×2 on a tie, and the caption says so.
	rest := func(p sim.Policy) sim.Policy { p.Width, p.Cap = 0, 0; return p }
	keep, settings := mostMeasured(aggs, kind, rest)
	caps, cs := paramCells(aggs, kind, byWidth, func(p sim.Policy) bool { return rest(p) == keep })
	left := 0
	for _, c := range cs {
		pn, n := paramPanel(&f, c, caps[c], byWidth)
		left += n
		if len(pn.Series) > 0 {
			f.Panels = append(f.Panels, pn)
		}
	}
	f.Caption = fmt.Sprintf("%s, %s clients: t99 after recovery against the %s, a line per %s, a panel per capacity; bands are 95 %% intervals.", family, kind, name, other)
	if settings > 1 {
		f.Caption += fmt.Sprintf(" Drawn at %s, the setting measured most; %s left out.", settingWords(keep), num.Plural(settings-1, "other setting"))
	}
	if left > 0 {
		f.Caption += fmt.Sprintf(" Left out: %s with runs that never brought 99 %% of clients back.", num.Plural(left, "cell"))
	}
	return f
}

// paramCells are the cells Param draws, by capacity: kind's whose setting
// kept admits, and with a cap when the cap is the x axis (not byWidth);
// and the capacities, ascending, at most MaxPanels of them.
func paramCells(aggs []*analysis.Aggregate, kind sim.Kind, byWidth bool, kept func(sim.Policy) bool) (map[float64][]*analysis.Aggregate, []float64) {
	caps := map[float64][]*analysis.Aggregate{}
	var cs []float64
	for _, a := range aggs {
		if a.Cell.Policy.Kind != kind || (!byWidth && a.Cell.Policy.Cap == 0) || !kept(a.Cell.Policy) {
			continue
		}
		c := a.Cell.Scenario.Capacity
		if caps[c] == nil {
			cs = append(cs, c)
		}
		caps[c] = append(caps[c], a)
	}
	sort.Float64s(cs)
	if len(cs) > MaxPanels {
		cs = cs[:MaxPanels]
	}
	return caps, cs
}

// paramPanel is Param's panel of capacity c, from its cells aggs: a line
// per cap (byWidth) or width measured at two x values or more, ordered by
// cap, width, then name; and how many cells it leaves out, their runs not
// all back. f records the runs drawn.
func paramPanel(f *Figure, c float64, aggs []*analysis.Aggregate, byWidth bool) (Panel, int) {
	var lines []sim.Policy
	pts := map[sim.Policy][]Point{}
	left := 0
	for _, a := range aggs {
		s := a.Summary(analysis.T99)
		if !s.Finished() {
			left++
			continue
		}
		k := paramLine(a.Cell.Policy, byWidth)
		if pts[k] == nil {
			lines = append(lines, k)
		}
		pts[k] = append(pts[k], Point{X: paramX(a.Cell.Policy, byWidth), Y: s.Mean, Lo: s.Lo, Hi: s.Hi})
		f.from(a)
	}
	sort.Slice(lines, func(i, j int) bool {
		a, b := lines[i], lines[j]
		if a.Cap != b.Cap {
			return a.Cap < b.Cap
		}
		if a.Width != b.Width {
			return a.Width < b.Width
		}
		return a.String() < b.String()
	})
	pn := Panel{Title: fmt.Sprintf("%g requests/s", c)}
	for i, k := range lines {
		ps := pts[k]
		if len(ps) < 2 {
			continue
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].X < ps[j].X })
		pn.Series = append(pn.Series, Series{Name: lineName(k, byWidth), Points: ps, Colour: i})
	}
	return pn, left
}

// paramX is where Param draws a cell of policy p on the x axis: at its
// jitter width (byWidth), else at its cap in seconds.
func paramX(p sim.Policy, byWidth bool) float64 {
	if byWidth {
		return p.Width
	}
	return p.Cap.Seconds()
}

// paramLine is the line Param draws a cell of policy p on: p but for its x
// (paramX), which is zeroed.
func paramLine(p sim.Policy, byWidth bool) sim.Policy {
	if byWidth {
		p.Width = 0
	} else {
		p.Cap = 0
	}
	return p
}

// mostMeasured returns, of the settings rest(p) of kind's policies in aggs,
// the one measured in most cells (the article's base 1 s ×2 on a tie, then
// the first by name), and how many settings there are: a figure with a
// line per cap or width draws one setting, or its lines would differ in
// what the legend does not say.
func mostMeasured(aggs []*analysis.Aggregate, kind sim.Kind, rest func(sim.Policy) sim.Policy) (sim.Policy, int) {
	count := map[sim.Policy]int{}
	for _, a := range aggs {
		if a.Cell.Policy.Kind == kind {
			count[rest(a.Cell.Policy)]++
		}
	}
	article := func(p sim.Policy) bool { return p.Base == time.Second && p.Multiplier == 2 && p.Preset == "" }
	var keep sim.Policy
	best := -1
	for r, n := range count {
		if n > best || n == best && (article(r) && !article(keep) || article(r) == article(keep) && r.String() < keep.String()) {
			keep, best = r, n
		}
	}
	return keep, len(count)
}

// settingWords names what a family's setting fixes besides cap and width.
func settingWords(p sim.Policy) string {
	if p.Preset != "" {
		return p.Preset + "'s defaults"
	}
	w := "base " + p.Base.String()
	if p.Kind.Reads(sim.FieldMultiplier) {
		w += fmt.Sprintf(", ×%g", p.Multiplier)
	}
	return w
}

func lineName(p sim.Policy, byWidth bool) string {
	if byWidth {
		if p.Cap == 0 {
			return "no cap"
		}
		return "cap " + p.Cap.String()
	}
	return "jitter " + sim.Percent(p.Width)
}

// Heatmap is t99 after recovery over capacity × jitter width for one
// family's width-jitter cells at one cap.
func Heatmap(family string, aggs []*analysis.Aggregate, kind sim.Kind, cap time.Duration) Figure {
	f := Figure{Name: "t99-heatmap", Title: fmt.Sprintf("t99 after recovery over capacity × jitter width (%s, cap %v) — %s", kind, cap, family),
		X: Axis{Label: "capacity (requests/s)"}, Y: Axis{Label: "jitter width (±)"}, ZName: HeatScale, ZLog: true}
	xs, ys := map[float64]bool{}, map[float64]bool{}
	val := map[[2]float64]float64{}
	for _, a := range aggs {
		c := a.Cell
		if c.Policy.Kind != kind || c.Policy.Cap != cap {
			continue
		}
		x, y := c.Scenario.Capacity, c.Policy.Width
		xs[x], ys[y] = true, true
		f.from(a)
		val[[2]float64{x, y}] = math.Inf(1) // never brought 99 % back: slower than any t99
		if s := a.Summary(analysis.T99); s.Finished() {
			val[[2]float64{x, y}] = s.Mean
		}
	}
	g := &Grid{X: sortedKeys(xs), Y: sortedKeys(ys)}
	for _, y := range g.Y {
		row := make([]float64, len(g.X))
		for i, x := range g.X {
			v, ok := val[[2]float64{x, y}]
			if !ok {
				v = math.NaN()
			}
			row[i] = v
		}
		g.Z = append(g.Z, row)
	}
	for _, x := range g.X {
		f.X.Categories = append(f.X.Categories, fmt.Sprintf("%g", x))
	}
	for _, y := range g.Y {
		f.Y.Categories = append(f.Y.Categories, sim.Percent(y))
	}
	f.Panels = []Panel{{Grid: g}}
	f.Caption = fmt.Sprintf("%s, %s at cap %v: each cell is the mean t99 after recovery in seconds; pale yellow is fast, darker red is slower (the colour bar, on a log scale of at least a factor of ten). \"not finished\", darkest: a run never brought 99 %% of clients back.", family, kind, cap)
	if missing(g) {
		f.Caption += " \"no runs\", white: the dataset holds no such cell."
	}
	return f
}

// HeatScale is the heat map's colour bar label: what the colour is, and
// which way is worse.
const HeatScale = "t99 after recovery (s), log scale: darker red is slower"

// missing reports whether a grid has a cell without runs (NaN).
func missing(g *Grid) bool {
	for _, row := range g.Z {
		for _, z := range row {
			if math.IsNaN(z) {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[float64]bool) []float64 {
	out := make([]float64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Float64s(out)
	return out
}
