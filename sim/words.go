package sim

import (
	"fmt"
	"strings"
	"time"
)

// Plain says what the policy does in library-neutral words an engineer can
// implement: when the first retry happens, how the delay grows, its cap,
// the jitter as ± percent of the delay, and the limits. For example
// "exponential backoff: first retry after 1s, ×2 per attempt, at most 1m0s,
// uniform jitter ±50 %, no attempt limit".
func (p Policy) Plain() string {
	s, ok := p.backoffWords()
	if !ok {
		s = p.libraryWords()
	}
	if p.MaxAttempts == 1 { // its delays never come into play
		s = "no retries: one attempt, every failure goes back to the caller"
	}
	if s0 := s; p.Preset != "" {
		s = p.Preset + "'s defaults"
		if sc := p.PresetScope(); sc != "" {
			s += " (" + sc + ")"
		}
		s += ": " + s0
	}
	if p.MaxAttempts == 1 {
		return s
	}
	return s + limitWords(p)
}

// backoffWords says Plain's words for the delays of the generic families
// (fixed, exponential, full-, equal- and width-jitter, decorrelated and
// ra-ignore); ok is false for any other.
func (p Policy) backoffWords() (s string, ok bool) {
	switch p.Kind {
	case Fixed:
		return fmt.Sprintf("fixed interval: retry every %v, no jitter", p.Base), true
	case Exponential:
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, no jitter", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap)), true
	case FullJitter:
		return fmt.Sprintf("exponential backoff with full jitter: first retry after U(0, %v), the range ×%g per attempt%s", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap)), true
	case EqualJitter:
		d := p.Base.Seconds() * p.Multiplier
		return fmt.Sprintf("exponential backoff with equal jitter: first retry after %v to %v (d/2 + U(0, d/2), d = %v), d ×%g per attempt%s", dur(d/2), dur(d), dur(d), p.Multiplier, capWords(p.Cap)), true
	case WidthJitter:
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s (applied after the cap)", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap), Percent(p.Width)), true
	case Decorrelated, RAIgnore:
		return fmt.Sprintf("decorrelated jitter: first retry after U(%v, %v), then each delay drawn from U(%v, max(%v, 3 × the previous delay))%s", p.Base, 3*p.Base, p.Base, 2*p.Base, capWords(p.Cap)), true
	}
	return "", false
}

// libraryWords says Plain's words for the delays of the families that
// follow a library's code, and Describe's for any other family.
func (p Policy) libraryWords() string {
	switch p.Kind {
	case GRPC:
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s (applied after the cap)", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.Width))
	case GRPCGo:
		return fmt.Sprintf("exponential backoff: first retry after exactly %v, then ×%g per attempt%s, uniform jitter %s from the second retry", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.Width))
	case APICore:
		return fmt.Sprintf("exponential backoff with full jitter: first retry after U(0, %v), the range ×%g per attempt%s", p.Base, p.Multiplier, capWords(p.Cap))
	case AWSStandard:
		return fmt.Sprintf("exponential backoff with full jitter: retry n after U(0, %v × 2^n)%s, then exactly the cap (no jitter)", p.Base, capWords(p.Cap))
	case PollyV2:
		return fmt.Sprintf("Polly's decorrelated jitter V2 with a median first retry of %v%s", p.Base, capWords(p.Cap)) + p.replacesDelay()
	case WatchDog, HTTPRetry:
		if p.Multiplier == 1 {
			return fmt.Sprintf("fixed interval: retry every %v, jitter %s", p.Base, Percent(p.JitterFraction())) + p.replacesDelay()
		}
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.JitterFraction())) + p.replacesDelay()
	case AWS2026:
		s := fmt.Sprintf("exponential backoff with full jitter: retry n after U(0, %v × 2^(n−1)) after a 503, U(0, %v × 2^(n−1)) after a 429%s, the cap before the jitter", p.Base, awsThrottleBase, capWords(p.Cap))
		if p.HonorRetryAfter {
			s += "; a Retry-After is followed within [the delay, the delay + 5s]"
		}
		return s
	case URLLib3:
		return fmt.Sprintf("exponential backoff: first retry at once, retry n after %v × 2^(n−1) plus U(0, %v)%s", p.Base, dur(p.Base.Seconds()*p.Width), capWords(p.Cap)) + p.replacesDelay()
	case Resilience4j:
		s := fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt in whole ms, uniform jitter %s%s", p.Base, p.Multiplier, Percent(p.Width), capWords(p.Cap))
		if p.Cap != 0 {
			s += " (applied after the jitter)"
		}
		return s
	case K8sWait:
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, lengthened by U(0, %s) of the delay", p.Base, p.Multiplier, capWords(p.Cap), strings.TrimPrefix(Percent(p.Width), "±"))
	case SgcPM:
		return fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s (applied after the cap)", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.Width)) + p.replacesDelay()
	}
	return p.Describe()
}

// replacesDelay is what Plain adds for a family whose client, honouring
// Retry-After, waits exactly the server's value: "; a Retry-After replaces
// the delay", or "" when it does not honour it.
func (p Policy) replacesDelay() string {
	if p.HonorRetryAfter {
		return "; a Retry-After replaces the delay"
	}
	return ""
}

// Reads reports whether the family reads the policy field f: of those
// only some families read (FieldBase, FieldCap, FieldMultiplier,
// FieldWidth, FieldHonorRetryAfter), whether this one does; every other
// field of Policy is read by every family.
func (k Kind) Reads(f Field) bool {
	fam, ok := lookup(k)
	if !ok {
		return false
	}
	switch f {
	case FieldBase:
		return fam.uses&pBase != 0
	case FieldCap:
		return fam.uses&pCap != 0
	case FieldMultiplier:
		return fam.uses&pMultiplier != 0
	case FieldWidth:
		return fam.uses&pWidth != 0
	case FieldHonorRetryAfter:
		return fam.uses&pHonor != 0
	}
	return true
}

// JitterFraction is how far the policy's jitter moves a delay, as a
// fraction of it (the delay is multiplied by 1 ± this): its width, or half
// of it for a family whose width is the band's full width (watchdog,
// http-retry). The family owns the fact; Percent says it to people.
func (p Policy) JitterFraction() float64 {
	if f, ok := lookup(p.Kind); ok && f.band {
		return p.Width / 2
	}
	return p.Width
}

// WidthOf is the width parameter that gives family k a jitter of ±x, a
// fraction of the delay (the inverse of Policy.JitterFraction).
func (k Kind) WidthOf(x float64) float64 {
	if f, ok := lookup(k); ok && f.band {
		return 2 * x
	}
	return x
}

// Percent writes a jitter width w (the delay is multiplied by 1 ± w) as
// "±25 %"; 0 is "no jitter". Every jitter a user reads is said this way,
// whatever the family's own parameter means.
func Percent(w float64) string {
	if w == 0 {
		return "none (±0 %)"
	}
	return fmt.Sprintf("±%g %%", roundTo(100*w, 1e-9))
}

func roundTo(x, q float64) float64 {
	r := float64(int64(x/q+0.5)) * q
	return r
}

// attemptCount writes n attempts: "1 attempt", "4 attempts".
func attemptCount(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

func capWords(c time.Duration) string {
	if c == 0 {
		return ", no cap"
	}
	return ", at most " + c.String()
}

func limitWords(p Policy) string {
	var parts []string
	if p.MaxAttempts == 0 {
		parts = append(parts, "no attempt limit")
	} else {
		parts = append(parts, "gives up after "+attemptCount(p.MaxAttempts))
	}
	if p.MaxElapsed > 0 {
		parts = append(parts, "gives up "+p.MaxElapsed.String()+" after its first request")
	}
	if p.RetryOn != RetryOnAny {
		parts = append(parts, "retries "+p.RetryOn.means())
	}
	if p.BucketTokens > 0 {
		parts = append(parts, fmt.Sprintf("a %d-token retry bucket at %d a retry", p.BucketTokens, p.BucketCost))
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess == 0 { // per process: one of componentWords
		parts = append(parts, fmt.Sprintf("a fleet retry budget of %g %% of requests", 100*p.RetryBudget))
	}
	parts = append(parts, p.componentWords()...)
	return ", " + strings.Join(parts, ", ")
}

func dur(sec float64) time.Duration {
	return time.Duration(sec * float64(time.Second)).Round(time.Millisecond)
}

// Short names the policy in a few words for a table row, e.g.
// "exp 1s ×2 ≤1m0s ±50 %".
func (p Policy) Short() string {
	if p.Preset != "" {
		return p.Preset + " defaults"
	}
	if cs := p.ComponentsShort(); cs != "" {
		return p.WithoutComponents().Short() + cs
	}
	if p.RetryOn != RetryOnAny {
		q := p
		q.RetryOn = RetryOnAny
		return q.Short() + ", retry_on " + string(p.RetryOn)
	}
	if l := p.LimitsShort(); l != "" {
		q := p
		q.MaxAttempts, q.MaxElapsed, q.BucketTokens, q.BucketCost = 0, 0, 0, 0
		if p.ClientsPerProcess == 0 {
			q.RetryBudget, q.BudgetMinRPS = 0, 0
		}
		if s := q.Short(); s != q.String() { // a family String names: its limits there
			return s + l
		}
		return p.String()
	}
	c := "no cap"
	if p.Cap != 0 {
		c = "≤" + p.Cap.String()
	}
	switch p.Kind {
	case GRPC:
		return fmt.Sprintf("exp %v ×%g %s ±%g %%", p.Base, p.Multiplier, c, roundTo(100*p.Width, 1e-9))
	case APICore:
		return fmt.Sprintf("full jitter U(0, %v) ×%g %s", p.Base, p.Multiplier, c)
	case Decorrelated:
		return fmt.Sprintf("decorrelated %v %s", p.Base, c)
	case Fixed:
		return fmt.Sprintf("fixed %v", p.Base)
	case Exponential:
		return fmt.Sprintf("exp %v ×%g %s, no jitter", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, c)
	case FullJitter:
		return fmt.Sprintf("full jitter U(0, %v) ×%g %s", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, c)
	case EqualJitter:
		return fmt.Sprintf("equal jitter %v ×%g %s", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, c)
	case WidthJitter:
		return fmt.Sprintf("exp %v ×%g %s ±%g %%", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, c, roundTo(100*p.Width, 1e-9))
	}
	return p.String()
}

// LimitsShort names p's limits on giving up in a few words, so that a
// table tells apart the same backoff with and without them: ", at most 3
// attempts, retry budget 10 %"; "" when it has none. A per-process retry
// budget is one of ComponentsShort's.
func (p Policy) LimitsShort() string {
	var s string
	if p.MaxAttempts > 0 {
		s += ", at most " + attemptCount(p.MaxAttempts)
	}
	if p.MaxElapsed > 0 {
		s += fmt.Sprintf(", gives up after %v", p.MaxElapsed)
	}
	if p.BucketTokens > 0 {
		s += fmt.Sprintf(", %d-token bucket", p.BucketTokens)
	}
	if p.RetryBudget > 0 && p.ClientsPerProcess == 0 {
		s += fmt.Sprintf(", retry budget %g %%", roundTo(100*p.RetryBudget, 1e-9))
	}
	return s
}

// KnownKind reports whether k names a policy family.
func KnownKind(k Kind) bool { _, ok := lookup(k); return ok }

// Jittered reports whether the policy draws its delays at random, so that
// clients that failed together drift apart. Fixed intervals and
// exponential backoff without jitter keep a herd in step.
func (p Policy) Jittered() bool {
	switch p.Kind {
	case Fixed, Exponential:
		return false
	case WidthJitter, GRPC, WatchDog, HTTPRetry:
		return p.Width > 0
	}
	return true
}

// JitterWords says how the policy jitters, in the words every output
// uses: "full" (U(0, d)), "equal", "decorrelated", "±25 %", or "none".
func (p Policy) JitterWords() string {
	switch p.Kind {
	case FullJitter, APICore, AWSStandard:
		return "full"
	case EqualJitter:
		return "equal"
	case Decorrelated, RAIgnore, PollyV2:
		return "decorrelated"
	case WidthJitter, GRPC:
		return Percent(p.Width)
	case WatchDog, HTTPRetry:
		return Percent(p.JitterFraction())
	case Fixed, Exponential:
		return "none"
	}
	return string(p.Kind)
}
