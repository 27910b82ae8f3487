package sim

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// queueing makes front service j a queueing one: w workers, a fixed
// service time of svc.
func queueing(ch *Chain, j, w int, svc time.Duration) {
	l := &ch.Front[j]
	l.Capacity, l.Concurrency, l.Service, l.ServiceTime = 0, w, "fixed", svc
}

// With no service saturated and no timeouts, queueing services pass on
// exactly the attempts counting ones do: while the deepest service is
// down, Π(1+k_c) attempts at each service over the callers down to it,
// the same as chain.go's ticks count, service by service.
func TestQueuedChainAmplificationWhileDown(t *testing.T) {
	t.Parallel()
	const n = 500
	for _, ks := range [][]int{{2, 2}, {2, 2, 2}, {2, 2, 2, 2}, {3, 0, 1}, {0, 0, 4}, {1, 4, 0, 2}, {0, 0}} {
		t.Run(fmt.Sprint(ks), func(t *testing.T) {
			ch, p := chainOf(ks)
			counted := runChain(t, chainScenario(n, true), ch, p, 7)
			for j := range ch.N {
				queueing(&ch, j, n*100, 10*time.Millisecond)
			}
			for _, deepQueue := range []bool{false, true} {
				sc := chainScenario(n, true)
				if deepQueue {
					sc.Concurrency, sc.Service, sc.ServiceTime = n*100, "exponential", 20*time.Millisecond
				}
				r := runChain(t, sc, ch, p, 7)
				want := int64(n)
				for s, k := range ks {
					want *= int64(1 + k)
					if r.Layers[s].Attempts != want || r.Layers[s].Attempts != counted.Layers[s].Attempts {
						t.Errorf("deepest queueing %v: service %d had %d attempts; want %d, as on ticks (%d)", deepQueue, s+1, r.Layers[s].Attempts, want, counted.Layers[s].Attempts)
					}
					if r.Layers[s].Abandoned != 0 || r.Layers[s].WastedMS != 0 {
						t.Errorf("service %d: %+v: nothing abandoned without timeouts", s+1, r.Layers[s])
					}
				}
				if r.GaveUp != n || r.Succeeded != 0 {
					t.Errorf("%d gave up, %d served; want all %d gave up", r.GaveUp, r.Succeeded, n)
				}
				if front := r.Layers[0]; front.BusyMS != float64(front.Attempts)*10 {
					t.Errorf("service 1 worked %g ms for %d attempts of 10 ms", front.BusyMS, front.Attempts)
				}
			}
		})
	}
}

// A caller whose timeout is shorter than its callee's service time never
// has an answer: every attempt at the callee times out, so each caller's
// call fails after 1+k attempts and the callee receives Π(1+k_c), yet
// works on every one of them to the end, for nothing: its work is
// attempts × its service time, all of it wasted, and every attempt is
// abandoned (and answered with success, too late).
func TestQueuedChainTimeoutWastesEveryAttempt(t *testing.T) {
	t.Parallel()
	const n, k0, kA = 200, 2, 3
	for _, deepTimeout := range []bool{true, false} {
		ch, p := chainOf([]int{k0, kA})
		sc := chainScenario(n, false) // up from the start, no capacity limit
		svc := 200 * time.Millisecond
		queueing(&ch, 0, 1, time.Millisecond) // A: one worker, 1 ms of its own work, then its call
		ch.Front[0].Concurrency = n * 100
		if deepTimeout { // A waits 100 ms for the server, which works 200 ms
			sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = n*100, "fixed", svc, 100*time.Millisecond
		} else { // the clients wait 100 ms for A, which works 200 ms and then calls the server
			ch.Front[0].ServiceTime, ch.Front[0].Timeout = svc, 100*time.Millisecond
		}
		r := runChain(t, sc, ch, p, 3)
		at := 0 // the service that times out
		callers := int64(1 + k0)
		if deepTimeout {
			at, callers = 1, callers*(1+kA)
		}
		l := r.Layers[at]
		want := int64(n) * callers
		if l.Attempts != want || l.Abandoned != want || l.Served != want {
			t.Errorf("deepest times out %v: %+v; want %d attempts, all abandoned and served", deepTimeout, l, want)
		}
		if work := float64(want) * float64(svc.Milliseconds()); l.BusyMS != work || l.WastedMS != work {
			t.Errorf("deepest times out %v: worked %g ms, wasted %g; want attempts × service time = %g both", deepTimeout, l.BusyMS, l.WastedMS, work)
		}
		if r.GaveUp != n || r.Succeeded != 0 {
			t.Errorf("%d gave up, %d served; want all %d gave up", r.GaveUp, r.Succeeded, n)
		}
		if !deepTimeout && r.Layers[1].Attempts != want {
			t.Errorf("A called the server %d times; want once per abandoned attempt, %d", r.Layers[1].Attempts, want)
		}
	}
}

// A queueing service serves first come, first served with its workers
// and refuses what its queue cannot hold: n requests at once to one
// worker with a queue of 10 leave 1 in service and 10 waiting, the rest
// refused; the m-th admitted is answered at m service times, so a
// caller's timeout of 5.5 of them abandons the 6th to the 11th.
func TestQueuedChainQueueIsFIFO(t *testing.T) {
	t.Parallel()
	const n = 100
	ch, p := chainOf([]int{0, 0})
	sc := chainScenario(n, false)
	sc.Spread = 0
	queueing(&ch, 0, 1, 10*time.Millisecond)
	ch.Front[0].QueueLimit, ch.Front[0].Timeout = 10, 55*time.Millisecond
	r := runChain(t, sc, ch, p, 1)
	a := r.Layers[0]
	if a.Attempts != n || a.Rejected != n-11 || a.Served != 11 || a.Abandoned != 6 || a.BusyMS != 110 || a.WastedMS != 60 {
		t.Errorf("service 1: %+v; want %d attempts, %d refused, 11 served, 6 abandoned, 110 ms busy, 60 wasted", a, n, n-11)
	}
	if r.Succeeded != 5 || r.GaveUp != n-5 {
		t.Errorf("%d served, %d gave up; want 5 and %d", r.Succeeded, r.GaveUp, n-5)
	}
}

// A front service holds its worker while it calls its callee: with one
// worker, 1 ms of its own work and a callee that takes 100 ms, the m-th
// of ten requests sent at once is answered at 101·m ms, so a client
// timeout of 350 ms sees three answers and abandons seven; a service that
// let go of its worker before its call would answer all ten in time.
func TestQueuedChainHoldsTheWorker(t *testing.T) {
	t.Parallel()
	const n = 10
	ch, p := chainOf([]int{0, 0})
	sc := chainScenario(n, false)
	sc.Spread = 0
	sc.Concurrency, sc.Service, sc.ServiceTime = 1000, "fixed", 100*time.Millisecond
	queueing(&ch, 0, 1, time.Millisecond)
	ch.Front[0].Timeout = 350 * time.Millisecond
	r := runChain(t, sc, ch, p, 1)
	if r.Succeeded != 3 || r.Layers[0].Abandoned != 7 || r.Layers[1].Attempts != n {
		t.Errorf("%d served, %d abandoned at A, %d attempts at the server; want 3, 7 and %d", r.Succeeded, r.Layers[0].Abandoned, r.Layers[1].Attempts, n)
	}
	if r.Layers[0].WastedMS != 7 {
		t.Errorf("A wasted %g ms; want its own 1 ms of each of the 7 abandoned", r.Layers[0].WastedMS)
	}
}

// Random queued chains keep the books: every client ends served, given up
// or pending; abandoned attempts are attempts, wasted work is work; the
// timeline sums to the totals; and the run is the same with and without
// a timeline, and with a Sim that ran another chain before.
func TestQueuedChainKeepsTheBooks(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(5)
	pols := []Policy{{}, retrying(1), retrying(3), DefaultPolicy(Decorrelated), DefaultPolicy(FullJitter)}
	pick := func(m int) int { return int(rng.Float64() * float64(m)) }
	var warm Sim
	for trial := range 40 {
		var ch Chain
		ch.N = 1 + pick(3)
		for j := range ch.N {
			l := &ch.Front[j]
			l.Policy = pols[pick(len(pols))]
			if rng.Float64() < 0.7 {
				l.Concurrency, l.Service, l.ServiceTime, l.QueueLimit = 1+pick(40), ServiceKinds[pick(2)], time.Duration(1+pick(50))*time.Millisecond, pick(3)*20
			}
			if rng.Float64() < 0.5 {
				l.Timeout = time.Duration(1+pick(500)) * time.Millisecond
			}
		}
		sc := chainScenario(300, rng.Float64() < 0.5)
		sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 1+pick(30), ServiceKinds[pick(2)], time.Duration(1+pick(30))*time.Millisecond, time.Duration(pick(300))*time.Millisecond
		p := pols[1+pick(len(pols)-1)]
		var tl Timeline
		var s Sim
		r, err := s.RunChain(sc, ch, p, NewMulberry32(uint32(trial)), &tl)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if r.Succeeded+r.GaveUp+r.Pending != r.Clients {
			t.Errorf("trial %d: %d+%d+%d ≠ %d clients", trial, r.Succeeded, r.GaveUp, r.Pending, r.Clients)
		}
		for j, l := range r.Layers[:r.NLayers] {
			if l.Abandoned > l.Attempts || l.Rejected+l.Served > l.Attempts || l.WastedMS > l.BusyMS*(1+1e-12) || l.BusyMS < 0 {
				t.Errorf("trial %d service %d: %+v", trial, j+1, l)
			}
		}
		var sent, served, quit int64
		for k := range tl.Arrivals {
			sent, served, quit = sent+int64(tl.Arrivals[k]), served+int64(tl.Served[k]), quit+int64(tl.GaveUp[k])
		}
		if sent != r.Sent || served != int64(r.Succeeded) || quit != int64(r.GaveUp) {
			t.Errorf("trial %d: timeline %d/%d/%d, totals %d/%d/%d", trial, sent, served, quit, r.Sent, r.Succeeded, r.GaveUp)
		}
		again, err := warm.RunChain(sc, ch, p, NewMulberry32(uint32(trial)), nil)
		if err != nil || again != r {
			t.Errorf("trial %d: again %+v, %v\nfirst %+v", trial, again, err, r)
		}
	}
}

// A queued chain run allocates nothing once the Sim has grown.
func TestQueuedChainAllocatesNothing(t *testing.T) {
	sc, ch, p := queuedBench()
	var s Sim
	rng := NewMulberry32(1)
	if _, err := s.RunChain(sc, ch, p, rng, nil); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() { rng.Seed(1); _, _ = s.RunChain(sc, ch, p, rng, nil) })
	if allocs > 8 {
		t.Errorf("%g allocations a run", allocs)
	}
}

// queuedBench is the article's clients behind two queueing services, each
// retrying twice with timeouts, in front of a queueing server.
func queuedBench() (Scenario, Chain, Policy) {
	sc := Article()
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 12, "exponential", 100*time.Millisecond, time.Second
	ch, _ := chainOf([]int{0, 2, 2})
	for j := range ch.N {
		queueing(&ch, j, 50, 5*time.Millisecond)
		ch.Front[j].Timeout = 2 * time.Second
	}
	return sc, ch, DefaultPolicy(FullJitter)
}

// BenchmarkQueuedChain is queuedBench's chain; ns/event is per attempt at
// any service.
func BenchmarkQueuedChain(b *testing.B) {
	sc, ch, p := queuedBench()
	benchChain(b, sc, ch, p)
}

// Stop ends a queued chain run, and the Sim runs the next one as a fresh
// Sim does.
func TestQueuedChainStops(t *testing.T) {
	t.Parallel()
	sc, ch, p := queuedBench()
	var stop atomic.Bool
	stop.Store(true)
	s := Sim{Stop: &stop}
	if _, err := s.RunChain(sc, ch, p, NewMulberry32(1), nil); err != ErrStopped {
		t.Fatalf("error %v, want ErrStopped", err)
	}
	stop.Store(false)
	var fresh Sim
	want, _ := fresh.RunChain(sc, ch, p, NewMulberry32(2), nil)
	if r, err := s.RunChain(sc, ch, p, NewMulberry32(2), nil); err != nil || r != want {
		t.Errorf("after a stop: %v, %+v\nwant %+v", err, r, want)
	}
}

// A queueing server that fails every attempt it serves (fail_share 1)
// fails every call: each caller makes 1+k attempts, the server Π(1+k)
// and works on each of them its whole service time, none served.
func TestQueuedChainFailShareOne(t *testing.T) {
	t.Parallel()
	const n = 300
	ch, p := chainOf([]int{2, 1, 3})
	for j := range ch.N {
		queueing(&ch, j, n*10, 2*time.Millisecond)
	}
	sc := chainScenario(n, false)
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.FailShare = n*50, "fixed", 10*time.Millisecond, 1
	r := runChain(t, sc, ch, p, 9)
	srv := r.Layers[2]
	if want := int64(n * 3 * 2 * 4); srv.Attempts != want || srv.Rejected != want || srv.Served != 0 || srv.BusyMS != float64(want)*10 {
		t.Errorf("server %+v; want %d attempts, all failed, %d ms of work", srv, want, want*10)
	}
	if r.GaveUp != n {
		t.Errorf("%d gave up; want all %d", r.GaveUp, n)
	}
}

// ChainBytes bounds what a queued chain run holds when no attempt is
// abandoned.
func TestQueuedChainBytesBoundTheStorage(t *testing.T) {
	t.Parallel()
	ch, p := chainOf([]int{2, 2, 2})
	for j := range ch.N {
		queueing(&ch, j, 10000, 5*time.Millisecond)
	}
	sc := chainScenario(5000, true)
	var s Sim
	if _, err := s.RunChain(sc, ch, p, NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	got, est := int64(s.chain.footprint()), ChainBytes(sc, ch)
	if got == 0 || got > est {
		t.Errorf("holds %d bytes, estimated %d", got, est)
	}
}

// A chain whose callers time out and retry faster than its service works
// holds ever more abandoned attempts (each is worked on to the end): past
// Sim.MaxBytes the run fails with ErrTooBig, at the same point on a
// fresh Sim and on one that grew its storage before, and the Sim lets go
// of that storage and runs the next chain as a fresh one does.
func TestQueuedChainTooBig(t *testing.T) {
	t.Parallel()
	ch, _ := chainOf([]int{0, 0})
	queueing(&ch, 0, 1, 100*time.Millisecond) // 10 attempts/s
	ch.Front[0].Timeout = 10 * time.Millisecond
	p := Policy{Kind: Fixed, Base: 10 * time.Millisecond} // retries every 11 ms, for ever
	sc := chainScenario(100, false)                       // about 9,000 attempts/s, 600,000 in a minute
	const lim = 1 << 20
	small := Sim{MaxBytes: lim}
	_, err := small.RunChain(sc, ch, p, NewMulberry32(1), nil)
	if !errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), "abandoned by their callers") {
		t.Fatalf("error %v; want ErrTooBig with its figures", err)
	}
	if b := small.chain.footprint(); b > lim {
		t.Errorf("the Sim holds %d bytes after ErrTooBig; want what outgrew %d let go", b, lim)
	}
	sc2, ch2, p2 := queuedBench()
	var warm Sim
	if _, err := warm.RunChain(sc2, ch2, p2, NewMulberry32(3), nil); err != nil { // grows the storage first
		t.Fatal(err)
	}
	warm.MaxBytes = lim
	if _, again := warm.RunChain(sc, ch, p, NewMulberry32(1), nil); again == nil || again.Error() != err.Error() {
		t.Errorf("on a warm Sim: %v; want the same failure %v", again, err)
	}
	var fresh Sim
	small.MaxBytes = 0
	want, _ := fresh.RunChain(sc2, ch2, p2, NewMulberry32(3), nil)
	if r, err := small.RunChain(sc2, ch2, p2, NewMulberry32(3), nil); err != nil || r != want {
		t.Errorf("after ErrTooBig: %v, %+v\nwant %+v", err, r, want)
	}
}

// Work begun on an abandoned attempt is wasted whether or not it ends by
// the window's end, as BusyMS counts it: two clients, who never retry,
// wait 0.5 s for A, whose one worker takes the first for 600 s (past the
// window) while the second waits and is never begun; both are
// abandoned, so all the work A began is wasted: busy = wasted = 600 s.
func TestQueuedChainWastesWorkUnderWay(t *testing.T) {
	t.Parallel()
	ch, _ := chainOf([]int{0, 0})
	queueing(&ch, 0, 1, 600*time.Second)
	ch.Front[0].Timeout = 500 * time.Millisecond
	sc := chainScenario(2, false) // a 60 s window
	sc.Spread = 0
	r := runChain(t, sc, ch, retrying(0), 1)
	a := r.Layers[0]
	if a.Attempts != 2 || a.Abandoned != 2 || a.BusyMS != 600e3 || a.WastedMS != a.BusyMS {
		t.Errorf("service 1: %+v; want 2 attempts, both abandoned, 600,000 ms begun and all of it wasted", a)
	}
}
