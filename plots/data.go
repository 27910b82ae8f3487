package plots

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

// TimelineOf returns the timeline of an aggregate's first seed, if the
// dataset recorded one.
func TimelineOf(a *analysis.Aggregate, tls map[string][]dataset.TimelineRow) []dataset.TimelineRow {
	if len(a.Seeds) == 0 {
		return nil
	}
	return tls[experiments.Run{Cell: a.Cell, Seed: a.Seeds[0]}.Key()]
}

// Herd is figure 1: requests arriving per second over time, one line per
// policy, with the capacity. Arrivals are summed over whole seconds.
func Herd(reps []*analysis.Aggregate, tls map[string][]dataset.TimelineRow, capacity float64, until float64) Figure {
	f := Figure{File: "herd.png", Style: Lines, HLine: capacity, HName: fmt.Sprintf("capacity %g req/s", capacity),
		Title:   fmt.Sprintf("The herd: requests arriving per second at %g req/s capacity", capacity),
		XLabel:  "time since the outage began (s)",
		YLabel:  "requests arriving (per s)",
		Caption: "Each line is one policy's first seed; where it stays far above the capacity line after recovery, the server keeps answering 429 although it is up.",
	}
	for _, a := range reps {
		rows := TimelineOf(a, tls)
		if len(rows) == 0 {
			continue
		}
		s := Series{Name: analysis.ShortLabel(a.Cell)}
		per := map[int]int{}
		last := 0
		for _, r := range rows {
			if r.T >= until {
				break
			}
			sec := int(math.Floor(r.T))
			per[sec] += r.Arrivals
			last = max(last, sec)
		}
		for sec := 0; sec <= last; sec++ {
			s.Points = append(s.Points, Point{X: float64(sec), Y: float64(per[sec]), Lo: nan(), Hi: nan()})
		}
		f.Series = append(f.Series, s)
	}
	return f
}

// Recovery is figure 2: the fraction of clients that have succeeded over
// time, one line per policy.
func Recovery(reps []*analysis.Aggregate, tls map[string][]dataset.TimelineRow, until float64) Figure {
	f := Figure{File: "recovery.png", Style: Lines,
		Title:   "Recovery: fraction of clients back over time",
		XLabel:  "time since the outage began (s)",
		YLabel:  "clients succeeded (fraction)",
		Caption: "The further left a curve reaches 1, the sooner every user is back; a curve that flattens below 1 has clients still waiting at the horizon.",
	}
	for _, a := range reps {
		rows := TimelineOf(a, tls)
		if len(rows) == 0 {
			continue
		}
		s := Series{Name: analysis.ShortLabel(a.Cell)}
		n := float64(a.Cell.Scenario.Clients)
		done := 0
		s.Points = append(s.Points, Point{X: 0, Y: 0, Lo: nan(), Hi: nan()})
		for _, r := range rows { // only ticks with arrivals are stored: a step per row
			if r.T >= until {
				break
			}
			s.Points = append(s.Points, Point{X: r.T, Y: float64(done) / n, Lo: nan(), Hi: nan()})
			done += r.Served
			s.Points = append(s.Points, Point{X: r.T, Y: float64(done) / n, Lo: nan(), Hi: nan()})
		}
		s.Points = append(s.Points, Point{X: until, Y: float64(done) / n, Lo: nan(), Hi: nan()})
		f.Series = append(f.Series, s)
	}
	return f
}

func meanPoint(x float64, s analysis.Summary) (Point, bool) {
	if !s.Finished() {
		return Point{}, false
	}
	return Point{X: x, Y: s.Mean, Lo: s.Lo, Hi: s.Hi}, true
}

// WidthT99 is figure 3: t99 against jitter width for width-jitter clients,
// one line per cap, at one capacity. Cells where any seed did not finish
// are left out of their line.
func WidthT99(aggs []*analysis.Aggregate, capacity float64) Figure {
	f := Figure{File: "t99-width.png", Style: Lines,
		Title:   fmt.Sprintf("t99 against jitter width (exponential ± width, %g req/s)", capacity),
		XLabel:  "jitter width (fraction of the delay)",
		YLabel:  "t99 after recovery (s), mean with 95 % interval",
		Caption: "Narrow jitter leaves clients in step: t99 falls steeply up to about ±25 % and little after; caps change where the curve settles.",
	}
	byCap := map[time.Duration][]Point{}
	var caps []time.Duration
	for _, a := range aggs {
		c := a.Cell
		if c.Policy.Kind != sim.WidthJitter || c.Scenario.Capacity != capacity || c.Scenario.RetryAfter != 0 {
			continue
		}
		p, ok := meanPoint(c.Policy.Width, a.Summary(analysis.T99))
		if !ok {
			continue
		}
		if _, seen := byCap[c.Policy.Cap]; !seen {
			caps = append(caps, c.Policy.Cap)
		}
		byCap[c.Policy.Cap] = append(byCap[c.Policy.Cap], p)
	}
	sort.Slice(caps, func(i, j int) bool { return caps[i] < caps[j] })
	for _, cp := range caps {
		pts := byCap[cp]
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		f.Series = append(f.Series, Series{Name: "cap " + cp.String(), Points: pts})
	}
	return f
}

// Heatmap is figure 4: t99 over capacity × jitter width for width-jitter
// clients at one cap. NaN marks cells that did not finish or are missing.
func Heatmap(aggs []*analysis.Aggregate, cap time.Duration) Figure {
	f := Figure{File: "t99-heatmap.png", Style: Heat,
		Title:   fmt.Sprintf("t99 after recovery (s) over capacity × jitter width (exponential ± width, cap %v)", cap),
		XLabel:  "capacity (req/s)",
		YLabel:  "jitter width (fraction)",
		Caption: "Darker is faster recovery; blank cells did not finish within the horizon. More capacity forgives narrow jitter, and wide jitter forgives little capacity.",
	}
	xs, ys := map[float64]bool{}, map[float64]bool{}
	val := map[[2]float64]float64{}
	for _, a := range aggs {
		c := a.Cell
		if c.Policy.Kind != sim.WidthJitter || c.Policy.Cap != cap || c.Scenario.RetryAfter != 0 {
			continue
		}
		x, y := c.Scenario.Capacity, c.Policy.Width
		xs[x], ys[y] = true, true
		if s := a.Summary(analysis.T99); s.Finished() {
			val[[2]float64{x, y}] = s.Mean
		} else {
			val[[2]float64{x, y}] = math.NaN()
		}
	}
	g := &Grid{X: sortedKeys(xs), Y: sortedKeys(ys), ZName: "t99 after recovery (s)"}
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
	f.Grid = g
	return f
}

func sortedKeys(m map[float64]bool) []float64 {
	out := make([]float64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Float64s(out)
	return out
}

// ParetoScatter is figure 5: peak against t99, one point per policy with
// intervals on both axes; points on the Pareto front are marked.
func ParetoScatter(reps []*analysis.Aggregate, capacity float64) Figure {
	f := Figure{File: "pareto.png", Style: Scatter, HLine: capacity, HName: fmt.Sprintf("capacity %g req/s", capacity),
		Title:   fmt.Sprintf("Fast or gentle? peak load against t99 at %g req/s", capacity),
		XLabel:  "t99 after recovery (s), mean with 95 % interval",
		YLabel:  "peak after recovery (req/s)",
		Caption: "Down and to the left is better on both; points marked * are on the Pareto front (no policy beats them on t99, peak and traffic at once).",
	}
	front := map[*analysis.Aggregate]bool{}
	var feasible []*analysis.Aggregate // a policy whose clients gave up sends little: not a front to be on
	for _, a := range reps {
		if (analysis.Query{Capacity: capacity}).Infeasible(a) == "" {
			feasible = append(feasible, a)
		}
	}
	for _, a := range analysis.Pareto(feasible) {
		front[a] = true
	}
	for _, a := range reps {
		t, p := a.Summary(analysis.T99), a.Summary(analysis.Peak)
		if !t.Finished() {
			continue
		}
		name := analysis.ShortLabel(a.Cell)
		if front[a] {
			name += " *"
		}
		// Point.Lo/Hi hold the x interval; the y interval rides in a second point.
		f.Series = append(f.Series, Series{Name: name, Points: []Point{
			{X: t.Mean, Y: p.Mean, Lo: t.Lo, Hi: t.Hi},
			{X: t.Mean, Y: p.Mean, Lo: p.Lo, Hi: p.Hi},
		}})
	}
	return f
}

// CapacityT99 is figure 6: t99 against capacity, one line per policy,
// with 95 % bands.
func CapacityT99(aggs []*analysis.Aggregate, reps []*analysis.Aggregate) Figure {
	f := Figure{File: "t99-capacity.png", Style: Lines,
		Title:   "t99 against server capacity, per policy",
		XLabel:  "capacity after recovery (req/s)",
		YLabel:  "t99 after recovery (s), mean with 95 % band",
		Caption: "How much capacity each policy needs to bring 99 % of clients back quickly; lines stop where runs did not finish.",
	}
	for _, r := range reps {
		var pts []Point
		for _, a := range aggs {
			if samePolicyOtherCapacity(a.Cell, r.Cell) {
				if p, ok := meanPoint(a.Cell.Scenario.Capacity, a.Summary(analysis.T99)); ok {
					pts = append(pts, p)
				}
			}
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		if len(pts) > 0 {
			f.Series = append(f.Series, Series{Name: analysis.ShortLabel(r.Cell), Points: pts})
		}
	}
	return f
}

func samePolicyOtherCapacity(a, b experiments.Cell) bool {
	sa, sb := a.Scenario, b.Scenario
	sa.Capacity, sb.Capacity = 0, 0
	return a.Policy == b.Policy && sa == sb
}
