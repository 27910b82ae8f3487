package sim

import (
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
