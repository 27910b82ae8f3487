package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A share is a proportion in [0, 1], and so is every bound of its
// interval, whatever the seeds (issue 22: a share's interval in `sweep
// cells` reached 1.024). Random queueing cells of 2 to 12 seeds whose
// shares crowd 0 and 1, some all alike: every share metric's summary lies
// in [0, 1] with its mean inside its interval.
func TestShareIntervalsStayWithinZeroAndOne(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(22, 6))
	shares := 0
	for _, m := range AllMetrics() {
		if m.Share() {
			shares++
		}
	}
	if shares != 4 {
		t.Fatalf("%d share metrics, want goodput, timed out, wasted and success rate", shares)
	}
	near := func() float64 { // a share near 0 or 1, or anywhere, or exactly at an end
		switch rng.IntN(4) {
		case 0:
			return 1 - rng.Float64()*rng.Float64()*0.05
		case 1:
			return rng.Float64() * rng.Float64() * 0.05
		case 2:
			return float64(rng.IntN(2))
		}
		return rng.Float64()
	}
	for cell := range 400 {
		sc := sim.Article()
		sc.Clients, sc.Concurrency, sc.Service, sc.ServiceTime, sc.ArrivalRate = 1, 10, "exponential", 20*time.Millisecond, 350
		sc.Capacity = float64(cell + 1) // a cell key of its own
		c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
		seeds := 2 + rng.IntN(11)
		g, to, w := near(), near(), near()
		alike := rng.IntN(5) == 0
		var recs []Record
		for s := range seeds {
			if !alike && s > 0 {
				g, to, w = near(), near(), near()
			}
			const demand, sent, busy = 100_000, 200_000, 1e6
			res := sim.Result{Offered: demand - 1, Goodput: int64(math.Round(g * demand)), Sent: sent,
				TimedOut: int64(math.Round(to * sent)), BusyMS: busy, WastedMS: w * busy}
			r := grid.Run{Cell: c, Seed: uint32(s + 1)}
			recs = append(recs, Record{Sweep: "s", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Cell: c, Result: res}})
		}
		for _, a := range QueueAggregates(recs) {
			for _, m := range QueueMetrics {
				if !m.Share() {
					continue
				}
				s := a.Summary(m)
				if !(s.Lo >= 0 && s.Hi <= 1 && s.Lo <= s.Mean && s.Mean <= s.Hi) {
					t.Errorf("cell %d, %d seeds, %s: mean %v, interval [%v, %v]: want 0 ≤ lo ≤ mean ≤ hi ≤ 1 (values %v)",
						cell, seeds, m.Key, s.Mean, s.Lo, s.Hi, a.PerSeed(m))
				}
			}
		}
	}
}

// SummarizeShare's interval is the Wilson score interval at the effective
// sample size: for values that are all 0 or 1 it is the textbook Wilson
// interval (of N − 1 trials, the sample variance's, with Student's t for
// z); far from 0 and 1 it is Summarize's Student-t interval; in between it
// bends inward and holds the mean.
func TestSummarizeShareIsWilsonAtTheEffectiveSampleSize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 1))
	const tol = 1e-12 // the same formula in another arrangement
	for n := 2; n <= 40; n++ {
		for k := 1; k < n; k++ { // every count but all alike
			xs := make([]float64, n)
			for i := range k {
				xs[i] = 1
			}
			s := SummarizeShare(xs, 0)
			// n_eff = p(1 − p)/(s²/n) = n − 1 for 0/1 values: Wilson's
			// interval of the share k/n over n − 1 trials.
			lo, hi := wilsonOf(float64(k)/float64(n), float64(n-1), t975(n-1))
			if math.Abs(s.Lo-math.Max(lo, 0)) > tol || math.Abs(s.Hi-math.Min(hi, 1)) > tol {
				t.Errorf("%d of %d: [%v, %v], want Wilson's [%v, %v]", k, n, s.Lo, s.Hi, lo, hi)
			}
		}
	}
	// The textbook formula itself, once: 8 of 10 at z = 1.96 is [0.490, 0.943].
	if lo, hi := wilsonOf(0.8, 10, 1.96); math.Abs(lo-0.4902) > 5e-4 || math.Abs(hi-0.9433) > 5e-4 {
		t.Errorf("Wilson 8/10: [%v, %v], want [0.4902, 0.9433]", lo, hi)
	}
	for range 2000 {
		n := 2 + rng.IntN(30)
		xs := make([]float64, n)
		centre, spread := 0.2+0.6*rng.Float64(), 1e-4*rng.Float64()
		for i := range xs {
			xs[i] = centre + spread*(2*rng.Float64()-1)
		}
		sh, st := SummarizeShare(xs, 0), Summarize(xs, 0)
		half := (st.Hi - st.Lo) / 2
		if half > 0 && (math.Abs(sh.Lo-st.Lo) > 0.01*half || math.Abs(sh.Hi-st.Hi) > 0.01*half) {
			t.Errorf("far from 0 and 1 (%d values around %.3f ± %.0e): share [%v, %v], Student-t [%v, %v]: want the same", n, centre, spread, sh.Lo, sh.Hi, st.Lo, st.Hi)
		}
		for i := range xs { // anywhere in [0, 1]
			xs[i] = math.Pow(rng.Float64(), 1+4*rng.Float64())
			if rng.IntN(2) == 0 {
				xs[i] = 1 - xs[i]
			}
		}
		s := SummarizeShare(xs, 0)
		if !(s.Lo >= 0 && s.Hi <= 1 && s.Lo <= s.Mean && s.Mean <= s.Hi) {
			t.Errorf("%v: mean %v, [%v, %v]", xs, s.Mean, s.Lo, s.Hi)
		}
	}
	// Every seed alike: the share itself, as Summarize; one seed: none.
	if s := SummarizeShare([]float64{1, 1, 1}, 0); s.Lo != 1 || s.Hi != 1 {
		t.Errorf("1, 1, 1: [%v, %v], want [1, 1]", s.Lo, s.Hi)
	}
	if s := SummarizeShare([]float64{0.4}, 0); !math.IsNaN(s.Lo) || !math.IsNaN(s.Hi) {
		t.Errorf("one seed: [%v, %v], want none", s.Lo, s.Hi)
	}
}

// wilsonOf is Wilson's (1927) score interval of a share p over n trials at
// z, as textbooks write it: the test's own, not wilsonMean.
func wilsonOf(p, n, z float64) (lo, hi float64) {
	c := (p + z*z/(2*n)) / (1 + z*z/n)
	h := z / (1 + z*z/n) * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return c - h, c + h
}
