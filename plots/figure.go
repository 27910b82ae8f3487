package plots

import (
	"math"
)

// Point is one point of a series; Lo and Hi bound its 95 % interval (NaN
// for none).
type Point struct{ X, Y, Lo, Hi float64 }

// Series is one line (or set of points) of a figure.
type Series struct {
	Name   string
	Points []Point
}

// Style is how a figure is drawn.
type Style uint8

// Styles.
const (
	Lines   Style = iota // lines, with a band where points have intervals
	Scatter              // labelled points with error bars
	Heat                 // a heat map: Grid
)

// Grid is a heat map's data: Z[r][c] at (X[c], Y[r]); NaN where no cell.
type Grid struct {
	X, Y  []float64
	Z     [][]float64
	ZName string
}

// Figure is everything a plot shows.
type Figure struct {
	File    string // suggested file name, e.g. "herd.png"
	Title   string
	Caption string // one line for the report: what to see in it
	XLabel  string
	YLabel  string
	Style   Style
	Series  []Series
	Grid    *Grid
	HLine   float64 // a horizontal reference line (the capacity); 0: none
	HName   string
}

// Empty reports whether the figure has nothing to draw.
func (f *Figure) Empty() bool {
	if f.Grid != nil {
		for _, row := range f.Grid.Z {
			for _, z := range row {
				if !math.IsNaN(z) {
					return false
				}
			}
		}
		return true
	}
	for _, s := range f.Series {
		if len(s.Points) > 0 {
			return false
		}
	}
	return true
}

func nan() float64 { return math.NaN() }
