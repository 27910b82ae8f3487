package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendBox is the legend drawn beside the panels: one entry per named
// series (first occurrence), then the reference lines, then notes.
type legendBox struct {
	entries []entry
}

type entry struct {
	name  string
	thumb func(c *draw.Canvas) // nil: a note
}

const legendSize = 9

func legend(f Figure) legendBox {
	var l legendBox
	seen := map[string]bool{}
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if s.Name == "" || seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			c, d := style(s.Colour)
			mark := s.Mark
			l.entries = append(l.entries, entry{s.Name, func(cv *draw.Canvas) {
				y := (cv.Min.Y + cv.Max.Y) / 2
				switch mark {
				case Line, Front:
					cv.StrokeLine2(draw.LineStyle{Color: c, Width: vg.Points(1.8), Dashes: d}, cv.Min.X, y, cv.Max.X, y)
					if mark == Front {
						cv.DrawGlyph(draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}, vg.Point{X: (cv.Min.X + cv.Max.X) / 2, Y: y})
					}
				case Dot:
					cv.DrawGlyph(draw.GlyphStyle{Color: c, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}, vg.Point{X: (cv.Min.X + cv.Max.X) / 2, Y: y})
				case Hollow:
					cv.DrawGlyph(draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.RingGlyph{}}, vg.Point{X: (cv.Min.X + cv.Max.X) / 2, Y: y})
				}
			}})
		}
	}
	for _, h := range f.HLines {
		l.entries = append(l.entries, entry{h.Name, func(cv *draw.Canvas) {
			y := (cv.Min.Y + cv.Max.Y) / 2
			cv.StrokeLine2(draw.LineStyle{Color: color.Black, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}, cv.Min.X, y, cv.Max.X, y)
		}})
	}
	for _, v := range f.VLines {
		l.entries = append(l.entries, entry{v.Name, func(cv *draw.Canvas) {
			x := (cv.Min.X + cv.Max.X) / 2
			cv.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, cv.Min.Y, x, cv.Max.Y)
		}})
	}
	for _, n := range f.Notes {
		l.entries = append(l.entries, entry{name: n})
	}
	return l
}

const thumbW = 22

func (l legendBox) width() vg.Length {
	sty := textStyle(legendSize, color.Black)
	w := vg.Length(0)
	for _, e := range l.entries {
		w = max(w, sty.Rectangle(e.name).Max.X)
	}
	return w + vg.Points(thumbW+8)
}

// Legend sizes: the text shrinks from legendSize to minLegendSize so that
// every entry fits the legend's height; line is the line height in text
// heights.
const (
	minLegendSize = 6.5
	legendLine    = 1.5
)

// layout says how the legend fits a height: the text size, and how many
// entries are drawn. When even minLegendSize cannot hold them all, the
// last line drawn says how many are not (more).
func (l legendBox) layout(height vg.Length) (size float64, shown int) {
	for size = legendSize; size >= minLegendSize; size -= 0.5 {
		h := textStyle(size, color.Black).Rectangle("Xg").Size().Y * legendLine
		if fit := int(height / h); fit >= len(l.entries) {
			return size, len(l.entries)
		} else if size-0.5 < minLegendSize {
			return size, max(fit-1, 0) // the last line tells the rest
		}
	}
	return minLegendSize, 0
}

// more is the legend's last line when entries from n on are not drawn.
func (l legendBox) more(n int) string {
	rest := l.entries[n:]
	notes := 0
	for _, e := range rest {
		if e.thumb == nil {
			notes++
		}
	}
	if notes == len(rest) {
		first, _, _ := strings.Cut(rest[0].name, " ")
		last, _, _ := strings.Cut(rest[len(rest)-1].name, " ")
		return fmt.Sprintf("… %d more not shown (%s–%s)", len(rest), first, last)
	}
	return fmt.Sprintf("… %d more not shown", len(rest))
}

// draw writes the entries from the top of c, one line each, as small as
// it must for all to fit (layout); when they cannot, the last line says
// how many are not shown. A name wider than c is cut with "…".
func (l legendBox) draw(c draw.Canvas) {
	size, shown := l.layout(c.Max.Y - c.Min.Y)
	sty := textStyle(size, color.Black)
	sty.YAlign = draw.YCenter
	h := sty.Rectangle("Xg").Size().Y * legendLine
	y := c.Max.Y - h
	room := c.Max.X - c.Min.X - vg.Points(thumbW+6)
	entries := l.entries[:shown]
	if shown < len(l.entries) {
		entries = append(entries[:shown:shown], entry{name: l.more(shown)})
	}
	for _, e := range entries {
		name := e.name
		for sty.Rectangle(name).Max.X > room && len(name) > 4 {
			r := []rune(name)
			name = string(r[:len(r)-2]) + "…"
		}
		x := c.Min.X
		if e.thumb != nil {
			tc := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: y - h/3}, Max: vg.Point{X: x + vg.Points(thumbW), Y: y + h/3}}}
			e.thumb(tc)
			x += vg.Points(thumbW + 6)
		}
		c.FillText(sty, vg.Point{X: x, Y: y}, name)
		y -= h
	}
}

// heatRange is the range of the grid's values as the colour scale sees
// them (log when f.ZLog), widened as an axis is (a log scale to a decade
// at least, a linear one to hold zero), so that close values get close
// colours; ok is false when there is none. A cell that did not finish
// (+Inf) has no place on the scale: it is drawn darker than its end.
func heatRange(f Figure) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range f.Panels {
		if p.Grid == nil {
			continue
		}
		for _, row := range p.Grid.Z {
			for _, z := range row {
				if v, good := zScale(f, z); good {
					lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
				}
			}
		}
	}
	if !ok {
		return lo, hi, ok
	}
	if f.ZLog {
		r := atLeastADecade([2]float64{math.Exp(lo), math.Exp(hi)})
		return math.Log(r[0]), math.Log(r[1]), true
	}
	r := withZero([2]float64{lo, hi})
	return r[0], r[1], true
}

func zScale(f Figure, z float64) (float64, bool) {
	if math.IsNaN(z) || math.IsInf(z, 0) || (f.ZLog && z <= 0) {
		return 0, false
	}
	if f.ZLog {
		return math.Log(z), true
	}
	return z, true
}

type scaledGrid struct {
	g *Grid
	f Figure
}

func (s scaledGrid) Dims() (int, int) { return len(s.g.X), len(s.g.Y) }
func (s scaledGrid) Z(c, r int) float64 {
	z := s.g.Z[r][c]
	if math.IsInf(z, 1) { // not finished: beyond the scale's slow end (the heat map's Overflow)
		return z
	}
	v, ok := zScale(s.f, z)
	if !ok {
		return math.NaN()
	}
	return v
}
func (s scaledGrid) X(c int) float64 { return float64(c) }
func (s scaledGrid) Y(r int) float64 { return float64(r) }

func addHeat(p *plot.Plot, f Figure, g *Grid) error {
	lo, hi, ok := heatRange(f)
	if !ok {
		return nil
	}
	cm := HeatColours(lo, hi)
	h := plotter.NewHeatMap(scaledGrid{g, f}, cm.Palette(128))
	h.Min, h.Max = cm.Min(), cm.Max()
	h.NaN, h.Overflow = color.White, NotFinished
	p.Add(h)
	var lab plotter.XYLabels
	var colours []color.Color
	for r, row := range g.Z {
		for c, z := range row {
			text, col := "no runs", color.Color(color.Black)
			if math.IsInf(z, 1) {
				text, col = "not finished", color.White
			}
			if v, good := zScale(f, z); good {
				text = strconv.FormatFloat(z, 'f', 1, 64)
				if z >= 100 {
					text = strconv.FormatFloat(z, 'f', 0, 64)
				}
				if cc, err := cm.At(v); err == nil && Luminance(cc) < 0.18 {
					col = color.White
				}
			}
			lab.XYs = append(lab.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			lab.Labels = append(lab.Labels, text)
			colours = append(colours, col)
		}
	}
	l, err := plotter.NewLabels(lab)
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i] = textStyle(10, colours[i])
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
	}
	p.Add(l)
	return nil
}

// colourBar is a heat map's scale, drawn beside it.
type colourBar struct {
	cm  palette.ColorMap
	f   Figure
	lo  float64
	hi  float64
	log bool
}

func newColourBar(f Figure) *colourBar {
	lo, hi, ok := heatRange(f)
	if !ok {
		return nil
	}
	return &colourBar{cm: HeatColours(lo, hi), f: f, lo: lo, hi: hi, log: f.ZLog}
}

func (b *colourBar) draw(c draw.Canvas) {
	p := plot.New()
	p.HideX()
	p.Y.Label.Text = b.f.ZName
	p.Add(&plotter.ColorBar{ColorMap: b.cm, Vertical: true})
	p.Y.Min, p.Y.Max = b.cm.Min(), b.cm.Max()
	var ts plot.ConstantTicks
	unscale := func(v float64) float64 {
		if b.log {
			return math.Exp(v)
		}
		return v
	}
	lo, hi := unscale(b.cm.Min()), unscale(b.cm.Max())
	for _, t := range (LogTicks{}).Ticks(math.Max(lo, 1e-9), hi) {
		if t.Label == "" {
			continue
		}
		v := t.Value
		if b.log {
			v = math.Log(v)
		}
		if !b.log && len(ts) > 0 {
			continue
		}
		ts = append(ts, plot.Tick{Value: v, Label: t.Label})
	}
	if !b.log {
		ts = nil
		for i := 0; i <= 4; i++ {
			v := b.lo + (b.hi-b.lo)*float64(i)/4
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
		}
	}
	p.Y.Tick.Marker = ts
	p.Draw(draw.Crop(c, vg.Points(30), 0, vg.Points(10), -vg.Points(10)))
}
