package sim

import (
	"math"
	"strings"
)

// limited wraps a policy's delayer with the client-side limits (which
// responses it retries, max elapsed time, token bucket, fleet retry budget)
// and a server whose Retry-After
// varies per response. Runs without any of them never see it, so the
// article's runs keep their hot loop as it is.
type limited struct {
	inner         delayer
	retryOn       RetryOn
	tick          float64     // ms
	maxElapsed    float64     // ms; 0: none
	bucketRetries int32       // retries the token bucket pays for; -1: no bucket
	budget        *budget     // nil: none
	raLo, raSpan  float64     // Retry-After drawn from U(raLo, raLo+raSpan) per response; span 0: as sent
	cc            *components // the client components that decide on retries; nil: none
}

func (l *limited) delay(c *client, r response, rng *Mulberry32) float64 {
	if c.att == 1 {
		c.first = r.tick
	}
	if l.retryOn != RetryOnAny && !l.retryOn.retries(r, l.raSpan > 0) {
		return giveUp
	}
	if l.bucketRetries >= 0 && c.att > l.bucketRetries {
		return giveUp
	}
	if l.budget != nil && !l.budget.allow() {
		return giveUp
	}
	if l.cc != nil && !l.cc.allowRetry(r.index) {
		return giveUp
	}
	if l.raSpan > 0 {
		r.retryAfter = l.raLo + float64(rng.Float64()*l.raSpan)
	}
	var d float64
	if cc := l.cc; cc != nil && cc.pushback {
		d = cc.pushbackDelay(l.inner, c, r, rng)
	} else {
		d = l.inner.delay(c, r, rng)
	}
	if l.maxElapsed > 0 && float64(float64(r.tick-c.first)*l.tick)+d > l.maxElapsed {
		return giveUp
	}
	if l.cc != nil && l.cc.capOn {
		l.cc.out[l.cc.proc(r.index)]++ // the retry is made: outstanding until it arrives
	}
	return d
}

// RetryOn says which rejections a client retries; any other ends its tries
// (it gives up, as a library that hands the response to its caller). In the
// simulator a rejection while the server is down is a 503 and one after
// recovery a 429; a queueing server's timeout (no response at all) is
// retried under every value but retry-after-only, as the libraries below
// retry read timeouts; a request a client component refused locally (an
// open circuit breaker, adaptive throttling) carries no Retry-After, and
// transient does not retry it.
type RetryOn string

// The values of Policy.RetryOn. RetryOnList describes them.
const (
	RetryOnAny             RetryOn = ""                 // every rejection: 503s and 429s
	RetryOn5xx             RetryOn = "5xx"              // 503s only; a 429 ends the tries
	RetryOn5xxOrRetryAfter RetryOn = "5xx+retry-after"  // 503s, and 429s that carry a Retry-After
	RetryOnRetryAfter      RetryOn = "retry-after"      // only responses that carry a Retry-After, and timeouts
	RetryOnRetryAfterOnly  RetryOn = "retry-after-only" // only responses that carry a Retry-After: a timeout ends the tries
	RetryOnTransient       RetryOn = "transient"        // 503s, 429s and timeouts; a local refusal ends the tries
	retryOnAnyName                 = "any"              // RetryOnAny as a config may spell it
)

// RetryOnValue describes one value of Policy.RetryOn for people.
type RetryOnValue struct {
	Value RetryOn
	Means string
	Like  string // libraries that behave so
}

// retryOns is the one place the values of RetryOn are defined.
var retryOns = []RetryOnValue{
	{RetryOnAny, "every rejection",
		"go-retryablehttp DefaultRetryPolicy (429 and 5xx), botocore, the AWS SDKs, Polly's standard HTTP handler (408, 429, 5xx)"},
	{RetryOn5xx, "503s, and gives up on a 429",
		"Envoy retry_on \"5xx\" (429 is not a 5xx; retriable-status-codes must name it); urllib3 Retry(status_forcelist=[500, 502, 503, 504]) without Retry-After"},
	{RetryOn5xxOrRetryAfter, "503s, and 429s that carry a Retry-After",
		"urllib3 Retry(status_forcelist=[500, 502, 503, 504]) with respect_retry_after_header (default): 413, 429 and 503 are retried when they carry one (urllib3 src/urllib3/util/retry.py is_retry, RETRY_AFTER_STATUS_CODES)"},
	{RetryOnRetryAfter, "responses that carry a Retry-After, 503 or 429, and timeouts",
		"urllib3 Retry() with no status_forcelist (the default: RETRY_AFTER_STATUS_CODES 413, 429, 503), which retries read timeouts under total"},
	{RetryOnRetryAfterOnly, "responses that carry a Retry-After, 503 or 429, and gives up on a timeout",
		"Kubernetes client-go rest Request.Do and DoRaw (with_retry.go IsNextRetry: 429 and 5xx retried only with a Retry-After; request.go retries a GET's connection reset or EOF, never a timeout; only Watch retries timeouts)"},
	{RetryOnTransient, "503s, 429s and timeouts, and gives up on a request its own circuit breaker or throttling refused",
		"Microsoft.Extensions.Http.Resilience's standard handler: its retry's ShouldHandle (HttpClientResiliencePredicates.IsTransient: 5xx, 408, 429, HttpRequestException, TimeoutRejectedException) does not match the BrokenCircuitException of the circuit breaker inside it, so the call fails at once"},
}

// RetryOnValues returns every value of Policy.RetryOn, the default first.
func RetryOnValues() []RetryOnValue { return append([]RetryOnValue(nil), retryOns...) }

func (o RetryOn) known() bool {
	for _, v := range retryOns {
		if v.Value == o {
			return true
		}
	}
	return false
}

// means says in words which rejections o retries.
func (o RetryOn) means() string {
	for _, v := range retryOns {
		if v.Value == o {
			return v.Means
		}
	}
	return string(o)
}

func retryOnList() string {
	names := []string{`"" or ` + retryOnAnyName}
	for _, v := range retryOns[1:] {
		names = append(names, string(v.Value))
	}
	return strings.Join(names, ", ")
}

// Retries reports whether a client on o retries a failed request: a 503
// (the server down, up false) or a 429 (up), with a Retry-After or not; a
// timeout (no answer at all); or a request its own client components
// refused (local). It is the simulator's rule, for drivers that replay a
// preset outside it (sweep live's sim:NAME).
func (o RetryOn) Retries(up, retryAfter, timeout, local bool) bool {
	r := response{up: up, noAnswer: timeout, local: local}
	if retryAfter && !local {
		r.retryAfter = 1
	}
	return o.retries(r, false)
}

// retries reports whether a client on o retries response r; drawn says
// that the run draws a Retry-After for every response.
func (o RetryOn) retries(r response, drawn bool) bool {
	if r.noAnswer {
		return o != RetryOnRetryAfterOnly
	}
	hasRA := r.retryAfter > 0 || drawn
	switch o {
	case RetryOn5xx:
		return !r.up
	case RetryOn5xxOrRetryAfter:
		return !r.up || hasRA
	case RetryOnRetryAfter, RetryOnRetryAfterOnly:
		return hasRA
	case RetryOnTransient:
		return !r.local
	}
	return true
}

// BudgetWindow is the window of a retry budget, in seconds (Finagle's ttl).
const BudgetWindow = 10

// budget is a fleet-wide retry budget: retries granted in the last
// BudgetWindow seconds may not exceed frac × requests sent in that window
// plus min.
type budget struct {
	frac, min      float64
	req, ret       []int64 // per tick of the window, a ring
	reqSum, retSum int64
	last           int // the tick the ring was advanced to
}

func (b *budget) reset(window int, frac, min float64) {
	if cap(b.req) < window {
		b.req, b.ret = make([]int64, window), make([]int64, window)
	}
	b.req, b.ret = b.req[:window], b.ret[:window]
	clear(b.req)
	clear(b.ret)
	b.frac, b.min, b.reqSum, b.retSum, b.last = frac, min, 0, 0, 0
}

// advance moves the window's end to tick k, dropping what fell out.
func (b *budget) advance(k int) {
	w := len(b.req)
	if k-b.last >= w {
		clear(b.req)
		clear(b.ret)
		b.reqSum, b.retSum, b.last = 0, 0, k
		return
	}
	for b.last < k {
		b.last++
		i := b.last % w
		b.reqSum -= b.req[i]
		b.retSum -= b.ret[i]
		b.req[i], b.ret[i] = 0, 0
	}
}

// sent records m deposits (original requests) at tick k, and moves the
// window to k: call it at every tick with arrivals, with m = 0 when none
// of them is an original, so that allow counts in the current tick.
func (b *budget) sent(k, m int) {
	b.advance(k)
	b.req[k%len(b.req)] += int64(m)
	b.reqSum += int64(m)
}

// allow grants one retry at the current tick if the budget has room.
func (b *budget) allow() bool {
	if float64(b.retSum+1) > float64(b.frac*float64(b.reqSum))+b.min {
		return false
	}
	b.ret[b.last%len(b.ret)]++
	b.retSum++
	return true
}

// server computes, tick by tick, what a server that does more than count
// serves and says: capacity that ramps up after recovery, rejections that
// cost work, a Retry-After from the backlog.
type server struct {
	capacity, tick   float64 // requests/s, ms
	recoverAt        float64 // ms
	rampUp, rampFrom float64 // ms, fraction
	rejectCost       float64
	backlog          bool
}

// newServer returns sc's server, or nil for the article's, which only counts.
func newServer(sc Scenario) *server {
	if sc.plain() {
		return nil
	}
	return &server{capacity: sc.Capacity, tick: ms(sc.Tick), recoverAt: ms(sc.RecoverAt), rampUp: ms(sc.RampUp),
		rampFrom: sc.RampFrom, rejectCost: sc.RejectCost, backlog: sc.RetryAfterBacklog}
}

// capacityAt is the requests/s served at time t (ms) after recovery.
func (s *server) capacityAt(t float64) float64 {
	if s.rampUp > 0 && t < s.recoverAt+s.rampUp {
		return s.capacity * (s.rampFrom + float64((1-s.rampFrom)*(t-s.recoverAt))/s.rampUp)
	}
	return s.capacity
}

// served is how many of m arrivals at time t are served, in index order:
// a served request costs 1, a rejection rejectCost, within capacity × tick.
func (s *server) served(t float64, m int) int {
	b := s.capacityAt(t) * s.tick / 1000
	whole := int(math.Floor(b))
	if s.rejectCost > 0 {
		x := math.Floor((b - float64(s.rejectCost*float64(m))) / (1 - s.rejectCost))
		if x < float64(whole) {
			whole = max(int(x), 0)
		}
	}
	return min(m, whole)
}

// retryAfter is the backlog's Retry-After (ms): pending clients over the
// capacity, in whole seconds as the header carries it, at least 1 s.
func (s *server) retryAfter(t float64, pending int) float64 {
	secs := math.Ceil(float64(pending) / s.capacityAt(math.Max(t, s.recoverAt)))
	return 1000 * math.Max(secs, 1)
}
