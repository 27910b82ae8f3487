package sim

import (
	"slices"
	"time"
)

// Result holds the metrics of one run.
type Result struct {
	Clients           int
	Sent              int64   // requests sent during the whole run
	SentAfterRecovery int64   // requests that arrived at or after RecoverAt
	PeakArrivals      int     // the most arrivals in one tick at or after RecoverAt
	PeakRPS           float64 // PeakArrivals as requests/s (PeakArrivals / Tick)

	// Milestones: the first tick time at which 50, 90, 99 and 100 % of the
	// clients had succeeded; Reached is false when that never happened
	// before the horizon (or because clients gave up).
	T50, T90, T99, AllDone Milestone

	Succeeded int           // clients served
	GaveUp    int           // clients that reached MaxAttempts
	Pending   int           // clients neither served nor given up at the end
	End       time.Duration // the last tick: every client done or gave up, or the horizon
}

// Milestone is the time at which a share of the clients had succeeded.
type Milestone struct {
	At      time.Duration
	Reached bool
}

// Timeline is the per-tick record of a run, for plots. Index k is the tick
// at time k·Tick; it covers the ticks up to the one the run stopped at.
type Timeline struct {
	Tick     time.Duration
	Arrivals []int32 // requests that arrived in the tick
	Served   []int32 // of which served
	GaveUp   []int32 // of the rejected, clients that gave up
}

// Reset empties t, keeping its storage.
func (t *Timeline) Reset() {
	t.Arrivals, t.Served, t.GaveUp = t.Arrivals[:0], t.Served[:0], t.GaveUp[:0]
}

// Event is what happened to one arrival; Sim.Trace receives one per arrival.
type Event struct {
	Tick     int
	Client   int
	Served   bool
	GaveUp   bool
	Delay    float64 // ms; the wait drawn after a rejection
	NextTick int     // the tick it will arrive at; -1 when past the horizon or given up
}

// client is one client's state: 16 bytes.
type client struct {
	prev float64 // the last delay, for decorrelated jitter (ms)
	att  int32   // rejections so far
	link int32   // the next client in the same tick's list; -1 ends it
}

// Sim runs simulations, reusing its storage from one run to the next. The
// zero value is ready to use. A Sim is not safe for concurrent use: give each
// goroutine its own.
type Sim struct {
	// Trace, when set, is called for every arrival in service order.
	Trace func(Event)

	clients  []client
	head     []int32 // per tick: first client of its list, -1 = empty
	tail     []int32 // per tick: last client of its list
	unsorted []bool  // per tick: some client was appended after a higher index
	scratch  []int32
}

// Run simulates sc with every client on policy p and the random stream rng.
// If tl is not nil it receives the run's timeline.
func (s *Sim) Run(sc Scenario, p Policy, rng *Mulberry32, tl *Timeline) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	return s.run(sc, p, rng, tl), nil
}

// Run simulates sc under p with the stream of seed, on a fresh Sim.
func Run(sc Scenario, p Policy, seed uint32) (Result, error) {
	var s Sim
	return s.Run(sc, p, NewMulberry32(seed), nil)
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (s *Sim) run(sc Scenario, p Policy, rng *Mulberry32, tl *Timeline) Result {
	n := sc.Clients
	nt := sc.ticks()
	tick := ms(sc.Tick)
	lastT := float64(nt-1) * tick
	recoverAt := ms(sc.RecoverAt)
	budget := sc.budget()
	spread := ms(sc.Spread)
	resp := response{retryAfter: ms(sc.RetryAfter)}
	maxAtt := int32(p.MaxAttempts)
	d := p.compile()

	s.clients = grow(s.clients, n)
	s.head = grow(s.head, nt)
	s.tail = grow(s.tail, nt)
	s.unsorted = grow(s.unsorted, nt)
	for k := range nt {
		s.head[k] = -1
		s.unsorted[k] = false
	}
	if tl != nil {
		tl.Tick = sc.Tick
		tl.Reset()
	}

	// arrival returns the first tick k ≥ min with k·tick ≥ next, exactly as
	// herd.mjs's `next[i] <= t` decides it, whatever the rounding of next/tick.
	arrival := func(next float64, min int) int {
		k := int(next / tick)
		if float64(k)*tick < next {
			k++
		}
		if k > 0 && float64(k-1)*tick >= next {
			k--
		}
		if k < min {
			k = min
		}
		return k
	}
	push := func(i int32, k int) {
		c := &s.clients[i]
		c.link = -1
		if h := s.head[k]; h < 0 {
			s.head[k] = i
		} else {
			t := s.tail[k]
			s.clients[t].link = i
			if i < t {
				s.unsorted[k] = true
			}
		}
		s.tail[k] = i
	}

	base := ms(p.Base)
	active := 0 // clients in some tick's list
	for i := range n {
		s.clients[i] = client{prev: base}
		next := rng.Float64() * spread
		if next <= lastT {
			push(int32(i), arrival(next, 0))
			active++
		}
	}

	r := Result{Clients: n}
	ok, gaveUp := 0, 0
	half, ninety, ninetyNine := float64(n)*0.5, float64(n)*0.9, float64(n)*0.99
	k := 0
	for ; k < nt && active > 0; k++ {
		if s.head[k] < 0 {
			if tl != nil {
				tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, 0), append(tl.Served, 0), append(tl.GaveUp, 0)
			}
			continue
		}
		list := s.scratch[:0]
		for i := s.head[k]; i >= 0; i = s.clients[i].link {
			list = append(list, i)
		}
		if s.unsorted[k] {
			slices.Sort(list)
		}
		s.scratch = list
		active -= len(list)

		t := float64(k) * tick
		resp.up = t >= recoverAt
		m := len(list)
		r.Sent += int64(m)
		served := 0
		if resp.up {
			r.SentAfterRecovery += int64(m)
			r.PeakArrivals = max(r.PeakArrivals, m)
			served = min(budget, m)
		}
		ok += served
		quit := 0
		for j, i := range list {
			if j < served {
				if s.Trace != nil {
					s.Trace(Event{Tick: k, Client: int(i), Served: true, NextTick: -1})
				}
				continue
			}
			c := &s.clients[i]
			c.att++
			if maxAtt > 0 && c.att >= maxAtt {
				quit++
				if s.Trace != nil {
					s.Trace(Event{Tick: k, Client: int(i), GaveUp: true, NextTick: -1})
				}
				continue
			}
			resp.index = i
			dl := d.delay(c, resp, rng)
			next := t + dl
			nk := -1
			if next <= lastT { // also false for NaN
				nk = arrival(next, k+1)
				push(i, nk)
				active++
			}
			if s.Trace != nil {
				s.Trace(Event{Tick: k, Client: int(i), Delay: dl, NextTick: nk})
			}
		}
		gaveUp += quit
		if tl != nil {
			tl.Arrivals = append(tl.Arrivals, int32(m))
			tl.Served = append(tl.Served, int32(served))
			tl.GaveUp = append(tl.GaveUp, int32(quit))
		}
		if served > 0 {
			at := time.Duration(k) * sc.Tick
			fok := float64(ok)
			mark(&r.T50, fok >= half, at)
			mark(&r.T90, fok >= ninety, at)
			mark(&r.T99, fok >= ninetyNine, at)
			mark(&r.AllDone, ok == n, at)
		}
	}
	r.Succeeded, r.GaveUp, r.Pending = ok, gaveUp, n-ok-gaveUp
	r.PeakRPS = float64(r.PeakArrivals) * 1000 / tick
	if r.Pending > 0 {
		k = nt // pending clients wait past the horizon: the run went to its end
	}
	r.End = time.Duration(max(k-1, 0)) * sc.Tick
	return r
}

func mark(m *Milestone, reached bool, at time.Duration) {
	if reached && !m.Reached {
		*m = Milestone{At: at, Reached: true}
	}
}
