package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A queueing server does not read Capacity (its capacity is Concurrency
// over the mean service time), so the tick does not bound it there
// (issue 22: capacity_rps was checked against the tick for a server that
// does not read it). Over random queueing scenarios and policies, any
// capacity ≥ 0 is accepted, small or not a whole request per tick, and
// the run is the same whatever it is; a value that is no number of
// requests/s (NaN, infinite, negative) is refused whichever the server;
// the counting server, which serves floor(Capacity × Tick) a tick, still
// needs one request a tick.
func TestQueueingServerDoesNotReadCapacity(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(2206)
	kinds := Kinds()
	for i := range 60 {
		sc := randomQueueScenario(rng)
		sc.Tick = time.Duration(1+int(rng.Float64()*20)) * time.Millisecond // fine ticks: 120 requests/s is below one a tick
		sc.Horizon = sc.RecoverAt + time.Duration(5+int(rng.Float64()*20))*time.Second
		p := DefaultPolicy(kinds[int(rng.Float64()*float64(len(kinds)))])
		seed := uint32(i + 1)
		var first Result
		for j, c := range []float64{0, 0.5, 120, 1e6} {
			sc.Capacity = c
			if err := sc.Validate(); err != nil {
				t.Fatalf("scenario %d, capacity %g, tick %v: %v; want accepted, a queueing server does not read it", i, c, sc.Tick, err)
			}
			r, err := Run(sc, p, seed)
			if err != nil {
				t.Fatal(err)
			}
			if j == 0 {
				first = r
			} else if d := cmp.Diff(first, r); d != "" {
				t.Fatalf("scenario %d (%s): capacity %g changed the run (-capacity 0 +capacity %g):\n%s", i, p, c, c, d)
			}
		}
		for _, c := range []float64{math.NaN(), math.Inf(1), -1} {
			sc.Capacity = c
			err := sc.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != FieldCapacity {
				t.Errorf("scenario %d, capacity %g: %v, want a Capacity error", i, c, err)
			}
		}
	}
	// The counting server: one request a tick at least, as before.
	sc := Article()
	sc.Tick, sc.Capacity = 5*time.Millisecond, 120
	if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), "at least one request per 5ms tick (≥ 200)") {
		t.Errorf("counting server, 120 requests/s at 5 ms ticks: %v, want refused", err)
	}
}
