package sim

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// referenceRun is herd.mjs's loop, transcribed: every tick scans every
// client. It is slow and obviously right; the fast engine must agree with it
// on every metric, for every policy.
func referenceRun(sc Scenario, p Policy, seed uint32) Result {
	rng := NewMulberry32(seed)
	n := sc.Clients
	tick, recoverAt, horizon := ms(sc.Tick), ms(sc.RecoverAt), ms(sc.Horizon)
	var limits Sim
	d, bud := limits.delayer(sc, p, nil)
	next := make([]float64, n)
	cs := make([]client, n)
	state := make([]uint8, n) // 0 pending, 1 done, 2 gave up
	for i := range n {
		next[i] = rng.Float64() * ms(sc.Spread)
		cs[i].prev = ms(p.Base)
	}
	r := Result{Clients: n}
	ok, quit := 0, 0
	capTick := sc.Capacity * tick / 1000
	k := 0
	for t := 0.0; t < horizon; t += tick {
		var arrivals []int
		for i := range n {
			if state[i] == 0 && next[i] <= t {
				arrivals = append(arrivals, i)
			}
		}
		up := t >= recoverAt
		r.Sent += int64(len(arrivals))
		if up {
			r.SentAfterRecovery += int64(len(arrivals))
			r.PeakArrivals = max(r.PeakArrivals, len(arrivals))
		}
		budget := 0.0
		if up {
			budget = capTick
			if sc.RampUp > 0 && t < recoverAt+ms(sc.RampUp) {
				budget = sc.Capacity * (sc.RampFrom + (1-sc.RampFrom)*(t-recoverAt)/ms(sc.RampUp)) * tick / 1000
			}
			// Rejections cost work: serve s with s + cost·(m − s) ≤ budget.
			if c := sc.RejectCost; c > 0 {
				s := math.Floor(budget)
				for s > 0 && s+c*float64(len(arrivals)-int(s)) > budget+1e-9 {
					s--
				}
				budget = s
			}
		}
		ra := ms(sc.RetryAfter)
		if sc.RetryAfterBacklog {
			served := min(len(arrivals), int(math.Floor(budget)))
			c := sc.Capacity
			if sc.RampUp > 0 && math.Max(t, recoverAt) < recoverAt+ms(sc.RampUp) {
				c *= sc.RampFrom + (1-sc.RampFrom)*(math.Max(t, recoverAt)-recoverAt)/ms(sc.RampUp)
			}
			ra = 1000 * math.Max(1, math.Ceil(float64(n-ok-quit-served)/c))
		}
		if bud != nil { // a deposit per original request, as Finagle's RetryFilter
			orig := 0
			for _, i := range arrivals {
				if cs[i].att == 0 {
					orig++
				}
			}
			bud.sent(k, orig)
		}
		for _, i := range arrivals {
			if budget >= 1 {
				budget--
				state[i] = 1
				ok++
				continue
			}
			cs[i].att++
			if p.MaxAttempts > 0 && int(cs[i].att) >= p.MaxAttempts {
				state[i] = 2
				quit++
				continue
			}
			dl := d.delay(&cs[i], response{retryAfter: ra, up: up, index: int32(i), tick: int32(k)}, rng)
			if dl < 0 {
				state[i] = 2
				quit++
				continue
			}
			next[i] = t + dl
		}
		at := time.Duration(k) * sc.Tick
		mark(&r.T50, float64(ok) >= float64(n)*0.5, at)
		mark(&r.T90, float64(ok) >= float64(n)*0.9, at)
		mark(&r.T99, float64(ok) >= float64(n)*0.99, at)
		mark(&r.AllDone, ok == n, at)
		r.End = at
		if ok+quit == n {
			break
		}
		k++
	}
	r.Succeeded, r.GaveUp, r.Pending = ok, quit, n-ok-quit
	r.PeakRPS = float64(r.PeakArrivals) * 1000 / tick
	return r
}

// everyPolicy returns one configured policy per family and then some, for
// tests that must cover them all.
func everyPolicy() []Policy {
	var ps []Policy
	for _, k := range Kinds() {
		ps = append(ps, DefaultPolicy(k))
	}
	for _, pr := range Presets() {
		if pr.Policy.componentsOn() {
			continue // not in herd.mjs: TestComponentPathsAgree compares their paths
		}
		ps = append(ps, pr.Policy)
	}
	return append(ps,
		Policy{Kind: WidthJitter, Cap: time.Minute, Width: 0.25}.Normalize(),
		Policy{Kind: Fixed, Base: 2 * time.Second, MaxElapsed: 9 * time.Second},
		Policy{Kind: Decorrelated, Base: time.Second, Cap: 20 * time.Second, RetryBudget: 0.1, BudgetMinRPS: 1},
		Policy{Kind: FullJitter, Base: time.Second, Cap: 20 * time.Second, Multiplier: 2, BucketTokens: 12, BucketCost: 5},
		Policy{Kind: Exponential, Cap: 0, Multiplier: 1.5}.Normalize(),
		Policy{Kind: Decorrelated, Cap: 30 * time.Second, MaxAttempts: 3}.Normalize(),
		Policy{Kind: Exponential, Cap: 30 * time.Second, MaxAttempts: 4}.Normalize(),  // stepCurve at an attempt limit
		Policy{Kind: Decorrelated, Base: 30 * time.Millisecond, Cap: 2 * time.Second}, // delays within a tick: due at the next one
		Policy{Kind: WatchDog, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5}.Normalize(),
		Policy{Kind: HTTPRetry, Cap: 30 * time.Second, Width: 0.2, MaxAttempts: 4, HonorRetryAfter: true}.Normalize(),
	)
}

func TestFastEngineAgreesWithReference(t *testing.T) {
	t.Parallel()
	scenarios := []Scenario{
		{Clients: 60, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 30, Spread: 2 * time.Second, Horizon: 2 * time.Minute},
		// A 3 ms tick: k·3 and next/3 round differently, so arrival ticks
		// are decided at floating-point boundaries.
		{Clients: 40, Tick: 3 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 700, Spread: 1500 * time.Millisecond, Horizon: 40 * time.Second, RetryAfter: 999 * time.Millisecond},
		{Clients: 50, Tick: 7 * time.Millisecond, RecoverAt: 0, Capacity: 150, Spread: 0, Horizon: 30 * time.Second, RetryAfter: time.Second},
		{Clients: 30, Tick: 100 * time.Millisecond, RecoverAt: 5 * time.Second, Capacity: 12.5, Spread: 2 * time.Second, Horizon: 10 * time.Second, RetryAfter: 3 * time.Second},
		// Servers that do more than count.
		{Clients: 80, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 40, Spread: 2 * time.Second, Horizon: 2 * time.Minute,
			RampUp: 20 * time.Second, RampFrom: 0.25, RetryAfter: 2 * time.Second, RetryAfterMax: 6 * time.Second},
		{Clients: 80, Tick: 50 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 60, Spread: time.Second, Horizon: 2 * time.Minute,
			RejectCost: 0.3, RetryAfterBacklog: true},
	}
	for si, sc := range scenarios {
		for _, p := range everyPolicy() {
			for seed := uint32(1); seed <= 3; seed++ {
				name := fmt.Sprintf("s%d/%s/seed%d", si, p, seed)
				want := referenceRun(sc, p, seed)
				got, err := Run(sc, p, seed)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got != want {
					t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
				}
			}
		}
	}
}

// TestArrivalAtTickBoundary pins the case herd.mjs's `next <= t` decides: a
// delay that lands exactly on a tick arrives on that tick, one a hair later
// arrives on the next.
func TestArrivalAtTickBoundary(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 1, Tick: 100 * time.Millisecond, RecoverAt: 500 * time.Millisecond, Capacity: 10, Horizon: 10 * time.Second}
	var events []Event
	s := Sim{Trace: func(e Event) { events = append(events, e) }}
	p := Policy{Kind: Fixed, Base: 200 * time.Millisecond}
	if _, err := s.Run(sc, p, NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	// Spread 0: arrives at tick 0, then every 200 ms exactly: ticks 2, 4, 6.
	var ticks []int
	for _, e := range events {
		ticks = append(ticks, e.Tick)
	}
	if fmt.Sprint(ticks) != "[0 2 4 6]" {
		t.Errorf("arrival ticks %v, want [0 2 4 6]", ticks)
	}
	p.Base = 201 * time.Millisecond
	events = nil
	if _, err := s.Run(sc, p, NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	ticks = ticks[:0]
	for _, e := range events {
		ticks = append(ticks, e.Tick)
	}
	if fmt.Sprint(ticks) != "[0 3 6]" {
		t.Errorf("with 201 ms: arrival ticks %v, want [0 3 6]", ticks)
	}
}

type nanDelay struct{}

func (nanDelay) delay(*client, response, *Mulberry32) float64 { return math.NaN() }

// A delay that is not a number schedules nothing: the client is neither
// rescheduled nor counted as active (next <= lastT is false for NaN).
func TestNaNDelayNeverArrives(t *testing.T) {
	t.Parallel()
	for _, sparse := range []bool{false, true} {
		var s Sim
		s.clients = make([]client, 1)
		s.cal.sparse = sparse
		s.cal.reset(100, 1, false)
		s.order.reset(1)
		st := &runState{nt: 100, lastT: 9900, tk: ticker{tick: 100, inv: 0.01}, d: nanDelay{}, rng: NewMulberry32(1)}
		dl, nk := s.reject(st, 0, 0, 0)
		if dl < 0 || nk != -1 || st.active != 0 {
			t.Errorf("sparse %v: a NaN delay: delay %g, next tick %d, %d active; want NaN, -1, 0", sparse, dl, nk, st.active)
		}
		for k := range 100 {
			if !s.cal.empty(k) {
				t.Errorf("sparse %v: a NaN delay scheduled an arrival at tick %d", sparse, k)
			}
		}
	}
}

// Each of the run's paths — the dense calendar untraced (its own loop),
// the dense calendar traced, the sparse calendar (used above about 11,000
// clients) untraced and traced — agrees with the reference on every policy,
// and the traced paths emit the same events.
func TestEveryPathAgreesWithReference(t *testing.T) {
	t.Parallel()
	scenarios := []Scenario{
		{Clients: 70, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 30, Spread: 2 * time.Second, Horizon: 2 * time.Minute},
		{Clients: 40, Tick: 3 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 700, Spread: 1500 * time.Millisecond, Horizon: 40 * time.Second, RetryAfter: 999 * time.Millisecond},
		{Clients: 90, Tick: 50 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 60, Spread: time.Second, Horizon: 2 * time.Minute,
			RejectCost: 0.3, RetryAfterBacklog: true},
	}
	for si, sc := range scenarios {
		for _, p := range everyPolicy() {
			seed := uint32(si + 11)
			want := referenceRun(sc, p, seed)
			var traces [2][]Event
			for _, path := range []struct {
				name          string
				sparse, trace bool
			}{{"dense", false, false}, {"dense-traced", false, true}, {"sparse", true, false}, {"sparse-traced", true, true}} {
				var s Sim
				s.cal.sparse = path.sparse
				var ev []Event
				if path.trace {
					s.Trace = func(e Event) { ev = append(ev, e) }
				}
				got, err := s.Run(sc, p, NewMulberry32(seed), nil)
				if err != nil {
					t.Fatal(err)
				}
				if s.cal.dense == path.sparse {
					t.Fatalf("%s: calendar dense = %v", path.name, s.cal.dense)
				}
				if got != want {
					t.Errorf("s%d/%s/%s:\n got %+v\nwant %+v", si, p, path.name, got, want)
				}
				if path.trace {
					traces[b2i(path.sparse)] = ev
				}
			}
			if fmt.Sprint(traces[0]) != fmt.Sprint(traces[1]) {
				t.Errorf("s%d/%s: the dense and sparse calendars trace different events", si, p)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Above denseLimit the calendar is sparse on its own: 20,000 clients over
// 11,000 ticks (313 words a tick, 27 MB > 16 MiB) take that path, and
// agree with the reference.
func TestLargeRunIsSparse(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 20000, Tick: 100 * time.Millisecond, RecoverAt: 5 * time.Second, Capacity: 4000, Spread: 2 * time.Second, Horizon: 1100 * time.Second}
	p := DefaultPolicy(FullJitter)
	var s Sim
	got, err := s.Run(sc, p, NewMulberry32(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.cal.dense {
		t.Fatalf("%d clients × %d ticks: the calendar is dense, want sparse", sc.Clients, sc.ticks())
	}
	if want := referenceRun(sc, p, 3); got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
