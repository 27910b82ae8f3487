package plots

import (
	"fmt"
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/analysis"
)

// Point is one point of a series. Lo and Hi bound its 95 % interval (NaN
// for none): on y for lines, on x for dots and Pareto points.
type Point struct{ X, Y, Lo, Hi float64 }

// Mark is how a series is drawn.
type Mark uint8

// Marks.
const (
	Line   Mark = iota // a line through the points, with a band where they have intervals
	Dot                // filled dots with horizontal error bars
	Hollow             // hollow grey dots: candidates that are not feasible
	Front              // a line through the points with numbered dots: the Pareto front
)

// Series is one line or set of points of a panel.
type Series struct {
	Name   string // legend entry; "" for none
	Points []Point
	Colour int // index into the palette; -1 for grey
	Mark   Mark
	Labels []string // printed beside each point (Front); nil for none
}

// Grid is a heat map's data: Z[r][c] at (X[c], Y[r]); NaN where there is
// no cell, +Inf where the cell's runs did not all reach the milestone (a
// time never reached: slower than any value, drawn darker than the
// slowest).
type Grid struct {
	X, Y []float64
	Z    [][]float64
}

// Panel is one plot of a figure; a figure of several is small multiples
// sharing both axes.
type Panel struct {
	Title  string
	Series []Series
	Grid   *Grid
	// Y, when set, is the panel's own y axis, its range its own data's
	// (panels of different quantities over one x: brownout.go); nil: the
	// figure's, shared.
	Y *Axis
}

// Axis describes one axis of every panel.
type Axis struct {
	Label      string
	Log        bool
	Categories []string // a categorical axis: value i is Categories[i]
	Ticks      []float64
}

// Ref is a reference line with its legend entry.
type Ref struct {
	Value float64
	Name  string
}

// Figure is everything a figure shows, before it is drawn.
type Figure struct {
	Name    string // file name without extension: "herd"
	Title   string // says the scenario it shows
	Caption string // for the report: what to see in it, and the scenario
	X, Y    Axis
	Panels  []Panel
	HLines  []Ref // drawn in every panel
	VLines  []Ref
	ZName   string // a heat map's colour: its quantity (colour bar label)
	ZLog    bool
	Notes   []string // extra legend lines (Pareto: what the numbers are)
	// seeds of the runs drawn (from, fromSeed), for the footer: Seeds.
	seeds []uint32
}

// from records that the figure draws a's runs (every seed of them).
func (f *Figure) from(a *analysis.Aggregate) {
	f.seeds = append(f.seeds, a.Seeds...)
	if len(f.seeds) > 1<<12 {
		f.seeds = f.Seeds()
	}
}

// fromSeed records that the figure draws one run of seed s.
func (f *Figure) fromSeed(s uint32) { f.seeds = append(f.seeds, s) }

// Seeds are the seeds of the runs the figure draws, ascending, each once:
// what its footer names (a figure of the dataset's cells drawn from fewer
// seeds than the dataset holds must not claim them all).
func (f *Figure) Seeds() []uint32 {
	out := slices.Clone(f.seeds)
	slices.Sort(out)
	return slices.Compact(out)
}

// Empty reports whether the figure has nothing to draw.
func (f *Figure) Empty() bool {
	for _, p := range f.Panels {
		if p.Grid != nil {
			for _, row := range p.Grid.Z {
				for _, z := range row {
					if !math.IsNaN(z) {
						return false
					}
				}
			}
		}
		for _, s := range p.Series {
			if len(s.Points) > 0 {
				return false
			}
		}
	}
	return true
}

// Degenerate says why the figure would show nothing worth a figure ("" when
// it is fine): empty, a panel without data, every point at one x or one y,
// a heat map with fewer than two rows or columns or one value, or a value a
// log axis cannot show.
func (f *Figure) Degenerate() string {
	if f.Empty() {
		return "no data"
	}
	xs, ys := map[float64]bool{}, map[float64]bool{}
	hasGrid := false
	for _, p := range f.Panels {
		var why string
		if p.Grid != nil {
			hasGrid = true
			why = gridDegenerate(p.Grid, f.ZLog)
		} else {
			why = f.seriesDegenerate(p, xs, ys)
		}
		if why != "" {
			return why
		}
	}
	if !hasGrid && (len(xs) < 2 && f.X.Categories == nil || len(ys) < 2 && f.Y.Categories == nil) {
		return fmt.Sprintf("every point at one x or one y (%d x values, %d y values)", len(xs), len(ys))
	}
	if f.Y.Categories != nil && len(f.Y.Categories) < 2 {
		return "fewer than two categories"
	}
	return ""
}

// gridDegenerate says why a heat map would show nothing worth a figure
// ("" when it is fine): fewer than two rows or columns, one value only, or
// a value ≤ 0 on a log colour scale (zlog).
func gridDegenerate(g *Grid, zlog bool) string {
	if len(g.X) < 2 || len(g.Y) < 2 {
		return fmt.Sprintf("heat map of %d × %d cells", len(g.X), len(g.Y))
	}
	zs := map[float64]bool{}
	for _, row := range g.Z {
		for _, z := range row {
			if !math.IsNaN(z) {
				zs[z] = true
				if zlog && z <= 0 {
					return "a heat map value ≤ 0 on a log colour scale"
				}
			}
		}
	}
	if len(zs) < 2 {
		return "a heat map of one value"
	}
	return ""
}

// seriesDegenerate says why a panel of series would show nothing worth a
// figure ("" when it is fine): no point, a point that is not a number, or
// one ≤ 0 on a log axis of f. It adds the points' x and y values to xs and
// ys, for the figure's check that they are not all at one x or one y.
func (f *Figure) seriesDegenerate(p Panel, xs, ys map[float64]bool) string {
	n := 0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if math.IsNaN(pt.X) || math.IsNaN(pt.Y) || math.IsInf(pt.X, 0) || math.IsInf(pt.Y, 0) {
				return fmt.Sprintf("%s: a point that is not a number", s.Name)
			}
			if (f.X.Log && pt.X <= 0) || (f.Y.Log && pt.Y <= 0) {
				return fmt.Sprintf("%s: a point ≤ 0 on a log axis", s.Name)
			}
			xs[pt.X], ys[pt.Y] = true, true
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("panel %q has no data", p.Title)
	}
	return ""
}

func nan() float64 { return math.NaN() }
