package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// shifted returns records like recs with every t99 multiplied by f and the
// cell keys changed, as another simulator version would key them.
func shifted(recs []Record, f float64) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.CellKey = "other-version-" + r.CellKey
		r.RunKey = "other-version-" + r.RunKey
		if r.Result.T99.Reached {
			after := (r.Result.T99.At - r.Cell.Scenario.RecoverAt).Seconds()
			r.Result.T99.At = r.Cell.Scenario.RecoverAt + time.Duration(math.Round(after*f*1e9))
		}
		out[i] = r
	}
	return out
}

func TestCompareFindsTheChangeAndOnlyIt(t *testing.T) {
	t.Parallel()
	old := records(120, []synth{
		{sim.FullJitter, 0, []float64{10, 10.2, 9.8, 10.1, 9.9, 10.3}, 500, 3000},
		{sim.Decorrelated, 0, []float64{20, 21, 19, 20.5, 19.5, 20}, 400, 2000},
	})
	same := Aggregates(shifted(old, 1))
	c := CompareAggregates(Aggregates(old), same, 0.05, 0)
	if c.Matched != 2 || len(c.OnlyOld)+len(c.OnlyNew) != 0 || c.Changed() != 0 {
		t.Fatalf("the same results under other keys: %d matched, %d changed", c.Matched, c.Changed())
	}
	for _, ch := range c.Changes {
		if !ch.Paired || ch.Significant || (ch.Diff != 0 && !math.IsNaN(ch.Diff)) {
			t.Errorf("%s %s: %+v, want paired, no difference", ch.New.Label, ch.Metric.Key, ch)
		}
	}
	up := Aggregates(shifted(old, 1.1)) // +10 % on t99 in every seed
	for _, tt := range []struct {
		threshold float64
		beyond    int
	}{{0, 2}, {0.05, 2}, {0.2, 0}} {
		c := CompareAggregates(Aggregates(old), up, 0.05, tt.threshold)
		if c.Changed() != tt.beyond {
			t.Errorf("t99 +10 %%, threshold %g: %d changes beyond it, want %d", tt.threshold, c.Changed(), tt.beyond)
		}
		for _, ch := range c.Changes {
			sig := ch.Metric.Key == T99.Key
			if ch.Significant != sig {
				t.Errorf("threshold %g, %s: significant %v, want %v (%+v)", tt.threshold, ch.Metric.Key, ch.Significant, sig, ch)
			}
			if sig && (math.Abs(ch.Rel-0.1) > 1e-6 || ch.RelLo > 0.1+1e-9 || ch.RelHi < 0.1-1e-9) {
				t.Errorf("t99 change %+v, want +10 %% inside its interval", ch)
			}
		}
	}
}

// reseeded returns records like recs with every seed moved by d (and the
// run keys with it).
func reseeded(recs []Record, d uint32) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.Seed += d
		r.RunKey = grid.Run{Cell: r.Cell, Seed: r.Seed}.Key()
		out[i] = r
	}
	return out
}

// Cells that share fewer than MinPairedSeeds seeds are compared by
// Welch's test; a cell on one side only is listed, not compared.
func TestCompareWelchAndUnmatched(t *testing.T) {
	t.Parallel()
	old := records(120, []synth{
		{sim.FullJitter, 0, []float64{10, 10.2, 9.8, 10.1, 9.9, 10.3}, 500, 3000},
		{sim.EqualJitter, 0, []float64{30, 31}, 300, 1000},
	})
	for _, tt := range []struct {
		shift  uint32
		shared int
	}{{6, 0}, {5, 1}} { // seeds 7–14, and 6–13: one seed shared
		newer := reseeded(records(120, []synth{
			{sim.FullJitter, 0, []float64{10, 10.2, 9.8, 10.1, 9.9, 10.3, 10, 10.1}, 500, 3000},
			{sim.Decorrelated, 0, []float64{20, 21}, 400, 2000},
		}), tt.shift)
		c := CompareAggregates(Aggregates(old), Aggregates(newer), 0.05, 0)
		if c.Matched != 1 || len(c.OnlyOld) != 1 || len(c.OnlyNew) != 1 {
			t.Fatalf("matched %d, only old %d, only new %d; want 1, 1, 1", c.Matched, len(c.OnlyOld), len(c.OnlyNew))
		}
		ch := c.Changes[0]
		if ch.Paired || ch.Significant || ch.Metric.Key != T99.Key || math.IsNaN(ch.Lo) || ch.N != 6 ||
			ch.Shared != tt.shared || ch.Unpaired != 14-2*tt.shared {
			t.Errorf("t99, %d seeds shared: %+v, want Welch over 6 and 8, not significant", tt.shared, ch)
		}
	}
}

// After a night of `sweep run --add-seeds 2` the new cell holds seeds 1–8
// where the old held 1–6: the six shared seeds are paired, which finds a
// change of +0.5 s in every seed that the spread between seeds (10 to 60 s)
// hides from Welch's test; the two new seeds are left out and counted.
func TestComparePairsTheSharedSeeds(t *testing.T) {
	t.Parallel()
	old := Aggregates(records(120, []synth{{sim.FullJitter, 0, []float64{10, 20, 30, 40, 50, 60}, 500, 3000}}))
	newer := Aggregates(records(120, []synth{{sim.FullJitter, 0, []float64{10.5, 20.5, 30.5, 40.5, 50.5, 60.5, 35, 35}, 500, 3000}}))
	c := CompareAggregates(old, newer, 0.05, 0)
	if c.Matched != 1 || len(c.Changes) != len(Metrics) {
		t.Fatalf("matched %d, %d changes", c.Matched, len(c.Changes))
	}
	for _, ch := range c.Changes {
		if !ch.Paired || ch.Shared != 6 || ch.Unpaired != 2 {
			t.Errorf("%s: paired %v over %d shared seeds, %d unpaired; want paired, 6, 2", ch.Metric.Key, ch.Paired, ch.Shared, ch.Unpaired)
		}
		if ch.Metric.Key != T99.Key {
			continue
		}
		// By hand: the mean of 10, 20 … 60 is 35; the differences are all
		// 0.5, so their standard deviation and the interval's width are 0.
		if ch.N != 6 || ch.OldMean != 35 || ch.NewMean != 35.5 || ch.Diff != 0.5 || ch.Lo != 0.5 || ch.Hi != 0.5 || !ch.Significant {
			t.Errorf("t99: %+v, want paired over 6 seeds, 35 → 35.5, +0.5 [+0.5, +0.5], significant", ch)
		}
	}
}

// On noise alone — new values drawn from the same distribution as the old,
// in 200 cells × 7 metrics — the simultaneous intervals raise no alarm;
// the same noise judged one interval at a time at 95 % would (about 5 % of
// the t99 comparisons).
func TestCompareNoiseRaisesNoAlarm(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func() []synth {
		var ps []synth
		for i := range 200 {
			xs := make([]float64, 20)
			for j := range xs {
				xs[j] = 20 + 2*rng.NormFloat64()
			}
			ps = append(ps, synth{sim.WidthJitter, float64(i) / 200, xs, 500, 3000})
		}
		return ps
	}
	old, newer := Aggregates(records(120, draw())), Aggregates(records(120, draw()))
	c := CompareAggregates(old, newer, 0.05, 0)
	if c.Matched != 200 || c.Changed() != 0 {
		t.Errorf("noise: %d matched, %d changed; want 200, 0", c.Matched, c.Changed())
	}
	naive := 0
	for _, ch := range c.Changes {
		if ch.Metric.Key != T99.Key {
			continue
		}
		d := make([]float64, 0, ch.N)
		xo, xn := ch.Old.PerSeed(T99), ch.New.PerSeed(T99)
		for i := range xo {
			d = append(d, xn[i]-xo[i])
		}
		if s := Summarize(d, 0); s.Lo > 0 || s.Hi < 0 {
			naive++
		}
	}
	if naive == 0 {
		t.Errorf("one interval at a time found no change in 200 noisy cells: the test's noise is too weak to mean anything")
	}
}

// A cell whose metric is the same in every seed, old and new, has not
// moved, although the means of 5 and of 9 copies of 59.9 differ in their
// last bit (59.9 and 59.89999999999999): the nightly job must not alert on
// rounding. Found by running `sweep compare` on a dataset and the same one
// with two more seeds per cell (all_done_after_s at the 60 s cap).
func TestCompareSameConstantIsNoChange(t *testing.T) {
	t.Parallel()
	five, nine := make([]float64, 5), make([]float64, 9)
	for i := range nine {
		nine[i] = 59.9
	}
	copy(five, nine)
	c := CompareAggregates(Aggregates(records(120, []synth{{sim.Decorrelated, 0, five, 500, 3000}})),
		Aggregates(records(120, []synth{{sim.Decorrelated, 0, nine, 500, 3000}})), 0.05, 0)
	if c.Matched != 1 || c.Changed() != 0 {
		t.Fatalf("59.9 in every seed, 5 seeds then 9: %d matched, %d changed; want 1, 0", c.Matched, c.Changed())
	}
	for _, ch := range c.Changes {
		if ch.Significant {
			t.Errorf("%s: %+v, want not significant", ch.Metric.Key, ch)
		}
	}
}
