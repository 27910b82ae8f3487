package sim

import (
	"fmt"
	"math"
	"time"
	"unsafe"
)

// Client components compose with any backoff family: a client is its
// family's delays, plus attempt and time limits (limits.go), plus the
// components below, each off at its zero value. A run without any keeps
// the article's loops untouched; a run with some goes through
// Sim.loopList (counting server) or Sim.loopQueue, which call the
// components once per tick:
//
//   - gate, before the server counts arrivals: a circuit breaker that is
//     open, or adaptive throttling, refuses a request locally (it is not
//     sent, its client counts a failure and its backoff applies); the AWS
//     adaptive rate limiter holds a request back until its bucket has a
//     token (no failure, no attempt);
//   - outcome, once the server has answered: successes and failures feed
//     the breaker, the throttling window, the rate limiter, gRPC's retry
//     tokens and a per-process retry budget;
//   - retry, when a rejected client would retry (limited.delay): gRPC's
//     retry throttling, Envoy's cap on outstanding retries and a
//     per-process retry budget refuse it (the client gives up); gRPC
//     pushback waits exactly the server's value and restarts the backoff.
//
// Scope: clients are grouped into processes of ClientsPerProcess clients
// by index (client i in process i / ClientsPerProcess); every component
// keeps one state per process. 0 puts the whole fleet in one process (one
// shared proxy, one shared rate limiter); 1 gives each client its own.

// Component defaults, filled by Normalize where a component is on and its
// parameter is zero.
const (
	// The SRE book's "Handling Overload": K = 2 over the last two minutes.
	DefaultThrottleWindow = 2 * time.Minute
	// Polly v8 CircuitBreakerStrategyOptions and resilience4j's defaults
	// (Polly's: FailureRatio 0.1, MinimumThroughput 100, SamplingDuration
	// 30 s, BreakDuration 5 s).
	DefaultBreakerMinThroughput = 100
	DefaultBreakerWindow        = 30 * time.Second
	DefaultBreakerBreak         = 5 * time.Second
)

// rollBuckets is how many buckets a rolling window keeps: Polly v8's
// RollingHealthMetrics splits its sampling duration into 10 windows.
const rollBuckets = 10

// componentsOn reports whether p has any client component.
func (p Policy) componentsOn() bool {
	return p.gates() || p.Pushback
}

// gates reports whether p has a component that acts before the server
// counts arrivals, or needs to see every outcome.
func (p Policy) gates() bool {
	return p.ThrottleK > 0 || p.AWSAdaptive || p.RetryTokens > 0 || p.RetryCap > 0 || p.BreakerRatio > 0 ||
		(p.RetryBudget > 0 && p.ClientsPerProcess > 0)
}

// normalizeComponents fills the defaults of the components p has on, and
// clears the parameters of those it has off. A switch out of range
// (negative, NaN) is kept, not read as off, so that Validate refuses it.
func (q *Policy) normalizeComponents(p Policy) {
	q.ClientsPerProcess = p.ClientsPerProcess
	if p.ThrottleK != 0 {
		q.ThrottleK, q.ThrottleWindow = p.ThrottleK, or(p.ThrottleWindow, DefaultThrottleWindow)
	}
	q.AWSAdaptive = p.AWSAdaptive
	if p.RetryTokens != 0 {
		q.RetryTokens, q.RetryTokenRatio = p.RetryTokens, p.RetryTokenRatio
	}
	q.Pushback = p.Pushback
	q.RetryCap = p.RetryCap
	if p.BreakerRatio != 0 {
		q.BreakerRatio = p.BreakerRatio
		q.BreakerMinThroughput = p.BreakerMinThroughput
		if q.BreakerMinThroughput == 0 {
			q.BreakerMinThroughput = DefaultBreakerMinThroughput
		}
		q.BreakerWindow = or(p.BreakerWindow, DefaultBreakerWindow)
		q.BreakerBreak = or(p.BreakerBreak, DefaultBreakerBreak)
	}
}

// MaxClientsPerProcess bounds Policy.ClientsPerProcess.
const MaxClientsPerProcess = MaxClients

// validateComponents reports the components' parameters out of range:
// the process size, adaptive throttling, gRPC's retry throttling and
// Envoy's retry cap, then the circuit breaker, each in field order.
func (p Policy) validateComponents() []error {
	errs := p.validateProcessAndThrottling()
	errs = append(errs, p.validateRetryThrottling()...)
	return append(errs, p.validateBreaker()...)
}

// validateProcessAndThrottling reports ClientsPerProcess (set only with a
// per-process component), then adaptive throttling's K and window.
func (p Policy) validateProcessAndThrottling() fieldErrs {
	var errs fieldErrs
	if p.ClientsPerProcess < 0 || p.ClientsPerProcess > MaxClientsPerProcess {
		errs.add(FieldClientsPerProcess, p.ClientsPerProcess, fmt.Sprintf("0 (one process for the fleet) or a whole number of clients ≤ %d", MaxClientsPerProcess))
	} else if p.ClientsPerProcess > 0 && !p.gates() {
		errs.add(FieldClientsPerProcess, p.ClientsPerProcess, "0 without a per-process component (throttle_k, aws_adaptive, retry_tokens, retry_cap, breaker_ratio, retry_budget)")
	}
	if !(p.ThrottleK == 0 || (p.ThrottleK >= 1 && p.ThrottleK <= 100)) {
		errs.add(FieldThrottleK, p.ThrottleK, "0 (no adaptive throttling) or a multiplier of accepts in [1, 100] (the SRE book's K = 2)")
	}
	if p.ThrottleK == 0 && p.ThrottleWindow != 0 {
		errs.add(FieldThrottleWindow, p.ThrottleWindow, "0 without ThrottleK")
	} else {
		errs.check(windowUpToAnHour(FieldThrottleWindow, p.ThrottleWindow))
	}
	return errs
}

// validateRetryThrottling reports gRPC's retry throttling (its tokens and
// their ratio, set together) and Envoy's cap on outstanding retries.
func (p Policy) validateRetryThrottling() fieldErrs {
	var errs fieldErrs
	if !(p.RetryTokens >= 0 && p.RetryTokens <= 1000) {
		errs.add(FieldRetryTokens, p.RetryTokens, "0 (no retry throttling) or gRPC's maxTokens in (0, 1000]")
	}
	if !(p.RetryTokenRatio >= 0 && p.RetryTokenRatio <= 1) || (p.RetryTokens > 0) != (p.RetryTokenRatio > 0) {
		errs.add(FieldRetryTokenRatio, p.RetryTokenRatio, "gRPC's tokenRatio in (0, 1] with RetryTokens, 0 without")
	}
	if p.RetryCap < 0 || p.RetryCap > MaxClients {
		errs.add(FieldRetryCap, p.RetryCap, fmt.Sprintf("0 (no cap) or a whole number of outstanding retries ≤ %d", MaxClients))
	}
	return errs
}

// validateBreaker reports the circuit breaker's ratio, then its minimum
// throughput, window and break: within range with a ratio, zero without.
func (p Policy) validateBreaker() fieldErrs {
	var errs fieldErrs
	if !(p.BreakerRatio >= 0 && p.BreakerRatio <= 1) {
		errs.add(FieldBreakerRatio, p.BreakerRatio, "0 (no circuit breaker) or a failure ratio in (0, 1]")
	}
	if p.BreakerRatio == 0 {
		for _, f := range []struct {
			name Field
			v    any
			zero bool
		}{{FieldBreakerMinThroughput, p.BreakerMinThroughput, p.BreakerMinThroughput == 0},
			{FieldBreakerWindow, p.BreakerWindow, p.BreakerWindow == 0}, {FieldBreakerBreak, p.BreakerBreak, p.BreakerBreak == 0}} {
			if !f.zero {
				errs.add(f.name, f.v, "0 without BreakerRatio")
			}
		}
		return errs
	}
	if p.BreakerMinThroughput < 0 || p.BreakerMinThroughput > MaxClients {
		errs.add(FieldBreakerMinThroughput, p.BreakerMinThroughput, fmt.Sprintf("requests in the window before the breaker may open, ≥ 0 (0: Polly's 100), ≤ %d", MaxClients))
	}
	errs.check(windowUpToAnHour(FieldBreakerWindow, p.BreakerWindow))
	errs.check(windowUpToAnHour(FieldBreakerBreak, p.BreakerBreak))
	return errs
}

// windowUpToAnHour checks a component's duration: whole milliseconds ≥ 0,
// at most an hour.
func windowUpToAnHour(field Field, d time.Duration) error {
	if err := wholeMS(field, d, 0); err != nil {
		return err
	}
	if d > time.Hour {
		return &FieldError{field, d, "at most 1h0m0s"}
	}
	return nil
}

// Component describes one client component for people: `sweep policies`
// prints it.
type Component struct {
	Name   string   `json:"name"`
	Params []string `json:"params"` // its keys in sweeps.toml
	What   string   `json:"does"`
	Source string   `json:"source"`         // the library file it follows
	Note   string   `json:"note,omitempty"` // where the model departs from the library
}

// Components lists the client components, each with the library it follows.
func Components() []Component {
	return []Component{
		{"adaptive throttling", []string{"throttle_k", "throttle_window_s", "clients_per_process"},
			"per process, refuses a request locally with probability max(0, (requests − K·accepts)/(requests + 1)) over the window (counts before the request; a refused request counts as attempted); a refusal is a failure its backoff answers",
			"Google SRE book, ch. 21 \"Handling Overload\", client-side throttling (K = 2, two minutes)",
			"the window is 10 rolling buckets; accepted = served, a timeout or a 429 is not"},
		{"AWS adaptive rate limiter", []string{"aws_adaptive", "clients_per_process"},
			"per process, a token bucket off until the first throttling response (a 429), whose rate then follows CUBIC (β 0.7, scale 0.4) capped at twice the measured send rate; a request waits for its token before it is sent",
			"aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go (newAdaptiveRateLimit, Update, AcquireToken); botocore retries/adaptive.py, bucket.py, throttling.py",
			"waiters reserve their token and go in turn (botocore blocks, the Go SDK sleeps and tries again); the bucket holds at least 1 token (botocore)"},
		{"gRPC retry throttling", []string{"retry_tokens", "retry_token_ratio", "clients_per_process"},
			"per process (channel), tokens start at maxTokens; a failure that would be retried takes 1 and the retry is refused when the count is then ≤ maxTokens/2 (the client gives up); a success adds tokenRatio",
			"gRFC A6 (retryThrottling); grpc-go clientconn.go retryThrottler.throttle/successfulRPC, stream.go shouldRetry",
			"a client's last failure (at max_attempts) takes no token: grpc-go takes one before it checks maxAttempts"},
		{"server pushback", []string{"pushback"},
			"a response with a Retry-After is retried after exactly that long, and the backoff starts again as after a first failure; the attempt count goes on",
			"gRFC A6 (grpc-retry-pushback-ms); grpc-go stream.go shouldRetry", ""},
		{"Envoy retry cap", []string{"retry_cap", "clients_per_process"},
			"per process (one Envoy) or fleet-wide (0: one shared Envoy), at most retry_cap retries outstanding, from when a retry is scheduled until it arrives; a retry beyond it is not made and the client gives up",
			"Envoy source/common/router/retry_state_impl.cc (shouldRetry: retries().canCreate(), inc(); resetRetry: dec()); cluster circuit breaker max_retries, default 3",
			"a retry stops being outstanding when it arrives: the counting server answers at once"},
		{"circuit breaker", []string{"breaker_ratio", "breaker_min_throughput", "breaker_window_s", "breaker_break_s", "clients_per_process"},
			"per process: closed, it opens when a failure brings the window to ≥ min_throughput requests with a failure ratio ≥ ratio; open for break_s, refusing every request locally (a failure its backoff answers); then one probe: a success closes it (and empties the window), a failure opens it again",
			"Polly v8 src/Polly.Core/CircuitBreaker (CircuitBreakerStrategyOptions: FailureRatio 0.1, MinimumThroughput 100, SamplingDuration 30 s, BreakDuration 5 s; Controller/CircuitStateController.cs; Health/RollingHealthMetrics.cs, 10 windows); resilience4j CircuitBreakerStateMachine",
			"one probe at a time in half-open, as Polly v8 (resilience4j lets permittedNumberOfCallsInHalfOpenState through)"},
		{"per-process retry budget", []string{"retry_budget", "budget_min_rps", "clients_per_process"},
			"with clients_per_process > 0, each process keeps its own budget: retries over the last 10 s ≤ retry_budget × requests + budget_min_rps × 10; 0 keeps one fleet-wide budget",
			"Finagle com.twitter.finagle.service.RetryBudget (percentCanRetry 0.2, minRetriesPerSec 10, ttl 10 s)", ""},
	}
}

// ComponentsShort names p's client components in a few words for a table
// row, e.g. " + throttle K=2/100" ("/100": per process of 100 clients,
// none: one for the fleet); "" when it has none.
func (p Policy) ComponentsShort() string {
	var s string
	scope := ""
	if p.ClientsPerProcess > 0 {
		scope = fmt.Sprintf("/%d", p.ClientsPerProcess)
	}
	if p.ThrottleK > 0 {
		s += fmt.Sprintf(" + throttle K=%g%s", p.ThrottleK, scope)
	}
	if p.AWSAdaptive {
		s += " + aws rate" + scope
	}
	if p.RetryTokens > 0 {
		s += fmt.Sprintf(" + tokens %g%s", p.RetryTokens, scope)
	}
	if p.Pushback {
		s += " + pushback"
	}
	if p.RetryCap > 0 {
		s += fmt.Sprintf(" + cap %d%s", p.RetryCap, scope)
	}
	if p.BreakerRatio > 0 {
		s += fmt.Sprintf(" + breaker %g%s", p.BreakerRatio, scope)
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess > 0 {
		s += fmt.Sprintf(" + budget %g%s", p.RetryBudget, scope)
	}
	return s
}

// WithoutComponents is p without its client components (and without a
// per-process retry budget, which ComponentsShort names with them).
func (p Policy) WithoutComponents() Policy {
	if p.ClientsPerProcess > 0 {
		p.RetryBudget, p.BudgetMinRPS = 0, 0
	}
	p.ClientsPerProcess, p.ThrottleK, p.ThrottleWindow, p.AWSAdaptive, p.RetryTokens, p.RetryTokenRatio = 0, 0, 0, false, 0, 0
	p.Pushback, p.RetryCap, p.BreakerRatio, p.BreakerMinThroughput, p.BreakerWindow, p.BreakerBreak = false, 0, 0, 0, 0, 0
	return p
}

// componentWords says which components p has, for Describe and Plain.
func (p Policy) componentWords() []string {
	var parts []string
	if p.ThrottleK > 0 {
		parts = append(parts, fmt.Sprintf("adaptive throttling K=%g over %v", p.ThrottleK, p.ThrottleWindow))
	}
	if p.AWSAdaptive {
		parts = append(parts, "AWS adaptive rate limiter")
	}
	if p.RetryTokens > 0 {
		parts = append(parts, fmt.Sprintf("gRPC retry throttling %g tokens, ratio %g", p.RetryTokens, p.RetryTokenRatio))
	}
	if p.Pushback {
		parts = append(parts, "server pushback")
	}
	if p.RetryCap > 0 {
		parts = append(parts, fmt.Sprintf("at most %d retries outstanding", p.RetryCap))
	}
	if p.BreakerRatio > 0 {
		parts = append(parts, fmt.Sprintf("circuit breaker %g %% of ≥%d in %v, open %v", 100*p.BreakerRatio, p.BreakerMinThroughput, p.BreakerWindow, p.BreakerBreak))
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess > 0 {
		parts = append(parts, fmt.Sprintf("a retry budget of %g %% of requests + %g/s", 100*p.RetryBudget, p.BudgetMinRPS))
	}
	if len(parts) > 0 && p.ClientsPerProcess > 0 {
		parts = append(parts, fmt.Sprintf("per process of %d clients", p.ClientsPerProcess))
	}
	return parts
}

// components is a run's client components: one state per process for each
// that is on. It lives in the Sim, so that runs reuse its storage.
type components struct {
	cpp, procs int
	tick       float64 // ms
	base       float64 // ms: the policy's base, prev after a pushback

	breaker  breakerSet
	throttle throttleSet
	rate     rateSet
	tokens   tokenSet
	capOn    bool
	retryCap int32
	out      []int32 // per process: retries outstanding (Envoy)
	buds     []budget
	pushback bool
	since    []int32 // per client: its attempt count at its last pushback

	local int64 // requests refused locally (breaker, throttling)
	list  []int32
}

// setup prepares the components of p for a run of n clients (more may
// come: open-loop traffic) over ticks of tick ms.
func (cc *components) setup(p Policy, n int, tick float64) {
	var q Policy // the components' defaults where p leaves them zero (p may not be normalized)
	q.normalizeComponents(p)
	q.Base, q.RetryBudget, q.BudgetMinRPS = p.Base, p.RetryBudget, p.BudgetMinRPS
	p = q
	cc.cpp = p.ClientsPerProcess
	cc.procs = 1
	if cc.cpp > 0 {
		cc.procs = (n + cc.cpp - 1) / cc.cpp
	}
	cc.tick, cc.base, cc.local = tick, ms(p.Base), 0
	np := cc.procs
	cc.breaker.setup(p, np, tick)
	cc.throttle.setup(p, np, tick)
	cc.rate.setup(p.AWSAdaptive, np, n)
	cc.tokens.setup(p, np)
	cc.capOn, cc.retryCap = p.RetryCap > 0, int32(p.RetryCap)
	if cc.capOn {
		cc.out = grow(cc.out, np)
		clear(cc.out)
	}
	cc.buds = cc.buds[:0]
	if p.RetryBudget > 0 && p.ClientsPerProcess > 0 {
		cc.buds = grow(cc.buds, np)
		for i := range cc.buds {
			cc.buds[i].reset(int(math.Ceil(BudgetWindow*1000/tick)), p.RetryBudget, p.BudgetMinRPS*BudgetWindow)
		}
	}
	cc.pushback = p.Pushback
	if cc.pushback {
		cc.since = grow(cc.since, n)
		clear(cc.since)
	}
}

// proc is client i's process. Open-loop clients (i ≥ the cohort) take the
// processes in turn.
func (cc *components) proc(i int32) int {
	if cc.cpp == 0 {
		return 0
	}
	return (int(i) / cc.cpp) % cc.procs
}

// verdict is what the gate does with one arrival.
type verdict uint8

const (
	send    verdict = iota
	refuse          // refused locally: a failure for its client
	holdOff         // held back by the rate limiter until tick hold
)

// gate decides the fate of client c (index i) arriving at tick k (time t,
// ms) before anything is sent; for holdOff it also returns the tick the
// request is sent at.
func (cc *components) gate(c *client, i int32, k int, t float64, tk ticker, rng *Mulberry32) (verdict, int) {
	p := cc.proc(i)
	if cc.rate.on && cc.rate.held(i) {
		return send, 0 // its token was taken when it was held back
	}
	if len(cc.buds) > 0 { // the window moves to tick k; an original request deposits (Sim.originals), whatever refuses it below
		orig := 0
		if c.att == 0 {
			orig = 1
		}
		cc.buds[p].sent(k, orig)
	}
	if cc.capOn && c.att > 0 {
		cc.out[p]-- // the retry arrived: no longer outstanding
	}
	if cc.breaker.on && !cc.breaker.allow(p, t) {
		cc.local++
		return refuse, 0
	}
	if cc.throttle.on && cc.throttle.reject(p, k, rng) {
		cc.local++
		return refuse, 0
	}
	if cc.rate.on {
		if wait := cc.rate.acquire(p, t); wait > 0 {
			cc.rate.hold(i)
			return holdOff, max(tk.arrival(t+wait), k+1)
		}
	}
	return send, 0
}

// outcome tells the components of client i's process that its request,
// sent at tick k (time t, ms), succeeded (ok) or failed; throttled is a
// 429 (the server up and refusing), as opposed to a 503 or a timeout.
func (cc *components) outcome(i int32, k int, t float64, ok, throttled bool) {
	p := cc.proc(i)
	if cc.breaker.on {
		cc.breaker.record(p, k, t, ok)
	}
	if cc.throttle.on && ok {
		cc.throttle.accepted(p, k)
	}
	if cc.rate.on {
		cc.rate.update(p, t, throttled)
	}
	if cc.tokens.on {
		cc.tokens.record(p, ok)
	}
}

// allowRetry decides, for client i that would retry, whether its process
// lets it, before its backoff is drawn (as grpc-go's shouldRetry, Envoy's
// RetryStateImpl::shouldRetry and Finagle's RetryBudget do): gRPC's token
// is taken and the budget's retry counted here; the cap's outstanding
// retry is counted once the retry is made (limited.delay).
func (cc *components) allowRetry(i int32) bool {
	p := cc.proc(i)
	if cc.tokens.on && !cc.tokens.allow(p) {
		return false
	}
	if len(cc.buds) > 0 && !cc.buds[p].allow() {
		return false
	}
	return !cc.capOn || cc.out[p] < cc.retryCap
}

// rolling counts two quantities over a sliding window of rollBuckets
// buckets of whole ticks: the window ends at the current tick's bucket.
type rolling struct {
	width  int // ticks per bucket
	bucket int // the current bucket's number (tick / width)
	a, b   [rollBuckets]int32
	sa, sb int32 // sums over the buckets
}

func (r *rolling) reset(width int) { *r = rolling{width: width} }

// at moves the window to tick k, dropping the buckets that fell out.
func (r *rolling) at(k int) {
	nb := k / r.width
	if nb-r.bucket >= rollBuckets {
		r.a, r.b, r.sa, r.sb = [rollBuckets]int32{}, [rollBuckets]int32{}, 0, 0
		r.bucket = nb
		return
	}
	for r.bucket < nb {
		r.bucket++
		j := r.bucket % rollBuckets
		r.sa -= r.a[j]
		r.sb -= r.b[j]
		r.a[j], r.b[j] = 0, 0
	}
}

func (r *rolling) addA(k int) { r.at(k); r.a[r.bucket%rollBuckets]++; r.sa++ }
func (r *rolling) addB(k int) { r.at(k); r.b[r.bucket%rollBuckets]++; r.sb++ }

// bucketTicks is the width of one of rollBuckets buckets over window.
func bucketTicks(window time.Duration, tick float64) int {
	return max(1, int(math.Ceil(ms(window)/rollBuckets/tick)))
}

// pushbackDelay is gRPC's server pushback (gRFC A6): a response with a
// Retry-After is retried after exactly that long and the backoff starts
// again, as if the next failure were the first (the attempt count, which
// MaxAttempts limits, goes on); without one, the policy's delay.
func (cc *components) pushbackDelay(inner delayer, c *client, r response, rng *Mulberry32) float64 {
	i := int(r.index)
	for i >= len(cc.since) {
		cc.since = append(cc.since, 0) // open-loop clients
	}
	if r.retryAfter > 0 {
		cc.since[i] = c.att
		c.prev = cc.base
		return r.retryAfter
	}
	if since := cc.since[i]; since > 0 {
		att := c.att
		c.att -= since
		d := inner.delay(c, r, rng)
		c.att = att
		return d
	}
	return inner.delay(c, r, rng)
}

// ComponentBytes is an upper estimate of the memory p's client components
// take in a run of sc (tested against what they hold after runs), beyond
// Scenario.MemoryBytes: per process 120 bytes for a breaker, 96 for
// throttling, 104 for a rate limiter, 8 for retry tokens, 4 for a retry
// cap, and 16 per tick of the 10 s window for a per-process retry budget;
// per client 4 bytes with pushback, 1 with a rate limiter and 4 for a
// tick's local refusals with a component that gates requests. Open-loop
// clients add their per-client bytes as they come.
func ComponentBytes(p Policy, sc Scenario) int64 {
	if !p.componentsOn() {
		return 0
	}
	procs, clients := int64(1), int64(max(sc.Clients, 0))
	if p.ClientsPerProcess > 0 {
		procs = (clients + int64(p.ClientsPerProcess) - 1) / int64(p.ClientsPerProcess)
	}
	var per, perClient int64
	if p.BreakerRatio > 0 {
		per += 120
	}
	if p.ThrottleK > 0 {
		per += 96
	}
	if p.AWSAdaptive {
		per += 104
		perClient++
	}
	if p.RetryTokens > 0 {
		per += 8
	}
	if p.RetryCap > 0 {
		per += 4
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess > 0 && sc.Tick > 0 {
		per += 96 + 16*int64(math.Ceil(BudgetWindow*1000/ms(sc.Tick)))
	}
	if p.Pushback {
		perClient += 4
	}
	if p.gates() {
		perClient += 4
	}
	return procs*per + clients*perClient
}

// footprint is the bytes the components hold.
func (cc *components) footprint() int {
	return cap(cc.breaker.s)*int(unsafe.Sizeof(breaker{})) + cap(cc.throttle.s)*int(unsafe.Sizeof(rolling{})) +
		cap(cc.rate.s)*int(unsafe.Sizeof(awsRate{})) + cap(cc.rate.bits)*8 + cap(cc.tokens.s)*8 + cap(cc.out)*4 +
		cap(cc.buds)*int(unsafe.Sizeof(budget{})) + cc.budRings() + cap(cc.since)*4 + cap(cc.list)*4
}

func (cc *components) budRings() int {
	n := 0
	for _, b := range cc.buds[:cap(cc.buds)] {
		n += (cap(b.req) + cap(b.ret)) * 8
	}
	return n
}
