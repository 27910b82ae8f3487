package plots

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// aggregates runs each policy × capacity on three seeds of a small
// scenario and returns the aggregates and the timelines of first seeds.
func aggregates(t *testing.T, pols []sim.Policy, caps []float64) ([]*analysis.Aggregate, map[string][]dataset.TimelineRow) {
	t.Helper()
	var recs []analysis.Record
	tls := map[string][]dataset.TimelineRow{}
	for _, cp := range caps {
		for _, p := range pols {
			sc := sim.Article()
			sc.Clients, sc.Capacity, sc.Horizon = 300, cp, 10*time.Minute
			c := grid.Cell{Scenario: sc, Policy: p.Normalize()}
			for seed := uint32(1); seed <= 3; seed++ {
				var s sim.Sim
				var tl sim.Timeline
				res, err := s.Run(sc, c.Policy, sim.NewMulberry32(seed), &tl)
				if err != nil {
					t.Fatal(err)
				}
				r := grid.Run{Cell: c, Seed: seed}
				recs = append(recs, analysis.Record{Sweep: "t", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: seed, Cell: c, Result: res}})
				for k, a := range tl.Arrivals {
					if a > 0 {
						tls[r.Key()] = append(tls[r.Key()], dataset.TimelineRow{RunKey: r.Key(), Tick: k, T: float64(k) / 10, Arrivals: int(a), Served: int(tl.Served[k])})
					}
				}
			}
		}
	}
	return analysis.Aggregates(recs), tls
}

func width(w float64, cap time.Duration) sim.Policy {
	return sim.Policy{Kind: sim.WidthJitter, Base: time.Second, Cap: cap, Multiplier: 2, Width: w}
}

func TestHerdAndRecoverySeries(t *testing.T) {
	t.Parallel()
	aggs, tls := aggregates(t, []sim.Policy{sim.DefaultPolicy(sim.Decorrelated), {Kind: sim.Fixed, Base: 5 * time.Second}}, []float64{30})
	f := Herd("s", aggs, tls, 10, 200)
	if len(f.Panels) != 2 || f.HLines[0].Value != 30 || f.VLines[0].Value != 0 {
		t.Fatalf("herd: %d panels, lines %+v %+v: want a panel per policy, the capacity and the recovery", len(f.Panels), f.HLines, f.VLines)
	}
	for i, pn := range f.Panels {
		total := 0.0
		for j, p := range pn.Series[0].Points {
			if p.X != float64(j-10) {
				t.Fatalf("%s: point %d at x=%v, want whole seconds from −10", pn.Title, j, p.X)
			}
			total += p.Y
		}
		// The per-second sums add up to the requests sent from 10 s before
		// recovery (30 s) to 200 s after.
		want := 0
		for _, r := range TimelineOf(aggs[i], tls) {
			if r.T >= 20 && r.T < 230 {
				want += r.Arrivals
			}
		}
		if total != float64(want) || want == 0 {
			t.Errorf("%s: %v requests in the series, %d in the timeline", pn.Title, total, want)
		}
	}
	rec := Recovery("s", aggs, tls, 570)
	if rec.HLines[0].Value != 0.99 || rec.VLines[0].Value != 0 {
		t.Errorf("recovery: lines %+v %+v: want the 99 %% line and the recovery", rec.HLines, rec.VLines)
	}
	for _, s := range rec.Panels[0].Series {
		last := s.Points[len(s.Points)-1]
		prev := -1.0
		for _, p := range s.Points {
			if p.Y < prev {
				t.Fatalf("%s: the recovered fraction falls at %v s", s.Name, p.X)
			}
			prev = p.Y
		}
		if last.Y != 1 {
			t.Errorf("%s: ends at %v, want 1 (every client served within 570 s of recovery)", s.Name, last.Y)
		}
	}
}

func TestParamHeatmapAgainstPareto(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{width(0.1, time.Minute), width(0.5, time.Minute), width(0.5, 30*time.Second), width(0.1, 30*time.Second), sim.DefaultPolicy(sim.FullJitter)}
	aggs, _ := aggregates(t, pols, []float64{30, 60})
	f := Param("fam", aggs, sim.WidthJitter, true)
	if len(f.Panels) != 2 || len(f.Panels[0].Series) != 2 || f.Panels[0].Series[0].Name != "cap 30s" {
		t.Fatalf("t99-width: %+v: want a panel per capacity, lines by cap, ascending", f.Panels)
	}
	for _, pn := range f.Panels {
		for _, s := range pn.Series {
			for j, p := range s.Points {
				if j > 0 && p.X <= s.Points[j-1].X {
					t.Errorf("%s: widths not ascending", s.Name)
				}
				if !(p.Lo <= p.Y && p.Y <= p.Hi) {
					t.Errorf("%s: point %+v outside its interval", s.Name, p)
				}
			}
		}
	}
	if why := f.Degenerate(); why != "" {
		t.Errorf("t99-width: %s", why)
	}
	c := Caps("fam", aggs, func(sim.Policy) bool { return true })
	if len(c.Panels) != 2 || len(c.Panels[0].Series) != 2 || len(c.Panels[0].Series[0].Points) != 2 || c.Panels[0].Series[0].Points[0].X != 30 || c.Degenerate() != "" {
		t.Errorf("t99-cap: %+v (%s): want a panel per capacity, a line per width over caps 30 and 60 s", c.Panels, c.Degenerate())
	}
	h := Heatmap("fam", aggs, sim.WidthJitter, time.Minute)
	g := h.Panels[0].Grid
	if len(g.X) != 2 || len(g.Y) != 2 || g.X[0] != 30 || g.Y[1] != 0.5 || h.Degenerate() != "" {
		t.Fatalf("heat map grid %+v (%s)", g, h.Degenerate())
	}
	reps := []*analysis.Aggregate{aggs[0], aggs[4]}
	a := Against(Axes[0], "fam", aggs, reps, 1)
	if len(a.Panels) != 2 || len(a.Panels[0].Series[0].Points) != 2 || a.Panels[0].Series[0].Points[0].X != 30 {
		t.Errorf("t99-capacity: %+v, want each policy over both capacities, a panel each", a.Panels)
	}
	var at30 []*analysis.Aggregate
	for _, x := range aggs {
		if x.Cell.Scenario.Capacity == 30 {
			at30 = append(at30, x)
		}
	}
	p, front := Pareto("s", at30, len(at30))
	if len(front) == 0 || len(p.Notes) != len(front) || p.Degenerate() != "" {
		t.Errorf("pareto: front %d, notes %d (%s)", len(front), len(p.Notes), p.Degenerate())
	}
}

// The front: no member is beaten on both metrics by any candidate, and
// every other candidate is beaten by a member (random candidate sets).
func TestFrontProperty(t *testing.T) {
	t.Parallel()
	aggs, _ := aggregates(t, []sim.Policy{width(0.1, time.Minute), width(0.5, time.Minute), width(0.25, 30*time.Second),
		width(0, time.Minute), sim.DefaultPolicy(sim.FullJitter), sim.DefaultPolicy(sim.Decorrelated), sim.DefaultPolicy(sim.EqualJitter)}, []float64{30})
	rng := rand.New(rand.NewPCG(1, 2))
	vals := func(a *analysis.Aggregate) []float64 {
		return []float64{a.Summary(analysis.T99).Mean, a.Summary(analysis.Peak).Mean}
	}
	for trial := 0; trial < 200; trial++ {
		var set []*analysis.Aggregate
		for _, a := range aggs {
			if rng.IntN(2) == 0 && a.Summary(analysis.T99).Finished() {
				set = append(set, a)
			}
		}
		front := analysis.Front(set, analysis.T99, analysis.Peak)
		on := map[*analysis.Aggregate]bool{}
		for _, a := range front {
			on[a] = true
			for _, b := range set {
				if analysis.Dominates(vals(b), vals(a)) {
					t.Fatalf("trial %d: front member dominated", trial)
				}
			}
		}
		for _, a := range set {
			if on[a] {
				continue
			}
			beaten := false
			for _, b := range front {
				beaten = beaten || analysis.Dominates(vals(b), vals(a))
			}
			if !beaten {
				t.Fatalf("trial %d: %s is off the front, yet no member beats it", trial, a.Cell.Policy.Short())
			}
		}
	}
}

// LogTicks labels at least three values inside any range, in order.
func TestLogTicks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 1000; trial++ {
		lo := math.Exp(rng.Float64()*14 - 4)
		hi := lo * (1 + rng.Float64()*math.Exp(rng.Float64()*8))
		labels, prev := 0, math.Inf(-1)
		for _, tk := range (LogTicks{}).Ticks(lo, hi) {
			if tk.Value < lo*(1-1e-12) || tk.Value > hi*(1+1e-12) || tk.Value <= prev {
				t.Fatalf("[%g, %g]: tick %g out of range or order", lo, hi, tk.Value)
			}
			prev = tk.Value
			if tk.Label != "" {
				labels++
			}
		}
		if labels < 3 {
			t.Fatalf("[%g, %g]: %d labels", lo, hi, labels)
		}
	}
}

// The heat map's colours: larger values darker, as its caption says.
func TestHeatColoursDarkerIsSlower(t *testing.T) {
	t.Parallel()
	cm := HeatColours(1, 9)
	prev := 2.0
	for v := 1.0; v <= 9; v += 0.5 {
		c, err := cm.At(v)
		if err != nil {
			t.Fatal(err)
		}
		if l := Luminance(c); l >= prev {
			t.Fatalf("luminance %v at %v, not below %v", l, v, prev)
		} else {
			prev = l
		}
	}
}

func TestDegenerate(t *testing.T) {
	t.Parallel()
	pt := func(x, y float64) Point { return Point{X: x, Y: y, Lo: nan(), Hi: nan()} }
	for _, tt := range []struct {
		name string
		f    Figure
		want string
	}{
		{"empty", Figure{}, "no data"},
		{"one point", Figure{Panels: []Panel{{Series: []Series{{Points: []Point{pt(1, 1)}}}}}}, "one x or one y"},
		{"zero on log", Figure{X: Axis{Log: true}, Panels: []Panel{{Series: []Series{{Points: []Point{pt(0, 1), pt(1, 2)}}}}}}, "log axis"},
		{"empty panel", Figure{Panels: []Panel{{Series: []Series{{Points: []Point{pt(1, 1), pt(2, 2)}}}}, {Title: "b"}}}, "no data"},
		{"fine", Figure{Panels: []Panel{{Series: []Series{{Points: []Point{pt(1, 1), pt(2, 2)}}}}}}, ""},
		{"one-row heat", Figure{Panels: []Panel{{Grid: &Grid{X: []float64{1, 2}, Y: []float64{1}, Z: [][]float64{{1, 2}}}}}}, "heat map of 2 × 1"},
	} {
		got := tt.f.Degenerate()
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRenderPNGAndSVG(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{width(0.1, time.Minute), width(0.5, time.Minute), width(0.1, 30*time.Second), width(0.5, 30*time.Second), sim.DefaultPolicy(sim.FullJitter)}
	aggs, tls := aggregates(t, pols, []float64{30, 60})
	var at30 []*analysis.Aggregate
	for _, a := range aggs {
		if a.Cell.Scenario.Capacity == 30 {
			at30 = append(at30, a)
		}
	}
	pareto, _ := Pareto("s", at30, len(at30))
	figs := []Figure{Herd("s", at30, tls, 10, 300), Recovery("s", at30, tls, 300), Param("s", aggs, sim.WidthJitter, true),
		Heatmap("s", aggs, sim.WidthJitter, time.Minute), pareto, Against(Axes[0], "s", aggs, at30, 3),
		Ranking("s", at30, 3, func(*analysis.Aggregate) string { return "why" }, 16)}
	for _, f := range figs {
		if why := f.Degenerate(); why != "" {
			t.Errorf("%s: %s", f.Name, why)
		}
		var b bytes.Buffer
		if err := Render(&b, f, "herdsweep test · seeds 1–3", "png"); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		w, h := f.Size()
		if bd := img.Bounds(); bd.Dx() != int(w.Dots(96)+0.5) || bd.Dy() != int(h.Dots(96)+0.5) {
			t.Errorf("%s: %v, want %v × %v", f.Name, bd, w.Dots(96), h.Dots(96))
		}
		colours := map[[4]uint32]bool{}
		for y := 0; y < img.Bounds().Dy(); y += 7 {
			for x := 0; x < img.Bounds().Dx(); x += 7 {
				r, g, b, a := img.At(x, y).RGBA()
				colours[[4]uint32{r, g, b, a}] = true
			}
		}
		if len(colours) < 5 {
			t.Errorf("%s: %d colours: blank", f.Name, len(colours))
		}
		var s bytes.Buffer
		if err := Render(&s, f, "footer", "svg"); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if !strings.Contains(s.String(), "<svg") || !strings.Contains(s.String(), "footer") {
			t.Errorf("%s: the SVG is not one, or lacks the footer", f.Name)
		}
	}
	if err := Render(&bytes.Buffer{}, figs[0], "", "gif"); err == nil {
		t.Error("a GIF was accepted")
	}
}
