package sim

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// A queueing server (Scenario.Concurrency > 0) serves requests first come,
// first served with Concurrency workers, each request taking a service time
// drawn from Scenario.Service. Because service is FCFS and a request's
// service time is drawn when it is admitted, its whole fate is known when it
// arrives: it starts when the earliest worker is free, ends a service time
// later, and its client either has its answer by then or has given up at
// its Timeout. So each arrival is decided at once, as on the counting
// server, and no event queue is needed:
//
//   - from OutageStart (0 by default) to RecoverAt the server is down: every
//     request is rejected (503). Requests admitted before the outage are
//     still answered (the outage stops admissions, as a balancer that stops
//     routing; a crash that loses them is not modelled);
//   - a request that would wait (every worker busy) is rejected (429) when
//     QueueLimit requests are already waiting, when its wait would exceed
//     QueueWait, or when shedding: the queue's delay has stayed above
//     ShedTarget for ShedInterval (CoDel's rule, measured on the wait an
//     arrival would have, which FCFS makes known at arrival);
//   - an admitted request draws its service time; it is answered at
//     start + service. If that is later than arrival + Timeout its client
//     has stopped waiting at arrival + Timeout: the request counts as timed
//     out, its client draws its retry delay then (from arrival + Timeout,
//     with no Retry-After), and the server still spends the service time
//     on it (wasted work). Otherwise the request succeeds when answered.
//
// Rejected and timed-out requests go through the same rejection rule as
// on the counting server (Sim.reject): attempt limits, client limits and
// the policy's delay.
//
// Open-loop traffic (ArrivalRate > 0) adds new requests at the times of a
// Poisson process from time 0, each a new client with its own retry state,
// which it gets (index Clients, Clients+1, … in the order of first
// failures) when its first attempt fails; their retries go through the
// calendar as the cohort's do.
//
// The cohort of failed clients first sends at OutageStart + U(0, Spread).
//
// Draw order, one Mulberry32 stream per run: the cohort's initial spread
// (one draw per client, index order); then the first open-loop gap; then
// tick by tick: the calendar's arrivals of the tick in index order, then
// the open-loop arrivals within the tick in time order. Each arrival draws,
// in this order, its service time if admitted (none for fixed, one for
// lognormal, one for exponential but for the ziggurat's 2.2 % of
// rejections, which draw again: expDraw), then with a brownout its failure
// (one draw: brownout.go), and its retry delay if rejected, timed out or
// failed (what its policy draws); an open-loop arrival then draws
// the next gap (an exponential draw; with a daily curve, a uniform draw
// after each candidate gap, until one is kept: arrivalAfter).

// queueFixedBytes is a queueRun's storage that does not grow with the run.
const queueFixedBytes = latencyBuckets * 8

// queueRun is the state of a queueing server's run.
type queueRun struct {
	serviceDraw         // its service times
	limit               int
	maxWait, target     float64   // ms; 0 = none
	timeout             float64   // ms; 0 = none
	outageStart         float64   // ms: the server is down from then to recovery
	rate                float64   // open-loop arrivals per ms; 0 = none
	gap                 float64   // ms: the mean gap between candidate arrivals, 1 / (rate × the curve's peak)
	curve               []float64 // the daily curve's multipliers over its peak (nil: none)
	slot                float64   // ms: a slot of the curve, a day / len(curve)
	clock               float64   // ms: the time of day at time 0
	nextArrival         float64   // ms: the next open-loop arrival
	aboveSince          float64   // ms: since when the queue's delay is above target; -1 = it is not
	base                float64   // ms: a new client's first prev (its policy's base)
	free                workers
	waiting             []float64 // with a QueueLimit: start times of admitted requests that have not started, FCFS
	head                int       // waiting[head:] is the queue
	cohortDone          []int32   // per tick: cohort clients answered in the tick
	good                []int32   // per tick: requests answered in time in the tick
	offered             []int32   // per tick: open-loop requests that arrived in the tick
	inflight            int       // cohort answers due at later ticks
	lat                 *latency  // the Sim's
	goodput, timedOut   int64
	rejected, offeredN  int64
	busy, wasted        float64
	loopGaveUp          int64
	arrivalsInTick      int
	quitInTick          int
	horizon             float64
	recoveryWindowTicks int
	brown               *brownout // a brownout's failures; nil: none, no draw (brownout.go)
	added               float64   // ms: AddedLatency, after the service ends
	failed              int64     // requests a brownout failed
	rec                 recovery  // the time back to steady state (recovery.go)
	stuck               stuckRule // Sim.StopStuck's rule (stuck.go)
	lim                 *limiter  // the adaptive concurrency limiter (limiter.go), or nil
	limSt               limiter   // lim's storage, kept from run to run
	lifo                bool      // QueueOrder "lifo" (lifo.go)
	lq                  lifoQueue // its waiting requests, kept from run to run
}

// start prepares a queueing server's run of sc.
func (q *queueRun) start(sc Scenario, st *runState, lat *latency) *queueRun {
	free, waiting, curve := q.free, q.waiting, q.curve
	cd, good, off := q.cohortDone, q.good, q.offered
	rec, limSt, lq := q.rec, q.limSt, q.lq
	*q = queueRun{serviceDraw: sc.serviceDraw(), limit: sc.QueueLimit,
		maxWait: ms(sc.QueueWait), target: ms(sc.ShedTarget), timeout: ms(sc.Timeout),
		rate: sc.ArrivalRate / 1000, aboveSince: -1, horizon: ms(sc.Horizon), outageStart: ms(sc.OutageStart),
		brown: st.brown, added: ms(sc.AddedLatency)}
	if q.rate > 0 {
		q.gap = 1 / q.rate
	}
	q.curve = curve[:0]
	if sc.ArrivalCurve != "" {
		c, _ := ParseCurve(sc.ArrivalCurve) // valid: Validate parsed it
		peak := slices.Max(c)
		for _, m := range c {
			q.curve = append(q.curve, m/peak)
		}
		q.gap = 1 / float64(q.rate*peak)
		q.slot, q.clock = ms(Day)/float64(len(c)), ms(sc.ArrivalClock)
	}
	q.free = free
	q.free.reset(sc.Concurrency)
	q.waiting = waiting[:0]
	q.cohortDone = grow(cd, st.nt)
	q.good = grow(good, st.nt)
	q.offered = grow(off, st.nt)
	clear(q.cohortDone)
	clear(q.good)
	clear(q.offered)
	q.lat = lat
	lat.reset()
	q.recoveryWindowTicks = max(1, int(math.Round(RecoveryWindow.Seconds()*1000/st.tk.tick)))
	q.rec = rec
	q.rec.start(sc, st, q.recoveryWindowTicks)
	q.limSt, q.lq = limSt, lifoQueue{stack: lq.stack[:0]}
	q.lifo = sc.QueueOrder == "lifo"
	if sc.Limiter != "" {
		q.limSt.reset(sc)
		q.lim = &q.limSt
	}
	return q
}

// logSigma is a lognormal service time's log-sd: its p99 over its median
// is e^(σ·z99).
func (sc Scenario) logSigma() float64 { return logPure(ms(sc.ServiceP99)/ms(sc.ServiceTime)) / z99 }

// MeanService is a queueing server's mean service time: ServiceTime for
// fixed and exponential service, the median's e^(σ²/2) for lognormal; 0
// for the counting server. Its capacity is Concurrency over it.
func (sc Scenario) MeanService() time.Duration {
	if sc.Server() == CountingServer {
		return 0
	}
	if serviceKind(sc.Service) != 2 {
		return sc.ServiceTime
	}
	sg := sc.logSigma()
	return time.Duration(float64(sc.ServiceTime) * expPure(float64(sg*sg)/2))
}

// z99 is the standard normal's 99th percentile.
const z99 = 2.3263478740408408

// serviceDraw is a service time's distribution: the one owner of its
// draws, for the queueing server and a chain's queueing services
// (chainq.go).
type serviceDraw struct {
	kind           int     // index in ServiceKinds
	svc, mu, sigma float64 // ms: mean or median; lognormal's log-mean and log-sd
}

// serviceDraw is the scenario's service time distribution.
func (sc Scenario) serviceDraw() serviceDraw {
	d := newServiceDraw(sc.Service, sc.ServiceTime)
	if d.kind == 2 {
		d.mu, d.sigma = logPure(d.svc), sc.logSigma()
	}
	return d
}

// newServiceDraw is the distribution kind (fixed or exponential; a
// lognormal's σ is set by the caller) with mean svc.
func newServiceDraw(kind string, svc time.Duration) serviceDraw {
	return serviceDraw{kind: serviceKind(kind), svc: ms(svc)}
}

// service draws a service time, ms: exponential by the ziggurat
// (expDraw), lognormal by inverting its CDF with one draw; the same bits
// on every CPU (see fmath.go).
func (q *serviceDraw) service(rng *Mulberry32) float64 {
	switch q.kind {
	case 0:
		return q.svc
	case 1:
		return float64(q.svc * expDraw(rng))
	}
	z := float64(math.Sqrt2 * erfinv(float64(2*rng.Float64())-1))
	return expPure(q.mu + float64(q.sigma*z))
}

// outcome is what the server does with one arrival.
type outcome uint8

const (
	rejected outcome = iota // refused at once
	answered                // answered in time, at done
	timedOut                // its client stopped waiting at arrival + timeout
)

// failedOut: answered in time with a brownout's 503, at done.
const failedOut = timedOut + 1

// bounds reports whether a request arriving at a (ms) that would wait
// this long is rejected by the queue's bound, its wait bound or CoDel's
// shedding (which it keeps track of).
func (q *queueRun) bounds(a, wait float64) bool {
	if wait > 0 {
		if q.limit > 0 && len(q.waiting)-q.head >= q.limit {
			return true
		}
		if q.maxWait > 0 && wait > q.maxWait {
			return true
		}
	}
	if q.target > 0 {
		if wait <= q.target {
			q.aboveSince = -1
		} else if q.aboveSince < 0 {
			q.aboveSince = a
		} else if a-q.aboveSince >= ms(ShedInterval) {
			return true
		}
	}
	return false
}

// admit decides the fate of a request arriving at time a (ms, ≥ recovery)
// and returns when it is answered.
func (q *queueRun) admit(a float64, rng *Mulberry32) (outcome, float64) {
	if q.limit > 0 { // only a QueueLimit needs the queue's length
		for q.head < len(q.waiting) && q.waiting[q.head] <= a {
			q.head++
		}
		if q.head == len(q.waiting) && q.head > 0 { // empty: start again at the front
			q.waiting, q.head = q.waiting[:0], 0
		}
	}
	if q.lim != nil && q.lim.full(a) { // the limiter decides first (limiter.go)
		return rejected, 0
	}
	start := max(a, q.free.first())
	wait := start - a
	if q.bounds(a, wait) {
		return rejected, 0
	}
	s := q.service(rng)
	fail := q.brown != nil && q.brown.fails(a, rng)
	done := start + s
	q.free.replaceFirst(done)
	if q.lim != nil {
		q.lim.hold(a, done, q.timeout)
	}
	if wait > 0 && q.limit > 0 { // only a QueueLimit needs the queue's length
		if q.head > 0 && len(q.waiting) == cap(q.waiting) { // reuse the room of those that started
			n := copy(q.waiting, q.waiting[q.head:])
			q.waiting, q.head = q.waiting[:n], 0
		}
		q.waiting = append(q.waiting, start)
	}
	q.busy += s
	done += q.added // answered then; the worker is free at start + s
	if q.timeout > 0 && done-a > q.timeout {
		q.wasted += s
		q.timedOut++
		return timedOut, done
	}
	if fail {
		q.failed++
		return failedOut, done
	}
	q.goodput++
	q.lat.add(done - a)
	return answered, done
}

// workers holds the times at which a queueing server's workers are next
// free, as a tournament tree: the leaves (nodes p … 2p−1, p a power of two,
// +Inf where no worker is) hold the times, every other node the smaller of
// its children's with the leaf it came from, so node 1 holds the earliest.
// Admitting a request replaces that earliest time with a later one and
// replays the matches on its leaf's path: one per level, each a load of a
// sibling (independent of the others), a compare and two conditional moves
// (the select by masks before chained four dependent instructions a level,
// this two). A binary heap's sift did the same work with branches that the
// new time's random depth made unpredictable (a fifth of an open-loop
// run's profile; the tree took BenchmarkQueue/open-loop from 46–51 to
// 33–38 CPU ns per event). Only the earliest time is ever read, so the
// results are those of the heap, bit for bit.
type workers struct {
	nd []wnode
}

// wnode is a node of the workers' tree: a time and the leaf it is at, side
// by side so that a match reads one pair (a node and its sibling share a
// cache line). Times ≥ 0 and not NaN order as their bits do, as signed
// integers: the tree compares the bits.
type wnode struct {
	bits int64 // math.Float64bits of the time (ms)
	leaf int64
}

// reset makes c idle workers (free at 0).
func (w *workers) reset(c int) {
	p := 1 << bits.Len(uint(max(c-1, 0))) // leaves: c rounded up to a power of two
	w.nd = grow(w.nd, 2*p)
	for j := range p {
		w.nd[p+j] = wnode{0, int64(p + j)}
		if j >= c {
			w.nd[p+j].bits = int64(math.Float64bits(math.Inf(1)))
		}
	}
	for n := p - 1; n >= 1; n-- {
		l, r := w.nd[2*n], w.nd[2*n+1]
		if r.bits < l.bits {
			l = r
		}
		w.nd[n] = l
	}
}

// first is the earliest time a worker is free.
func (w *workers) first() float64 { return w.at(1) }

// at is node n's time.
func (w *workers) at(n int) float64 { return math.Float64frombits(uint64(w.nd[n].bits)) }

// replaceFirst gives the earliest free worker the time t, no earlier than
// first(). It is not inlined: inlined in openPlain, its loop's values
// spilled to the stack for want of registers (measured about 5 % slower).
//
//go:noinline
func (w *workers) replaceFirst(t float64) {
	nd := w.nd
	m := len(nd) - 1 // the nodes' count is a power of two: i&m is i, and proves it in range
	cur := wnode{int64(math.Float64bits(t)), nd[1].leaf}
	n := int(cur.leaf)
	nd[n] = cur
	for ; n > 1; n >>= 1 {
		if sib := nd[(n^1)&m]; sib.bits < cur.bits {
			cur = sib
		}
		nd[(n>>1)&m] = cur
	}
}

// loopQueue runs a queueing server's ticks.
func (s *Sim) loopQueue(st *runState) (int, error) {
	q := st.q
	if q.rate > 0 {
		q.nextArrival = q.arrivalAfter(0, st.rng)
	}
	q.base = s.clients[0].prev
	plain := s.openPlainOK(st, q)
	k := 0
	for ; k < st.nt && q.live(st); k++ {
		if w := int64(k) + st.r.Sent; w >= st.nextCheck && s.stopRequested(st, w) { // StopEvery: ticks and arrivals so far
			return k, s.stopped(st, k)
		}
		t := float64(float64(k) * st.tk.tick)
		st.resp.tick = int32(k)
		q.arrivalsInTick, q.quitInTick = 0, 0
		if q.rate > 0 && k >= q.rec.k0 {
			q.rec.observe(k, t, q, len(s.clients))
		}
		if q.stuck.span > 0 && q.stuck.stuck(k, t, q, st.active) {
			st.r.Stuck = true
			break
		}
		if !s.cal.empty(k) {
			list := s.cal.take(k, &s.order)
			st.active -= len(list)
			for _, i := range list {
				s.arriveQueued(st, q, i, k, t)
			}
		}
		if q.rate > 0 {
			s.openArrivals(st, q, k, plain)
		}
		if q.lifo {
			s.lifoAdvance(st, q, k, float64(float64(k+1)*st.tk.tick), false)
		}
		if t >= st.recoverAt {
			st.r.PeakArrivals = max(st.r.PeakArrivals, q.arrivalsInTick)
		}
		if d := q.cohortDone[k]; d > 0 {
			q.inflight -= int(d)
			st.ok += int(d)
			st.milestones(k)
		}
		if tl := st.tl; tl != nil {
			tl.Arrivals = append(tl.Arrivals, int32(q.arrivalsInTick))
			tl.Served = append(tl.Served, q.good[k])
			tl.GaveUp = append(tl.GaveUp, int32(q.quitInTick))
		}
	}
	if q.lifo { // what still waits is served in the same order, as FCFS counts at admission what it admitted
		s.lifoAdvance(st, q, k, math.Inf(1), true)
	}
	return k, nil
}

// openPlainOK reports whether the open-loop traffic may take the fast
// path (openPlain): nothing but the FCFS server without bounds decides
// its fate. A daily curve's thinning takes the general loop too: a check
// for it in openPlain's loop cost 4 % of an open-loop run.
func (s *Sim) openPlainOK(st *runState, q *queueRun) bool {
	return st.gate == nil && s.Trace == nil && st.bud == nil && q.limit == 0 && q.target == 0 && len(q.curve) == 0 &&
		q.lim == nil && !q.lifo && q.brown == nil && q.added == 0
}

// live reports whether the run has anything left to do: clients due in
// the calendar, cohort answers due, open-loop traffic, or (LIFO) clients
// waiting for their requests.
func (q *queueRun) live(st *runState) bool {
	return st.active > 0 || q.inflight > 0 || q.rate > 0 || q.lq.waiting()
}

// openArrivals admits tick k's open-loop arrivals: in openPlain's loop
// when nothing gates, thins or traces them, else one at a time.
func (s *Sim) openArrivals(st *runState, q *queueRun, k int, plain bool) {
	end := float64(float64(k+1) * st.tk.tick)
	if plain {
		s.openPlain(st, q, k, end)
		return
	}
	for q.nextArrival < end && q.nextArrival < q.horizon {
		a := q.nextArrival
		q.offered[k]++
		q.offeredN++
		s.arriveQueued(st, q, fresh, k, a)
		q.nextArrival = q.arrivalAfter(a, st.rng)
	}
}

// arrivalAfter returns the time (ms) of the next open-loop arrival after
// one at a: a Poisson process of rate q.rate, or with a daily curve the
// candidates of one at the curve's peak rate, each kept with probability
// its slot's multiplier over the peak (thinning: Lewis and Shedler, 1979),
// one more draw per candidate; candidates past the horizon are not drawn
// for.
func (q *queueRun) arrivalAfter(a float64, rng *Mulberry32) float64 {
	for {
		a = a + float64(expDraw(rng)*q.gap)
		if len(q.curve) == 0 || a >= q.horizon {
			return a
		}
		day := math.Mod(q.clock+a, ms(Day))
		m := q.curve[min(int(day/q.slot), len(q.curve)-1)]
		if rng.Float64() < m {
			return a
		}
	}
}

// openPlain is the open-loop arrivals of tick k before end (ms) on a
// plain run: no client component before the server, no trace, no retry
// budget, no QueueLimit, no shedding and no daily curve, so that
// admitting a fresh request needs no state but the workers'. It does what the general loop's
// arriveQueued does, in the same order and with the same draws, for the
// common case written out: the server is up, the request admitted and
// answered in time, its draws taking the ziggurat's first step. Any other
// request goes to arriveQueued, with the stream set back to before its
// service time's draw (if any), which arriveQueued then draws again.
func (s *Sim) openPlain(st *runState, q *queueRun, k int, end float64) {
	rng, w, lat := st.rng, &q.free, q.lat
	expo := q.kind == 1
	lim := min(end, q.horizon)
	// Counts are summed here and added at the end (arriveQueued only adds
	// to them too); the sums of times, whose order matters, are kept here
	// and handed over around its calls.
	var offered, sent, after, good int64
	busy, latSum := q.busy, lat.sum
	a := q.nextArrival
	for ; a < lim; offered++ {
		start := max(a, w.first())
		wait := start - a
		before := *rng
		var sv, done float64
		plain := !(a < st.recoverAt && a >= q.outageStart) && !(wait > 0 && q.maxWait > 0 && wait > q.maxWait)
		if plain {
			if expo {
				x, j, ok := expFirst(rng)
				if !ok {
					x = expMore(rng, x, j)
				}
				sv = float64(q.svc * x)
			} else {
				sv = q.service(rng)
			}
			done = start + sv
			plain = !(q.timeout > 0 && done-a > q.timeout)
		}
		if !plain { // down, turned away or timed out
			*rng = before
			q.busy, lat.sum = busy, latSum
			s.arriveQueued(st, q, fresh, k, a)
			busy, latSum = q.busy, lat.sum
		} else {
			sent++
			if a >= st.recoverAt {
				after++
			}
			w.replaceFirst(done)
			busy += sv
			good++
			x := done - a
			lat.counts[latencyBucket(x)]++
			latSum += x
			if dk := st.tk.arrival(done); dk < st.nt {
				q.good[dk]++
			}
		}
		x, j, ok := expFirst(rng)
		if !ok {
			x = expMore(rng, x, j)
		}
		a += float64(x * q.gap)
	}
	q.nextArrival = a
	q.busy, lat.sum = busy, latSum
	lat.n += good
	q.goodput += good
	q.offered[k] += int32(offered)
	q.offeredN += offered
	q.arrivalsInTick += int(sent)
	st.r.Sent += sent
	st.r.SentAfterRecovery += after
}

// fresh stands for a new open-loop request: it has no client state (no
// index) until it must retry, and most never do.
const fresh = -1

// loopClient gives a new open-loop client its index and state.
func (s *Sim) loopClient(q *queueRun) int32 {
	i := int32(len(s.clients))
	s.clients = append(s.clients, client{prev: q.base})
	if need := len(s.clients); need > 64*len(s.order.words) {
		s.order.reset(2 * need)
	}
	return i
}

// arriveQueued handles client i's request (or a fresh one's) arriving at
// time a (ms) in tick k.
func (s *Sim) arriveQueued(st *runState, q *queueRun, i int32, k int, a float64) {
	if st.bud != nil { // a deposit per original request only, before anything refuses it (Sim.originals)
		orig := 0
		if i == fresh || s.original(st, i) {
			orig = 1
		}
		st.bud.sent(k, orig)
	}
	if st.gate != nil {
		if i == fresh { // the components gate a client: a new request needs one at once
			i = s.loopClient(q)
		}
		if s.gateQueued(st, q, i, k, a) {
			return
		}
	}
	q.arrivalsInTick++
	st.r.Sent++
	if a >= st.recoverAt {
		st.r.SentAfterRecovery++
	}
	down := a < st.recoverAt && a >= q.outageStart
	st.resp.up = !down
	out, done := rejected, 0.0
	switch {
	case down:
	case q.lifo:
		var waits bool
		if out, done, waits = s.admitLIFO(st, q, i, k, a); waits { // its fate comes later (lifo.go)
			return
		}
	default:
		out, done = q.admit(a, st.rng)
	}
	s.resolve(st, q, i, k, a, a, out, done, out == rejected && !down)
}

// resolve carries out the fate of client i's request (or a fresh one's)
// that arrived at time a (ms), decided at time now in tick k: answered at
// done, timed out (answered at done, or never when done < 0), or rejected
// (throttled: a 429, not a 503).
func (s *Sim) resolve(st *runState, q *queueRun, i int32, k int, a, now float64, out outcome, done float64, throttled bool) {
	if st.gate != nil { // the client learns then: a timeout, an answer and a refusal alike
		st.gate.outcome(i, k, now, out == answered, throttled)
	}
	from := a
	switch out {
	case answered:
		if i != fresh {
			q.rec.done(st, i, done)
		}
		if dk := st.tk.arrival(done); dk < st.nt {
			q.good[dk]++
			if i != fresh && int(i) < st.n {
				q.cohortDone[dk]++
				q.inflight++
			}
		}
		if s.Trace != nil {
			s.Trace(Event{Tick: k, Client: int(i), Served: true, NextTick: -1})
		}
		return
	case timedOut, failedOut:
		from = q.unanswered(st, out, a, done)
	default:
		q.rejected++
	}
	if i == fresh {
		i = s.loopClient(q)
	}
	ra := st.resp.retryAfter
	if out == timedOut {
		st.resp.retryAfter, st.resp.noAnswer = 0, true // no response, no Retry-After
	}
	dl, nk := s.reject(st, i, k, from)
	st.resp.retryAfter, st.resp.noAnswer = ra, false
	if dl < 0 {
		q.quit(st, i, from)
	}
	if s.Trace != nil {
		if dl < 0 {
			s.Trace(Event{Tick: k, Client: int(i), GaveUp: true, TimedOut: out == timedOut, Failed: out == failedOut, NextTick: -1})
		} else {
			s.Trace(Event{Tick: k, Client: int(i), TimedOut: out == timedOut, Failed: out == failedOut, Delay: dl, NextTick: nk})
		}
	}
}

// unanswered returns when the client of a request that arrived at a (ms)
// and timed out or failed (out) has its failure: at its timeout, or when
// the brownout's 503 comes (done, the server's response a 503: not up).
func (q *queueRun) unanswered(st *runState, out outcome, a, done float64) float64 {
	if out == failedOut {
		st.resp.up = false
		return done
	}
	if dk := st.tk.arrival(done); done >= 0 && dk < st.nt { // done < 0: never answered (lifo.go)
		q.rec.lateAt(dk)
	}
	return a + q.timeout
}

// finishQueue fills the queueing server's metrics into r.
func (q *queueRun) finishQueue(st *runState, r *Result) {
	r.Offered = q.offeredN
	r.Goodput = q.goodput
	r.TimedOut = q.timedOut
	r.Rejected = q.rejected
	r.BusyMS = q.busy
	r.WastedMS = q.wasted
	r.OfferedGaveUp = q.loopGaveUp
	r.Failed, r.OfferedSucceeded = q.failed, q.loopSucceeded()
	if q.lat.n > 0 {
		r.LatencyMean = q.lat.sum / float64(q.lat.n)
	}
	r.LatencyP50, r.LatencyP90, r.LatencyP99 = q.lat.quantile(0.5), q.lat.quantile(0.9), q.lat.quantile(0.99)
	if l := q.lim; l != nil {
		l.settle(q.horizon)
		r.LimitFinal, r.LimitLowest, r.LimiterRejected = l.algo.limit, l.algo.lowest, l.rejected
	}
	if !r.Stuck {
		r.Recovered = q.rec.back(st, q.good)
	}
	if tl := st.tl; tl != nil {
		var in int64
		for _, g := range tl.Served {
			in += int64(g)
		}
		tl.ServedAfter = q.goodput - in
	}
}

// latency is a histogram of latencies with buckets 1/64 of a power of two
// wide (relative error under 0.8 % at the bucket's middle), from 0 to 2⁴²
// ms; it allocates nothing.
type latency struct {
	n      int64
	sum    float64
	counts [latencyBuckets]int64
}

const latencyBuckets = 42 * 64

func (l *latency) reset() { *l = latency{} }

func latencyBucket(x float64) int {
	b := int(math.Float64bits(x+1)>>46) - 0x3ff<<6
	return min(max(b, 0), latencyBuckets-1)
}

func (l *latency) add(x float64) {
	l.counts[latencyBucket(x)]++
	l.n++
	l.sum += x
}

// quantile is the nearest-rank p-quantile (ms), the middle of its bucket;
// 0 when the histogram is empty.
func (l *latency) quantile(p float64) float64 {
	if l.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p * float64(l.n)))
	var c int64
	for b, n := range l.counts {
		c += n
		if c >= rank {
			lo := math.Float64frombits(uint64(b+0x3ff<<6) << 46)
			hi := math.Float64frombits(uint64(b+1+0x3ff<<6) << 46)
			return (lo+hi)/2 - 1
		}
	}
	return 0
}

// loopSucceeded counts the open-loop requests answered in time by the
// horizon: those answered in time in a tick of the run but the cohort's.
func (q *queueRun) loopSucceeded() int64 {
	var n int64
	for k, g := range q.good {
		n += int64(g - q.cohortDone[k])
	}
	return n
}

// footprint is the bytes of storage a queueing server's run holds.
func (q *queueRun) footprint() int {
	return cap(q.free.nd)*16 + cap(q.waiting)*8 + cap(q.limSt.held)*24 + cap(q.lq.stack)*16 + (cap(q.cohortDone)+cap(q.good)+cap(q.offered))*4 + queueFixedBytes + q.rec.footprint()
}

// gateQueued passes client i's request arriving at time a (ms) in tick k
// through the client components; it reports whether they kept it from
// being sent: refused locally (a failure for its client) or held back to
// the tick of its token.
func (s *Sim) gateQueued(st *runState, q *queueRun, i int32, k int, a float64) bool {
	switch v, hk := st.gate.gate(&s.clients[i], i, k, a, st.tk, st.rng); v {
	case refuse:
		st.resp.up = !(a < st.recoverAt && a >= q.outageStart)
		ra := st.resp.retryAfter
		st.resp.retryAfter, st.resp.local = 0, true // refused locally: no response, no Retry-After
		dl, nk := s.reject(st, i, k, a)
		st.resp.retryAfter, st.resp.local = ra, false
		if dl < 0 {
			q.quit(st, i, a)
		}
		if s.Trace != nil {
			s.Trace(Event{Tick: k, Client: int(i), Local: true, GaveUp: dl < 0, Delay: max(dl, 0), NextTick: nk})
		}
		return true
	case holdOff:
		if hk < st.nt {
			s.cal.push(hk, i)
			st.active++
		}
		return true
	}
	return false
}

// quit counts client i giving up in this tick: a cohort client (index
// below the cohort's size) or an open-loop one.
func (q *queueRun) quit(st *runState, i int32, t float64) {
	q.quitInTick++
	q.rec.done(st, i, t)
	if int(i) < st.n {
		st.gaveUp++
	} else {
		q.loopGaveUp++
	}
}
