package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Policy is a client's retry policy as configured: a family (Kind) and its
// parameters. Parameters a family does not use must be zero; Normalize
// clears them and fills the family's defaults.
type Policy struct {
	Kind Kind

	Base       time.Duration // base delay: the first interval or the unit of growth, > 0
	Cap        time.Duration // longest computed delay; 0 = no cap, else ≥ Base
	Multiplier float64       // growth per failure (watchdog, http-retry: 1 = fixed); ≥ 1
	Width      float64       // jitter width as a fraction of the delay, in [0, 1]

	// MaxAttempts is the most requests one client sends, the first included;
	// after that many rejections it gives up. 0 = unlimited.
	MaxAttempts int

	// HonorRetryAfter makes http-retry wait exactly the server's Retry-After
	// instead of its computed delay when the response carries one.
	HonorRetryAfter bool

	// Client-side limits; each off at zero. A client that hits one gives up.

	// RetryOn: which rejections the client retries (RetryOnValues); on any
	// other it gives up. "" (or "any") retries every one.
	RetryOn RetryOn

	// MaxElapsed: no retry whose wait would end later than this after the
	// client's first request (cenkalti/backoff's MaxElapsedTime).
	MaxElapsed time.Duration
	// BucketTokens and BucketCost: a per-client retry token bucket (the AWS
	// SDK's retry quota). A retry takes BucketCost tokens and is not made
	// without them; a client stops at its first success, so refunds never
	// come into play here.
	BucketTokens, BucketCost int
	// RetryBudget: retries may be at most this fraction of the requests the
	// fleet sent in the last 10 s, plus BudgetMinRPS·10 (Finagle's
	// RetryBudget: percentCanRetry, minRetriesPerSec, ttl 10 s).
	RetryBudget  float64
	BudgetMinRPS float64

	// Client components (components.go), each off at zero; a client that
	// one refuses a retry gives up, a request one refuses locally is a
	// failure its backoff answers.

	// ClientsPerProcess groups the clients, by index, into processes that
	// each keep one state per component (and one retry budget when set);
	// 0 = the whole fleet is one process (a shared proxy or limiter).
	ClientsPerProcess int
	// ThrottleK and ThrottleWindow: the SRE book's adaptive throttling,
	// refusing locally with probability max(0, (requests − K·accepts) /
	// (requests + 1)) over the window (2 min when 0).
	ThrottleK      float64
	ThrottleWindow time.Duration
	// AWSAdaptive: the AWS SDKs' adaptive retry mode's rate limiter, a
	// token bucket whose rate follows CUBIC after throttling responses.
	AWSAdaptive bool
	// RetryTokens and RetryTokenRatio: gRPC's retryThrottling (maxTokens,
	// tokenRatio).
	RetryTokens, RetryTokenRatio float64
	// Pushback: with a Retry-After, wait exactly it and restart the
	// backoff (gRPC's server pushback).
	Pushback bool
	// RetryCap: Envoy's max_retries circuit breaker, the most retries
	// outstanding per process.
	RetryCap int
	// A circuit breaker per process: it opens when at least BreakerRatio of
	// at least BreakerMinThroughput requests in BreakerWindow failed, for
	// BreakerBreak (defaults: Polly v8's 100, 30 s, 5 s).
	BreakerRatio         float64
	BreakerMinThroughput int
	BreakerWindow        time.Duration
	BreakerBreak         time.Duration

	// Preset names the library whose defaults this is ("" for none); it
	// labels the policy and does not change what it does.
	Preset string
}

// Kind names a policy family. Names are stable: they are dataset values.
type Kind string

// The policy families. Families lists them with their formulas.
const (
	Fixed         Kind = "fixed"
	Exponential   Kind = "exponential"
	FullJitter    Kind = "full-jitter"
	EqualJitter   Kind = "equal-jitter"
	Decorrelated  Kind = "decorrelated"
	WidthJitter   Kind = "width-jitter"
	RAExact       Kind = "ra-exact"
	RAFullJitter  Kind = "ra-full-jitter"
	RALowerBound  Kind = "ra-lower-bound"
	RAIgnore      Kind = "ra-ignore"
	ArticleClient Kind = "article-client"
	GRPC          Kind = "grpc"
	GRPCGo        Kind = "grpc-go"
	APICore       Kind = "api-core"
	AWSStandard   Kind = "aws-standard"
	PollyV2       Kind = "polly-v2"
	WatchDog      Kind = "watchdog"
	HTTPRetry     Kind = "http-retry"
	AWS2026       Kind = "aws-2026"
	URLLib3       Kind = "urllib3-retry"
	Resilience4j  Kind = "resilience4j-random"
	K8sWait       Kind = "k8s-wait"
	SgcPM         Kind = "sgc-pm"
)

// param is a set of Policy fields a family reads.
type param uint8

const (
	pBase param = 1 << iota
	pCap
	pMultiplier
	pWidth
	pHonor
)

// Family describes one policy family for people: `sweep policies` prints it.
type Family struct {
	Kind    Kind
	Title   string // a short name, as the article's tables say it
	Formula string // the delay after the n-th rejection (n = 1 on the first)
	Params  []string
	Source  string // where the family comes from
	Note    string // what a user should know beyond the formula
}

// family is the one place a policy family is defined.
type family struct {
	Family
	uses     param
	defaults Policy // filled in where the configured value is zero
	build    func(p Policy) delayer
	// ra says when the family's waits read the server's Retry-After: the
	// one owner of that fact (Policy.ReadsRetryAfter).
	ra raUse
	// bounds gives the least and the greatest delay (ms) the family may
	// return for a normalized p, a Retry-After ra (0 = none) and whether the
	// server is up; CheckPolicy holds every family to it.
	bounds func(p Policy, ra float64, up bool) (lo, hi float64)
	// band says how wide its jitter is for a width: a band width·d wide
	// centred on d (±width/2, the second source's words for its Jitter)
	// rather than ±width: the one owner of that fact (Policy.JitterFraction,
	// Kind.WidthOf).
	band bool
}

// raUse says when a family's waits read the server's Retry-After.
type raUse uint8

const (
	raNever     raUse = iota
	raAlways          // whenever a response carries one (the article's table 4)
	raWithHonor       // with honor_retry_after (the family reads pHonor)
)

// ReadsRetryAfter reports whether p's waits depend on the server's
// Retry-After: its family reads it (always, or with honor_retry_after), or
// gRPC's server pushback waits it; a client that never retries reads
// nothing. It is the one owner of the fact: the
// analysis, recommend's notes and the report's table 5 ask it, and
// TestReadsRetryAfterAsTheSimulatorDoes holds it to what runs do. (retry_on
// values that retry only a response with a Retry-After look at whether
// there is one, not at its value: they do not make a policy read it.)
func (p Policy) ReadsRetryAfter() bool {
	f, ok := lookup(p.Kind)
	if !ok || p.MaxAttempts == 1 { // one attempt: it never waits at all
		return false
	}
	switch f.ra {
	case raAlways:
		return true
	case raWithHonor:
		if p.HonorRetryAfter {
			return true
		}
	}
	return p.Pushback
}

// delayer computes a rejected client's next wait in milliseconds and keeps
// the client's memory (prev) up to date. It must draw from rng only in a fixed
// order and never allocate: it runs once per rejection.
type delayer interface {
	delay(c *client, r response, rng *Mulberry32) float64
}

// response is what a rejected client learns from the server.
type response struct {
	retryAfter float64 // ms; 0 = no Retry-After header
	up         bool    // the server had recovered (a 429), or not (a 503)
	noAnswer   bool    // a queueing server's timeout: no response at all
	local      bool    // refused by the client's own components: never sent
	index      int32   // the client's index, which stands for its install id
	tick       int32   // the tick of the rejection
}

// giveUp is what a delayer returns for a client that stops retrying.
const giveUp = -1

// Families returns every policy family in a stable order.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = f.Family
		out[i].Params = f.paramNames()
	}
	return out
}

// Kinds returns the names of every family, in the order of Families.
func Kinds() []Kind {
	out := make([]Kind, len(families))
	for i, f := range families {
		out[i] = f.Kind
	}
	return out
}

// lookup returns family k by value: the table is never written after
// init, so that runs and tests on other goroutines may read it at once (a
// test that swapped a family's bounds through a pointer raced with every
// parallel test that read them).
func lookup(k Kind) (family, bool) {
	for i := range families {
		if families[i].Kind == k {
			return families[i], true
		}
	}
	return family{}, false
}

func kindList() string {
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = string(f.Kind)
	}
	return strings.Join(names, ", ")
}

func (f *family) paramNames() []string {
	var ps []string
	for _, x := range []struct {
		p    param
		name string
	}{{pBase, "base"}, {pCap, "cap"}, {pMultiplier, "multiplier"}, {pWidth, "width"}, {pHonor, "honor_retry_after"}} {
		if f.uses&x.p != 0 {
			ps = append(ps, x.name)
		}
	}
	return append(ps, "max_attempts")
}

// DefaultPolicy returns family k with its usual parameters: those of the
// source it comes from (the article's base 1 s and cap 60 s, the second
// source's documented defaults). An unknown k gives Policy{Kind: k}.
func DefaultPolicy(k Kind) Policy {
	f, ok := lookup(k)
	if !ok {
		return Policy{Kind: k}
	}
	p := f.defaults
	p.Kind = k
	return p
}

// Normalize returns p with the parameters its family does not read cleared,
// so that two policies that behave the same compare equal, and with Base and
// Multiplier taken from the family's defaults where they are zero (zero is
// never valid for them). Cap and MaxAttempts are kept as given: there, zero
// means "none". An unknown Kind is returned unchanged.
func (p Policy) Normalize() Policy {
	f, ok := lookup(p.Kind)
	if !ok {
		return p
	}
	d := f.defaults
	q := Policy{Kind: p.Kind, MaxAttempts: p.MaxAttempts, RetryOn: p.RetryOn, MaxElapsed: p.MaxElapsed, BucketTokens: p.BucketTokens,
		BucketCost: p.BucketCost, RetryBudget: p.RetryBudget, BudgetMinRPS: p.BudgetMinRPS, Preset: p.Preset}
	q.normalizeComponents(p)
	if q.RetryOn == retryOnAnyName {
		q.RetryOn = RetryOnAny
	}
	if q.BucketTokens > 0 && q.BucketCost == 0 {
		q.BucketCost = 5 // the AWS SDK's retry cost
	}
	if f.uses&pBase != 0 {
		q.Base = or(p.Base, d.Base)
	}
	if f.uses&pCap != 0 {
		q.Cap = p.Cap
	}
	if f.uses&pMultiplier != 0 {
		q.Multiplier = p.Multiplier
		if q.Multiplier == 0 {
			q.Multiplier = d.Multiplier
		}
	}
	if f.uses&pWidth != 0 {
		q.Width = p.Width
	}
	if f.uses&pHonor != 0 {
		q.HonorRetryAfter = p.HonorRetryAfter
	}
	return q
}

func or(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// MaxBucket bounds Policy.BucketTokens and BucketCost.
const MaxBucket = 1_000_000_000

// Validate reports every parameter out of range, in one error: an unknown
// family alone, else the family's parameters, the limits, then the client
// components, each in field order.
func (p Policy) Validate() error {
	f, ok := lookup(p.Kind)
	if !ok {
		return &FieldError{FieldKind, fmt.Sprintf("%q", p.Kind), "one of " + kindList()}
	}
	errs := p.validateFamilyParams(f)
	errs = append(errs, p.validateLimits()...)
	errs = append(errs, p.validateComponents()...)
	return errors.Join(errs...)
}

// fieldErrs collects the faults of a validation that reports every one,
// in the order it finds them.
type fieldErrs []error

// add records that field's value v is out of range, and what would be
// accepted.
func (e *fieldErrs) add(field Field, v any, want string) {
	*e = append(*e, &FieldError{field, v, want})
}

// check records err, if it is one.
func (e *fieldErrs) check(err error) {
	if err != nil {
		*e = append(*e, err)
	}
}

// validateFamilyParams reports the parameters only some families read
// (Base, Cap, Multiplier, Width, HonorRetryAfter) out of range: within
// their bounds where family f reads them, zero where it does not.
func (p Policy) validateFamilyParams(f family) fieldErrs {
	var errs fieldErrs
	unread := func(field Field, v any) { errs.add(field, v, fmt.Sprintf("0: %s does not read it", p.Kind)) }
	if f.uses&pBase != 0 {
		errs.check(wholeMS(FieldBase, p.Base, time.Millisecond))
	} else if p.Base != 0 {
		unread(FieldBase, p.Base)
	}
	if f.uses&pCap != 0 {
		if err := wholeMS(FieldCap, p.Cap, 0); err != nil {
			errs.check(err)
		} else if p.Cap != 0 && p.Cap < p.Base {
			errs.add(FieldCap, p.Cap, fmt.Sprintf("0 (no cap) or at least Base (%v)", p.Base))
		}
	} else if p.Cap != 0 {
		unread(FieldCap, p.Cap)
	}
	if f.uses&pMultiplier != 0 {
		if !(p.Multiplier >= 1 && p.Multiplier <= 100) {
			errs.add(FieldMultiplier, p.Multiplier, "a number in [1, 100]")
		}
	} else if p.Multiplier != 0 {
		unread(FieldMultiplier, p.Multiplier)
	}
	if f.uses&pWidth != 0 {
		if !(p.Width >= 0 && p.Width <= 1) {
			errs.add(FieldWidth, p.Width, "a fraction in [0, 1]")
		}
	} else if p.Width != 0 {
		unread(FieldWidth, p.Width)
	}
	if f.uses&pHonor == 0 && p.HonorRetryAfter {
		errs.add(FieldHonorRetryAfter, true, fmt.Sprintf("false: %s does not read it", p.Kind))
	}
	return errs
}

// validateLimits reports the limits on giving up out of range: attempts,
// which rejections are retried, elapsed time, the token bucket and the
// fleet's retry budget.
func (p Policy) validateLimits() fieldErrs {
	var errs fieldErrs
	if p.MaxAttempts < 0 || p.MaxAttempts > math.MaxInt32 {
		errs.add(FieldMaxAttempts, p.MaxAttempts, "0 (unlimited) or a whole number ≥ 1")
	}
	if !p.RetryOn.known() && p.RetryOn != retryOnAnyName {
		errs.add(FieldRetryOn, string(p.RetryOn), "one of "+retryOnList())
	}
	errs.check(wholeMS(FieldMaxElapsed, p.MaxElapsed, 0))
	if p.BucketTokens < 0 || p.BucketTokens > MaxBucket {
		errs.add(FieldBucketTokens, p.BucketTokens, fmt.Sprintf("0 (no bucket) or a whole number of tokens ≤ %d", MaxBucket))
	}
	if p.BucketCost < 0 || p.BucketCost > MaxBucket || (p.BucketTokens > 0 && p.BucketCost == 0) {
		errs.add(FieldBucketCost, p.BucketCost, fmt.Sprintf("a whole number of tokens ≤ %d, ≥ 1 when there are BucketTokens", MaxBucket))
	}
	if !(p.RetryBudget >= 0 && p.RetryBudget <= 10) {
		errs.add(FieldRetryBudget, p.RetryBudget, "a fraction of requests in [0, 10]")
	}
	if !(p.BudgetMinRPS >= 0 && p.BudgetMinRPS <= 1e6) || (p.BudgetMinRPS > 0 && p.RetryBudget == 0) {
		errs.add(FieldBudgetMinRPS, p.BudgetMinRPS, "retries/s ≥ 0, with a RetryBudget")
	}
	return errs
}

// String names the policy with its parameters, e.g.
// "decorrelated base=1s cap=1m0s".
func (p Policy) String() string {
	var b strings.Builder
	b.WriteString(string(p.Kind))
	if p.Base != 0 {
		fmt.Fprintf(&b, " base=%v", p.Base)
	}
	if p.Cap != 0 {
		fmt.Fprintf(&b, " cap=%v", p.Cap)
	}
	if p.Multiplier != 0 {
		fmt.Fprintf(&b, " multiplier=%g", p.Multiplier)
	}
	if p.Width != 0 {
		fmt.Fprintf(&b, " width=%g", p.Width)
	}
	if p.HonorRetryAfter {
		b.WriteString(" honor_retry_after")
	}
	if p.MaxAttempts != 0 {
		fmt.Fprintf(&b, " max_attempts=%d", p.MaxAttempts)
	}
	if p.RetryOn != RetryOnAny {
		fmt.Fprintf(&b, " retry_on=%s", p.RetryOn)
	}
	if p.MaxElapsed != 0 {
		fmt.Fprintf(&b, " max_elapsed=%v", p.MaxElapsed)
	}
	if p.BucketTokens != 0 {
		fmt.Fprintf(&b, " bucket=%d/%d", p.BucketTokens, p.BucketCost)
	}
	if p.RetryBudget != 0 {
		fmt.Fprintf(&b, " retry_budget=%g+%g/s", p.RetryBudget, p.BudgetMinRPS)
	}
	if p.ClientsPerProcess != 0 {
		fmt.Fprintf(&b, " clients_per_process=%d", p.ClientsPerProcess)
	}
	if p.ThrottleK != 0 {
		fmt.Fprintf(&b, " throttle=%g/%v", p.ThrottleK, p.ThrottleWindow)
	}
	if p.AWSAdaptive {
		b.WriteString(" aws_adaptive")
	}
	if p.RetryTokens != 0 {
		fmt.Fprintf(&b, " retry_tokens=%g/%g", p.RetryTokens, p.RetryTokenRatio)
	}
	if p.Pushback {
		b.WriteString(" pushback")
	}
	if p.RetryCap != 0 {
		fmt.Fprintf(&b, " retry_cap=%d", p.RetryCap)
	}
	if p.BreakerRatio != 0 {
		fmt.Fprintf(&b, " breaker=%g/%d/%v/%v", p.BreakerRatio, p.BreakerMinThroughput, p.BreakerWindow, p.BreakerBreak)
	}
	if p.Preset != "" {
		fmt.Fprintf(&b, " (%s)", p.Preset)
	}
	return b.String()
}

// Describe says what the policy does in words a user can act on, e.g.
// "decorrelated jitter, base 1s, cap 1m0s".
func (p Policy) Describe() string {
	f, ok := lookup(p.Kind)
	if !ok {
		return string(p.Kind)
	}
	parts := []string{f.Title}
	if p.Preset != "" {
		parts = []string{p.Preset + " defaults (" + f.Title + ")"}
	}
	if p.Base != 0 {
		parts = append(parts, "base "+p.Base.String())
	}
	if f.uses&pCap != 0 {
		if p.Cap == 0 {
			parts = append(parts, "no cap")
		} else {
			parts = append(parts, "cap "+p.Cap.String())
		}
	}
	if f.uses&pMultiplier != 0 {
		parts = append(parts, fmt.Sprintf("×%g", p.Multiplier))
	}
	if f.uses&pWidth != 0 {
		parts = append(parts, fmt.Sprintf("jitter %g", p.Width))
	}
	if p.HonorRetryAfter {
		parts = append(parts, "honours Retry-After")
	}
	if p.MaxAttempts != 0 {
		parts = append(parts, "at most "+attemptCount(p.MaxAttempts))
	}
	if p.RetryOn != RetryOnAny {
		parts = append(parts, "retries "+p.RetryOn.means())
	}
	if p.MaxElapsed != 0 {
		parts = append(parts, "gives up after "+p.MaxElapsed.String())
	}
	if p.BucketTokens != 0 {
		parts = append(parts, fmt.Sprintf("token bucket %d (cost %d)", p.BucketTokens, p.BucketCost))
	}
	if p.RetryBudget != 0 && p.ClientsPerProcess == 0 { // per process: one of componentWords
		parts = append(parts, fmt.Sprintf("retry budget %g%% + %g/s", 100*p.RetryBudget, p.BudgetMinRPS))
	}
	parts = append(parts, p.componentWords()...)
	return strings.Join(parts, ", ")
}

// unlimited reports whether p has none of the client-side limits beyond
// MaxAttempts.
func (p Policy) unlimited() bool {
	return p.RetryOn == RetryOnAny && p.MaxElapsed == 0 && p.BucketTokens == 0 && p.RetryBudget == 0 && !p.componentsOn()
}

func (p Policy) compile() delayer {
	f, ok := lookup(p.Kind)
	if !ok {
		panic("sim: compile of unknown policy " + string(p.Kind))
	}
	return f.build(p)
}
