package sim

import "math"

// The per-process state of each client component (see components.go).

// Breaker states.
const (
	closed uint8 = iota
	open
	halfOpen
)

// breaker is one process's circuit breaker, as Polly v8's
// CircuitBreakerResilienceStrategy (Polly src/Polly.Core/CircuitBreaker/
// Controller/CircuitStateController.cs, Health/RollingHealthMetrics.cs) and
// resilience4j's CircuitBreakerStateMachine keep it: closed, it counts
// requests and failures over a rolling window; on a failure, once the
// window holds at least minThroughput requests and the failure ratio is at
// least ratio, it opens for the break duration, refusing every request;
// then the next request goes through as a probe (half-open) while the
// others are refused: a success closes it (and empties the window), a
// failure opens it again.
type breaker struct {
	state     uint8
	probing   bool    // half-open: the probe is out
	openUntil float64 // ms
	win       rolling // a: requests, b: failures
}

type breakerSet struct {
	on            bool
	ratio         float64
	minThroughput int32
	brk           float64 // ms
	width         int     // ticks per bucket
	s             []breaker
}

func (b *breakerSet) setup(p Policy, np int, tick float64) {
	b.on = p.BreakerRatio > 0
	if !b.on {
		return
	}
	b.ratio, b.minThroughput, b.brk = p.BreakerRatio, int32(p.BreakerMinThroughput), ms(p.BreakerBreak)
	b.width = bucketTicks(p.BreakerWindow, tick)
	b.s = grow(b.s, np)
	for i := range b.s {
		b.s[i] = breaker{}
		b.s[i].win.reset(b.width)
	}
}

// allow reports whether process p's breaker lets a request through at
// time t (ms).
func (b *breakerSet) allow(p int, t float64) bool {
	br := &b.s[p]
	switch br.state {
	case closed:
		return true
	case open:
		if t < br.openUntil {
			return false
		}
		br.state = halfOpen
	}
	if br.probing {
		return false
	}
	br.probing = true
	return true
}

// record counts a request's outcome at tick k (time t, ms).
func (b *breakerSet) record(p, k int, t float64, ok bool) {
	br := &b.s[p]
	switch br.state {
	case halfOpen:
		if !br.probing {
			return
		}
		br.probing = false
		if ok {
			br.state = closed
			br.win.reset(b.width)
		} else {
			br.state, br.openUntil = open, t+b.brk
		}
	case closed:
		br.win.addA(k)
		if ok {
			return
		}
		br.win.addB(k)
		if n := br.win.sa; n >= b.minThroughput && float64(br.win.sb) >= float64(b.ratio*float64(n)) {
			br.state, br.openUntil = open, t+b.brk
		}
	}
	// open: a request sent before it opened; the window is not counting
}

// throttleSet is adaptive throttling as the SRE book's "Handling Overload"
// gives it (Google, Site Reliability Engineering, ch. 21, "Client-side
// throttling"): each process keeps, over a window, the requests its
// application attempted and the requests the backend accepted, and refuses
// a new request locally with probability max(0, (requests − K·accepts) /
// (requests + 1)), computed before the request is counted; a refused
// request counts as attempted.
type throttleSet struct {
	on    bool
	k     float64
	width int
	s     []rolling // a: requests, b: accepts
}

func (th *throttleSet) setup(p Policy, np int, tick float64) {
	th.on = p.ThrottleK > 0
	if !th.on {
		return
	}
	th.k, th.width = p.ThrottleK, bucketTicks(p.ThrottleWindow, tick)
	th.s = grow(th.s, np)
	for i := range th.s {
		th.s[i].reset(th.width)
	}
}

// RejectProbability is adaptive throttling's local rejection probability
// for requests attempted and accepts over the window, with multiplier k.
func RejectProbability(requests, accepts, k float64) float64 {
	return math.Max(0, (requests-float64(k*accepts))/(requests+1))
}

// reject counts a request of process p at tick k and reports whether it
// is refused locally; it draws one number when the probability is above 0.
func (th *throttleSet) reject(p, k int, rng *Mulberry32) bool {
	w := &th.s[p]
	w.at(k)
	pr := RejectProbability(float64(w.sa), float64(w.sb), th.k)
	w.addA(k)
	return pr > 0 && rng.Float64() < pr
}

func (th *throttleSet) accepted(p, k int) { th.s[p].addB(k) }

// awsRate is one process's client-side rate limiter of the AWS SDKs'
// adaptive retry mode, as aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go
// and botocore retries/adaptive.py, bucket.py and throttling.py write it:
// a token bucket, off until the first throttling response, whose fill
// rate follows CUBIC (β = 0.7, scale 0.4) from the rate measured in
// half-second buckets (smoothing 0.8), at most twice the measured rate and
// at least 0.5/s. Times are seconds from the run's start.
type awsRate struct {
	enabled                bool
	fill, capacity, tokens float64
	lastRefill             float64 // s; −1: not yet
	measured, lastBucket   float64
	count                  float64
	lastMax, lastThrottle  float64
	window, calc           float64
}

// The constants of aws-sdk-go-v2's newAdaptiveRateLimit (botocore's the same).
const (
	awsSmooth  = 0.8
	awsBeta    = 0.7
	awsScale   = 0.4
	awsMinFill = 0.5
)

type rateSet struct {
	on   bool
	s    []awsRate
	bits []uint64 // bit i: client i holds a token and is on its way
}

func (rs *rateSet) setup(on bool, np, n int) {
	rs.on = on
	if !on {
		return
	}
	rs.s = grow(rs.s, np)
	for i := range rs.s {
		rs.s[i] = awsRate{lastRefill: -1}
	}
	rs.bits = grow(rs.bits, (n+63)/64)
	clear(rs.bits)
}

func bit(i int32) (w int, b uint64) { return int(i >> 6), 1 << (uint32(i) & 63) }

// held reports whether client i was held back with a token, and clears it.
func (rs *rateSet) held(i int32) bool {
	w, b := bit(i)
	if w >= len(rs.bits) || rs.bits[w]&b == 0 {
		return false
	}
	rs.bits[w] &^= b
	return true
}

// holding reports whether client i is held back with a token, and leaves
// it so.
func (rs *rateSet) holding(i int32) bool {
	w, b := bit(i)
	return w < len(rs.bits) && rs.bits[w]&b != 0
}

func (rs *rateSet) hold(i int32) {
	w, b := bit(i)
	for w >= len(rs.bits) {
		rs.bits = append(rs.bits, 0) // open-loop clients: grows with them
	}
	rs.bits[w] |= b
}

// acquire takes a token of process p at time t (ms) and returns how long
// (ms) the request must wait for it: 0 when the bucket is off or has one.
// A request that waits reserves its token (the balance goes below zero),
// so that waiters are served in turn — botocore's acquire blocks until
// its token is there; aws-sdk-go-v2 sleeps and tries again.
func (rs *rateSet) acquire(p int, t float64) float64 {
	a := &rs.s[p]
	if !a.enabled {
		return 0
	}
	a.refill(t / 1000)
	a.tokens--
	if a.tokens >= 0 {
		return 0
	}
	return 1000 * -a.tokens / a.fill
}

func (a *awsRate) refill(s float64) {
	if a.lastRefill < 0 {
		a.lastRefill = s
		return
	}
	a.tokens = math.Min(a.capacity, a.tokens+float64((s-a.lastRefill)*a.fill))
	a.lastRefill = s
}

// update is aws-sdk-go-v2's adaptiveRateLimit.Update for a response at
// time t (ms).
func (rs *rateSet) update(p int, t float64, throttled bool) {
	a := &rs.s[p]
	s := t / 1000
	// updateMeasuredRate
	bucket := math.Floor(s*2) / 2
	a.count++
	if bucket > a.lastBucket {
		rate := a.count / (bucket - a.lastBucket)
		a.measured = float64(rate*awsSmooth) + float64(a.measured*(1-awsSmooth))
		a.count, a.lastBucket = 0, bucket
	}
	if throttled {
		use := a.measured
		if a.enabled {
			use = math.Min(a.measured, a.fill)
		}
		a.lastMax = use
		a.window = math.Pow(float64(a.lastMax*(1-awsBeta))/awsScale, 1./3.)
		a.lastThrottle = s
		a.calc = use * awsBeta
		a.enabled = true
	} else {
		a.window = math.Pow(float64(a.lastMax*(1-awsBeta))/awsScale, 1./3.)
		a.calc = float64(awsScale*math.Pow(s-a.lastThrottle-a.window, 3)) + a.lastMax
	}
	newRate := math.Min(a.calc, 2*a.measured)
	// tokenBucketUpdateRate: refill at the old rate, then resize. The
	// capacity is at least 1 token (botocore; aws-sdk-go-v2 resizes to
	// the rate itself, under which a bucket below 1/s never holds a token).
	a.refill(s)
	a.fill = math.Max(newRate, awsMinFill)
	a.capacity = math.Max(newRate, 1)
	a.tokens = math.Min(a.tokens, a.capacity)
}

// tokenSet is gRPC's retry throttling per channel (gRFC A6; grpc-go
// clientconn.go retryThrottler): tokens start at maxTokens; a failed
// attempt that would be retried takes one (not below 0) and the retry is
// refused when the count is then at or below maxTokens/2; a success adds
// tokenRatio (not above maxTokens).
type tokenSet struct {
	on         bool
	max, ratio float64
	s          []float64
}

func (ts *tokenSet) setup(p Policy, np int) {
	ts.on = p.RetryTokens > 0
	if !ts.on {
		return
	}
	ts.max, ts.ratio = p.RetryTokens, p.RetryTokenRatio
	ts.s = grow(ts.s, np)
	for i := range ts.s {
		ts.s[i] = ts.max
	}
}

func (ts *tokenSet) record(p int, ok bool) {
	if ok {
		ts.s[p] = math.Min(ts.max, ts.s[p]+ts.ratio)
	}
}

// allow is grpc-go's throttle(): it takes a token and reports whether the
// retry may go.
func (ts *tokenSet) allow(p int) bool {
	ts.s[p] = math.Max(0, ts.s[p]-1)
	return ts.s[p] > ts.max/2
}
