package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Setting says how to configure a policy in one library, or why it cannot.
type Setting struct {
	Library string `json:"library"`
	How     string `json:"how"`   // the configuration, in the library's own names
	Exact   bool   `json:"exact"` // false: the library cannot express the policy exactly; How says what differs
	// GRPC and AWS are the service config and the retryer How prints, as
	// numbers (nil when it prints none): the one owner of those numbers.
	GRPC *GRPCServiceConfig `json:"-"`
	AWS  *AWSRetry          `json:"-"`
	// Closest is the library's nearest built-in setting where How offers
	// one, with the policy it amounts to, for the caller to measure.
	Closest *Closest `json:"closest,omitempty"`
}

// Closest is a library's nearest built-in setting to a policy it cannot
// express: How names its options, Policy is what they do, and Ratio is its
// mean t99 over the policy's on the same scenario and seeds once measured
// (Setting.Measured; analysis.JudgeClosest).
type Closest struct {
	How    string  `json:"how"`
	Policy Policy  `json:"-"`
	Ratio  float64 `json:"t99_ratio,omitempty"` // 0: not measured
	Seeds  int     `json:"seeds,omitempty"`
	// Unfinished counts the seeds in which it was not back (t99 never
	// reached); Ratio is over the others.
	Unfinished int `json:"unfinished,omitempty"`
	// AnswerUnfinished counts the seeds in which the answer itself was not
	// back: then t99 compares nothing (its clients give up) and Ratio is 0.
	AnswerUnfinished int `json:"answer_unfinished,omitempty"`
}

// words is what How says of c, at its end.
func (c *Closest) words() string {
	s := "; closest built-in: " + c.How
	switch {
	case c.Seeds == 0:
		return s + " (not measured)"
	case c.AnswerUnfinished > 0:
		return s + fmt.Sprintf(" (not compared: the answer's t99 is not reached in %d of %d seeds, measured)", c.AnswerUnfinished, c.Seeds)
	case c.Unfinished == c.Seeds:
		return s + fmt.Sprintf(" (never back in %d seeds, measured)", c.Seeds)
	case c.Unfinished > 0:
		return s + fmt.Sprintf(" (not back in %d of %d seeds; t99 %.2f× the answer's in the others, measured)", c.Unfinished, c.Seeds, c.Ratio)
	}
	return s + fmt.Sprintf(" (t99 %.2f× the answer's, measured over %d seeds)", c.Ratio, c.Seeds)
}

// Measured returns s with its closest setting measured over seeds: its
// mean t99 is ratio × the policy's over the seeds where it was back, and
// it was not back in unfinished of them; answerUnfinished > 0 says the
// policy itself was not back in that many, and that t99 compares nothing.
// How says so. A setting without a closest one is returned as it is.
func (s Setting) Measured(ratio float64, seeds, unfinished, answerUnfinished int) Setting {
	if s.Closest == nil {
		return s
	}
	c := *s.Closest
	head := strings.TrimSuffix(s.How, c.words())
	c.Ratio, c.Seeds, c.Unfinished, c.AnswerUnfinished = ratio, seeds, unfinished, answerUnfinished
	if answerUnfinished > 0 {
		c.Ratio = 0
	}
	s.Closest, s.How = &c, head+c.words()
	return s
}

// manyAttempts stands for "no attempt limit" where a library needs a number.
const manyAttempts = 1000

// lib names a library a setting is for.
type lib uint8

const (
	libCenkalti lib = iota
	libGRPCCall
	libGRPCConn
	libRetryable
	libAWS
	libPolly
	libAPICore
	libFinagle
	libEnvoy
	libFailsafe
	libR4j
)

// row is a setting while it is built, with the library it is for.
type row struct {
	lib lib
	Setting
}

// Settings says how to set p in the common retry libraries: its curve, its
// attempt limit (a library's default limit would make clients give up
// where p does not), and its retry budget, gRPC retry throttling, retry
// quota and cap on outstanding retries in the libraries that have them.
// Libraries are listed whether or not they can express p, so that a reader
// learns plainly which cannot; the libraries that only have a budget or a
// throttle are listed when p has one.
func (p Policy) Settings() []Setting {
	rows := p.curveSettings()
	if p.RetryBudget > 0 || p.RetryTokens > 0 || p.RetryCap > 0 {
		for _, l := range []lib{libFinagle, libEnvoy, libFailsafe, libR4j} {
			rows = append(rows, p.extraLibrary(l))
		}
	}
	out := make([]Setting, len(rows))
	for i, r := range rows {
		words, exact := p.limitWords(r)
		if len(words) > 0 {
			r.How = appendBeforeClosest(r.Setting, "; "+strings.Join(words, "; "))
			r.Exact = r.Exact && exact
		}
		out[i] = r.Setting
	}
	return out
}

// appendBeforeClosest appends more to s's How, before its closest setting.
func appendBeforeClosest(s Setting, more string) string {
	if s.Closest == nil {
		return s.How + more
	}
	w := s.Closest.words()
	return strings.TrimSuffix(s.How, w) + more + w
}

// AttemptLimit is the most requests one client of p sends, 0 for no limit:
// MaxAttempts, or fewer where a per-client retry bucket runs dry first (a
// client stops at its first success, so the bucket is never refilled: it
// pays for BucketTokens/BucketCost retries).
func (p Policy) AttemptLimit() int {
	n := p.MaxAttempts
	if p.BucketTokens > 0 && p.BucketCost > 0 {
		b := p.BucketTokens/p.BucketCost + 1
		if n == 0 || b < n {
			n = b
		}
	}
	return n
}

// firstDelay is the mean (and median) delay before p's first retry, and
// growth the ratio of one mean delay to the one before, before the cap:
// what a library's built-in curve is matched on.
func (p Policy) firstDelay() (first time.Duration, growth float64, ok bool) {
	b, m := p.Base.Seconds(), p.Multiplier
	var f float64
	switch p.Kind {
	case Decorrelated, RAIgnore: // U(b, 3b), then E[next] = (b + 3 prev)/2 → 1.5 prev
		f, m = 2*b, 1.5
	case APICore:
		f = b / 2
	case FullJitter:
		f = b * m / 2
	case EqualJitter:
		f = 0.75 * b * m
	case Exponential, WidthJitter:
		f = b * m
	case GRPC:
		f = b
	default:
		return 0, 0, false
	}
	return dur(f), m, true
}

// curveSettings is, for each library that sets a backoff curve, how to set
// p's curve and its attempt limit.
func (p Policy) curveSettings() []row {
	b, c, m, w := p.Base, p.Cap, p.Multiplier, p.Width
	n := p.AttemptLimit()
	capOr := func(def string) string {
		if c == 0 {
			return def
		}
		return c.String()
	}
	halfCap := "1<<62"
	if c != 0 {
		halfCap = (c / 2).String()
	}
	attempts, finite := "no attempt limit", manyAttempts
	if n > 0 {
		attempts, finite = attemptCount(n), n
	}
	tries := "" // cenkalti/backoff's attempt limit
	if n > 0 {
		tries = fmt.Sprintf("; v4: backoff.WithMaxRetries(b, %d); v5: backoff.WithMaxTries(%d)", n-1, n)
	}
	custom := func(l lib, name, hook string) row {
		return row{l, Setting{Library: name, How: "not built in: " + hook + " returning the delays above; " + attempts}}
	}
	retryable := func(cfg string) row {
		return custom(libRetryable, "hashicorp/go-retryablehttp", "set Client.Backoff to a func"+cfg)
	}
	grpcCall := row{libGRPCCall, Setting{Library: "grpc-go (call retries)", How: "not expressible: its retryPolicy draws backoff × (1 ± 20 %) from the first retry; write a retry interceptor returning the delays above"}}
	if p.RetryTokens > 0 {
		grpcCall = p.grpcClosest(finite)
	}
	grpcConn := row{libGRPCConn, Setting{Library: "grpc-go (connection backoff)", How: "reconnects only, does not retry calls"}}
	aws := p.awsSetting(finite)
	polly := p.pollySetting(n)
	switch p.Kind {
	case GRPC:
		if w == 0.2 && c > 0 {
			cfg := &GRPCServiceConfig{Retry: &GRPCRetryPolicy{MaxAttempts: finite, InitialBackoff: b, MaxBackoff: c, BackoffMultiplier: m, RetryableStatusCodes: grpcRetryableCodes}}
			if p.RetryTokens > 0 {
				cfg.Throttling = &GRPCThrottling{MaxTokens: p.RetryTokens, TokenRatio: p.RetryTokenRatio}
			}
			how := "service config: " + cfg.DialOptions()
			if n == 0 {
				how += fmt.Sprintf(" (maxAttempts %d stands for no limit)", manyAttempts)
			}
			grpcCall = row{libGRPCCall, Setting{Library: "grpc-go (call retries)", How: how, Exact: true, GRPC: cfg}}
		}
		return []row{
			{libCenkalti, Setting{Library: "cenkalti/backoff", How: fmt.Sprintf("b := backoff.NewExponentialBackOff(); b.InitialInterval = %v; b.Multiplier = %g; b.RandomizationFactor = %g; b.MaxInterval = %v; v4: b.MaxElapsedTime = 0 (default 15 min); v5: backoff.Retry(ctx, op, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(0))%s", b, m, w, capOr("1<<62"), tries), Exact: true}},
			grpcCall,
			{libGRPCConn, Setting{Library: grpcConn.Library, How: fmt.Sprintf("backoff.Config{BaseDelay: %v, Multiplier: %g, Jitter: %g, MaxDelay: %v} in grpc.ConnectParams: %s, and its first wait is not jittered", b, m, w, capOr("1<<62"), grpcConn.How)}},
			retryable(" (DefaultBackoff has no jitter)"),
			aws,
			polly,
			{libAPICore, Setting{Library: "google-api-core", How: "not exact: Retry draws full jitter U(0, delay)"}},
		}
	case APICore:
		apiTries := ""
		if n > 0 {
			apiTries = fmt.Sprintf("; Retry has no attempt limit: stop after %s yourself", attempts)
		}
		return []row{
			{libAPICore, Setting{Library: "google-api-core (≥ 2.x)", How: fmt.Sprintf("Retry(initial=%g, multiplier=%g, maximum=%g, timeout=None): draws U(0, delay); older releases draw up to 2 × delay%s", b.Seconds(), m, c.Seconds(), apiTries), Exact: c > 0 && n == 0}},
			{libCenkalti, Setting{Library: "cenkalti/backoff", How: fmt.Sprintf("b := backoff.NewExponentialBackOff(); b.InitialInterval = %v; b.Multiplier = %g; b.RandomizationFactor = 1; b.MaxInterval = %v (half the base and cap: factor 1 draws U(0, 2 × interval)); v4: b.MaxElapsedTime = 0; v5: backoff.WithMaxElapsedTime(0)%s", b/2, m, halfCap, tries), Exact: true}},
			grpcCall,
			retryable(""),
			aws,
			polly,
		}
	case FullJitter, WidthJitter, EqualJitter, Exponential, Decorrelated, RAIgnore:
		out := []row{aws}
		if p.Kind == FullJitter {
			out = append(out, row{libCenkalti, Setting{Library: "cenkalti/backoff", How: fmt.Sprintf("b := backoff.NewExponentialBackOff(); b.InitialInterval = %v; b.Multiplier = %g; b.RandomizationFactor = 1; b.MaxInterval = %v (half the first range and the cap: factor 1 draws U(0, 2 × interval)); v4: b.MaxElapsedTime = 0; v5: backoff.WithMaxElapsedTime(0)%s", dur(b.Seconds()*m/2), m, halfCap, tries), Exact: true}})
		} else {
			out = append(out, custom(libCenkalti, "cenkalti/backoff", "a BackOff implementation"))
		}
		return append(out, polly, grpcCall, retryable(""), custom(libAPICore, "google-api-core", "a sleep generator"))
	}
	return []row{{libCenkalti, Setting{Library: "any", How: "see `sweep policies` for its formula and source; " + attempts}}}
}

// awsSetting is aws-sdk-go-v2's retryer for p's curve: the SDK's own
// backoff where it draws p's delays, else a BackoffDelayerFunc of the
// caller's; the quota off unless a limit of p's sets it (limitWords).
func (p Policy) awsSetting(attempts int) row {
	a := &AWSRetry{MaxAttempts: attempts, Custom: true}
	switch {
	case p.BucketTokens > 0: // the per-client bucket, exactly: one retryer per client
		a.MaxAttempts = p.MaxAttempts
		if a.MaxAttempts == 0 {
			a.MaxAttempts = manyAttempts
		}
		a.Quota = &AWSQuota{Tokens: uint(p.BucketTokens), RetryCost: uint(p.BucketCost), ThrottlingRetryCost: uint(p.BucketCost), NoRetryIncrement: 1}
	case p.RetryTokens > 0:
		// gRPC: a retryable failure takes 1 token, a success adds the
		// ratio, no retry while the tokens are ≤ maxTokens/2. The SDK's
		// quota: a retry takes RetryCost tokens if there are that many, a
		// successful retry gives them back, a first attempt that succeeds
		// adds NoRetryIncrement. With a cost of 1/ratio and an increment of
		// 1, a success pays for the same share of a retry, and the quota
		// holds as many retries from full as gRPC lets through.
		// gRPC with maxTokens ≤ 2 lets no retry through, ever.
		if k := grpcRetriesFromFull(p.RetryTokens); k == 0 {
			a.MaxAttempts = 1
		} else {
			cost := awsTokenCost(p.RetryTokenRatio)
			a.Quota = &AWSQuota{Tokens: cost * uint(k), RetryCost: cost, ThrottlingRetryCost: cost, NoRetryIncrement: 1}
		}
	}
	// The SDK draws retry n from U(0, min(x·2^(n−1), MaxBackoff)), x 1 s
	// after a throttling error (a 429) whatever BaseDelay: exactly
	// full jitter from the base (api-core) ×2 from 1 s, or full-jitter
	// whose first range is 1 s.
	first := time.Duration(0)
	switch {
	case p.Kind == APICore && p.Multiplier == 2:
		first = p.Base
	case p.Kind == FullJitter && p.Multiplier == 2:
		first = dur(p.Base.Seconds() * 2)
	}
	exact := first == awsThrottleBase && p.Cap > 0
	how := "not built in: yours, a retry.BackoffDelayerFunc returning the delays above"
	if p.Kind == Decorrelated || p.Kind == RAIgnore {
		how += " (BackoffDelay sees the attempt number, not the call's previous delay that decorrelated jitter draws from: one retryer per call, sharing one RateLimiter)"
	}
	if exact {
		a.Custom, a.BaseDelay, a.MaxBackoff = false, first, p.Cap
		how = "≥ v1.48.0 (retry behaviour 2.1)"
	} else if first > 0 && p.Cap > 0 {
		how += fmt.Sprintf("; its own backoff (o.BaseDelay = %v) starts from 1 s after a 429 whatever BaseDelay", first)
	}
	if attempts == manyAttempts && p.MaxAttempts == 0 && p.BucketTokens == 0 {
		how += fmt.Sprintf("; MaxAttempts %d stands for no limit", manyAttempts)
	}
	return row{libAWS, Setting{Library: "aws-sdk-go-v2", How: a.Go() + ": " + how, Exact: exact, AWS: a}}
}

// pollySetting is Polly v8's retry strategy for p's curve: C# for a
// DelayGenerator where the built-in options cannot draw p's delays, and
// the closest built-in setting (decorrelated jitter V2, BackoffType
// Exponential with UseJitter), which the caller can measure. A policy with
// a budget, throttle or cap, which Polly has not, gets no closest setting.
func (p Policy) pollySetting(n int) row {
	retries := "int.MaxValue"
	if n > 0 {
		retries = fmt.Sprint(n - 1) // MaxRetryAttempts: "in addition to the original call"
	}
	code, ok := p.pollyDelayGenerator()
	if !ok {
		return row{libPolly, Setting{Library: "Polly v8", How: "not built in: RetryStrategyOptions.DelayGenerator returning the delays above, MaxRetryAttempts = " + retries}}
	}
	s := Setting{Library: "Polly v8", How: "not built in: `" + code + " options.MaxRetryAttempts = " + retries + ";`"}
	if f, _, ok := p.firstDelay(); ok && !p.hasExtras() {
		c := Policy{Kind: PollyV2, Base: f, Cap: p.Cap, MaxAttempts: n}
		capWord := "none"
		if p.Cap > 0 {
			capWord = p.Cap.String()
		}
		s.Closest = &Closest{How: fmt.Sprintf("BackoffType = Exponential, UseJitter = true, Delay = %v, MaxDelay = %s, MaxRetryAttempts = %s (decorrelated jitter V2)", f, capWord, retries), Policy: c.Normalize()}
		s.How += s.Closest.words()
	}
	return row{libPolly, s}
}

// hasExtras reports whether p has a limit or component besides its curve
// and its attempt limit.
func (p Policy) hasExtras() bool {
	return p.RetryBudget > 0 || p.RetryTokens > 0 || p.RetryCap > 0 || p.otherComponents() || p.MaxElapsed > 0 || p.RetryOn != RetryOnAny
}

// otherComponents reports whether p has a client component no library
// setting here writes out (`sweep policies` names the library of each).
func (p Policy) otherComponents() bool {
	return p.ThrottleK > 0 || p.AWSAdaptive || p.Pushback || p.BreakerRatio > 0
}

// grpcClosest is grpc-go's setting for a policy with gRPC retry throttling:
// the throttling acts on grpc-go's own retries only (stream.go
// shouldRetry), so the curve must be its retryPolicy's; where p's is not,
// the closest retryPolicy with the same mean first delay and growth.
func (p Policy) grpcClosest(attempts int) row {
	s := Setting{Library: "grpc-go (call retries)", How: "not exact: retryThrottling acts on grpc-go's own retries only, and its retryPolicy draws backoff × (1 ± 20 %) from the first retry: an interceptor drawing the delays above would bypass the throttling"}
	f, g, ok := p.firstDelay()
	if !ok || p.Cap == 0 || p.RetryBudget > 0 || p.RetryCap > 0 || p.otherComponents() {
		s.How = "not expressible: retryThrottling acts on grpc-go's own retries only, whose retryPolicy cannot draw the delays above"
		return row{libGRPCCall, s}
	}
	cfg := &GRPCServiceConfig{Retry: &GRPCRetryPolicy{MaxAttempts: attempts, InitialBackoff: f, MaxBackoff: p.Cap, BackoffMultiplier: g, RetryableStatusCodes: grpcRetryableCodes},
		Throttling: &GRPCThrottling{MaxTokens: p.RetryTokens, TokenRatio: p.RetryTokenRatio}}
	c := Policy{Kind: GRPC, Base: f, Multiplier: g, Cap: p.Cap, Width: 0.2, MaxAttempts: attempts,
		RetryTokens: p.RetryTokens, RetryTokenRatio: p.RetryTokenRatio, ClientsPerProcess: p.ClientsPerProcess}
	s.GRPC = cfg
	s.Closest = &Closest{How: "service config: " + cfg.DialOptions(), Policy: c.Normalize()}
	s.How += s.Closest.words()
	return row{libGRPCCall, s}
}

// extraLibrary is a library listed for its budget, throttle or cap: its
// curve, which this tool does not write out for it.
func (p Policy) extraLibrary(l lib) row {
	switch l {
	case libFinagle:
		return row{l, Setting{Library: "Finagle", How: "backoff: not built in: every Finagle Backoff waits exactly its start before the first retry, and Backoff.decorrelatedJittered draws U(prev, 3 × prev), never shorter than the last (com/twitter/finagle/Backoff.scala); a Backoff of the delays above"}}
	case libEnvoy:
		if p.Kind == APICore && p.Multiplier == 2 && p.Cap > 0 {
			n := p.AttemptLimit()
			if n == 0 {
				n = manyAttempts
			}
			return row{l, Setting{Library: "Envoy", Exact: p.AttemptLimit() > 0, How: fmt.Sprintf("retry_policy: {retry_on: \"5xx,retriable-status-codes\", retriable_status_codes: [429], num_retries: %d, retry_back_off: {base_interval: %s, max_interval: %s}} (JitteredExponentialBackOffStrategy: U(0, base × 2^(n−1)) capped)",
				n-1, protoDuration(p.Base), protoDuration(p.Cap))}}
		}
		return row{l, Setting{Library: "Envoy", How: "backoff: not expressible: retry_back_off draws U(0, base_interval × 2^(n−1)) up to max_interval"}}
	case libFailsafe:
		return row{l, Setting{Library: "failsafe-go v0.9.8", How: "backoff: not built in: retrypolicy.NewBuilder().WithDelayFunc(a func returning the delays above)"}}
	}
	return row{l, Setting{Library: "Resilience4j", How: "backoff: not built in: RetryConfig.custom().intervalBiFunction(returning the delays above)"}}
}

// limitWords is what library r says of p's budget, gRPC throttling,
// per-client retry quota, cap on outstanding retries and other
// components, and whether it expresses them all exactly. It fills r's
// payloads where the library reads them.
func (p Policy) limitWords(r row) ([]string, bool) {
	var words []string
	exact := true
	say := func(ok bool, format string, args ...any) {
		words = append(words, fmt.Sprintf(format, args...))
		exact = exact && ok
	}
	scope := "one for the whole fleet (a shared proxy)"
	shared := "shared by the whole fleet"
	if p.ClientsPerProcess > 0 {
		scope = fmt.Sprintf("one per process of %d clients", p.ClientsPerProcess)
		shared = fmt.Sprintf("shared by the %d clients of a process", p.ClientsPerProcess)
	}
	if p.RetryBudget > 0 {
		ok, w := p.budgetWords(r.lib, scope, shared)
		say(ok, "%s", w)
	}
	if p.RetryTokens > 0 {
		ok, w := p.tokenWords(r, shared)
		say(ok, "%s", w)
	}
	if p.BucketTokens > 0 {
		if r.lib == libAWS {
			say(true, "the retry quota above is the %d-token bucket at %d a retry, one retryer per client", p.BucketTokens, p.BucketCost)
		} else {
			say(true, "a %d-token retry quota at %d a retry, one per client, is the attempt limit above", p.BucketTokens, p.BucketCost)
		}
	}
	if p.RetryCap > 0 {
		if r.lib == libEnvoy {
			say(true, "at most %d retries outstanding: circuit_breakers: {thresholds: [{max_retries: %d}]}, %s (one Envoy)", p.RetryCap, p.RetryCap, scope)
		} else {
			say(false, "no cap on retries outstanding (Envoy's max_retries has one)")
		}
	}
	if cs := p.otherWords(); len(cs) > 0 {
		say(false, "plus %s (`sweep policies` names the library that has each)", strings.Join(cs, ", "))
	}
	return words, exact
}

// otherWords names p's components that no setting here writes out.
func (p Policy) otherWords() []string {
	q := p
	q.RetryBudget, q.BudgetMinRPS, q.RetryTokens, q.RetryTokenRatio, q.RetryCap = 0, 0, 0, 0, 0
	ws := q.componentWords()
	if len(ws) > 0 && strings.HasPrefix(ws[len(ws)-1], "per process of") {
		ws = ws[:len(ws)-1]
		if q.otherComponents() {
			ws[len(ws)-1] += fmt.Sprintf(" (per process of %d clients)", p.ClientsPerProcess)
		}
	}
	return ws
}

// budgetWords is what library l says of p's retry budget: retries over
// the last 10 s at most RetryBudget × requests + BudgetMinRPS × 10.
func (p Policy) budgetWords(l lib, scope, shared string) (bool, string) {
	what := fmt.Sprintf("the retry budget (%g %% of requests + %g/s over 10 s, %s)", 100*p.RetryBudget, p.BudgetMinRPS, scope)
	switch l {
	case libFinagle:
		// RetryBudget.scala: deposits of 1000 per request and withdrawals of
		// 1000/percentCanRetry per retry, both expiring after ttl, plus a
		// reserve of minRetriesPerSec × ttl retries.
		whole := p.BudgetMinRPS == math.Trunc(p.BudgetMinRPS)
		w := 1000 / p.RetryBudget
		exact := whole && w == math.Trunc(w)
		s := fmt.Sprintf("%s: RetryBudget(ttl = 10.seconds, minRetriesPerSec = %d, percentCanRetry = %g), %s (.withRetryBudget(budget) on the client they share)", what, int(p.BudgetMinRPS), p.RetryBudget, shared)
		if !whole {
			s += fmt.Sprintf("; not exact: minRetriesPerSec is an Int, %g cannot be set", p.BudgetMinRPS)
		} else if !exact {
			s += fmt.Sprintf("; not exact: a retry withdraws ⌊1000/%g⌋ = %d tokens", p.RetryBudget, int(w))
		}
		return exact, s
	case libEnvoy:
		return false, what + ": not expressible: Envoy's retry_budget {budget_percent, min_retry_concurrency} caps the retries outstanding at max(budget_percent % of the active requests, min_retry_concurrency), a concurrency, not retries per 10 s (resource_manager_impl.h RetryBudgetImpl)"
	case libFailsafe:
		return false, what + ": not expressible: its budget (retrypolicy WithBudget(budget.NewBuilder().WithMaxRate(r).WithMinConcurrency(n).Build())) caps the retries in flight at r of the executions in flight, a concurrency as Envoy's, not retries per 10 s (budget/budget.go)"
	case libR4j:
		return false, what + ": not expressible: Resilience4j's Retry has no retry budget (resilience4j issue #172)"
	case libGRPCCall:
		return false, what + ": not expressible: retryThrottling counts failures against successes (a token bucket), not retries against requests over 10 s"
	case libAWS:
		return false, what + ": not expressible: the retry quota (RateLimiter, RetryCost) is a token bucket that successes refill, not retries against requests over 10 s"
	case libPolly:
		return false, what + ": not built in: Polly v8 has no retry budget (Polly.RateLimiting limits every execution, first attempts too)"
	}
	return false, what + ": not expressible: no retry budget"
}

// tokenWords is what library r says of p's gRPC retry throttling.
func (p Policy) tokenWords(r row, shared string) (bool, string) {
	what := fmt.Sprintf("gRPC retry throttling (%g tokens, ratio %g)", p.RetryTokens, p.RetryTokenRatio)
	switch r.lib {
	case libGRPCCall:
		if r.GRPC == nil || r.GRPC.Throttling == nil {
			return false, what + ": see above"
		}
		return true, fmt.Sprintf("%s: retryThrottling in the service config, which grpc-go keeps per channel (grpc.ClientConn): one channel %s", what, shared)
	case libAWS:
		if p.BucketTokens > 0 {
			return false, what + ": not expressible beside the per-client retry quota"
		}
		if grpcRetriesFromFull(p.RetryTokens) == 0 {
			return true, what + fmt.Sprintf(": with maxTokens ≤ 2 it lets no retry through, as MaxAttempts = 1 above; one retryer %s", shared)
		}
		return false, fmt.Sprintf("%s: the retry quota above works alike, not exactly: one retryer %s, %d retries from full and one more per %d successes, but a refused retry takes nothing and a successful retry gives its cost back, where gRPC takes a token for every retryable failure",
			what, shared, grpcRetriesFromFull(p.RetryTokens), awsTokenCost(p.RetryTokenRatio))
	case libFinagle:
		return false, what + ": not expressible: RetryBudget counts retries against requests, not failures against successes"
	case libPolly:
		return false, what + ": not built in: Polly v8 has no retry throttling"
	}
	return false, what + ": not expressible: no retry throttling"
}

// awsTokenCost is the retry cost of the AWS quota standing for gRPC's
// token ratio r: one retry per 1/r successes.
func awsTokenCost(r float64) uint { return uint(math.Max(1, math.Round(1/r))) }

// grpcRetriesFromFull is how many retries gRPC's throttling lets through
// from full tokens while every attempt fails: the k-th failure leaves
// maxTokens − k tokens, and a retry needs more than maxTokens/2.
func grpcRetriesFromFull(maxTokens float64) int {
	k := 0
	for maxTokens-float64(k+1) > maxTokens/2 {
		k++
	}
	return k
}
