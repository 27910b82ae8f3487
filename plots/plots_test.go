package plots

import (
	"bytes"
	"image/png"
	"math"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
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
			c := experiments.Cell{Scenario: sc, Policy: p.Normalize()}
			for seed := uint32(1); seed <= 3; seed++ {
				var s sim.Sim
				var tl sim.Timeline
				res, err := s.Run(sc, c.Policy, sim.NewMulberry32(seed), &tl)
				if err != nil {
					t.Fatal(err)
				}
				r := experiments.Run{Cell: c, Seed: seed}
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
	f := Herd(aggs, tls, 30, 200)
	if len(f.Series) != 2 || f.HLine != 30 {
		t.Fatalf("herd: %d series, capacity line %v", len(f.Series), f.HLine)
	}
	for i, s := range f.Series {
		total := 0.0
		for j, p := range s.Points {
			if p.X != float64(j) {
				t.Fatalf("%s: point %d at x=%v, want whole seconds from 0", s.Name, j, p.X)
			}
			total += p.Y
		}
		// The per-second sums add up to the requests sent before 200 s.
		want := 0
		for _, r := range TimelineOf(aggs[i], tls) {
			if r.T < 200 {
				want += r.Arrivals
			}
		}
		if total != float64(want) || want == 0 {
			t.Errorf("%s: %v requests in the series, %d in the timeline", s.Name, total, want)
		}
	}
	rec := Recovery(aggs, tls, 600)
	for _, s := range rec.Series {
		last := s.Points[len(s.Points)-1]
		prev := -1.0
		for _, p := range s.Points {
			if p.Y < prev {
				t.Fatalf("%s: the recovered fraction falls at %v s", s.Name, p.X)
			}
			prev = p.Y
		}
		if last.Y != 1 {
			t.Errorf("%s: ends at %v, want 1 (every client served within 600 s)", s.Name, last.Y)
		}
	}
}

func TestWidthHeatmapAndCapacitySeries(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{width(0.1, time.Minute), width(0.5, time.Minute), width(0.5, 30*time.Second), width(0, 5*time.Minute)}
	aggs, _ := aggregates(t, pols, []float64{30, 60})
	f := WidthT99(aggs, 30)
	if len(f.Series) < 2 || f.Series[0].Name != "cap 30s" {
		t.Fatalf("t99-width series %+v: want lines by cap, ascending", f.Series)
	}
	for _, s := range f.Series {
		for j := 1; j < len(s.Points); j++ {
			if s.Points[j].X <= s.Points[j-1].X {
				t.Errorf("%s: widths not ascending", s.Name)
			}
		}
		for _, p := range s.Points {
			if !(p.Lo <= p.Y && p.Y <= p.Hi) {
				t.Errorf("%s: point %+v outside its interval", s.Name, p)
			}
		}
	}
	h := Heatmap(aggs, time.Minute)
	if len(h.Grid.X) != 2 || len(h.Grid.Y) != 2 || h.Grid.X[0] != 30 || h.Grid.Y[1] != 0.5 {
		t.Fatalf("heat map grid %+v", h.Grid)
	}
	for r, row := range h.Grid.Z {
		for c, z := range row {
			if math.IsNaN(z) {
				t.Errorf("heat map (%v, %v) empty", h.Grid.X[c], h.Grid.Y[r])
			}
		}
	}
	reps := analysis.Representatives(aggs, func(a *analysis.Aggregate) bool { return a.Cell.Scenario.Capacity == 30 })
	cf := CapacityT99(aggs, reps)
	if len(cf.Series) != 1 || len(cf.Series[0].Points) != 2 || cf.Series[0].Points[0].X != 30 {
		t.Errorf("t99-capacity: %+v, want the representative over both capacities", cf.Series)
	}
	ps := ParetoScatter(reps, 30)
	if len(ps.Series) != 1 || len(ps.Series[0].Points) != 2 {
		t.Errorf("pareto: %+v", ps.Series)
	}
}

func TestRenderPNG(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{width(0.1, time.Minute), width(0.5, time.Minute), sim.DefaultPolicy(sim.FullJitter)}
	aggs, tls := aggregates(t, pols, []float64{30, 60})
	reps := analysis.Representatives(aggs, func(a *analysis.Aggregate) bool { return a.Cell.Scenario.Capacity == 30 })
	figs := []Figure{Herd(reps, tls, 30, 300), Recovery(reps, tls, 300), WidthT99(aggs, 30), Heatmap(aggs, time.Minute),
		ParetoScatter(reps, 30), CapacityT99(aggs, reps), {Title: "nothing", Style: Lines}}
	for _, f := range figs {
		var b bytes.Buffer
		if err := Render(&b, f, "herdsweep test · seeds 1–3"); err != nil {
			t.Fatalf("%s: %v", f.Title, err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatalf("%s: %v", f.Title, err)
		}
		if bd := img.Bounds(); bd.Dx() != 960 || bd.Dy() != 600 {
			t.Errorf("%s: %v, want 960×600", f.Title, bd)
		}
		colours := map[[4]uint32]bool{}
		for y := 0; y < 600; y += 7 {
			for x := 0; x < 960; x += 7 {
				r, g, b, a := img.At(x, y).RGBA()
				colours[[4]uint32{r, g, b, a}] = true
			}
		}
		if len(colours) < 3 {
			t.Errorf("%s: %d colours: blank", f.Title, len(colours))
		}
	}
}
