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
	var s string
	switch p.Kind {
	case Fixed:
		s = fmt.Sprintf("fixed interval: retry every %v, no jitter", p.Base)
	case Exponential:
		s = fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, no jitter", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap))
	case FullJitter:
		s = fmt.Sprintf("exponential backoff with full jitter: first retry after U(0, %v), the range ×%g per attempt%s", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap))
	case EqualJitter:
		d := p.Base.Seconds() * p.Multiplier
		s = fmt.Sprintf("exponential backoff with equal jitter: first retry after %v to %v (d/2 + U(0, d/2), d = %v), d ×%g per attempt%s", dur(d/2), dur(d), dur(d), p.Multiplier, capWords(p.Cap))
	case WidthJitter:
		s = fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s (applied after the cap)", dur(p.Base.Seconds()*p.Multiplier), p.Multiplier, capWords(p.Cap), Percent(p.Width))
	case GRPC:
		s = fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s (applied after the cap)", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.Width))
	case APICore:
		s = fmt.Sprintf("exponential backoff with full jitter: first retry after U(0, %v), the range ×%g per attempt%s", p.Base, p.Multiplier, capWords(p.Cap))
	case Decorrelated, RAIgnore:
		s = fmt.Sprintf("decorrelated jitter: each delay drawn from U(%v, max(%v, 3 × the previous delay))%s", p.Base, 2*p.Base, capWords(p.Cap))
	case WatchDog, HTTPRetry:
		s = fmt.Sprintf("exponential backoff: first retry after %v, ×%g per attempt%s, uniform jitter %s", p.Base, p.Multiplier, capWords(p.Cap), Percent(p.Width/2))
		if p.HonorRetryAfter {
			s += "; a Retry-After replaces the delay"
		}
	default:
		s = p.Describe()
	}
	if p.Preset != "" {
		s = p.Preset + " defaults — " + s
	}
	return s + limitWords(p)
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
		parts = append(parts, fmt.Sprintf("gives up after %d attempts", p.MaxAttempts))
	}
	if p.MaxElapsed > 0 {
		parts = append(parts, "gives up "+p.MaxElapsed.String()+" after its first request")
	}
	if p.BucketTokens > 0 {
		parts = append(parts, fmt.Sprintf("a %d-token retry bucket at %d a retry", p.BucketTokens, p.BucketCost))
	}
	if p.RetryBudget > 0 {
		parts = append(parts, fmt.Sprintf("a fleet retry budget of %g %% of requests", 100*p.RetryBudget))
	}
	return ", " + strings.Join(parts, ", ")
}

func dur(sec float64) time.Duration {
	return time.Duration(sec * float64(time.Second)).Round(time.Millisecond)
}

// Setting says how to configure a policy in one library, or why it cannot.
type Setting struct {
	Library string `json:"library"`
	How     string `json:"how"`   // the configuration, in the library's own names
	Exact   bool   `json:"exact"` // false: the library cannot express the policy exactly; How says what differs
}

// Settings says how to set p in the common retry libraries. Libraries are
// listed whether or not they can express it, so that a reader learns
// plainly which cannot.
func (p Policy) Settings() []Setting {
	b, c, m, w := p.Base, p.Cap, p.Multiplier, p.Width
	capOr := func(def string) string {
		if c == 0 {
			return def
		}
		return c.String()
	}
	limit := "no attempt limit"
	if p.MaxAttempts > 0 {
		limit = fmt.Sprintf("%d attempts", p.MaxAttempts)
	}
	custom := func(lib, hook string) Setting {
		return Setting{lib, "not built in: write a " + hook + " that returns the delays above", false}
	}
	switch p.Kind {
	case GRPC:
		return []Setting{
			{"grpc-go (connection backoff)", fmt.Sprintf("grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: %v, Multiplier: %g, Jitter: %g, MaxDelay: %v}})", b, m, w, capOr("1<<62")), true},
			{"grpc-go (call retries)", "not expressible: a service-config retryPolicy draws U(0, backoff) (full jitter) and allows at most 5 attempts", false},
			{"cenkalti/backoff", fmt.Sprintf("&backoff.ExponentialBackOff{InitialInterval: %v, Multiplier: %g, RandomizationFactor: %g, MaxInterval: %v} (v4: also MaxElapsedTime: 0; v5: WithMaxElapsedTime(0))", b, m, w, capOr("1<<62")), true},
			custom("hashicorp/go-retryablehttp", "Client.Backoff func"),
			custom("aws-sdk-go-v2", "retry.BackoffDelayer (StandardOptions.Backoff)"),
			{"Polly v8", fmt.Sprintf("not exact: BackoffType Exponential with UseJitter draws decorrelated jitter V2; closest: Delay = %v, MaxDelay = %v, UseJitter = true", b, capOr("none")), false},
			{"google-api-core", "not exact: Retry always draws full jitter U(0, delay)", false},
		}
	case APICore:
		return []Setting{
			{"google-api-core", fmt.Sprintf("Retry(initial=%g, multiplier=%g, maximum=%g, timeout=None)", b.Seconds(), m, c.Seconds()), c > 0},
			{"grpc-go (call retries)", fmt.Sprintf("service config retryPolicy {initialBackoff: %q, backoffMultiplier: %g, maxBackoff: %q} — but grpc-go allows at most 5 attempts", fmt.Sprintf("%gs", b.Seconds()), m, fmt.Sprintf("%gs", c.Seconds())), p.MaxAttempts > 0 && p.MaxAttempts <= 5},
			{"cenkalti/backoff", "not exact: RandomizationFactor 1 draws U(0, 2·interval), not U(0, interval)", false},
			custom("hashicorp/go-retryablehttp", "Client.Backoff func"),
			custom("aws-sdk-go-v2", "retry.BackoffDelayer (StandardOptions.Backoff)"),
			custom("Polly v8", "DelayGenerator"),
		}
	case FullJitter, WidthJitter, EqualJitter, Exponential, Decorrelated, RAIgnore:
		var out []Setting
		if p.Kind == FullJitter && b == time.Second && m == 2 {
			out = append(out, Setting{"aws-sdk-go-v2", fmt.Sprintf("retry.NewStandard(func(o *retry.StandardOptions) { o.MaxBackoff = %v; o.MaxAttempts = %s }) — past the cap the SDK waits exactly MaxBackoff, without jitter", capOr("1<<62"), limitOr(p)), false})
		}
		if p.Kind == Decorrelated {
			out = append(out, Setting{"Polly v8", "not exact: UseJitter with Exponential is decorrelated jitter V2, a different curve", false})
		}
		return append(out,
			custom("grpc-go", "backoff.Strategy"),
			custom("cenkalti/backoff", "BackOff implementation"),
			custom("hashicorp/go-retryablehttp", "Client.Backoff func"),
			custom("google-api-core", "sleep generator"),
		)
	}
	return []Setting{{"any", "see `sweep policies` for its formula and source; " + limit, false}}
}

func limitOr(p Policy) string {
	if p.MaxAttempts == 0 {
		return "0 (see retry.AddWithMaxAttempts; 0 means the SDK default of 3)"
	}
	return fmt.Sprint(p.MaxAttempts)
}

// Short names the policy in a few words for a table row, e.g.
// "exp 1s ×2 ≤1m0s ±50 %".
func (p Policy) Short() string {
	if p.Preset != "" {
		return p.Preset + " defaults"
	}
	c := "no cap"
	if p.Cap != 0 {
		c = "≤" + p.Cap.String()
	}
	switch p.Kind {
	case GRPC:
		return fmt.Sprintf("exp %v ×%g %s ±%g %%", p.Base, p.Multiplier, c, roundTo(100*p.Width, 1e-9))
	case APICore:
		return fmt.Sprintf("full jitter %v ×%g %s", p.Base, p.Multiplier, c)
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

// KnownKind reports whether k names a policy family.
func KnownKind(k Kind) bool { return lookup(k) != nil }

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
		return Percent(p.Width / 2)
	case Fixed, Exponential:
		return "none"
	}
	return string(p.Kind)
}
