package sim

import (
	"errors"
	"math"
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

	// A queueing server's metrics (Scenario.Concurrency > 0); zero for the
	// counting server. Requests are counted whoever sent them: the cohort
	// and the open-loop traffic.
	Offered       int64   // open-loop requests that arrived new (first attempts)
	OfferedGaveUp int64   // open-loop clients that gave up
	Goodput       int64   // requests answered within their client's timeout
	TimedOut      int64   // requests answered too late: their client had stopped waiting
	Rejected      int64   // requests refused at once: down, queue full, waited too long, shed
	BusyMS        float64 // worker time spent serving, ms
	WastedMS      float64 // of which on timed-out requests (work nobody used), ms
	// Latency of the requests answered in time, ms (0 when none): the mean,
	// exact, and percentiles within 0.8 % of latency + 1 ms (see latency).
	LatencyMean, LatencyP50, LatencyP90, LatencyP99 float64
	// Recovered: open loop only (HasSteadyState), the moment the run is
	// back to its own steady state (recovery.go; BackAfter gives the time
	// after recovery).
	Recovered Milestone

	// A queueing server's limiter (Scenario.Limiter); zero without one.
	// LimitFinal is its limit at the horizon, LimitLowest the lowest it
	// reached; LimiterRejected the requests it rejected (of Rejected).
	LimitFinal, LimitLowest int
	LimiterRejected         int64
	// A brownout's metrics (brownout.go), both servers: Failed, the
	// requests served and answered with its error; OfferedSucceeded, the
	// open-loop requests answered in time by the horizon (queueing server).
	Failed, OfferedSucceeded int64

	// LocalRejections: requests a client component refused before sending
	// (an open circuit breaker, adaptive throttling); not in Sent.
	LocalRejections int64

	// Layers: a chain run's services (Sim.RunChain), NLayers of them from
	// the one the clients call to the deepest; 0 for a single server.
	Layers  [MaxLayers]LayerResult
	NLayers int

	// Stuck: the run stopped early, provably stuck (Sim.StopStuck,
	// stuck.go): never back to steady state; End is the stop.
	Stuck bool
}

// WastedFraction is the share of the server's work spent on requests whose
// client had stopped waiting; 0 when it did no work.
func (r *Result) WastedFraction() float64 {
	if r.BusyMS == 0 {
		return 0
	}
	return r.WastedMS / r.BusyMS
}

// Milestone is the time at which a share of the clients had succeeded.
type Milestone struct {
	At      time.Duration
	Reached bool
}

// Timeline is the per-tick record of a run, for plots. Index k is the tick
// at time k·Tick; it covers the ticks up to the one the run stopped at.
// Its sums are the run's totals: Arrivals sum to Result.Sent, GaveUp to
// Result.GaveUp + Result.OfferedGaveUp, and Served (+ ServedAfter) to
// Result.Succeeded on the counting server, to Result.Goodput on a
// queueing server.
type Timeline struct {
	Tick     time.Duration
	Arrivals []int32 // requests that arrived in the tick
	// Served: the counting server's arrivals it served in the tick (but
	// those a brownout failed); a queueing server's requests answered in
	// time in the tick, whenever they arrived.
	Served []int32
	GaveUp []int32 // clients that gave up in the tick (refused, or refused locally by a client component)
	// ServedAfter: a queueing server's requests answered in time after the
	// last tick (in progress when the run stopped); in Goodput, in no tick.
	ServedAfter int64
}

// Reset empties t, keeping its storage.
func (t *Timeline) Reset() {
	t.Arrivals, t.Served, t.GaveUp, t.ServedAfter = t.Arrivals[:0], t.Served[:0], t.GaveUp[:0], 0
}

// Event is what happened to one arrival; Sim.Trace receives one per arrival.
type Event struct {
	Tick     int
	Client   int // its index; -1 for an open-loop request answered at its first attempt
	Served   bool
	GaveUp   bool
	TimedOut bool    // a queueing server answered too late: the delay counts from the arrival (Tick's time; under LIFO, Tick is when its fate is known) + the timeout
	Local    bool    // refused by a client component before it was sent (not an arrival)
	Failed   bool    // served and failed by a brownout: answered with a 503
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
	// Stop, when set, is read every StopEvery units of work (see
	// StopEvery): once it is true, the run stops and Run returns
	// ErrStopped. It is how a caller on another goroutine interrupts a
	// long run (a signal, a deadline).
	Stop *atomic.Bool
	// StopStuck stops a queueing run early once it is provably stuck
	// (stuck.go): its Result says Stuck, is not back to steady state, and
	// counts only what happened before the stop. For callers that need to
	// know only whether a run comes back.
	StopStuck bool
	// MaxBytes bounds the storage a queued chain run's attempts in flight
	// take (queuedState.held), 0: DefaultMaxBytes. Abandoned attempts
	// live on until their service is done with them, so a chain whose
	// callers time out and retry faster than it works holds ever more of
	// them; past MaxBytes the run fails with ErrTooBig instead of taking
	// the machine's memory.
	MaxBytes int64

	clients []client
	cal     calendar
	order   sorter
	lim     limited // the client-side limits of the run, when it has any
	bud     budget
	comp    components // the client components, when the policy has any
	fleet   fleet      // a mixed fleet's groups
	queue   queueRun   // a queueing server's state
	lat     latency    // its latency histogram
	brown   brownout   // a brownout's share (brownout.go)
	failBuf []int32    // the counting server's failed requests of a tick
	st      runState   // the run in progress
	chain   chainRun   // a chain run's state (chain.go)

	retryDelayer delayer // tests only: replaces every policy's delayer (ctmc_test.go's exponential delays)
	// serve, when set, decides how many of tick k's requests (list, in
	// index order; simServed by sim's own server) are served, in loopList
	// after arrive: a Driven's caller serves them (driven.go).
	serve func(st *runState, k int, list []int32, simServed int) int
}

// ErrStopped is returned by a run that Sim.Stop interrupted; its result is
// incomplete and must not be recorded.
var ErrStopped = errors.New("sim: run stopped")

// ErrTooBig is returned, wrapped with the figures, by a queued chain run
// whose attempts in flight outgrew Sim.MaxBytes; it has no result.
var ErrTooBig = errors.New("a queued chain's attempts in flight outgrew the memory a run may take")

// DefaultMaxBytes is Sim.MaxBytes's default: 1 GiB.
const DefaultMaxBytes = 1 << 30

// StopEvery is how often a run reads Sim.Stop, in units of work: a client's
// first draw while the run starts, an arrival, and a tick (so that a long
// stretch of empty ticks is stoppable too). A tick is never cut short: a
// stop is seen at most StopEvery units of work plus one tick's arrivals
// after it was set (at most Clients, and an open loop's arrivals in one
// tick). At about 10 ns a unit that is well under a millisecond; a 10⁷-
// client run read it every 1,024 ticks, which took 0.7–3 s.
const StopEvery = 1 << 16

// stopRequested reads Stop, a check being due at work units of work
// done (a tick's index plus the arrivals so far, or the clients started),
// and sets the next check StopEvery units on.
func (s *Sim) stopRequested(st *runState, work int64) bool {
	st.nextCheck = work + StopEvery
	st.checks++
	return s.Stop != nil && s.Stop.Load()
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

// stopped leaves the Sim as a finished run leaves it, after a stop at tick
// k: the calendar's ticks k … nt-1 emptied at once (calendar.clear), not
// taken one by one (10⁷ pending clients took a tenth of a second).
func (s *Sim) stopped(st *runState, k int) error {
	s.cal.clear(k, st.nt)
	return ErrStopped
}

func mark(m *Milestone, reached bool, at time.Duration) {
	if reached && !m.Reached {
		*m = Milestone{At: at, Reached: true}
	}
}

// footprint is the bytes of storage a Sim holds, for the per-client memory
// benchmark.
func (s *Sim) footprint() int {
	return cap(s.clients)*16 + s.cal.footprint() + s.order.footprint() + s.queue.footprint() + s.comp.footprint() + s.chain.footprint() + cap(s.failBuf)*4
}

// delayer returns p's delayer for sc (see newDelayer), using the Sim's own
// storage for the limits.
func (s *Sim) delayer(sc Scenario, p Policy, cc *components) (delayer, *budget) {
	if s.retryDelayer != nil {
		return s.retryDelayer, nil
	}
	return newDelayer(sc, p, &s.lim, &s.bud, cc)
}

// newDelayer returns p's delayer for sc, wrapped (in lim) with the
// client-side limits and a varying Retry-After when there are any, and the
// retry budget (bud, or nil for none).
func newDelayer(sc Scenario, p Policy, lim *limited, bud *budget, cc *components) (delayer, *budget) {
	d := p.compile()
	if p.unlimited() && sc.RetryAfterMax == 0 {
		return d, nil
	}
	tick := ms(sc.Tick)
	*lim = limited{inner: d, retryOn: p.RetryOn, tick: tick, maxElapsed: ms(p.MaxElapsed), bucketRetries: -1, cc: cc}
	if sc.RetryAfterMax > 0 {
		lim.raLo, lim.raSpan = ms(sc.RetryAfter), ms(sc.RetryAfterMax)-ms(sc.RetryAfter)
	}
	if p.BucketTokens > 0 {
		lim.bucketRetries = int32(p.BucketTokens / p.BucketCost)
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess == 0 { // else one per process, in cc
		bud.reset(int(math.Ceil(BudgetWindow*1000/tick)), p.RetryBudget, p.BudgetMinRPS*BudgetWindow)
		lim.budget = bud
	}
	return lim, lim.budget
}
