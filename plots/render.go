package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Size of every PNG, at gonum/plot's 96 dpi: 960 × 600 pixels.
const (
	Width  = 10 * vg.Inch
	Height = 6.25 * vg.Inch
)

// palette10 is Tableau 10: ten colours that stay apart on screen and paper.
var palette10 = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}}

// style returns series i's colour and dashes: ten colours, then the same
// colours dashed, so that no two of up to forty lines look alike.
func style(i int) (color.Color, []vg.Length) {
	return palette10[i%len(palette10)], dashes[(i/len(palette10))%len(dashes)]
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), a}
}

// Render draws f as a PNG to w. footer (provenance: tool, simulator,
// config, seeds) is printed under the x axis label.
func Render(w io.Writer, f Figure, footer string) error {
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.X.Label.Text = f.XLabel
	if footer != "" {
		p.X.Label.Text += "\n" + footer
	}
	p.Y.Label.Text = f.YLabel
	p.Legend.Top = f.Style != Scatter // a scatter's top right holds the slow, loud policies
	p.Legend.Left = false
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	var err error
	switch f.Style {
	case Lines:
		err = addLines(p, f)
	case Scatter:
		err = addScatter(p, f)
	case Heat:
		err = addHeat(p, f)
	}
	if err != nil {
		return fmt.Errorf("plot %s: %w", f.File, err)
	}
	if f.HLine > 0 {
		l := plotter.NewFunction(func(float64) float64 { return f.HLine })
		l.Color = color.Black
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(l)
		p.Legend.Add(f.HName, l)
		p.Y.Min = math.Min(p.Y.Min, 0)
		p.Y.Max = math.Max(p.Y.Max, f.HLine*1.1)
	}
	if f.Empty() {
		p.Title.Text += " — no data in this dataset"
	}
	wt, err := p.WriterTo(Width, Height, "png")
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

func xys(pts []Point) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		out[i] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	return out
}

func addLines(p *plot.Plot, f Figure) error {
	for i, s := range f.Series {
		if len(s.Points) == 0 {
			continue
		}
		c, d := style(i)
		if band := bandPolygon(s.Points); band != nil {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return err
			}
			poly.Color = withAlpha(c, 50)
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l, pts, err := plotter.NewLinePoints(xys(s.Points))
		if err != nil {
			return err
		}
		l.Color, l.Dashes, l.Width = c, d, vg.Points(1.8)
		pts.Color = c
		pts.Radius = vg.Points(1.5)
		if len(s.Points) > 60 {
			pts.Radius = 0
		}
		p.Add(l, pts)
		p.Legend.Add(s.Name, l)
	}
	return nil
}

// bandPolygon outlines the 95 % band of a series: along Hi, back along Lo.
func bandPolygon(pts []Point) plotter.XYs {
	var up, down plotter.XYs
	for _, pt := range pts {
		if math.IsNaN(pt.Lo) || math.IsNaN(pt.Hi) {
			return nil
		}
		up = append(up, plotter.XY{X: pt.X, Y: pt.Hi})
		down = append(down, plotter.XY{X: pt.X, Y: pt.Lo})
	}
	if len(up) < 2 {
		return nil
	}
	for i := len(down) - 1; i >= 0; i-- {
		up = append(up, down[i])
	}
	return up
}

type xErr struct{ pts []Point }

func (e xErr) Len() int                  { return 1 }
func (e xErr) XY(int) (float64, float64) { return e.pts[0].X, e.pts[0].Y }
func (e xErr) XError(int) (float64, float64) {
	return e.pts[0].X - e.pts[0].Lo, e.pts[0].Hi - e.pts[0].X
}
func (e xErr) YError(int) (float64, float64) {
	return e.pts[1].Y - e.pts[1].Lo, e.pts[1].Hi - e.pts[1].Y
}
func finite(pts []Point) bool { return !math.IsNaN(pts[0].Lo) && !math.IsNaN(pts[1].Lo) }

func addScatter(p *plot.Plot, f Figure) error {
	for i, s := range f.Series {
		if len(s.Points) < 2 {
			continue
		}
		c, _ := style(i)
		sc, err := plotter.NewScatter(plotter.XYs{{X: s.Points[0].X, Y: s.Points[0].Y}})
		if err != nil {
			return err
		}
		sc.Color = c
		sc.Shape = shapes[(i/len(palette10))%len(shapes)]
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(s.Name, sc)
		if finite(s.Points) {
			e := xErr{s.Points}
			xe, err := plotter.NewXErrorBars(e)
			if err != nil {
				return err
			}
			ye, err := plotter.NewYErrorBars(e)
			if err != nil {
				return err
			}
			xe.Color, ye.Color = c, c
			p.Add(xe, ye)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: s.Points[0].X, Y: s.Points[0].Y}}, Labels: []string{s.Name}})
		if err != nil {
			return err
		}
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(3)}
		for j := range lb.TextStyle {
			lb.TextStyle[j].Font.Size = vg.Points(8)
			lb.TextStyle[j].Color = c
		}
		p.Add(lb)
	}
	p.X.Min = 0
	p.Y.Min = 0
	return nil
}

// indexGrid lays a Grid out on integer coordinates, so that uneven axis
// values (60, 120, 240 …) get cells of equal size.
type indexGrid struct{ g *Grid }

func (g indexGrid) Dims() (int, int)   { return len(g.g.X), len(g.g.Y) }
func (g indexGrid) Z(c, r int) float64 { return g.g.Z[r][c] }
func (g indexGrid) X(c int) float64    { return float64(c) }
func (g indexGrid) Y(r int) float64    { return float64(r) }

func minMax(g *Grid, min bool) (float64, bool) {
	v, ok := math.Inf(1), false
	if !min {
		v = math.Inf(-1)
	}
	for _, row := range g.Z {
		for _, z := range row {
			if math.IsNaN(z) {
				continue
			}
			ok = true
			if (min && z < v) || (!min && z > v) {
				v = z
			}
		}
	}
	return v, ok
}

type logGrid struct{ indexGrid }

func (g logGrid) Z(c, r int) float64 { return math.Log(g.indexGrid.Z(c, r)) }

type labelTicks []string

func (t labelTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, l := range t {
		out = append(out, plot.Tick{Value: float64(i), Label: l})
	}
	return out
}

func addHeat(p *plot.Plot, f Figure) error {
	g := f.Grid
	if g == nil || len(g.X) == 0 || len(g.Y) == 0 {
		return nil
	}
	lo, ok := minMax(g, true)
	hi, _ := minMax(g, false)
	if !ok {
		return nil
	}
	if hi <= lo {
		hi = lo + 1
	}
	// Colour follows log t99: the cells that never settle would otherwise
	// wash out every difference among the rest.
	pal := moreland.SmoothBlueRed()
	pal.SetMin(math.Log(lo))
	pal.SetMax(math.Log(hi))
	h := plotter.NewHeatMap(logGrid{indexGrid{g}}, pal.Palette(64))
	h.Min, h.Max = math.Log(lo), math.Log(hi)
	h.NaN = color.White
	p.Add(h)
	var lab plotter.XYLabels
	for r, row := range g.Z {
		for c, z := range row {
			text := "not finished"
			if !math.IsNaN(z) {
				text = strconv.FormatFloat(z, 'f', 1, 64)
			}
			lab.XYs = append(lab.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			lab.Labels = append(lab.Labels, text)
		}
	}
	l, err := plotter.NewLabels(lab)
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(9)
		l.TextStyle[i].XAlign = -0.5
		l.TextStyle[i].YAlign = -0.5
	}
	p.Add(l)
	var xt, yt labelTicks
	for _, x := range g.X {
		xt = append(xt, strconv.FormatFloat(x, 'g', -1, 64))
	}
	for _, y := range g.Y {
		yt = append(yt, strconv.FormatFloat(y, 'g', -1, 64))
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.Legend.Add(fmt.Sprintf("%s: blue %.0f … red %.0f (log scale)", g.ZName, lo, hi))
	return nil
}
