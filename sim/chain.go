package sim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// A chain of services: clients → A → B → … → the scenario's server, each
// service a counting server with its own capacity and outage window, each
// caller with its own retry policy (the clients: the run's policy; a
// service: Layer.Policy). A service that admits an attempt calls the next
// one at once (in the same tick) and holds its caller's request while it
// retries its callee: the caller waits, and has no timeout of its own, so a
// caller's attempt fails only when its callee gives up (its attempt limit,
// its retry budget, or its other limits say so; its max_elapsed is the
// caller's deadline passed down). Holding a request costs
// a counting service nothing: its capacity is attempts admitted a tick.
//
// A chain with a queueing service (Layer.Concurrency, or a queueing server
// at the bottom) or a caller's timeout (Layer.Timeout, Scenario.Timeout)
// runs on events instead, as an RPC system does (chainq.go): a queueing
// service's worker is held for the attempt's own work and then for its
// whole call to its callee, and a caller whose timeout passes retries
// while its callee goes on working on the abandoned attempt (wasted work).
// The ticks below are the counting chain's, whose results that path
// leaves as they were.
//
// While the deepest service is down and no service above it is saturated,
// a client's request with k_c retries at caller c makes Π(1+k_c) attempts
// at the deepest service (ThomWright's retry-model: (1+k)^L for equal k);
// chain_test.go holds the run to that and to its expectation with an
// independent failure share at the deepest service.
//
// A chain run takes none of the single server's paths: Sim.RunChain.

// MaxLayers bounds the services of a chain, the scenario's server included.
const MaxLayers = 4

// MaxFanout bounds Chain.Fanout.
const MaxFanout = 8

// ChainVersion is hashed into the keys of chain cells: a change that moves
// chain results moves it.
const ChainVersion = "chain-1"

// Layer is one service in front of the scenario's server.
type Layer struct {
	// Capacity: attempts/s it admits, floor(Capacity × Tick) a tick, the
	// rest refused at once (a 429); 0 = no limit.
	Capacity float64
	// OutageStart, RecoverAt: down (refusing every attempt, a 503) from
	// OutageStart until RecoverAt; equal = never down.
	OutageStart, RecoverAt time.Duration
	// Policy: how the service retries a failed call to its callee; the
	// zero Policy never retries.
	Policy Policy

	// A queueing service instead of a counting one (chainq.go), on when
	// Concurrency > 0, Capacity then 0: Concurrency attempts in service at once,
	// first come, first served, each holding its worker for its own work
	// (a service time drawn from Service, "fixed" or "exponential", of
	// mean ServiceTime) and then for its call to its callee, until that
	// call ends; at most QueueLimit attempts wait for a worker (0: no
	// limit), one more is refused at once (a 429).
	Concurrency int
	Service     string
	ServiceTime time.Duration
	QueueLimit  int
	// Timeout: how long the service's caller waits for an attempt's
	// answer (chainq.go); 0 = for ever. The deepest service's is the
	// scenario's Timeout.
	Timeout time.Duration
}

// Queueing reports whether the service is a queueing one.
func (l Layer) Queueing() bool { return l.Concurrency > 0 }

// Chain is the services in front of the scenario's server. The scenario
// is the deepest service: down until RecoverAt, then Capacity requests/s.
type Chain struct {
	Front [MaxLayers - 1]Layer // Front[0] is the service the clients call
	N     int                  // services of Front in the chain; 0 = no chain
	// Fanout: the last caller calls this many copies of the deepest
	// service at once (each with the scenario's capacity and outage), and
	// its attempt succeeds only when every copy succeeds; a retry calls
	// them all again. 0 or 1 = one.
	Fanout int
	// The deepest service's brownout is the scenario's: each attempt a
	// copy admits fails with probability Scenario.FailShare, whatever the
	// load (a 503), drawn from the run's stream.
}

// On reports whether ch is a chain at all.
func (ch Chain) On() bool { return ch.N > 0 }

// Services is the number of services: the front ones and the deepest.
func (ch Chain) Services() int { return ch.N + 1 }

// Copies is the number of copies of the deepest service (Fanout, ≥ 1).
func (ch Chain) Copies() int { return max(ch.Fanout, 1) }

// Retries reports whether caller c (0: the clients, c ≥ 1: Front[c-1])
// retries at all, for a client policy p.
func (ch Chain) Retries(c int, p Policy) bool {
	if c > 0 {
		p = ch.Front[c-1].Policy
	}
	return p.Kind != "" && p.MaxAttempts != 1
}

// LayerResult is one service's counts in a chain run.
type LayerResult struct {
	Attempts int64 // attempts that reached it (every copy's, for a fan-out)
	Rejected int64 // refused by it: down, over its capacity, or its own failure share
	Served   int64 // answered with success: its callees succeeded (the deepest service: each copy that did, whatever the others did)

	// A queued chain's (chainq.go); 0 on ticks.
	Abandoned int64   // attempts whose caller stopped waiting (its timeout) before their answer
	BusyMS    float64 // a queueing service's own work: the service times of the attempts it started
	WastedMS  float64 // the part of BusyMS spent on abandoned attempts: an attempt's service time once it is both begun and abandoned, finished by the end or not
}

// Amplification is the service's attempts per client request.
func (l LayerResult) Amplification(clients int) float64 {
	if clients == 0 {
		return 0
	}
	return float64(l.Attempts) / float64(clients)
}

// ValidateChain reports what makes ch unusable with sc and the clients'
// policy p, each fault a FieldError: FieldFanout for that, FieldFailCurve
// for a brownout's curve, FieldLayers for the front services (which the
// value names).
func ValidateChain(sc Scenario, ch Chain, p Policy) error {
	var errs fieldErrs
	if ch.Fanout < 0 || ch.Fanout > MaxFanout {
		errs.add(FieldFanout, ch.Fanout, fmt.Sprintf("0 or 1 (one copy) to %d copies of the deepest service, with layers", MaxFanout))
	}
	if sc.FailCurve != "" {
		errs.add(FieldFailCurve, sc.FailCurve, "none with layers: the deepest service of a chain fails a constant fail_share")
	}
	if ch.N < 1 || ch.N > MaxLayers-1 {
		errs.add(FieldLayers, fmt.Sprintf("%d services", ch.N), fmt.Sprintf("1 to %d services in front of the server", MaxLayers-1))
		return errors.Join(errs...)
	}
	if !sc.plain() || sc.RetryAfter != 0 {
		errs.add(FieldLayers, "in front of this server", "a server without Retry-After, ramp or reject cost behind the layers (those are not modelled in a chain)")
	}
	if sc.Server() == QueueingServer {
		errs = append(errs, queueingDeepest(sc)...)
	}
	if ch.Fanout > 1 && ch.Queued(sc) {
		errs.add(FieldFanout, ch.Fanout, "0 or 1 with queueing services or timeouts in the chain (a fan-out is modelled on counting services only)")
	}
	if p.componentsOn() {
		errs.add(FieldLayers, "clients with "+p.ComponentsShort(), "clients without client components in front of layers (a chain models attempt limits, backoff and retry budgets)")
	}
	for j, l := range ch.Front[:ch.N] {
		errs = append(errs, l.validate(j, sc.Tick)...)
	}
	for j := ch.N; j < len(ch.Front); j++ {
		if ch.Front[j] != (Layer{}) {
			errs.add(FieldLayers, fmt.Sprintf("service %d", j+1), fmt.Sprintf("none beyond the chain's %d", ch.N))
		}
	}
	return errors.Join(errs...)
}

// validate reports the faults of front service j (0: the one the clients
// call) with ticks of tick.
func (l Layer) validate(j int, tick time.Duration) fieldErrs {
	var errs fieldErrs
	add := func(what string, v any, want string) {
		errs.add(FieldLayers, fmt.Sprintf("service %d %s %v", j+1, what, v), want)
	}
	if !(l.Capacity >= 0 && l.Capacity <= 1e9) {
		add("capacity_rps", l.Capacity, "0 (no limit) or requests/s ≤ 1e9")
	} else if l.Capacity > 0 && l.Capacity*ms(tick)/1000 < 1 {
		add("capacity_rps", l.Capacity, fmt.Sprintf("0 (no limit) or at least one request a %v tick (≥ %g)", tick, 1000/ms(tick)))
	}
	if l.OutageStart < 0 || l.OutageStart%time.Millisecond != 0 {
		add("outage_start_s", l.OutageStart.Seconds(), "a whole number of milliseconds ≥ 0, s")
	}
	if l.RecoverAt < 0 || l.RecoverAt%time.Millisecond != 0 {
		add("recover_s", l.RecoverAt.Seconds(), "a whole number of milliseconds ≥ 0, s")
	} else if l.RecoverAt < l.OutageStart {
		add("recover_s", l.RecoverAt.Seconds(), fmt.Sprintf("at least its outage_start_s (%g)", l.OutageStart.Seconds()))
	}
	l.validateQueueing(add)
	if l.Policy == (Policy{}) {
		return errs
	}
	if err := l.Policy.Validate(); err != nil {
		add("policy", l.Policy, err.Error())
	} else if l.Policy.componentsOn() {
		add("policy", l.Policy, "no client components (a chain models attempt limits, backoff and retry budgets)")
	}
	return errs
}

// ChainBytes is what a chain run of sc behind ch holds beyond
// Scenario.Footprint: per client its state at each caller (16 bytes) and
// the caller whose retry is due (1), and each caller's retry budget's
// rings (16 bytes a tick of its window); a queued chain (chainq.go) its
// attempts in flight instead. 0 without a chain.
func ChainBytes(sc Scenario, ch Chain) int64 {
	if !ch.On() || sc.Tick <= 0 {
		return 0
	}
	n, c := int64(max(sc.Clients, 0)), int64(ch.Services())
	window := int64(math.Ceil(BudgetWindow * 1000 / ms(sc.Tick)))
	if ch.Queued(sc) { // per client its call (16 bytes) and, per service, an attempt in flight (48), its events (2 × 32) and its place in a queue (4); abandoned attempts add to it
		return n*(16+c*(48+64+4)) + c*16*window
	}
	return n*(16*c+1) + c*16*window
}

// footprint is the bytes of storage a chain run's state holds.
func (cr *chainRun) footprint() int {
	b := cap(cr.state)*16 + cap(cr.depth) + cr.qs.footprint()
	for i := range cr.bud {
		b += 8 * (cap(cr.bud[i].req) + cap(cr.bud[i].ret))
	}
	return b
}

// chainRun is a chain run's state; it lives in the Sim so that a run
// allocates nothing once the Sim's storage has grown.
type chainRun struct {
	sc      Scenario
	n, nt   int
	callers int // the clients and the front services: Services()
	copies  int
	tk      ticker
	lastT   float64
	fail    float64

	// Per caller c (0: the clients): its delayer (nil: never retries),
	// attempt limit, first delay's memory, limits and retry budget.
	d      [MaxLayers]delayer
	maxAtt [MaxLayers]int32
	base   [MaxLayers]float64
	lim    [MaxLayers]limited
	bud    [MaxLayers]budget
	buds   [MaxLayers]*budget

	// Per service s (0: the one the clients call; callers-1: the deepest):
	// the attempts it admits a tick (per copy) and its outage, ms.
	perTick    [MaxLayers]int
	used       [MaxLayers][MaxFanout]int
	downFrom   [MaxLayers]float64
	downTo     [MaxLayers]float64
	layers     [MaxLayers]LayerResult
	state      []client // per client, per caller: n × callers
	depth      []int8   // per client: the caller whose retry is due next
	active, ok int
	gaveUp     int
	milestone  [4]float64  // 50, 90, 99 and 100 % of the clients
	r          Result      // the milestones, the peak and what was sent after recovery
	qs         queuedState // a queued chain's (chainq.go)
}

// RunChain simulates sc behind the services of ch, every client on policy
// p, with the stream rng. If tl is not nil it receives the timeline of
// the clients' attempts (Arrivals), the clients served (Served) and those
// that gave up (GaveUp).
func (s *Sim) RunChain(sc Scenario, ch Chain, p Policy, rng *Mulberry32, tl *Timeline) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	if err := ValidateChain(sc, ch, p); err != nil {
		return Result{}, err
	}
	cr := &s.chain
	s.startChain(cr, sc, ch, p, rng, tl)
	loop := s.loopChain
	if ch.Queued(sc) {
		loop = s.loopQueued
	}
	k, err := loop(cr, rng, tl)
	if err != nil {
		qs := cr.qs
		if errors.Is(err, ErrTooBig) {
			qs = queuedState{} // let go of what outgrew the limit
		}
		*cr = chainRun{state: cr.state, depth: cr.depth, qs: qs}
		return Result{}, err
	}
	r := cr.finish(k)
	*cr = chainRun{state: cr.state, depth: cr.depth, bud: cr.bud, qs: cr.qs} // keep the storage, drop the delayers
	return r, nil
}

// startChain prepares a chain run: each caller's retries, each service's
// capacity and outage, and the clients' first requests (one draw each, in
// index order, as Sim.Run draws them).
func (s *Sim) startChain(cr *chainRun, sc Scenario, ch Chain, p Policy, rng *Mulberry32, tl *Timeline) {
	state, depth, bud, qs := cr.state, cr.depth, cr.bud, cr.qs
	*cr = chainRun{sc: sc, n: sc.Clients, nt: sc.ticks(), callers: ch.Services(), copies: ch.Copies(), fail: sc.FailShare, bud: bud, qs: qs}
	cr.tk = ticker{tick: ms(sc.Tick), inv: 1 / ms(sc.Tick)}
	cr.lastT = float64(cr.nt-1) * cr.tk.tick
	for c := range cr.callers {
		q := p
		if c > 0 {
			q = ch.Front[c-1].Policy
		}
		cr.maxAtt[c] = 1
		if q.Kind == "" {
			continue
		}
		q = q.Normalize()
		cr.maxAtt[c] = int32(q.MaxAttempts)
		cr.base[c] = ms(q.Base)
		cr.d[c], cr.buds[c] = newDelayer(sc, q, &cr.lim[c], &cr.bud[c], nil)
	}
	for j, l := range ch.Front[:ch.N] {
		cr.perTick[j] = math.MaxInt
		if l.Capacity > 0 {
			cr.perTick[j] = int(math.Floor(l.Capacity * ms(sc.Tick) / 1000))
		}
		cr.downFrom[j], cr.downTo[j] = ms(l.OutageStart), ms(l.RecoverAt)
	}
	cr.perTick[ch.N] = sc.budget()
	cr.downFrom[ch.N], cr.downTo[ch.N] = 0, ms(sc.RecoverAt)

	n := cr.n
	if ch.Queued(sc) {
		cr.startQueued(ch, rng)
	} else {
		cr.state, cr.depth = grow(state, n*cr.callers), grow(depth, n)
		clear(cr.depth)
		s.cal.reset(cr.nt, n, false)
		spread := ms(sc.Spread)
		for i := range n {
			cr.state[i*cr.callers] = client{prev: cr.base[0]}
			if next := rng.Float64() * spread; next <= cr.lastT {
				s.cal.push(cr.tk.arrival(next), int32(i))
				cr.active++
			}
		}
	}
	fn := float64(n)
	cr.milestone = [4]float64{fn * 0.5, fn * 0.9, fn * 0.99, fn}
	if tl != nil {
		tl.Tick = sc.Tick
		tl.Reset()
		if cap(tl.Arrivals) < cr.nt { // its whole length at once, as Sim.Run does: no growth in the loop
			tl.Arrivals, tl.Served, tl.GaveUp = make([]int32, 0, cr.nt), make([]int32, 0, cr.nt), make([]int32, 0, cr.nt)
		}
	}
}

// loopChain runs the ticks of a chain run and returns the tick it stopped
// before. It reads Stop as Sim.Run does (StopEvery).
func (s *Sim) loopChain(cr *chainRun, rng *Mulberry32, tl *Timeline) (int, error) {
	r := &cr.r
	next := int64(0)
	k := 0
	for ; k < cr.nt && cr.active > 0; k++ {
		if s.cal.empty(k) {
			if tl != nil {
				tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, 0), append(tl.Served, 0), append(tl.GaveUp, 0)
			}
			continue
		}
		if w := int64(k) + cr.layers[0].Attempts; w >= next {
			next = w + StopEvery
			if s.Stop != nil && s.Stop.Load() {
				s.cal.clear(k, cr.nt)
				return k, ErrStopped
			}
		}
		t := float64(float64(k) * cr.tk.tick)
		cr.used = [MaxLayers][MaxFanout]int{}
		list := s.cal.take(k, &s.order)
		cr.active -= len(list)
		edge0, ok0, quit0 := cr.layers[0].Attempts, cr.ok, cr.gaveUp
		for _, i := range list {
			s.visit(cr, i, k, t, rng)
		}
		edge := int(cr.layers[0].Attempts - edge0)
		if t >= ms(cr.sc.RecoverAt) {
			r.SentAfterRecovery += int64(edge)
			r.PeakArrivals = max(r.PeakArrivals, edge)
		}
		if tl != nil {
			tl.Arrivals = append(tl.Arrivals, int32(edge))
			tl.Served = append(tl.Served, int32(cr.ok-ok0))
			tl.GaveUp = append(tl.GaveUp, int32(cr.gaveUp-quit0))
		}
		if cr.ok > ok0 {
			cr.marks(r, k)
		}
	}
	return k, nil
}

// marks sets the milestones the clients served so far reach at tick k.
func (cr *chainRun) marks(r *Result, k int) {
	at := time.Duration(k) * cr.sc.Tick
	ok := float64(cr.ok)
	mark(&r.T50, ok >= cr.milestone[0], at)
	mark(&r.T90, ok >= cr.milestone[1], at)
	mark(&r.T99, ok >= cr.milestone[2], at)
	mark(&r.AllDone, ok >= cr.milestone[3], at)
}

// visit plays client i's due event at tick k (time t): caller
// depth[i]'s attempt reaches its service; an admitted attempt goes on to
// the next service at once, a failed one is retried by its caller or,
// when the caller gives up, fails its own caller's attempt.
func (s *Sim) visit(cr *chainRun, i int32, k int, t float64, rng *Mulberry32) {
	c := int(cr.depth[i])
	last := cr.callers - 1
	for {
		st := &cr.state[int(i)*cr.callers+c]
		if st.att == 0 && cr.buds[c] != nil {
			cr.buds[c].sent(k, 1) // an original request: the budget's deposit
		}
		rejected, up := cr.admit(c, t, rng)
		switch {
		case !rejected && c < last: // service c calls the next one: a new request of caller c+1
			c++
			cr.state[int(i)*cr.callers+c] = client{prev: cr.base[c]}
			continue
		case !rejected: // the deepest service answered (admit counts its copies): every service on the way did
			for j := range last {
				cr.layers[j].Served++
			}
			cr.ok++
			return
		}
		for {
			if nk, gone := cr.retry(i, c, k, t, up, rng); !gone {
				if nk >= 0 {
					cr.depth[i] = int8(c)
					s.cal.push(nk, i)
					cr.active++
				}
				return // rescheduled, or pending past the horizon
			}
			if c == 0 {
				cr.gaveUp++
				return
			}
			c--        // caller c gave up: the attempt of the caller before it failed,
			up = false // with a 5xx (its callee's failure)
		}
	}
}

// admit plays caller c's attempt at service c at time t: it reports
// whether the service refused it (or, the deepest, one of its copies
// failed), and whether the refusal is a 429 (up: over capacity) rather
// than a 503.
func (cr *chainRun) admit(c int, t float64, rng *Mulberry32) (rejected, up bool) {
	down := t >= cr.downFrom[c] && t < cr.downTo[c]
	l := &cr.layers[c]
	if c < cr.callers-1 {
		l.Attempts++
		switch {
		case down:
			l.Rejected++
			return true, false
		case cr.used[c][0] >= cr.perTick[c]:
			l.Rejected++
			return true, true
		}
		cr.used[c][0]++
		return false, false
	}
	up = true
	for f := range cr.copies { // every copy is called, whatever the others answer
		l.Attempts++
		switch {
		case down:
			rejected, up = true, false
		case cr.used[c][f] >= cr.perTick[c]:
			rejected = true
		default:
			cr.used[c][f]++
			if cr.fail > 0 && rng.Float64() < cr.fail {
				rejected, up = true, false
			} else {
				l.Served++ // the copy answered, whatever the others do
				continue
			}
		}
		l.Rejected++
	}
	return rejected, rejected && up
}

// retry applies caller c's rejection rule to client i's failed attempt at
// tick k (time t): gone when the caller gives up (its attempt limit or its
// delayer says so), else the tick of its retry (-1: past the horizon).
func (cr *chainRun) retry(i int32, c, k int, t float64, up bool, rng *Mulberry32) (nk int, gone bool) {
	st := &cr.state[int(i)*cr.callers+c]
	st.att++
	if m := cr.maxAtt[c]; m > 0 && st.att >= m {
		return -1, true
	}
	dl := cr.d[c].delay(st, response{up: up, index: i, tick: int32(k)}, rng)
	if dl < 0 {
		return -1, true
	}
	if next := t + dl; next <= cr.lastT { // also false for NaN
		return max(cr.tk.arrival(next), k+1), false
	}
	return -1, false
}

// finish turns the counters of a chain run that stopped before tick k
// into its Result.
func (cr *chainRun) finish(k int) Result {
	r := cr.r
	r.Clients, r.Succeeded, r.GaveUp, r.Pending = cr.n, cr.ok, cr.gaveUp, cr.n-cr.ok-cr.gaveUp
	r.Sent = cr.layers[0].Attempts
	r.PeakRPS = float64(r.PeakArrivals) * 1000 / cr.tk.tick
	if r.Pending > 0 {
		k = cr.nt
	}
	r.End = time.Duration(max(k-1, 0)) * cr.sc.Tick
	r.NLayers = cr.callers
	copy(r.Layers[:], cr.layers[:cr.callers])
	return r
}
