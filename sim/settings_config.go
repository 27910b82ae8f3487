package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The settings a library reads as a document or as options, each the one
// owner of its numbers: Setting.How prints what they render, and the
// tests of internal/paste build them with the real libraries.

// GRPCServiceConfig is a grpc-go service config (gRFC A6): a retry policy
// for every method and retry throttling, each optional.
type GRPCServiceConfig struct {
	Retry      *GRPCRetryPolicy `json:"retry_policy,omitempty"`
	Throttling *GRPCThrottling  `json:"retry_throttling,omitempty"`
}

// GRPCRetryPolicy is a service config's retryPolicy. grpc-go draws retry
// n after min(InitialBackoff·BackoffMultiplier^(n−1), MaxBackoff) × U(0.8,
// 1.2) (stream.go, csAttempt.shouldRetry).
type GRPCRetryPolicy struct {
	MaxAttempts          int           `json:"max_attempts"` // the first attempt included; grpc-go needs WithMaxCallAttempts past 5
	InitialBackoff       time.Duration `json:"initial_backoff"`
	MaxBackoff           time.Duration `json:"max_backoff"`
	BackoffMultiplier    float64       `json:"backoff_multiplier"`
	RetryableStatusCodes []string      `json:"retryable_status_codes"`
}

// GRPCThrottling is a service config's retryThrottling: per channel, a
// retryable failure takes a token, a success adds TokenRatio, and no call
// is retried while the tokens are at most MaxTokens/2 (clientconn.go,
// retryThrottler).
type GRPCThrottling struct {
	MaxTokens  float64 `json:"max_tokens"`
	TokenRatio float64 `json:"token_ratio"`
}

// grpcDefaultMaxAttempts is grpc-go's cap on maxAttempts without
// grpc.WithMaxCallAttempts (dialoptions.go, defaultMaxCallAttempts).
const grpcDefaultMaxAttempts = 5

// grpcRetryableCodes are the codes the simulator's rejections stand for:
// UNAVAILABLE while the server is down, RESOURCE_EXHAUSTED after.
var grpcRetryableCodes = []string{"UNAVAILABLE", "RESOURCE_EXHAUSTED"}

// JSON is the service config as grpc.WithDefaultServiceConfig reads it,
// the retry policy applying to every method ("name": [{}]).
func (c GRPCServiceConfig) JSON() string {
	var parts []string
	if r := c.Retry; r != nil {
		codes := make([]string, len(r.RetryableStatusCodes))
		for i, s := range r.RetryableStatusCodes {
			codes[i] = strconv.Quote(s)
		}
		parts = append(parts, fmt.Sprintf(`"methodConfig": [{"name": [{}], "retryPolicy": {"maxAttempts": %d, "initialBackoff": %q, "maxBackoff": %q, "backoffMultiplier": %s, "retryableStatusCodes": [%s]}}]`,
			r.MaxAttempts, protoDuration(r.InitialBackoff), protoDuration(r.MaxBackoff), jsonNumber(r.BackoffMultiplier), strings.Join(codes, ", ")))
	}
	if t := c.Throttling; t != nil {
		parts = append(parts, fmt.Sprintf(`"retryThrottling": {"maxTokens": %s, "tokenRatio": %s}`, jsonNumber(t.MaxTokens), jsonNumber(t.TokenRatio)))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// DialOptions is the Go that makes a channel with the config:
// grpc.WithMaxCallAttempts is there when maxAttempts passes grpc-go's cap.
func (c GRPCServiceConfig) DialOptions() string {
	s := "grpc.WithDefaultServiceConfig(`" + c.JSON() + "`)"
	if c.Retry != nil && c.Retry.MaxAttempts > grpcDefaultMaxAttempts {
		s += fmt.Sprintf(", grpc.WithMaxCallAttempts(%d)", c.Retry.MaxAttempts)
	}
	return s
}

// protoDuration writes d as the JSON form of a protobuf Duration: decimal
// seconds with an "s", no exponent ("0.5s", "30s").
func protoDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// jsonNumber writes x as a JSON number without an exponent.
func jsonNumber(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// AWSRetry is the aws-sdk-go-v2 (≥ v1.48.0, retry behaviour 2.1)
// retry.StandardOptions a setting prints for retry.NewStandard.
type AWSRetry struct {
	MaxAttempts int `json:"max_attempts"` // the first attempt included
	// BaseDelay and MaxBackoff: the SDK's backoff, retry n after
	// U(0, 1)·min(x·2^(n−1), MaxBackoff), x = BaseDelay, or 1 s after a
	// throttling error such as a 429 (jitter_backoff.go, backoffDelay2026).
	// Both 0 when Custom.
	BaseDelay  time.Duration `json:"base_delay,omitempty"`
	MaxBackoff time.Duration `json:"max_backoff,omitempty"`
	// Custom: o.Backoff is a retry.BackoffDelayerFunc the caller writes.
	Custom bool `json:"custom_backoff,omitempty"`
	// Quota is the retry quota, o.RateLimiter; nil: ratelimit.None.
	Quota *AWSQuota `json:"quota,omitempty"`
}

// AWSQuota is the SDK's retry quota: o.RateLimiter =
// ratelimit.NewTokenRateLimit(Tokens), a bucket that starts full. A retry
// takes RetryCost tokens (ThrottlingRetryCost after a throttling error)
// and is not made without them; a successful retry gives its cost back, a
// first attempt that succeeds adds NoRetryIncrement, up to Tokens
// (standard.go, ratelimit/token_bucket.go).
type AWSQuota struct {
	Tokens              uint `json:"tokens"`
	RetryCost           uint `json:"retry_cost"`
	ThrottlingRetryCost uint `json:"throttling_retry_cost"`
	NoRetryIncrement    uint `json:"no_retry_increment"`
}

// Go is the retryer as Go code for retry.NewStandard.
func (a AWSRetry) Go() string {
	opts := []string{fmt.Sprintf("o.MaxAttempts = %d", a.MaxAttempts)}
	if a.Custom {
		opts = append(opts, "o.Backoff = retry.BackoffDelayerFunc(yours)")
	} else {
		opts = append(opts, "o.BaseDelay = "+goDuration(a.BaseDelay), "o.MaxBackoff = "+goDuration(a.MaxBackoff))
	}
	if q := a.Quota; q == nil {
		opts = append(opts, "o.RateLimiter = ratelimit.None")
	} else {
		opts = append(opts, fmt.Sprintf("o.RateLimiter = ratelimit.NewTokenRateLimit(%d)", q.Tokens),
			fmt.Sprintf("o.RetryCost = %d", q.RetryCost), fmt.Sprintf("o.ThrottlingRetryCost = %d", q.ThrottlingRetryCost),
			fmt.Sprintf("o.NoRetryIncrement = %d", q.NoRetryIncrement))
	}
	return "retry.NewStandard(func(o *retry.StandardOptions) { " + strings.Join(opts, "; ") + " })"
}

// goDuration writes d as a Go expression: "30 * time.Second".
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}} {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Microsecond", d/time.Microsecond)
}

// pollyDelayGenerator is C# for Polly v8's RetryStrategyOptions.
// DelayGenerator drawing p's delays, and whether it can: Polly calls it
// with the zero-based AttemptNumber and uses what it returns as the delay,
// MaxDelay not applied (RetryResilienceStrategy.cs), so the code caps
// itself. Decorrelated jitter keeps the call's previous delay in its
// ResilienceContext.
func (p Policy) pollyDelayGenerator() (string, bool) {
	b, m, w := p.Base.Seconds(), p.Multiplier, p.Width
	capped := func(e string) string {
		if p.Cap == 0 {
			return e
		}
		return fmt.Sprintf("Math.Min(%s, %s)", e, csNum(p.Cap.Seconds()))
	}
	const u = "Random.Shared.NextDouble()"
	var d string // seconds, with n = args.AttemptNumber (0 on the first retry)
	switch p.Kind {
	case GRPC:
		d = fmt.Sprintf("%s * (1 + %s * (2 * %s - 1))", capped(fmt.Sprintf("%s * Math.Pow(%s, n)", csNum(b), csNum(m))), csNum(w), u)
	case WidthJitter:
		d = fmt.Sprintf("%s * (1 + %s * (2 * %s - 1))", capped(fmt.Sprintf("%s * Math.Pow(%s, n + 1)", csNum(b), csNum(m))), csNum(w), u)
	case Exponential:
		d = capped(fmt.Sprintf("%s * Math.Pow(%s, n + 1)", csNum(b), csNum(m)))
	case FullJitter:
		d = fmt.Sprintf("%s * %s", u, capped(fmt.Sprintf("%s * Math.Pow(%s, n + 1)", csNum(b), csNum(m))))
	case EqualJitter:
		d = fmt.Sprintf("(1 + %s) / 2 * %s", u, capped(fmt.Sprintf("%s * Math.Pow(%s, n + 1)", csNum(b), csNum(m))))
	case APICore:
		d = fmt.Sprintf("%s * %s", u, capped(fmt.Sprintf("%s * Math.Pow(%s, n)", csNum(b), csNum(m))))
	case Decorrelated, RAIgnore:
		d = capped(fmt.Sprintf("%s + %s * (Math.Max(%s, 3 * (n == 0 ? %s : args.Context.Properties.GetValue(prev, %s))) - %s)", csNum(b), u, csNum(2*b), csNum(b), csNum(b), csNum(b)))
		return "var prev = new ResiliencePropertyKey<double>(\"prev-delay\"); options.DelayGenerator = args => { var n = args.AttemptNumber; var d = " + d +
			"; args.Context.Properties.Set(prev, d); return ValueTask.FromResult<TimeSpan?>(TimeSpan.FromSeconds(d)); };", true
	default:
		return "", false
	}
	return "options.DelayGenerator = args => { var n = args.AttemptNumber; return ValueTask.FromResult<TimeSpan?>(TimeSpan.FromSeconds(" + d + ")); };", true
}

// csNum writes x as a C# double literal.
func csNum(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
