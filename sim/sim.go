package sim

import (
	"errors"
	"math"
	"math/bits"
	"sync/atomic"
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

	// Groups: a mixed fleet's part of the metrics, NGroups of them (0 for
	// a run of one policy).
	Groups  [MaxGroups]GroupResult
	NGroups int

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
	prev  float64 // the last delay, for decorrelated jitter (ms)
	att   int32   // rejections so far
	first int32   // the tick of its first request (set at its first rejection)
}

// Sim runs simulations, reusing its storage from one run to the next. The
// zero value is ready to use. A Sim is not safe for concurrent use: give each
// goroutine its own.
type Sim struct {
	// Trace, when set, is called for every arrival in service order.
	Trace func(Event)
	// Stop, when set, is read every StopEvery ticks: once it is true, the
	// run stops and Run returns ErrStopped. It is how a caller on another
	// goroutine interrupts a long run (a signal, a deadline).
	Stop *atomic.Bool

	clients []client
	cal     calendar
	order   sorter
	lim     limited // the client-side limits of the run, when it has any
	bud     budget
	fleet   fleet // a mixed fleet's groups
}

// ErrStopped is returned by a run that Sim.Stop interrupted; its result is
// incomplete and must not be recorded.
var ErrStopped = errors.New("sim: run stopped")

// StopEvery is how often, in ticks, a run reads Sim.Stop.
const StopEvery = 1024

// Run simulates sc with every client on policy p and the random stream rng.
// If tl is not nil it receives the run's timeline.
func (s *Sim) Run(sc Scenario, p Policy, rng *Mulberry32, tl *Timeline) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	return s.run(sc, []Group{{Share: 1, Policy: p}}, rng, tl)
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

// ticker maps a time in ms to the tick it arrives at, exactly as herd.mjs's
// `next <= t` decides it: the first k with k·tick ≥ next.
type ticker struct{ tick, inv float64 }

func (c ticker) arrival(next float64) int {
	k := math.Ceil(next * c.inv) // right but for rounding; the compares below are exact
	if k*c.tick < next {
		k++
	} else if k > 0 && (k-1)*c.tick >= next {
		k--
	}
	return int(k)
}

func (s *Sim) run(sc Scenario, groups []Group, rng *Mulberry32, tl *Timeline) (Result, error) {
	p := groups[0].Policy
	n := sc.Clients
	nt := sc.ticks()
	tk := ticker{tick: ms(sc.Tick), inv: 1 / ms(sc.Tick)}
	lastT := float64(nt-1) * tk.tick
	recoverAt := ms(sc.RecoverAt)
	budget := sc.budget()
	spread := ms(sc.Spread)
	resp := response{retryAfter: ms(sc.RetryAfter)}
	maxAtt := int32(p.MaxAttempts)
	d, bud := s.delayer(sc, p)
	srv := newServer(sc)
	var fl *fleet // nil: one policy for all
	if len(groups) > 1 {
		fl = &s.fleet
		fl.setup(sc, groups, n)
		d, bud, maxAtt = fl, nil, 0 // the fleet applies each group's limits
	}

	s.clients = grow(s.clients, n)
	s.cal.reset(nt, n)
	s.order.reset(n)
	if tl != nil {
		tl.Tick = sc.Tick
		tl.Reset()
	}

	var bases [MaxGroups]float64
	for g, gr := range groups {
		bases[g] = ms(gr.Policy.Base)
	}
	active := 0 // clients in the calendar
	for i := range n {
		base := bases[0]
		if fl != nil {
			base = bases[fl.group[i]]
		}
		s.clients[i] = client{prev: base}
		next := rng.Float64() * spread
		if next <= lastT {
			s.cal.push(tk.arrival(next), int32(i))
			active++
		}
	}

	r := Result{Clients: n}
	var gthresh [MaxGroups][3]float64 // per group: 50 %, 99 % and all of its clients
	var gok [MaxGroups]int
	if fl != nil {
		r.NGroups = len(groups)
		for _, g := range fl.group {
			r.Groups[g].Clients++
		}
		for g := range groups {
			c := float64(r.Groups[g].Clients)
			gthresh[g] = [3]float64{c * 0.5, c * 0.99, c}
		}
	}
	ok, gaveUp := 0, 0
	half, ninety, ninetyNine := float64(n)*0.5, float64(n)*0.9, float64(n)*0.99
	k := 0
	stop := s.Stop
	for ; k < nt && active > 0; k++ {
		if k%StopEvery == 0 && stop != nil && stop.Load() {
			s.drain(k, nt)
			return Result{}, ErrStopped
		}
		if s.cal.empty(k) {
			if tl != nil {
				tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, 0), append(tl.Served, 0), append(tl.GaveUp, 0)
			}
			continue
		}
		t := float64(float64(k) * tk.tick) // float64(): never fused with the + below
		resp.up = t >= recoverAt
		resp.tick = int32(k)
		var m int
		var list []int32
		if s.cal.dense && s.Trace == nil && fl == nil {
			m = int(s.cal.count[k])
		} else {
			list = s.cal.take(k, &s.order)
			m = len(list)
		}
		active -= m
		r.Sent += int64(m)
		served := 0
		if resp.up {
			r.SentAfterRecovery += int64(m)
			r.PeakArrivals = max(r.PeakArrivals, m)
			if srv == nil {
				served = min(budget, m)
			} else {
				served = srv.served(t, m)
			}
		}
		ok += served
		if srv != nil && srv.backlog {
			resp.retryAfter = srv.retryAfter(t, n-ok-gaveUp)
		}
		if bud != nil {
			bud.sent(k, m)
		}
		if fl != nil {
			var sent [MaxGroups]int
			for j, i := range list {
				g := fl.group[i]
				sent[g]++
				if j < served {
					gok[g]++
					r.Groups[g].Succeeded++
				}
			}
			at := time.Duration(k) * sc.Tick
			for g := range r.NGroups {
				gr := &r.Groups[g]
				gr.Sent += int64(sent[g])
				if resp.up {
					gr.SentAfterRecovery += int64(sent[g])
				}
				if b := fl.buds[g]; b != nil {
					b.sent(k, sent[g])
				}
				mark(&gr.T50, float64(gok[g]) >= gthresh[g][0], at)
				mark(&gr.T99, float64(gok[g]) >= gthresh[g][1], at)
				mark(&gr.AllDone, float64(gok[g]) >= gthresh[g][2], at)
			}
		}
		var quit int
		switch {
		case list == nil: // dense, untraced: straight from the bitmap
			quit, active = s.tickDense(k, served, t, lastT, tk, d, resp, rng, maxAtt, active)
		default:
			if s.Trace != nil {
				for _, i := range list[:served] {
					s.Trace(Event{Tick: k, Client: int(i), Served: true, NextTick: -1})
				}
			}
			quit, active = s.reject(list[served:], k, t, lastT, tk, d, resp, rng, maxAtt, active)
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
	if fl != nil {
		for g := range r.NGroups {
			r.Groups[g].GaveUp = fl.gaveUp[g]
		}
	}
	r.PeakRPS = float64(r.PeakArrivals) * 1000 / tk.tick
	if r.Pending > 0 {
		k = nt // pending clients wait past the horizon: the run went to its end
	}
	r.End = time.Duration(max(k-1, 0)) * sc.Tick
	return r, nil
}

// drain empties the calendar's ticks k … nt-1, as a finished run leaves
// it, so that the Sim can run again after a stop.
func (s *Sim) drain(k, nt int) {
	for ; k < nt; k++ {
		if !s.cal.empty(k) {
			s.cal.take(k, &s.order)
		}
	}
}

func mark(m *Milestone, reached bool, at time.Duration) {
	if reached && !m.Reached {
		*m = Milestone{At: at, Reached: true}
	}
}

// footprint is the bytes of storage a Sim holds, for the per-client memory
// benchmark.
func (s *Sim) footprint() int {
	return cap(s.clients)*16 + s.cal.footprint() + s.order.footprint()
}

// delayer returns p's delayer for sc (see newDelayer), using the Sim's own
// storage for the limits.
func (s *Sim) delayer(sc Scenario, p Policy) (delayer, *budget) {
	return newDelayer(sc, p, &s.lim, &s.bud)
}

// newDelayer returns p's delayer for sc, wrapped (in lim) with the
// client-side limits and a varying Retry-After when there are any, and the
// retry budget (bud, or nil for none).
func newDelayer(sc Scenario, p Policy, lim *limited, bud *budget) (delayer, *budget) {
	d := p.compile()
	if p.unlimited() && sc.RetryAfterMax == 0 {
		return d, nil
	}
	tick := ms(sc.Tick)
	*lim = limited{inner: d, tick: tick, maxElapsed: ms(p.MaxElapsed), bucketRetries: -1}
	if sc.RetryAfterMax > 0 {
		lim.raLo, lim.raSpan = ms(sc.RetryAfter), ms(sc.RetryAfterMax)-ms(sc.RetryAfter)
	}
	if p.BucketTokens > 0 {
		lim.bucketRetries = int32(p.BucketTokens / p.BucketCost)
	}
	if p.RetryBudget > 0 {
		bud.reset(int(math.Ceil(BudgetWindow*1000/tick)), p.RetryBudget, p.BudgetMinRPS*BudgetWindow)
		lim.budget = bud
	}
	return lim, lim.budget
}

// reject reschedules the rejected clients of tick k (time t) from a list:
// the path of sparse calendars and of traced runs (tickDense is the dense,
// untraced one), with a Trace event per client when Trace is set.
func (s *Sim) reject(list []int32, k int, t, lastT float64, tk ticker, d delayer, resp response, rng *Mulberry32, maxAtt int32, active int) (quit, _ int) {
	clients := s.clients
	for _, i := range list {
		c := &clients[i]
		c.att++
		dl := float64(giveUp)
		if maxAtt == 0 || c.att < maxAtt {
			resp.index = i
			dl = d.delay(c, resp, rng)
		}
		if dl < 0 {
			quit++
			if s.Trace != nil {
				s.Trace(Event{Tick: k, Client: int(i), GaveUp: true, NextTick: -1})
			}
			continue
		}
		next := t + dl
		nk := -1
		if next <= lastT { // also false for NaN
			nk = max(tk.arrival(next), k+1)
			s.cal.push(nk, i)
			active++
		}
		if s.Trace != nil {
			s.Trace(Event{Tick: k, Client: int(i), Delay: dl, NextTick: nk})
		}
	}
	return quit, active
}

// tickDense is reject for a dense calendar: it walks tick k's bits in
// index order, skips (and clears) the first served clients, and reschedules
// the rest by setting their bits in later rows. No list is built.
func (s *Sim) tickDense(k, served int, t, lastT float64, tk ticker, d delayer, resp response, rng *Mulberry32, maxAtt int32, active int) (quit, _ int) {
	c := &s.cal
	stride := c.stride
	col := c.bitmap[k:] // word w of tick k is col[w·stride]
	left := int(c.count[k])
	c.count[k] = 0
	clients := s.clients
	for w := 0; left > 0; w++ {
		x := col[w*stride]
		if x == 0 {
			continue
		}
		col[w*stride] = 0
		for ; x != 0; x &= x - 1 {
			left--
			if served > 0 {
				served--
				continue
			}
			i := int32(w<<6 + bits.TrailingZeros64(x))
			cl := &clients[i]
			cl.att++
			if maxAtt > 0 && cl.att >= maxAtt {
				quit++
				continue
			}
			resp.index = i
			dl := d.delay(cl, resp, rng)
			if dl < 0 {
				quit++
				continue
			}
			next := t + dl
			if next <= lastT { // also false for NaN
				nk := max(tk.arrival(next), k+1)
				c.bitmap[int(i>>6)*stride+nk] |= 1 << (uint32(i) & 63)
				c.count[nk]++
				active++
			}
		}
	}
	return quit, active
}
