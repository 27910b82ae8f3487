package sim

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests below count, never time: a stop must be seen within StopEvery
// units of work plus the tick in hand, whatever the run's size.

// drawsMade is how many numbers a stream seeded with seed has drawn to reach
// rng's state: each draw adds 0x6D2B79F5 (mod 2³²), an odd number.
func drawsMade(seed uint32, rng *Mulberry32) uint32 {
	inv := uint32(1) // 0x6D2B79F5⁻¹ mod 2³², by Newton's iteration
	for range 5 {
		inv *= 2 - 0x6D2B79F5*inv
	}
	return (rng.state - seed) * inv
}

// A stop set before a run of many clients is seen while the clients draw
// their first sends: at most StopEvery of them draw (a 10⁷-client run
// drew all of them, and walked every tick, before it looked).
func TestStopIsSeenWhileTheClientsStart(t *testing.T) {
	t.Parallel()
	for _, sparse := range []bool{false, true} {
		sc := Article()
		sc.Clients = 20 * StopEvery
		var stop atomic.Bool
		stop.Store(true)
		s := Sim{Stop: &stop}
		s.cal.sparse = sparse
		rng := NewMulberry32(3)
		if _, err := s.Run(sc, DefaultPolicy(FullJitter), rng, nil); !errors.Is(err, ErrStopped) {
			t.Fatalf("sparse %v: Run: %v, want ErrStopped", sparse, err)
		}
		if n := drawsMade(3, rng); n > StopEvery {
			t.Errorf("sparse %v: %d of %d clients drew their first send after the stop, want at most %d", sparse, n, sc.Clients, StopEvery)
		}
		checkFresh(t, &s, fmt.Sprintf("sparse %v", sparse))
	}
}

// spreadDelay retries after U(0, 100 s): the tick's arrivals stay few and
// the run long, the case where a check every 1,024 ticks came late.
type spreadDelay struct{ calls *int }

func (d spreadDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	*d.calls++
	return rng.Float64() * 100_000
}

// A stop set in the middle of a run is seen within StopEvery units of work
// and the rest of the tick in hand: counted in rejections (the delayer's
// calls), on each loop (dense, list, queue) and on both calendars.
func TestStopIsSeenWithinStopEveryUnitsOfWork(t *testing.T) {
	t.Parallel()
	base := Scenario{Clients: 100_000, Tick: 100 * time.Millisecond, RecoverAt: 90_000 * time.Second, Capacity: 10,
		Spread: 100 * time.Second, Horizon: 100_000 * time.Second} // never recovers: every arrival is rejected
	queue := base
	queue.Concurrency, queue.Service, queue.ServiceTime = 1, "fixed", 100*time.Millisecond
	for _, tc := range []struct {
		name   string
		sc     Scenario
		trace  bool
		sparse bool
	}{
		{"dense", base, false, false},
		{"list, sparse", base, false, true},
		{"list, traced", base, true, false},
		{"queue", queue, false, false},
	} {
		// stop at the first rejection of tick 1,025: the old check, every
		// 1,024 ticks, then ran 1,023 more ticks (about 100,000 arrivals).
		const stopTick = 1025
		calls, after := 0, -1
		var stop atomic.Bool
		s := Sim{Stop: &stop}
		s.cal.sparse = tc.sparse
		s.retryDelayer = counting{spreadDelay{&calls}, func(r response) {
			if int(r.tick) >= stopTick && after < 0 {
				stop.Store(true)
				after = calls
			}
		}}
		if tc.trace {
			s.Trace = func(Event) {}
		}
		var tl Timeline
		if _, err := s.Run(tc.sc, DefaultPolicy(Fixed), NewMulberry32(11), &tl); !errors.Is(err, ErrStopped) {
			t.Fatalf("%s: Run: %v, want ErrStopped", tc.name, err)
		}
		most := int32(0) // the most arrivals in one tick: the tick in hand
		for _, a := range tl.Arrivals {
			most = max(most, a)
		}
		if got, bound := calls-after, StopEvery+int(most); after < 0 || got > bound {
			t.Errorf("%s: %d rejections after the stop (set at rejection %d), want at most StopEvery + the most arrivals in a tick = %d", tc.name, got, after, bound)
		}
		if s.st.checks != 0 {
			t.Errorf("%s: the run state was not reset after the stop", tc.name)
		}
		s.retryDelayer = nil
		checkFresh(t, &s, tc.name)
	}
}

// counting wraps a delayer with a hook called before each delay.
type counting struct {
	d    delayer
	hook func(response)
}

func (c counting) delay(cl *client, r response, rng *Mulberry32) float64 {
	c.hook(r)
	return c.d.delay(cl, r, rng)
}

// checkFresh runs the article's scenario and a queueing one on s after a
// stop, and compares them with a fresh Sim's runs: a stop leaves nothing
// behind.
func checkFresh(t *testing.T, s *Sim, name string) {
	t.Helper()
	s.Stop.Store(false)
	s.Trace = nil
	q := Article()
	q.Concurrency, q.Service, q.ServiceTime = 12, "exponential", 100*time.Millisecond
	for _, sc := range []Scenario{Article(), q} {
		got, err := s.Run(sc, DefaultPolicy(Decorrelated), NewMulberry32(7), nil)
		if err != nil {
			t.Fatal(err)
		}
		var fresh Sim
		fresh.cal.sparse = s.cal.sparse
		want, _ := fresh.Run(sc, DefaultPolicy(Decorrelated), NewMulberry32(7), nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: after a stop (-fresh +reused):\n%s", name, diff)
		}
	}
}

// A Sim that runs scenarios of many sizes one after another holds at most
// the Max of their footprints: each kind of storage at its largest.
func TestFootprintMaxBoundsAReusedSim(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(8)
	pick := func(n int) int { return int(r.Float64() * float64(n)) }
	policies := everyPolicy()
	var s Sim
	var env Footprint
	var tl Timeline
	for i := range 40 {
		sc := Scenario{
			Clients:   1 + pick(30000),
			Tick:      time.Duration(1+pick(200)) * time.Millisecond,
			RecoverAt: time.Duration(pick(60)) * time.Second,
			Spread:    time.Duration(pick(5000)) * time.Millisecond,
		}
		sc.Capacity = float64(1+pick(500)) * 1000 / float64(sc.Tick.Milliseconds())
		sc.Horizon = sc.RecoverAt + time.Duration(1+pick(600))*time.Second
		if i%3 == 0 {
			sc = randomQueueScenario(r)
		}
		p := policies[i%len(policies)]
		if _, err := s.Run(sc, p, NewMulberry32(uint32(i)), &tl); err != nil {
			t.Fatalf("%+v %s: %v", sc, p, err)
		}
		f := sc.Footprint(true)
		f.Components = ComponentBytes(p, sc)
		env = env.Max(f)
		if got := int64(s.footprint() + cap(s.fleet.group) + 12*cap(tl.Arrivals)); got > env.Bytes() {
			t.Errorf("run %d (%+v %s): the Sim holds %d bytes, more than the Max of the footprints so far, %d", i, sc, p, got, env.Bytes())
		}
	}
}
