package sim

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdsweep/herdsweep/internal/golden"
)

func TestScenarioValidate(t *testing.T) {
	t.Parallel()
	ok := Article()
	tests := []struct {
		name string
		edit func(*Scenario)
		want string
	}{
		{"article", func(*Scenario) {}, ""},
		{"no clients", func(s *Scenario) { s.Clients = 0 }, "Clients: 0: want a whole number in [1, 1073741824]"},
		{"zero tick", func(s *Scenario) { s.Tick = 0 }, "Tick: 0s: want a whole number of milliseconds ≥ 1ms"},
		{"negative tick", func(s *Scenario) { s.Tick = -time.Second }, "Tick: -1s"},
		{"sub-ms tick", func(s *Scenario) { s.Tick = 1500 * time.Microsecond }, "Tick: 1.5ms"},
		{"zero capacity", func(s *Scenario) { s.Capacity = 0 }, "Capacity: 0: want a finite number of requests/s that serves at least one request per 100ms tick (≥ 10)"},
		{"NaN capacity", func(s *Scenario) { s.Capacity = math.NaN() }, "Capacity: NaN"},
		{"infinite capacity", func(s *Scenario) { s.Capacity = math.Inf(1) }, "Capacity: +Inf"},
		{"horizon before recovery", func(s *Scenario) { s.Horizon = 20 * time.Second }, "Window: -10s: want a whole number of milliseconds ≥ 1ms"},
		{"negative spread", func(s *Scenario) { s.Spread = -1 }, "Spread: -1ns"},
		{"too many ticks", func(s *Scenario) { s.Tick = time.Millisecond; s.Capacity = 1200; s.Horizon = 3 * time.Hour }, "Window: 2h59m30s: want at most 10000000 ticks"},
		{"negative Retry-After", func(s *Scenario) { s.RetryAfter = -time.Second }, "RetryAfter: -1s"},
	}
	for _, tt := range tests {
		s := ok
		tt.edit(&s)
		err := s.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// Properties that hold for every run, whatever the policy: every client ends
// in exactly one state, nothing arrives before its time, a tick serves no
// more than the budget, and the metrics agree with the timeline.
func TestRunProperties(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 500, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Second, Capacity: 40, Spread: 2 * time.Second, Horizon: 5 * time.Minute, RetryAfter: 5 * time.Second}
	budget := sc.budget()
	for _, p := range everyPolicy() {
		var tl Timeline
		var events []Event
		due := map[int]int{} // client → tick it is due
		s := Sim{Trace: func(e Event) { events = append(events, e) }}
		r, err := s.Run(sc, p, NewMulberry32(7), &tl)
		if err != nil {
			t.Fatal(err)
		}
		if r.Succeeded+r.GaveUp+r.Pending != sc.Clients || r.Succeeded < 0 || r.GaveUp < 0 || r.Pending < 0 {
			t.Errorf("%s: succeeded %d + gave up %d + pending %d != %d", p, r.Succeeded, r.GaveUp, r.Pending, sc.Clients)
		}
		var sent, after, served, quit int64
		peak := 0
		for k, a := range tl.Arrivals {
			sent += int64(a)
			served += int64(tl.Served[k])
			quit += int64(tl.GaveUp[k])
			if int(tl.Served[k]) > budget {
				t.Errorf("%s: tick %d served %d > budget %d", p, k, tl.Served[k], budget)
			}
			if time.Duration(k)*sc.Tick >= sc.RecoverAt {
				after += int64(a)
				peak = max(peak, int(a))
			} else if tl.Served[k] != 0 {
				t.Errorf("%s: tick %d served %d before recovery", p, k, tl.Served[k])
			}
		}
		if sent != r.Sent || after != r.SentAfterRecovery || peak != r.PeakArrivals || served != int64(r.Succeeded) || quit != int64(r.GaveUp) {
			t.Errorf("%s: timeline sums sent=%d after=%d peak=%d served=%d quit=%d disagree with %+v", p, sent, after, peak, served, quit, r)
		}
		if int64(len(events)) != r.Sent {
			t.Errorf("%s: %d trace events for %d requests", p, len(events), r.Sent)
		}
		for _, e := range events {
			if k, ok := due[e.Client]; ok && k != e.Tick {
				t.Errorf("%s: client %d arrived at tick %d, due at %d", p, e.Client, e.Tick, k)
			}
			delete(due, e.Client)
			if e.NextTick >= 0 {
				next := float64(e.Tick)*ms(sc.Tick) + e.Delay
				if float64(e.NextTick)*ms(sc.Tick) < next || (e.NextTick > e.Tick+1 && float64(e.NextTick-1)*ms(sc.Tick) >= next) {
					t.Errorf("%s: client %d due at %g ms scheduled for tick %d", p, e.Client, next, e.NextTick)
				}
				due[e.Client] = e.NextTick
			}
		}
		if r.T99.Reached && (!r.T50.Reached || r.T50.At > r.T90.At || r.T90.At > r.T99.At) {
			t.Errorf("%s: milestones out of order: %+v %+v %+v", p, r.T50, r.T90, r.T99)
		}
		if r.AllDone.Reached != (r.Succeeded == sc.Clients) {
			t.Errorf("%s: AllDone %+v with %d of %d succeeded", p, r.AllDone, r.Succeeded, sc.Clients)
		}
	}
}

func TestRunIsDeterministicAndSimReusable(t *testing.T) {
	t.Parallel()
	var s Sim
	sc := Article()
	a, _ := s.Run(sc, DefaultPolicy(Decorrelated), NewMulberry32(9), nil)
	// A different, larger run in between must leave no trace in the next.
	big := sc
	big.Clients = 5000
	if _, err := s.Run(big, DefaultPolicy(FullJitter), NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	b, _ := s.Run(sc, DefaultPolicy(Decorrelated), NewMulberry32(9), nil)
	if a != b {
		t.Errorf("same seed, reused Sim: %+v != %+v", a, b)
	}
}

func TestRunRejectsInvalidInput(t *testing.T) {
	t.Parallel()
	if _, err := Run(Scenario{}, Policy{Kind: Fixed, Base: time.Second}, 1); err == nil || !strings.Contains(err.Error(), "Clients") {
		t.Errorf("Run(zero scenario) = %v, want a Clients error", err)
	}
	if _, err := Run(Article(), Policy{Kind: "nope"}, 1); err == nil || !strings.Contains(err.Error(), "Kind") {
		t.Errorf("Run(unknown policy) = %v, want a Kind error", err)
	}
}

// TestGoldenTrace pins, tick by tick, a tiny scenario: 6 clients, a server
// that serves one request per tick from 1 s, decorrelated jitter with a
// 2 s cap. Run with -update to rewrite it; review the diff like code.
func TestGoldenTrace(t *testing.T) {
	sc := Scenario{Clients: 6, Tick: 100 * time.Millisecond, RecoverAt: time.Second, Capacity: 10, Spread: 500 * time.Millisecond, Horizon: 6 * time.Second}
	p := Policy{Kind: Decorrelated, Base: 200 * time.Millisecond, Cap: 2 * time.Second}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s; clients=%d tick=%v recover=%v capacity=%g/s spread=%v seed=1\n", p, sc.Clients, sc.Tick, sc.RecoverAt, sc.Capacity, sc.Spread)
	fmt.Fprintln(&b, "# tick client outcome delay_ms next_tick")
	s := Sim{Trace: func(e Event) {
		switch {
		case e.Served:
			fmt.Fprintf(&b, "%d %d served\n", e.Tick, e.Client)
		case e.GaveUp:
			fmt.Fprintf(&b, "%d %d gave-up\n", e.Tick, e.Client)
		default:
			fmt.Fprintf(&b, "%d %d rejected %.3f %d\n", e.Tick, e.Client, e.Delay, e.NextTick)
		}
	}}
	r, err := s.Run(sc, p, NewMulberry32(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "# sent=%d after_recovery=%d peak_rps=%g t50=%v t99=%v all_done=%v\n", r.Sent, r.SentAfterRecovery, r.PeakRPS, r.T50.At, r.T99.At, r.AllDone.At)
	golden.CheckString(t, filepath.Join("testdata", "trace_decorrelated.golden"), b.String())
}

// MemoryBytes is an upper bound of what a Sim holds after a run, on random
// scenarios and policies.
func TestMemoryBytesBoundsTheFootprint(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(5)
	pick := func(n int) int { return int(r.Float64() * float64(n)) }
	policies := everyPolicy()
	for i := range 60 {
		sc := Scenario{
			Clients:   1 + pick(20000),
			Tick:      time.Duration(1+pick(200)) * time.Millisecond,
			RecoverAt: time.Duration(pick(60)) * time.Second,
			Spread:    time.Duration(pick(5000)) * time.Millisecond,
		}
		sc.Capacity = float64(1+pick(500)) * 1000 / float64(sc.Tick.Milliseconds())
		sc.Horizon = sc.RecoverAt + time.Duration(1+pick(600))*time.Second
		p := policies[i%len(policies)]
		var s Sim
		var tl Timeline
		if _, err := s.Run(sc, p, NewMulberry32(uint32(i)), &tl); err != nil {
			t.Fatalf("%+v %s: %v", sc, p, err)
		}
		got := int64(s.footprint() + cap(s.fleet.group) + 12*cap(tl.Arrivals))
		if est := sc.MemoryBytes(true); got > est {
			t.Errorf("%+v %s: holds %d bytes, estimate %d", sc, p, got, est)
		}
	}
}

// Stop interrupts a run within StopEvery ticks; the Sim then runs the next
// run exactly as a fresh one.
func TestStopInterruptsARun(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Second, Capacity: 10,
		Spread: 2 * time.Second, Horizon: 100_000 * time.Second, RejectCost: 0.5} // never recovers
	p := Policy{Kind: Fixed, Base: 100 * time.Millisecond}
	var stop atomic.Bool
	s := Sim{Stop: &stop}
	last := 0
	s.Trace = func(e Event) {
		last = e.Tick
		if e.Tick >= 3000 {
			stop.Store(true)
		}
	}
	if _, err := s.Run(sc, p, NewMulberry32(1), nil); !errors.Is(err, ErrStopped) {
		t.Fatalf("Run: %v, want ErrStopped", err)
	}
	if last >= 3000+StopEvery {
		t.Errorf("the run went on to tick %d after the stop at 3000, want less than %d", last, 3000+StopEvery)
	}
	stop.Store(false)
	s.Trace = nil
	for _, sc := range []Scenario{Article(), sc} {
		sc.Horizon = min(sc.Horizon, 20*time.Minute)
		got, err := s.Run(sc, DefaultPolicy(Decorrelated), NewMulberry32(7), nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Run(sc, DefaultPolicy(Decorrelated), 7)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after a stop (-fresh +reused):\n%s", diff)
		}
	}
}
