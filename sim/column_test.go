package sim

import (
	"math"
	"testing"
	"time"
)

// A fixed delay without limits takes calendar.moveColumn's path on a
// dense calendar: the same results as the reference transcription and as
// the traced path, which reschedules client by client, for delays shorter
// than a tick, of whole ticks, and reaching past the horizon.
func TestFixedDelayMovesColumns(t *testing.T) {
	t.Parallel()
	scenarios := []Scenario{
		Article(),
		{Clients: 700, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 30, Spread: 2 * time.Second, Horizon: 2 * time.Minute},
		{Clients: 130, Tick: 7 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 300, Spread: 1500 * time.Millisecond, Horizon: 9 * time.Second},
	}
	for si, sc := range scenarios {
		for _, base := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 300 * time.Millisecond, time.Second, 5 * time.Second, 100 * time.Second} {
			p := Policy{Kind: Fixed, Base: base}
			for seed := uint32(1); seed <= 3; seed++ {
				want := referenceRun(sc, p, seed)
				var fast, traced Sim
				traced.Trace = func(Event) {}
				got, err := fast.Run(sc, p, NewMulberry32(seed), nil)
				if err != nil {
					t.Fatal(err)
				}
				slow, err := traced.Run(sc, p, NewMulberry32(seed), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !fast.cal.dense || got != want || slow != want {
					t.Errorf("s%d fixed %v seed %d (dense %v):\n got %+v\ntraced %+v\nwant %+v", si, base, seed, fast.cal.dense, got, slow, want)
				}
			}
		}
	}
}

// ticker.arrival is the first k with k·tick ≥ next, as herd.mjs's
// `next <= t` decides it: against a search, for times on and around tick
// boundaries (a few ulps either side) and at random, for several ticks.
func TestTickerArrival(t *testing.T) {
	t.Parallel()
	want := func(tick, next float64) int {
		k := 0
		for float64(k)*tick < next {
			k++
		}
		return k
	}
	rng := NewMulberry32(8)
	for _, tick := range []float64{1, 3, 7, 10, 50, 100, 250} {
		tk := ticker{tick: tick, inv: 1 / tick}
		var xs []float64
		for k := range 3000 {
			b := float64(k) * tick
			xs = append(xs, b, math.Nextafter(b, 0), math.Nextafter(b, 1e18), math.Nextafter(math.Nextafter(b, 1e18), 1e18), b+0.5, b-1e-9)
		}
		for range 20000 {
			xs = append(xs, rng.Float64()*3000*tick)
		}
		for _, x := range xs {
			if got, w := tk.arrival(x), want(tick, x); got != w {
				t.Fatalf("tick %g: arrival(%v) = %d, want %d", tick, x, got, w)
			}
		}
	}
}
