package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Size of a figure of one or two panels, at gonum/plot's 96 dpi: 960 × 600
// pixels; small multiples get BigWidth × BigHeight (1,200 × 800).
const (
	Width     = 10 * vg.Inch
	Height    = 6.25 * vg.Inch
	BigWidth  = 12.5 * vg.Inch
	BigHeight = 8.333 * vg.Inch
)

// Size returns the size f is drawn at.
func (f *Figure) Size() (vg.Length, vg.Length) {
	if len(f.Panels) > 2 {
		return BigWidth, BigHeight
	}
	return Width, Height
}

// palette10 is Tableau 10: ten colours that stay apart on screen and paper.
var palette10 = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

var grey = color.RGBA{150, 150, 150, 255}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// style returns colour i and its dashes: ten colours, then the same
// colours dashed, so that no two of up to forty lines look alike.
func style(i int) (color.Color, []vg.Length) {
	if i < 0 {
		return grey, nil
	}
	return palette10[i%len(palette10)], dashes[(i/len(palette10))%len(dashes)]
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), a}
}

func textStyle(size float64, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(plot.DefaultFont, vg.Points(size)), Handler: plot.DefaultTextHandler}
}

// HeatColours is the colour map of heat maps, over [min, max]: ColorBrewer's
// YlOrRd, from pale yellow at min to dark red at max, with luminance linear
// in the value (moreland.NewLuminance). A heat map's value is a time, and
// slower is worse: the slowest cells are the darkest and reddest, the
// colours of alarm, and no cell is drawn in green or blue, which read as
// good. A cell that never finished is darker still (NotFinished).
func HeatColours(min, max float64) palette.ColorMap {
	cm, err := moreland.NewLuminance(ylOrRd)
	if err != nil {
		panic("plots: " + err.Error()) // the controls are fixed and ordered
	}
	cm = palette.Reverse(cm)
	if max <= min {
		min, max = min-1, max+1
	}
	cm.SetMin(min)
	cm.SetMax(max)
	return cm
}

// ylOrRd is ColorBrewer's sequential YlOrRd (9 classes), darkest first, as
// moreland.NewLuminance wants its controls: increasing luminance.
var ylOrRd = []color.Color{
	color.RGBA{128, 0, 38, 255}, color.RGBA{189, 0, 38, 255}, color.RGBA{227, 26, 28, 255},
	color.RGBA{252, 78, 42, 255}, color.RGBA{253, 141, 60, 255}, color.RGBA{254, 178, 76, 255},
	color.RGBA{254, 217, 118, 255}, color.RGBA{255, 237, 160, 255}, color.RGBA{255, 255, 204, 255},
}

// NotFinished is the colour of a heat map's cell whose runs did not all
// finish: slower than any time the colour bar shows, so darker than its
// darkest red.
var NotFinished = color.RGBA{64, 0, 20, 255}

// Luminance is a colour's relative luminance Y (0 black … 1 white), from
// linearised sRGB.
func Luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// Render draws f to w as "png" or "svg". footer (provenance: tool,
// simulator, config, seeds) is printed at the bottom; the legend, or a
// heat map's colour bar, stands to the right of the panels, outside the
// data.
func Render(w io.Writer, f Figure, footer, format string) error {
	wd, ht := f.Size()
	var cv interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "png":
		cv = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(wd, ht), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))}
	case "svg":
		cv = vgsvg.New(wd, ht)
	default:
		return fmt.Errorf("plots: format %q: want png or svg", format)
	}
	dc := draw.New(cv)
	if format == "svg" {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
	}
	pad := vg.Points(8)
	title := textStyle(14, color.Black)
	title.XAlign, title.YAlign = draw.XCenter, draw.YTop
	dc.FillText(title, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - pad}, f.Title)
	foot := textStyle(8, color.Gray{Y: 90})
	foot.YAlign = draw.YBottom
	dc.FillText(foot, vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + pad/2}, footer)
	titleH := title.Rectangle(f.Title).Size().Y + 2*pad
	footH := foot.Rectangle("x").Size().Y + pad

	body := draw.Crop(dc, pad, -pad, footH, -titleH)
	side := vg.Length(0)
	var bar *colourBar
	leg := legend(f)
	switch {
	case f.ZName != "":
		bar = newColourBar(f)
		if bar != nil {
			side = vg.Points(110)
		}
	case len(leg.entries) > 0:
		side = min(leg.width(), (body.Max.X-body.Min.X)*0.4)
	}
	panels := draw.Crop(body, 0, -side-pad, 0, 0)
	if err := drawPanels(panels, f); err != nil {
		return fmt.Errorf("plot %s: %w", f.Name, err)
	}
	region := draw.Crop(body, body.Max.X-body.Min.X-side, 0, 0, 0)
	if bar != nil {
		bar.draw(region)
	} else {
		leg.draw(region)
	}
	_, err := cv.WriteTo(w)
	return err
}

// drawPanels draws the panels as small multiples sharing both axes.
func drawPanels(c draw.Canvas, f Figure) error {
	n := len(f.Panels)
	if n == 0 {
		return nil
	}
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	if n == 2 {
		cols = 2
	}
	rows := (n + cols - 1) / cols
	xr, yr := ranges(f)
	// The axis labels are the figure's, drawn once: below and left of the
	// panels, which then share one size each.
	lab := textStyle(12, color.Black)
	lab.XAlign, lab.YAlign = draw.XCenter, draw.YBottom
	h := lab.Rectangle("Xg").Size().Y
	c.FillText(lab, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Min.Y}, f.X.Label)
	lab.Rotation = math.Pi / 2
	lab.YAlign = draw.YTop
	c.FillText(lab, vg.Point{X: c.Min.X, Y: (c.Min.Y + c.Max.Y) / 2}, f.Y.Label)
	inner := draw.Crop(c, h*1.4, 0, h*1.4, 0)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(12)}
	for i, pn := range f.Panels {
		pyr := yr
		if pn.Y != nil {
			_, pyr = ranges(Figure{X: f.X, Y: *pn.Y, Panels: []Panel{pn}, HLines: f.HLines})
		}
		p, err := panel(f, pn, xr, pyr)
		if err != nil {
			return err
		}
		p.Draw(tiles.At(inner, i%cols, i/cols))
	}
	return nil
}

// ranges is the shared range of every panel's data and reference lines,
// padded; on a log axis padded by a factor.
func ranges(f Figure) ([2]float64, [2]float64) {
	xr := [2]float64{math.Inf(1), math.Inf(-1)}
	yr := xr
	add := func(r *[2]float64, v float64, log bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) || (log && v <= 0) {
			return
		}
		r[0], r[1] = math.Min(r[0], v), math.Max(r[1], v)
	}
	for _, p := range f.Panels {
		if p.Grid != nil {
			xr = [2]float64{-0.5, float64(len(p.Grid.X)) - 0.5}
			yr = [2]float64{-0.5, float64(len(p.Grid.Y)) - 0.5}
			return xr, yr
		}
		for _, s := range p.Series {
			for _, pt := range s.Points {
				add(&xr, pt.X, f.X.Log)
				add(&yr, pt.Y, f.Y.Log)
				if s.Mark == Dot || s.Mark == Hollow || s.Mark == Front {
					add(&xr, pt.Lo, f.X.Log)
					add(&xr, pt.Hi, f.X.Log)
				} else {
					add(&yr, pt.Lo, f.Y.Log)
					add(&yr, pt.Hi, f.Y.Log)
				}
			}
		}
	}
	for _, h := range f.HLines {
		add(&yr, h.Value, f.Y.Log)
	}
	for _, v := range f.VLines {
		add(&xr, v.Value, f.X.Log)
	}
	pad := func(r [2]float64, log bool, cat int) [2]float64 {
		if cat > 0 {
			return [2]float64{-0.6, float64(cat) - 0.4}
		}
		if math.IsInf(r[0], 1) {
			return [2]float64{0, 1}
		}
		if log {
			return atLeastADecade(r)
		}
		r = withZero(r)
		d := (r[1] - r[0]) * 0.04
		if d == 0 {
			d = math.Max(math.Abs(r[0])*0.1, 1)
		}
		return [2]float64{r[0] - d, r[1] + d}
	}
	return pad(xr, f.X.Log, len(f.X.Categories)), pad(yr, f.Y.Log, len(f.Y.Categories))
}

// MinLogSpan is the least factor a log scale spans (an axis, a heat map's
// colours): on a narrower one a small difference fills the panel. On a
// linear axis, which starts at zero (withZero), a difference of 2.7 %
// between two values takes at most 2.7 % of the axis; on a log one of at
// least a decade, at most log10(1.027), 1.2 %.
const MinLogSpan = 10

// atLeastADecade pads a log scale's data range [lo, hi] (0 < lo ≤ hi) by
// a twentieth of its span on each side, then widens it about its
// geometric centre to span MinLogSpan at least.
func atLeastADecade(r [2]float64) [2]float64 {
	k := math.Pow(r[1]/r[0], 0.05)
	r = [2]float64{r[0] / k, r[1] * k}
	if r[1]/r[0] < MinLogSpan {
		c := math.Sqrt(r[0] * r[1])
		r = [2]float64{c / math.Sqrt(MinLogSpan), c * math.Sqrt(MinLogSpan)}
	}
	return r
}

// withZero widens a linear axis's data range to hold zero: an axis that
// starts above zero makes a small difference look large.
func withZero(r [2]float64) [2]float64 {
	return [2]float64{math.Min(r[0], 0), math.Max(r[1], 0)}
}

func setAxis(a *plot.Axis, ax Axis, r [2]float64) {
	a.Min, a.Max = r[0], r[1]
	switch {
	case ax.Categories != nil:
		var ts plot.ConstantTicks
		for i, c := range ax.Categories {
			ts = append(ts, plot.Tick{Value: float64(i), Label: c})
		}
		a.Tick.Marker = ts
	case ax.Ticks != nil:
		var ts plot.ConstantTicks
		for _, v := range ax.Ticks {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		a.Tick.Marker = ts
		if ax.Log {
			a.Scale = plot.LogScale{}
		}
	case ax.Log:
		a.Scale = plot.LogScale{}
		a.Tick.Marker = LogTicks{}
	}
}

// LogTicks labels 1, 2 and 5 times each power of ten within the range, with
// minor ticks between, and the ends when fewer than two labels fall inside.
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(min, max float64) []plot.Tick {
	for _, labelled := range [][]int{{1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var out []plot.Tick
		labels := 0
		for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
			for m := 1; m < 10; m++ {
				v := float64(m) * math.Pow(10, e)
				if v < min || v > max {
					continue
				}
				t := plot.Tick{Value: v}
				for _, l := range labelled {
					if m == l {
						t.Label = strconv.FormatFloat(v, 'g', 4, 64)
						labels++
					}
				}
				out = append(out, t)
			}
		}
		if labels >= 3 {
			return out
		}
	}
	// A range narrower than one step of the mantissa: five even ticks.
	var out []plot.Tick
	for i := 0; i <= 4; i++ {
		v := min * math.Pow(max/min, float64(i)/4)
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
	}
	return out
}

// panel builds one panel of f as a plot: its heat map, its series, the
// figure's reference lines, and both axes over the shared ranges xr, yr.
func panel(f Figure, pn Panel, xr, yr [2]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Add(plotter.NewGrid())
	if pn.Grid != nil {
		if err := addHeat(p, f, pn.Grid); err != nil {
			return nil, err
		}
	}
	for _, s := range pn.Series {
		if err := addSeries(p, f, s, xr, yr); err != nil {
			return nil, err
		}
	}
	if err := addRefLines(p, f, xr, yr); err != nil {
		return nil, err
	}
	setAxis(&p.X, f.X, xr)
	if pn.Y != nil {
		setAxis(&p.Y, *pn.Y, yr)
		p.Y.Label.Text = pn.Y.Label
	} else {
		setAxis(&p.Y, f.Y, yr)
	}
	return p, nil
}

// addSeries draws one series of f on p as its mark says: a line with its
// band, or dots with their error bars. A series without points draws
// nothing.
func addSeries(p *plot.Plot, f Figure, s Series, xr, yr [2]float64) error {
	if len(s.Points) == 0 {
		return nil
	}
	c, d := style(s.Colour)
	switch s.Mark {
	case Line:
		return addLine(p, s, c, d, yr, f.Y.Log)
	case Dot, Hollow, Front:
		return addDots(p, s, c, xr, f.X.Log)
	}
	return nil
}

// addLine draws a Line series in colour c with dashes d: its 95 % band
// where every point has an interval (clamped to the y range yr on a log
// axis), the line, and a dot at each point when there are at most 30.
func addLine(p *plot.Plot, s Series, c color.Color, d []vg.Length, yr [2]float64, log bool) error {
	clamp := func(v float64) float64 { // a band's low end below a log axis is drawn at its bottom
		if log && v <= 0 {
			return yr[0]
		}
		return v
	}
	if band := bandPolygon(s.Points, clamp); band != nil {
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		poly.Color = withAlpha(c, 50)
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, err := plotter.NewLine(xys(s.Points))
	if err != nil {
		return err
	}
	l.Color, l.Dashes, l.Width = c, d, vg.Points(1.8)
	p.Add(l)
	if len(s.Points) <= 30 {
		sc, err := plotter.NewScatter(xys(s.Points))
		if err != nil {
			return err
		}
		sc.Color, sc.Radius, sc.Shape = c, vg.Points(2.2), draw.CircleGlyph{}
		p.Add(sc)
	}
	return nil
}

// addDots draws a Dot, Hollow or Front series in colour c: a Front's line
// through its points, the horizontal error bars (clamped to the x range xr
// on a log axis), the dots (rings for Hollow) and the points' labels.
func addDots(p *plot.Plot, s Series, c color.Color, xr [2]float64, log bool) error {
	if s.Mark == Front && len(s.Points) > 1 {
		l, err := plotter.NewLine(xys(s.Points))
		if err != nil {
			return err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		p.Add(l)
	}
	if err := addErrors(p, s, c, xr, log); err != nil {
		return err
	}
	sc, err := plotter.NewScatter(xys(s.Points))
	if err != nil {
		return err
	}
	sc.Color, sc.Radius, sc.Shape = c, vg.Points(3.5), draw.CircleGlyph{}
	if s.Mark == Hollow {
		sc.Shape, sc.Radius = draw.RingGlyph{}, vg.Points(3)
	}
	p.Add(sc)
	if s.Labels == nil {
		return nil
	}
	return addLabels(p, s)
}

// addLabels prints each point's label beside it, alternately above right
// and below right, so that neighbours do not collide.
func addLabels(p *plot.Plot, s Series) error {
	for side := 0; side < 2; side++ {
		var lab plotter.XYLabels
		for j, pt := range s.Points {
			if j%2 == side {
				lab.XYs = append(lab.XYs, plotter.XY{X: pt.X, Y: pt.Y})
				lab.Labels = append(lab.Labels, s.Labels[j])
			}
		}
		if len(lab.XYs) == 0 {
			continue
		}
		lb, err := plotter.NewLabels(lab)
		if err != nil {
			return err
		}
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(4)}
		if side == 1 {
			lb.Offset = vg.Point{X: vg.Points(-11), Y: vg.Points(-14)}
		}
		for j := range lb.TextStyle {
			lb.TextStyle[j] = textStyle(10, color.Black)
		}
		p.Add(lb)
	}
	return nil
}

// addRefLines draws f's reference lines across the panel: each horizontal
// one dashed black over the x range xr, each vertical one dotted grey over
// the y range yr.
func addRefLines(p *plot.Plot, f Figure, xr, yr [2]float64) error {
	for _, h := range f.HLines {
		l, err := plotter.NewLine(plotter.XYs{{X: xr[0], Y: h.Value}, {X: xr[1], Y: h.Value}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = color.Black, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
	}
	for _, v := range f.VLines {
		l, err := plotter.NewLine(plotter.XYs{{X: v.Value, Y: yr[0]}, {X: v.Value, Y: yr[1]}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = color.Gray{Y: 60}, vg.Points(1.2), []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
	}
	return nil
}

type xyErr struct{ pts []Point }

func (e xyErr) Len() int                    { return len(e.pts) }
func (e xyErr) XY(i int) (float64, float64) { return e.pts[i].X, e.pts[i].Y }
func (e xyErr) XError(i int) (float64, float64) {
	return e.pts[i].X - e.pts[i].Lo, e.pts[i].Hi - e.pts[i].X
}

func addErrors(p *plot.Plot, s Series, c color.Color, xr [2]float64, log bool) error {
	var pts []Point
	for _, pt := range s.Points {
		if math.IsNaN(pt.Lo) || math.IsNaN(pt.Hi) {
			continue
		}
		if log && pt.Lo <= 0 {
			pt.Lo = xr[0]
		}
		pts = append(pts, pt)
	}
	if len(pts) == 0 {
		return nil
	}
	xe, err := plotter.NewXErrorBars(xyErr{pts})
	if err != nil {
		return err
	}
	xe.Color = c
	xe.LineStyle.Width = vg.Points(1.2)
	p.Add(xe)
	return nil
}

func xys(pts []Point) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		out[i] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	return out
}

// bandPolygon outlines the 95 % band of a series: along Hi, back along Lo.
func bandPolygon(pts []Point, clamp func(float64) float64) plotter.XYs {
	var up, down plotter.XYs
	for _, pt := range pts {
		if math.IsNaN(pt.Lo) || math.IsNaN(pt.Hi) {
			return nil
		}
		up = append(up, plotter.XY{X: pt.X, Y: pt.Hi})
		down = append(down, plotter.XY{X: pt.X, Y: clamp(pt.Lo)})
	}
	if len(up) < 2 {
		return nil
	}
	for i := len(down) - 1; i >= 0; i-- {
		up = append(up, down[i])
	}
	return up
}
