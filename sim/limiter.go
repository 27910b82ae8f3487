package sim

import "fmt"

// An adaptive concurrency limiter in front of a queueing server
// (Scenario.Limiter): it admits a request while fewer than its limit are
// in flight (admitted and not yet finished, waiting or in service) and
// rejects it at once (429) otherwise; each finished request is a sample
// that moves the limit. It is Netflix's concurrency-limits (commit
// 78a74b9), ported formula for formula:
//
//   - admission is SimpleLimiter.acquire (limiter/SimpleLimiter.java: a
//     semaphore of `limit` permits, so in flight < limit), and a sample is
//     AbstractLimiter's listener (limiter/AbstractLimiter.java): rtt from
//     acquire to release, the in-flight count just after this request's
//     acquire, and whether it was dropped;
//   - a request whose client gives up waiting (Timeout) is dropped when its
//     client gives up, with rtt = the timeout, as the gRPC server
//     interceptor does on a cancelled call
//     (grpc/server/ConcurrencyLimitServerInterceptor.java: onCancel →
//     listener.onDropped); the server still serves it (wasted work) but it
//     no longer holds a permit. Any other admitted request is a success
//     when answered. A request the queue bounds then refuse (QueueLimit,
//     QueueWait, shedding) gives its permit back unsampled (onIgnore);
//   - "aimd" is limit/AIMDLimit.java's _update: on a drop or an rtt over
//     its timeout, limit = (int)(limit × backoffRatio); else when
//     inflight × 2 ≥ limit, limit + 1; then clamped to [min, max];
//   - "gradient2" is limit/Gradient2Limit.java's _update: the long rtt is
//     an exponential average (limit/measurement/ExpAvgMeasurement.java,
//     window 600, the plain mean of the first 10 samples); when it is over
//     twice the sample's rtt it is cut by 5 %; unless inflight < estimate/2
//     (app-limited: no change), gradient = clamp(tolerance × long/rtt, 0.5,
//     1), new = estimate × gradient + queueSize, estimate = estimate ×
//     (1 − smoothing) + new × smoothing, clamped to [min, max], and the
//     limit is (int)estimate. queueSize is the builder's default 4 and
//     tolerance its default 1.5.
//
// The parameters default to the builders': initial and min 20, max 200,
// backoffRatio 0.9, timeout 5 s, smoothing 0.2. TestLimiterTrace holds the
// port to the Java classes' trajectory on a scripted trace.

// Limiters are the adaptive concurrency limiters (Scenario.Limiter).
var Limiters = []string{"aimd", "gradient2"}

// The limiters' defaults, those of concurrency-limits' builders.
const (
	LimitInitialDefault   = 20
	LimitMinDefault       = 20
	LimitMaxDefault       = 200
	LimitBackoffDefault   = 0.9
	LimitTimeoutDefault   = 5000 // ms: AIMDLimit's DEFAULT_TIMEOUT
	LimitSmoothingDefault = 0.2
	gradient2QueueSize    = 4
	gradient2Tolerance    = 1.5
	gradient2LongWindow   = 600
	gradient2Warmup       = 10
	// MaxLimit bounds Scenario.LimitMax (a permit holds 24 bytes while in flight).
	MaxLimit = 1 << 20
)

// limitAlgo is AIMDLimit or Gradient2Limit: sample is onSample, limit
// getLimit. Times are in any one unit (ms in a run; the test feeds ns, as
// Java does).
type limitAlgo struct {
	kind            uint8 // 1 aimd, 2 gradient2
	limit           int
	min, max        int
	backoff         float64
	timeout         float64
	smoothing       float64
	estimate        float64 // Gradient2Limit.estimatedLimit
	long            expAvg  // Gradient2Limit.longRtt
	lowest, highest int     // over the run
}

// expAvg is ExpAvgMeasurement.
type expAvg struct {
	value, sum     float64
	count          int
	window, warmup int
}

func (e *expAvg) add(x float64) float64 {
	if e.count < e.warmup {
		e.count++
		e.sum += x
		e.value = e.sum / float64(e.count)
	} else {
		f := 2.0 / float64(e.window+1)
		e.value = e.value*(1-f) + x*f
	}
	return e.value
}

// newLimitAlgo is the limiter sc asks for, with timeout in ms.
func newLimitAlgo(sc Scenario) limitAlgo {
	a := limitAlgo{limit: orInt(sc.LimitInitial, LimitInitialDefault), min: orInt(sc.LimitMin, LimitMinDefault),
		max: orInt(sc.LimitMax, LimitMaxDefault), backoff: orFloat(sc.LimitBackoff, LimitBackoffDefault),
		timeout: LimitTimeoutDefault, smoothing: orFloat(sc.LimitSmoothing, LimitSmoothingDefault)}
	if sc.LimitTimeout > 0 {
		a.timeout = ms(sc.LimitTimeout)
	}
	switch sc.Limiter {
	case "aimd":
		a.kind = 1
	case "gradient2":
		a.kind = 2
	}
	a.estimate = float64(a.limit)
	a.long = expAvg{window: gradient2LongWindow, warmup: gradient2Warmup}
	a.lowest, a.highest = a.limit, a.limit
	return a
}

func orInt(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func orFloat(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// sample is AbstractLimit.onSample: one finished request.
func (a *limitAlgo) sample(rtt float64, inflight int, drop bool) {
	if a.kind == 1 {
		a.limit = a.aimd(rtt, inflight, drop)
	} else {
		a.limit = a.gradient2(rtt, inflight)
	}
	a.lowest, a.highest = min(a.lowest, a.limit), max(a.highest, a.limit)
}

// aimd is AIMDLimit._update.
func (a *limitAlgo) aimd(rtt float64, inflight int, drop bool) int {
	l := a.limit
	if drop || rtt > a.timeout {
		l = int(float64(l) * a.backoff)
	} else if inflight*2 >= l {
		l++
	}
	return min(a.max, max(a.min, l))
}

// gradient2 is Gradient2Limit._update (it ignores drops, as the Java does).
func (a *limitAlgo) gradient2(rtt float64, inflight int) int {
	est := a.estimate
	const queueSize = float64(gradient2QueueSize)
	short := rtt
	long := a.long.add(rtt)
	if long/short > 2 {
		a.long.value *= 0.95
	}
	if float64(inflight) < est/2 {
		return int(est)
	}
	gradient := max(0.5, min(1.0, gradient2Tolerance*long/short))
	n := est*gradient + queueSize
	n = est*(1-a.smoothing) + n*a.smoothing
	n = max(float64(a.min), min(float64(a.max), n))
	a.estimate = n
	return int(n)
}

// permit is an admitted request's hold on the limiter: released at `at`
// (ms), a sample of rtt with the in-flight count at its admission.
type permit struct {
	at, rtt  float64
	inflight int32
	drop     bool
}

// limiter is a queueing server's run's limiter: the algorithm, the
// requests in flight as a min-heap of their releases, and its count of
// rejections.
type limiter struct {
	algo     limitAlgo
	held     []permit // min-heap by at
	waiting  int      // LIFO: admitted requests that wait, their release not yet known (lifo.go)
	rejected int64
}

// reset starts a run of sc; held keeps its room from run to run.
func (l *limiter) reset(sc Scenario) {
	l.algo = newLimitAlgo(sc)
	l.held = l.held[:0]
	l.waiting, l.rejected = 0, 0
}

// settle releases, in time order, the permits due by t (ms), each a sample.
func (l *limiter) settle(t float64) {
	for len(l.held) > 0 && l.held[0].at <= t {
		p := l.held[0]
		l.pop()
		l.algo.sample(p.rtt, int(p.inflight), p.drop)
	}
}

// full reports whether a request arriving at t (ms) must be rejected: as
// many in flight as the limit. It settles first.
func (l *limiter) full(t float64) bool {
	l.settle(t)
	if len(l.held)+l.waiting >= l.algo.limit {
		l.rejected++
		return true
	}
	return false
}

// hold takes a permit for a request admitted at a (ms) and answered at
// done, whose client gives up at a + timeout (timeout 0: never).
func (l *limiter) hold(a, done, timeout float64) {
	l.push(release(a, done, timeout, int32(len(l.held)+l.waiting+1)))
}

// release is the permit of a request admitted at a (ms) with inflight in
// flight, answered at done, whose client gives up at a + timeout.
func release(a, done, timeout float64, inflight int32) permit {
	p := permit{at: done, rtt: done - a, inflight: inflight}
	if timeout > 0 && done-a > timeout {
		p.at, p.rtt, p.drop = a+timeout, timeout, true
	}
	return p
}

// wait takes a permit for a request that waits (LIFO) and returns the
// in-flight count at its admission.
func (l *limiter) wait() int32 {
	l.waiting++
	return int32(len(l.held) + l.waiting)
}

// start gives a waiting request, admitted at a with inflight in flight,
// its release now that it starts: answered at done.
func (l *limiter) start(a, done, timeout float64, inflight int32) {
	l.waiting--
	l.push(release(a, done, timeout, inflight))
}

// cancel releases a waiting request's permit at t (ms): its client gave
// up after timeout, a drop.
func (l *limiter) cancel(t, timeout float64, inflight int32) {
	l.waiting--
	l.settle(t)
	l.algo.sample(timeout, int(inflight), true)
}

func (l *limiter) push(p permit) {
	l.held = append(l.held, p)
	h := l.held
	i := len(h) - 1
	for i > 0 {
		up := (i - 1) / 2
		if !(h[i].at < h[up].at) {
			break
		}
		h[i], h[up] = h[up], h[i]
		i = up
	}
}

func (l *limiter) pop() {
	h := l.held
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].at < h[c].at {
			c++
		}
		if !(h[c].at < h[i].at) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	l.held = h
}

// QueueOrders are the orders a queueing server serves its waiting
// requests in (Scenario.QueueOrder): "" is first come, first served.
var QueueOrders = []string{"", "lifo"}

// validateLimiter checks a queueing server's queue order, then its
// limiter and the limiter's parameters.
func (s Scenario) validateLimiter() error {
	if err := s.validateQueueOrder(); err != nil {
		return err
	}
	if s.Limiter == "" {
		return s.validateNoLimiter()
	}
	if s.Limiter != "aimd" && s.Limiter != "gradient2" {
		return &FieldError{FieldLimiter, s.Limiter, `"", "aimd" or "gradient2"`}
	}
	for _, f := range []struct {
		name Field
		v    int
	}{{FieldLimitInitial, s.LimitInitial}, {FieldLimitMin, s.LimitMin}, {FieldLimitMax, s.LimitMax}} {
		if f.v < 0 || f.v > MaxLimit {
			return &FieldError{f.name, f.v, fmt.Sprintf("a whole number in [1, %d]; 0 = the default", MaxLimit)}
		}
	}
	a := newLimitAlgo(s)
	switch {
	case a.min > a.max:
		return &FieldError{FieldLimitMin, s.LimitMin, fmt.Sprintf("at most LimitMax (%d)", a.max)}
	case a.limit < a.min || a.limit > a.max:
		return &FieldError{FieldLimitInitial, s.LimitInitial, fmt.Sprintf("in [LimitMin, LimitMax] = [%d, %d]", a.min, a.max)}
	case s.LimitBackoff != 0 && !(s.LimitBackoff >= 0.5 && s.LimitBackoff < 1):
		return &FieldError{FieldLimitBackoff, s.LimitBackoff, "in [0.5, 1), as AIMDLimit's backoffRatio; 0 = 0.9"}
	case s.LimitSmoothing != 0 && !(s.LimitSmoothing > 0 && s.LimitSmoothing <= 1):
		return &FieldError{FieldLimitSmoothing, s.LimitSmoothing, "in (0, 1], as Gradient2Limit's smoothing; 0 = 0.2"}
	case s.Limiter != "aimd" && (s.LimitBackoff != 0 || s.LimitTimeout != 0):
		f, v := FieldLimitBackoff, any(s.LimitBackoff)
		if s.LimitBackoff == 0 {
			f, v = FieldLimitTimeout, s.LimitTimeout
		}
		return &FieldError{f, v, `0 unless Limiter is "aimd"`}
	case s.Limiter != "gradient2" && s.LimitSmoothing != 0:
		return &FieldError{FieldLimitSmoothing, s.LimitSmoothing, `0 unless Limiter is "gradient2"`}
	}
	return wholeMS(FieldLimitTimeout, s.LimitTimeout, 0)
}

// validateNoLimiter checks that without a limiter none of its parameters is set.
func (s Scenario) validateNoLimiter() error {
	const want = `0 unless a Limiter is set`
	switch {
	case s.LimitInitial != 0:
		return &FieldError{FieldLimitInitial, s.LimitInitial, want}
	case s.LimitMin != 0:
		return &FieldError{FieldLimitMin, s.LimitMin, want}
	case s.LimitMax != 0:
		return &FieldError{FieldLimitMax, s.LimitMax, want}
	case s.LimitBackoff != 0:
		return &FieldError{FieldLimitBackoff, s.LimitBackoff, want}
	case s.LimitTimeout != 0:
		return &FieldError{FieldLimitTimeout, s.LimitTimeout, want}
	case s.LimitSmoothing != 0:
		return &FieldError{FieldLimitSmoothing, s.LimitSmoothing, want}
	}
	return nil
}

// validateQueueOrder checks the queue order and the bounds LIFO allows.
func (s Scenario) validateQueueOrder() error {
	const why = "0 with QueueOrder lifo: it judges an arrival by its wait, which LIFO does not know when it arrives"
	switch {
	case s.QueueOrder != "" && s.QueueOrder != "lifo":
		return &FieldError{FieldQueueOrder, s.QueueOrder, `"fifo" (or "": first come, first served) or "lifo"`}
	case s.QueueOrder == "":
	case s.QueueWait != 0:
		return &FieldError{FieldQueueWait, s.QueueWait, why}
	case s.ShedTarget != 0:
		return &FieldError{FieldShedTarget, s.ShedTarget, why}
	}
	return nil
}
