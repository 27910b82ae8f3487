package sim

import (
	"math"
	"math/bits"
	"time"
)

// Back to steady state (the dataset's recovered_after_s): when a queueing
// server with open-loop traffic (HasSteadyState) is back to its own steady
// state after its outage. This file is the one owner of the definition:
// Result.Recovered holds the moment, Result.BackAfter the time after
// recovery, BackRule says it in words for reports and docs.
//
// The outage leaves two things behind it: clients waiting to send again,
// and work queued at the server (with timeouts, work for clients who have
// stopped waiting). A run is back at the first tick start t at or after
// recovery (a tick whose time is ≥ RecoverAt) at which both are gone and
// the server is not stuck:
//
//  1. the herd is gone: of the clients waiting at recovery (the cohort and
//     every open-loop client whose request was refused, or not answered in
//     time, by then), at most √(λ·RecoveryWindow) are neither answered in
//     time nor given up by t: no more than ordinary demand fluctuates by in
//     one window (one standard deviation of its Poisson count at the
//     scenario's rate λ, ArrivalRate);
//  2. the queue is back to its ordinary length: an arrival at t would wait
//     at most the wait that the scenario's steady state exceeds with
//     probability RecoveryCalm. That steady state is analytic, not
//     measured: Erlang C's tail for Concurrency workers at the stated load
//     (the daily curve's peak rate), P(wait > w) = C·exp(−(cμ − λ)·w),
//     with its rate scaled by 2/(1 + cs²) for the service time's
//     variability (Kingman: cs² is 1 for exponential, 0 for fixed, e^(σ²) − 1
//     for lognormal service). A load of 1 or more has no ordinary wait: a
//     bounded queue (QueueLimit, QueueWait or ShedTarget) then sits at its
//     bound, and any wait counts; an unbounded one grows, and the queue must
//     empty (a worker free at t);
//  3. it is not stuck from t on: no RecoveryWindow from the one holding t
//     to the horizon (windows counted from recovery) answers more requests
//     late (after their client's timeout: work nobody uses) than in time.
//
// The time back is reported in whole windows: RecoverAt + n·RecoveryWindow
// when t falls in the (n+1)th window after recovery (windows of
// RecoveryWindow/Tick ticks, rounded, from the first tick at or after
// recovery), so 0 is back within the first window. A run that never meets
// the three conditions by its horizon is not back (Milestone.Reached
// false).
//
// Why these and not goodput against demand window by window (queue-3):
// every window had to stay within 5 % of its new requests up to the
// horizon, a test that ordinary fluctuation fails sooner or later (the
// work in progress at a window's edges is a few requests at 50 ms service
// and 90 % load, tens at 95 %, the latency times the rate with 1 s ticks),
// so the time back grew with the horizon, and a server whose steady state
// loses requests (a 50 ms wait bound losing 10.7 %) was never back. The
// conditions above compare nothing with an average level: each tolerates
// what the steady state does by chance (1, 2), or refuses what no steady
// state worth the name does (3), so a run without an outage is back at
// once, at any horizon, at any load below 1, lossy or not (unless most of
// its answers come too late for their clients).

// RecoveryWindow is the granularity of the time back to steady state and
// the window of its herd tolerance and stuck windows.
const RecoveryWindow = 10 * time.Second

// RecoveryCalm is the share of arrivals whose wait in the steady state
// exceeds the ordinary wait of the time back's second condition.
const RecoveryCalm = 0.01

// BackRule says in words when a run is back to steady state (it follows
// "back to steady state" in a sentence), for reports and docs.
const BackRule = "once the clients the outage left waiting have been answered in time or have given up " +
	"(all but √(rate × 10 s), the Poisson fluctuation of one window's new requests), the queue is back to its ordinary length " +
	"(an arrival would wait no longer than 1 % of arrivals wait in the steady state at this load: Erlang C's tail, analytic) " +
	"and no 10 s window from then to the horizon answers more requests after their client's timeout than in time; " +
	"counted in whole 10 s windows after recovery (0: within the first)"

// HasSteadyState reports whether sc has a steady state to return to: a
// queueing server with open-loop traffic. Only such a run has a time back
// (Result.Recovered).
func HasSteadyState(sc Scenario) bool { return sc.Server() == QueueingServer && sc.ArrivalRate > 0 }

// BackAfter is how long after recovery the run was back to its own steady
// state (see recovery.go), and whether it was by the horizon: false also
// when sc has no steady state (HasSteadyState).
func (r *Result) BackAfter(sc Scenario) (time.Duration, bool) {
	if !r.Recovered.Reached {
		return 0, false
	}
	return r.Recovered.At - sc.RecoverAt, true
}

// recovery is a queueing run's state for its time back to steady state.
type recovery struct {
	on       bool
	k0       int      // the first tick at or after recovery
	w        int      // ticks per RecoveryWindow
	herdEnd  int      // clients with an index below it were waiting at tick k0 (set then; -1 before)
	herdPre  int64    // clients with an index done before recovery
	herdTol  int64    // herd clients that may remain: √(λ·RecoveryWindow)
	herdDone []int32  // per tick: herd clients done (answered in time or gave up) in it
	calm     []uint64 // bit k: at tick k's start an arrival would wait at most calmWait
	calmWait float64  // ms
	late     []int32  // per window from k0: requests answered late in it
}

// start prepares rc for a run of sc (a queueing server); it records
// nothing without open-loop traffic.
func (rc *recovery) start(sc Scenario, st *runState, windowTicks int) {
	hd, calm, late := rc.herdDone, rc.calm, rc.late
	*rc = recovery{on: sc.ArrivalRate > 0, k0: st.tk.arrival(st.recoverAt), w: windowTicks, herdEnd: -1}
	rc.herdDone, rc.calm, rc.late = hd[:0], calm[:0], late[:0]
	if !rc.on {
		return
	}
	rc.herdDone = grow(hd, st.nt)
	clear(rc.herdDone)
	rc.calm = grow(calm, (st.nt+63)/64)
	clear(rc.calm)
	rc.late = grow(late, (st.nt-rc.k0)/windowTicks+1)
	clear(rc.late)
	rc.herdTol = int64(math.Sqrt(float64(sc.ArrivalRate * RecoveryWindow.Seconds())))
	rc.calmWait = calmWait(sc)
}

// footprint is the bytes of storage rc holds: 4 bytes and a bit per tick,
// 4 per window.
func (rc *recovery) footprint() int { return cap(rc.herdDone)*4 + cap(rc.calm)*8 + cap(rc.late)*4 }

// calmWait is the wait (ms) that an arrival exceeds with probability
// RecoveryCalm in sc's steady state (see the second condition above): +Inf
// at a load of 1 or more with a bounded queue, 0 with an unbounded one.
// The arithmetic rounds every product on its own and uses fmath.go's
// logarithm, so that the same bits come out on every CPU.
func calmWait(sc Scenario) float64 {
	_, lam := sc.ArrivalRates() // per second; the peak of a daily curve
	c := float64(sc.Concurrency)
	m := sc.MeanService().Seconds()
	a := float64(lam * m) // offered load, Erlangs
	if a >= c {
		if sc.QueueLimit > 0 || sc.QueueWait > 0 || sc.ShedTarget > 0 || sc.Limiter != "" {
			return math.Inf(1)
		}
		return 0
	}
	b := 1.0 // Erlang B by its recursion, then C
	for k := 1; k <= sc.Concurrency; k++ {
		ab := float64(a * b)
		b = ab / (float64(k) + ab)
	}
	erlangC := c * b / (c - float64(a*(1-b)))
	if erlangC <= RecoveryCalm {
		return 0
	}
	cs2 := 1.0
	switch serviceKind(sc.Service) {
	case 0:
		cs2 = 0
	case 2:
		sg := sc.logSigma()
		cs2 = expPure(float64(sg*sg)) - 1
	}
	rate := float64((c/m-lam)*2) / (1 + cs2) // per second
	return 1000 * logPure(erlangC/RecoveryCalm) / rate
}

// observe records tick k's start (time t, ms; k ≥ k0): the herd when k is
// the first tick at or after recovery (clients holds the clients with an
// index), and whether the queue is calm.
func (rc *recovery) observe(k int, t float64, q *queueRun, clients int) {
	if k == rc.k0 {
		rc.herdEnd = clients
	}
	if q.free.first()-t <= rc.calmWait {
		rc.calm[k>>6] |= 1 << (k & 63)
	}
}

// done records client i (an index, not a fresh request) done at time t
// (ms): answered in time, or given up. It inlines: a run without open-loop
// traffic makes no call.
func (rc *recovery) done(st *runState, i int32, t float64) {
	if rc.on {
		rc.record(st, i, t)
	}
}

func (rc *recovery) record(st *runState, i int32, t float64) {
	switch {
	case rc.herdEnd < 0 && t < st.recoverAt:
		rc.herdPre++
	case rc.herdEnd < 0 || int(i) < rc.herdEnd: // every client with an index before tick k0 is in the herd
		if k := st.tk.arrival(t); k < st.nt {
			rc.herdDone[k]++
		}
	}
}

// lateAt records a request answered late at tick k (< the run's ticks).
func (rc *recovery) lateAt(k int) {
	if rc.on && k >= rc.k0 {
		rc.late[(k-rc.k0)/rc.w]++
	}
}

// back is the run's time back to steady state (the first tick meeting the
// three conditions, floored to its window), from good, the requests
// answered in time per tick.
func (rc *recovery) back(st *runState, good []int32) Milestone {
	k0, w, nt := rc.k0, rc.w, st.nt
	if !rc.on || rc.herdEnd < 0 {
		return Milestone{}
	}
	from := k0
	for left := int64(rc.herdEnd) - rc.herdPre; ; from++ { // 1. the herd: left at from's start
		if from == nt {
			return Milestone{}
		}
		if left -= int64(rc.herdDone[from]); left <= rc.herdTol {
			break
		}
	}
	for j := k0; j < nt; j += w { // 3. not stuck from then on
		var ok int64
		for _, g := range good[j:min(j+w, nt)] {
			ok += int64(g)
		}
		if int64(rc.late[(j-k0)/w]) > ok {
			from = max(from, j+w)
		}
	}
	for k := from; k < nt; { // 2. calm
		word := rc.calm[k>>6] >> (k & 63)
		if word == 0 {
			k = (k>>6 + 1) << 6
			continue
		}
		if k += bits.TrailingZeros64(word); k >= nt {
			break
		}
		return Milestone{At: st.sc.RecoverAt + time.Duration((k-k0)/w)*RecoveryWindow, Reached: true}
	}
	return Milestone{}
}
