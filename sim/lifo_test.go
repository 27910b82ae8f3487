package sim

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// threeAtOnce is one worker of fixed 10 ms service, 1 ms ticks, and three
// clients that send once at time 0, in index order, whose clients give up
// after timeout.
func threeAtOnce(order string, timeout time.Duration) Scenario {
	return Scenario{Clients: 3, Tick: time.Millisecond, Horizon: time.Second, Concurrency: 1, Service: "fixed",
		ServiceTime: 10 * time.Millisecond, Timeout: timeout, QueueOrder: order}
}

// TestLIFOServesNewestFirst works three requests by hand: client 0 starts
// at once (answered at 10 ms), clients 1 and 2 wait. FCFS serves 1 then 2
// (answered at 20 and 30 ms); LIFO serves 2 then 1. With clients that give
// up after 25 ms the one served last times out: client 2 under FCFS,
// client 1 under LIFO, whose fate is known at 20 ms when it starts (tick
// 20). With 15 ms, LIFO's client 2 starts at 10 and is answered at 20,
// too late (known at 10), and client 1 gives up waiting at 15 (tick 15);
// the server still serves it from 20 to 30: 30 ms busy, 20 wasted.
func TestLIFOServesNewestFirst(t *testing.T) {
	never := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}
	for _, tt := range []struct {
		order   string
		timeout time.Duration
		want    string // "client@tick" of the timed-out ones, in order
		wasted  float64
		good    int64
	}{
		{"", 25 * time.Millisecond, "[2@0]", 10, 2},
		{"lifo", 25 * time.Millisecond, "[1@20]", 10, 2},
		{"", 15 * time.Millisecond, "[1@0 2@0]", 20, 1},
		{"lifo", 15 * time.Millisecond, "[2@10 1@15]", 20, 1},
	} {
		var out []string
		s := Sim{Trace: func(e Event) {
			if e.TimedOut {
				out = append(out, fmt.Sprintf("%d@%d", e.Client, e.Tick))
			}
		}}
		sc := threeAtOnce(tt.order, tt.timeout)
		r, err := s.Run(sc, never, NewMulberry32(1), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out); got != tt.want || r.BusyMS != 30 || r.WastedMS != tt.wasted || r.Goodput != tt.good {
			t.Errorf("order %q, timeout %v: timed out %s, busy %g, wasted %g, goodput %d; want %s, 30, %g, %d",
				tt.order, tt.timeout, got, r.BusyMS, r.WastedMS, r.Goodput, tt.want, tt.wasted, tt.good)
		}
	}
}

// TestLIFOQueueingTheory: the order of service does not change the mean
// time in system of a work-conserving single-server queue whose order does
// not look at service times (Kleinrock's conservation law: the number in
// system, and by Little's law the mean time in system, is the same for
// every such order), so M/M/1 under LIFO has
// FCFS's W = 1/(μ−λ) and M/D/1 Pollaczek–Khinchine's; its tail is longer
// (the request that arrives at a long queue waits for all that come after
// it): the p99 is above FCFS's. Seeds 1–8 of 2,000 s runs, as
// TestQueueingTheory; tolerances 4 standard errors of the 8-seed mean,
// from the per-run spread over seeds 1–20 (M/M/1 0.97 %, M/D/1 0.40 %).
func TestLIFOQueueingTheory(t *testing.T) {
	t.Parallel()
	never := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}
	for _, tt := range []struct {
		name   string
		sc     Scenario
		want   float64
		relTol float64
	}{
		{"M/M/1 W", openLoop(1, "exponential", 10*time.Millisecond, 50, 0), 1000 / (100.0 - 50), 0.015},
		{"M/D/1 W", openLoop(1, "fixed", 10*time.Millisecond, 50, 0), 0.5*10/(2*(1-0.5)) + 10, 0.01},
	} {
		const seeds = 8
		var lifo, p99, fifoP99 float64
		for seed := uint32(1); seed <= seeds; seed++ {
			sc := tt.sc
			f, err := Run(sc, never, seed)
			if err != nil {
				t.Fatal(err)
			}
			sc.QueueOrder = "lifo"
			l, err := Run(sc, never, seed)
			if err != nil {
				t.Fatal(err)
			}
			lifo += l.LatencyMean / seeds
			p99 += l.LatencyP99 / seeds
			fifoP99 += f.LatencyP99 / seeds
		}
		if math.Abs(lifo-tt.want) > tt.relTol*tt.want || p99 <= fifoP99 {
			t.Errorf("%s under LIFO: W %.4f ms, want %.4f ± %.1f %%; p99 %.1f ms, FCFS's %.1f (want more)", tt.name, lifo, tt.want, 100*tt.relTol, p99, fifoP99)
		}
	}
}

// TestLIFOKeepsGoodputUnderOverload: at 150 % load with 200 ms client
// timeouts and an unbounded queue, FCFS's queue soon holds more than
// 200 ms of work and nearly every answer comes too late; LIFO answers the
// newest in time and keeps answering near capacity (100 requests/s), the
// requests that sink to the bottom of its stack timing out instead.
func TestLIFOKeepsGoodputUnderOverload(t *testing.T) {
	t.Parallel()
	sc := openLoop(1, "exponential", 10*time.Millisecond, 150, 0)
	sc.Horizon, sc.Timeout = 100*time.Second, 200*time.Millisecond
	never := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}
	fifo, err := Run(sc, never, 5)
	if err != nil {
		t.Fatal(err)
	}
	sc.QueueOrder = "lifo"
	lifo, err := Run(sc, never, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("goodput FCFS %d, LIFO %d of %d", fifo.Goodput, lifo.Goodput, lifo.Sent)
	if fifo.Goodput > 1000 || lifo.Goodput < 8000 || lifo.LatencyP99 > 200*1.008+1 {
		t.Errorf("goodput FCFS %d, LIFO %d (p99 %g ms); want FCFS ≤ 1000, LIFO ≥ 8000 of the 10,000 the server can answer", fifo.Goodput, lifo.Goodput, lifo.LatencyP99)
	}
}

// TestLIFOProperties: TestQueueProperties' invariants on random queueing
// scenarios served LIFO, half of them with a limiter: each request is
// answered in time, answered late or rejected; the cohort ends in exactly
// one state; wasted work is part of the work; latencies are within the
// timeout; the limiter's rejections are rejections; MemoryBytes bounds what
// the Sim holds; a reused Sim gives the same result.
func TestLIFOProperties(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(7)
	policies := everyPolicy()
	for i := range cases(60, 12) {
		sc := randomQueueScenario(rng)
		sc.QueueOrder, sc.QueueWait, sc.ShedTarget = "lifo", 0, 0
		if i%2 == 1 {
			sc.Limiter, sc.LimitInitial, sc.LimitMin, sc.LimitMax = Limiters[i/2%2], 4, 1, 4+i%50
		}
		p := policies[i%len(policies)]
		name := fmt.Sprintf("#%d %s c=%d %s %v timeout=%v rate=%g limiter=%q", i, p, sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout, sc.ArrivalRate, sc.Limiter)
		if err := sc.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var s Sim
		r, err := s.Run(sc, p, NewMulberry32(uint32(i)), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Goodput+r.TimedOut+r.Rejected != r.Sent || r.LimiterRejected > r.Rejected {
			t.Errorf("%s: goodput %d + timed out %d + rejected %d (limiter %d) != sent %d", name, r.Goodput, r.TimedOut, r.Rejected, r.LimiterRejected, r.Sent)
		}
		if r.Succeeded+r.GaveUp+r.Pending != sc.Clients || r.Pending < 0 || int64(r.Succeeded) > r.Goodput {
			t.Errorf("%s: succeeded %d + gave up %d + pending %d != %d clients", name, r.Succeeded, r.GaveUp, r.Pending, sc.Clients)
		}
		if r.WastedMS < 0 || r.WastedMS > r.BusyMS || (sc.Timeout == 0 && r.TimedOut != 0) {
			t.Errorf("%s: wasted %g ms of %g, %d timed out", name, r.WastedMS, r.BusyMS, r.TimedOut)
		}
		if sc.Timeout > 0 && r.LatencyP99 > ms(sc.Timeout)*1.008+1 {
			t.Errorf("%s: p99 latency %g ms > timeout %v", name, r.LatencyP99, sc.Timeout)
		}
		if got, est := int64(s.footprint()), sc.MemoryBytes(false); got > est {
			t.Errorf("%s: holds %d bytes, estimate %d", name, got, est)
		}
		again, err := s.Run(sc, p, NewMulberry32(uint32(i)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, again); diff != "" {
			t.Errorf("%s: reused Sim (-first +again):\n%s", name, diff)
		}
	}
}

// TestLIFOValidate: LIFO refuses the bounds that judge an arrival by its
// wait, and the counting server any queue order.
func TestLIFOValidate(t *testing.T) {
	sc := openLoop(1, "fixed", 10*time.Millisecond, 50, 0)
	sc.QueueOrder = "lifo"
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		edit func(*Scenario)
		want Field
	}{
		{func(s *Scenario) { s.QueueWait = time.Second }, FieldQueueWait},
		{func(s *Scenario) { s.ShedTarget = time.Second }, FieldShedTarget},
		{func(s *Scenario) { s.QueueOrder = "fifo" }, FieldQueueOrder},
		{func(s *Scenario) { s.Concurrency, s.Service, s.ServiceTime, s.ArrivalRate = 0, "", 0, 0 }, FieldQueueOrder},
	} {
		bad := sc
		tt.edit(&bad)
		var fe *FieldError
		if err := bad.Validate(); err == nil || !errors.As(err, &fe) || fe.Field != tt.want {
			t.Errorf("%+v: %v; want an error on %s", bad, err, tt.want)
		}
	}
}
