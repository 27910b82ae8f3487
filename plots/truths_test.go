package plots

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// svgTexts renders f as SVG and returns every text it draws.
func svgTexts(t *testing.T, f Figure) []string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, f, "footer", "svg"); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`>([^<]*)</text>`).FindAllStringSubmatch(b.String(), -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// The legend shows every entry, or its last line says how many it does
// not (issue 22: the Pareto legend stopped at 23 of 25 front points
// without saying so). Random figures of 1 to 90 notes beside the Pareto
// figure's three series: each note is drawn, or it is among the last ones
// a "… N more not shown (a–b)" line counts; never one left out silently.
func TestLegendShowsEveryEntryOrSaysSo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(22, 3))
	pt := func(x, y float64) Point { return Point{X: x, Y: y, Lo: nan(), Hi: nan()} }
	for trial := range 40 {
		n := 1 + rng.IntN(90)
		if trial == 0 {
			n = 25 // the front
		}
		f := Figure{Name: "pareto", Title: "legend", X: Axis{Label: "x", Log: true}, Y: Axis{Label: "y", Log: true},
			Panels: []Panel{{Series: []Series{
				{Name: "feasible", Colour: 7, Mark: Dot, Points: []Point{pt(20, 500), pt(40, 300)}},
				{Name: "not feasible", Colour: -1, Mark: Hollow, Points: []Point{pt(30, 900)}},
				{Name: "front: none faster and gentler", Colour: 3, Mark: Front, Points: []Point{pt(18, 900), pt(90, 160)}},
			}}}}
		for i := range n {
			f.Notes = append(f.Notes, fmt.Sprintf("%d  exp 2s ×2 ≤15s ±50 %%", i+1))
		}
		texts := svgTexts(t, f)
		drawn, more := 0, ""
		for _, x := range texts {
			if strings.HasPrefix(x, "… ") {
				more = x
			}
		}
		for i, note := range f.Notes {
			if slices.Contains(texts, note) {
				drawn = i + 1
				continue
			}
			want := fmt.Sprintf("… %d more not shown (%d–%d)", n-i, i+1, n)
			if more != want {
				t.Errorf("%d notes: note %d not drawn, and the legend says %q, want %q", n, i+1, more, want)
			}
			break
		}
		if trial == 0 && drawn != 25 {
			t.Errorf("the Pareto legend of 25 front points draws %d of them", drawn)
		}
		if drawn == n && more != "" {
			t.Errorf("%d notes, all drawn, yet %q", n, more)
		}
	}
}

// Two policies with one short name are two named lines (issue 22: the
// capacity, clients and outage figures drew the second as an unnamed grey
// line). full-jitter at base 1 s and api-core at base 2 s are both "full
// jitter U(0, 2s) ×2 ≤1m0s": each figure of policies names every line,
// each differently, and its legend has an entry per line.
func TestSharedLabelsAreNamed(t *testing.T) {
	t.Parallel()
	api := sim.DefaultPolicy(sim.APICore)
	api.Base = 2 * time.Second
	full := sim.DefaultPolicy(sim.FullJitter)
	full.Base = time.Second
	if analysis.ShortName(api) != analysis.ShortName(full) {
		t.Fatalf("%q and %q: the test needs two policies of one short name", analysis.ShortName(api), analysis.ShortName(full))
	}
	full30, api30 := full, api
	full30.Cap, api30.Cap = 30*time.Second, 30*time.Second
	aggs, tls := aggregates(t, []sim.Policy{full, api, {Kind: sim.Fixed, Base: 5 * time.Second}, full30, api30}, []float64{30, 60})
	var reps []*analysis.Aggregate
	for _, a := range aggs {
		if a.Cell.Scenario.Capacity == 30 && a.Cell.Policy.Cap != 30*time.Second {
			reps = append(reps, a)
		}
	}
	figs := []Figure{Against(Axes[0], "s", aggs, reps, 6), Recovery("s", reps, tls, 300),
		Caps("s", aggs, func(sim.Policy) bool { return true })}
	for _, f := range figs {
		colours := map[int]string{}
		for _, pn := range f.Panels {
			for _, s := range pn.Series {
				if s.Name == "" {
					t.Errorf("%s: a line without a name (colour %d)", f.Name, s.Colour)
				}
				if c, ok := colours[s.Colour]; ok && c != s.Name {
					t.Errorf("%s: colour %d is %q and %q", f.Name, s.Colour, c, s.Name)
				}
				colours[s.Colour] = s.Name
			}
		}
		names := map[string]bool{}
		for _, name := range colours {
			if names[name] {
				t.Errorf("%s: two lines named %q", f.Name, name)
			}
			names[name] = true
		}
		entries := 0
		for _, e := range legend(f).entries {
			if names[e.name] {
				entries++
			}
		}
		if entries != len(colours) || len(colours) < 2 {
			t.Errorf("%s: %d lines, %d legend entries for them: %v", f.Name, len(colours), entries, colours)
		}
	}
	h := Herd("s", reps, tls, 10, 300)
	titles := map[string]bool{}
	for _, pn := range h.Panels {
		if titles[pn.Title] {
			t.Errorf("herd: two panels titled %q", pn.Title)
		}
		titles[pn.Title] = true
	}
}

// policyNames, over random sets of policies (many of one short name): a
// name per policy, starting with its short name; two policies share a
// name only when they are the same policy.
func TestPolicyNamesTellPoliciesApart(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(22, 4))
	kinds := sim.Kinds()
	for range 300 {
		var ps []sim.Policy
		for range 1 + rng.IntN(12) {
			p := sim.DefaultPolicy(kinds[rng.IntN(len(kinds))])
			p.Base = time.Duration(1+rng.IntN(2)) * time.Second
			if rng.IntN(3) == 0 && len(ps) > 0 {
				p = ps[rng.IntN(len(ps))] // the same policy again
			}
			ps = append(ps, p.Normalize())
		}
		names := shortNames(ps)
		for i := range ps {
			if !strings.HasPrefix(names[i], analysis.ShortName(ps[i])) {
				t.Errorf("%q: does not start with %q", names[i], analysis.ShortName(ps[i]))
			}
			for j := range i {
				if (names[i] == names[j]) != (ps[i] == ps[j]) {
					t.Errorf("%v named %q, %v named %q", ps[i], names[i], ps[j], names[j])
				}
			}
		}
	}
}

// hue is a colour's hue in degrees, (−180, 180]: 0 red (±20°: red to
// crimson), 60 yellow, 120 green, −120 blue.
func hue(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	x, y := float64(r)-0.5*float64(g)-0.5*float64(b), math.Sqrt(3)/2*(float64(g)-float64(b))
	return math.Atan2(y, x) * 180 / math.Pi
}

// A heat map's slow cells look bad (issue 22: its colours made slow cells
// bright): over any range, slower is darker and every colour is warm, from
// yellow to red (never the green or blue that read as good), the slowest
// red; a cell that never finished is darker than the slowest colour and
// labelled so, a cell without runs is not called unfinished; the colour
// bar says which way is slower.
func TestHeatmapSlowLooksBad(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(22, 5))
	for range 200 {
		lo := math.Log(1 + rng.Float64()*100)
		hi := lo + 0.01 + rng.Float64()*5
		cm := HeatColours(lo, hi)
		prevL := 2.0
		for i := 0; i <= 40; i++ {
			c, err := cm.At(lo + (hi-lo)*(1e-9+(1-2e-9)*float64(i)/40)) // inset: the reversed map's arithmetic may step past an end

			if err != nil {
				t.Fatal(err)
			}
			l, h := Luminance(c), hue(c)
			if l >= prevL {
				t.Fatalf("[%g, %g]: luminance %v at step %d, not below %v", lo, hi, l, i, prevL)
			}
			prevL = l
			if h < -20 || h > 65 {
				t.Fatalf("[%g, %g]: hue %.0f° at step %d: want yellow to red", lo, hi, h, i)
			}
			if i == 40 && (math.Abs(h) > 20 || l > 0.1) {
				t.Errorf("[%g, %g]: the slowest colour has hue %.0f°, luminance %.2f: want a dark red", lo, hi, h, l)
			}
		}
		if Luminance(NotFinished) >= prevL {
			t.Errorf("not finished (luminance %.3f) is not darker than the slowest colour (%.3f)", Luminance(NotFinished), prevL)
		}
	}
	if !strings.Contains(HeatScale, "darker red is slower") {
		t.Errorf("colour bar %q does not say which way is slower", HeatScale)
	}
	// A cell that never finished is +Inf (slower than any), a cell without
	// runs NaN.
	pols := []sim.Policy{width(0, time.Minute), width(0.5, time.Minute)}
	aggs, _ := aggregates(t, pols, []float64{10, 30})                 // 10 requests/s: 300 clients without jitter do not all come back in 10 minutes
	aggs = slices.DeleteFunc(aggs, func(a *analysis.Aggregate) bool { // no runs at 30/s ±50 %
		return a.Cell.Scenario.Capacity == 30 && a.Cell.Policy.Width == 0.5
	})
	h := Heatmap("s", aggs, sim.WidthJitter, time.Minute)
	g := h.Panels[0].Grid
	if h.ZName != HeatScale {
		t.Errorf("colour bar %q, want %q", h.ZName, HeatScale)
	}
	for r, y := range g.Y {
		for c, x := range g.X {
			z := g.Z[r][c]
			var a *analysis.Aggregate
			for _, b := range aggs {
				if b.Cell.Scenario.Capacity == x && b.Cell.Policy.Width == y {
					a = b
				}
			}
			switch {
			case a == nil && !math.IsNaN(z):
				t.Errorf("%g/s ±%g: no runs, yet %v", x, y, z)
			case a != nil && !a.Summary(analysis.T99).Finished() && !math.IsInf(z, 1):
				t.Errorf("%g/s ±%g: not finished, yet %v, want +Inf (slower than any)", x, y, z)
			case a != nil && a.Summary(analysis.T99).Finished() && z != a.Summary(analysis.T99).Mean:
				t.Errorf("%g/s ±%g: %v, want the mean t99 %v", x, y, z, a.Summary(analysis.T99).Mean)
			}
		}
	}
	if !slices.ContainsFunc(g.Z, func(row []float64) bool {
		return slices.ContainsFunc(row, func(z float64) bool { return math.IsInf(z, 1) })
	}) {
		t.Error("no unfinished cell: the test checks none")
	}
	texts := svgTexts(t, h)
	if !slices.Contains(texts, "not finished") || !slices.Contains(texts, "no runs") {
		t.Errorf("heat map labels %q: want a \"not finished\" and a \"no runs\" cell", texts)
	}
}

// An axis does not make a small difference look large (issue 22: one that
// did not start at zero made 2.7 % look large). Over random figures of
// close values: a linear axis holds zero; a log axis, which cannot, spans
// a decade at least, as does a heat map's log colour scale. So two values
// 2.7 % apart take at most 2.7 % of a linear axis and 1.2 % of a log one.
func TestAxesDoNotMagnifySmallDifferences(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(22, 7))
	for range 500 {
		base := math.Exp(rng.Float64()*12 - 3)
		spread := 1 + rng.Float64()*0.2
		var pts []Point
		for range 2 + rng.IntN(10) {
			v := base * (1 + (spread-1)*rng.Float64())
			pts = append(pts, Point{X: v, Y: base * (1 + (spread-1)*rng.Float64()), Lo: nan(), Hi: nan()})
		}
		mark := []Mark{Line, Dot, Front}[rng.IntN(3)]
		f := Figure{X: Axis{Log: rng.IntN(2) == 0}, Y: Axis{Log: rng.IntN(2) == 0}, Panels: []Panel{{Series: []Series{{Name: "s", Points: pts, Mark: mark}}}}}
		xr, yr := ranges(f)
		for _, ax := range []struct {
			name string
			log  bool
			r    [2]float64
		}{{"x", f.X.Log, xr}, {"y", f.Y.Log, yr}} {
			if ax.log && ax.r[1]/ax.r[0] < MinLogSpan*(1-1e-12) {
				t.Fatalf("%s log axis [%g, %g]: spans %.3g×, want ≥ %d×", ax.name, ax.r[0], ax.r[1], ax.r[1]/ax.r[0], MinLogSpan)
			}
			if !ax.log && ax.r[0] > 0 {
				t.Fatalf("%s linear axis [%g, %g] of values ≥ 0: want it to hold zero", ax.name, ax.r[0], ax.r[1])
			}
		}
		g := &Grid{X: []float64{1, 2}, Y: []float64{1, 2}, Z: [][]float64{{base, base * spread}, {base, base}}}
		if lo, hi, ok := heatRange(Figure{ZLog: true, Panels: []Panel{{Grid: g}}}); !ok || hi-lo < math.Log(MinLogSpan)*(1-1e-12) {
			t.Fatalf("heat map of %g … %g: log colour scale [%g, %g], want a decade", base, base*spread, math.Exp(lo), math.Exp(hi))
		}
	}
	// The ranking of the issue: t99 of 17.86 s and 18.35 s, 2.7 % apart.
	f := Figure{X: Axis{Log: true}, Y: Axis{Categories: []string{"a", "b"}},
		Panels: []Panel{{Series: []Series{{Mark: Dot, Points: []Point{{X: 17.86, Y: 0, Lo: 17.79, Hi: 17.93}, {X: 18.35, Y: 1, Lo: 18.2, Hi: 18.5}}}}}}}
	xr, _ := ranges(f)
	if share := math.Log(18.35/17.86) / math.Log(xr[1]/xr[0]); share > 0.027 {
		t.Errorf("17.86 s and 18.35 s take %.0f %% of the axis [%g, %g]", 100*share, xr[0], xr[1])
	}
}
