package sim

import "time"

// componentPresets are the library presets that need client components
// (components.go): a library's retry policy together with the throttling,
// caps and breakers it ships with. Presets lists them after the others.
var componentPresets = []Preset{
	{"grpc-retry-throttled", Policy{Kind: GRPC, Base: 100 * time.Millisecond, Multiplier: 2, Cap: time.Second, Width: 0.2, MaxAttempts: 4,
		RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 1},
		"gRFC A6 (client retries; the 2024 revision: backoff × U(0.8, 1.2), maxAttempts capped at 5) and its canonical example, not a default: retryPolicy maxAttempts 4, initialBackoff 0.1 s, maxBackoff 1 s, backoffMultiplier 2; retryThrottling maxTokens 10, tokenRatio 0.1; grpc-go stream.go shouldRetry (min(initial·multiplier^n, max) × (0.8 + 0.4·U)) and clientconn.go retryThrottler",
		"gRPC has no default retry policy: a channel without one retries no failed call; each client is its own channel (clients_per_process 1): with 4 attempts one client never takes its tokens to half, so a shared channel (clients_per_process 0) is where throttling bites; server pushback is off (its own component)", ""},
	{"ms-resilience-standard", Policy{Kind: PollyV2, Base: 2 * time.Second, MaxAttempts: 4, MaxElapsed: 30 * time.Second, HonorRetryAfter: true, RetryOn: RetryOnTransient,
		BreakerRatio: 0.1, BreakerMinThroughput: 100, BreakerWindow: 30 * time.Second, BreakerBreak: 5 * time.Second, ClientsPerProcess: 1},
		"dotnet/extensions (commit 5862342c) Microsoft.Extensions.Http.Resilience Resilience/ResilienceHttpClientBuilderExtensions.StandardResilience.cs (AddStandardResilienceHandler: rate limiter → total timeout → retry → circuit breaker → attempt timeout, outermost first), Resilience/HttpStandardResilienceOptions.cs (total timeout 30 s, attempt timeout 10 s), Polly/HttpRetryStrategyOptions.cs (BackoffType Exponential, UseJitter, ShouldRetryAfterHeader; ShouldHandle HttpClientResiliencePredicates.IsTransient) and Polly/HttpClientResiliencePredicates.cs (5xx, 408, 429, HttpRequestException, TimeoutRejectedException); Polly (commit 173d6d1d) RetryStrategyOptions (MaxRetryAttempts 3, Delay 2 s: exponential with jitter is RetryHelper.DecorrelatedJitterBackoffV2), RetryResilienceStrategy.cs, CircuitBreakerStrategyOptions (0.1, 100, 30 s, 5 s) and Polly.RateLimiting RateLimiterConstants (a ConcurrencyLimiter, PermitLimit 1000, QueueLimit 0)",
		"the 30 s total timeout is max_elapsed (no retry whose wait ends later); a Retry-After replaces the computed delay (ShouldRetryAfterHeader), which Polly computes all the same; the breaker sits inside the retry, and an open one's BrokenCircuitException is not transient: the call fails at once (retry_on transient), where plain Polly v8, which handles every exception, retries it; the limiter in front is a concurrency limiter, not a rate limiter: at most 1,000 calls in flight per handler, none queued, and one client has one call in flight, so it never refuses one (not modelled); the attempt timeout is not modelled; one pipeline per client (clients_per_process 1)",
		""},
	{"envoy-retry-cap", Policy{Kind: APICore, Base: 25 * time.Millisecond, Multiplier: 2, Cap: 250 * time.Millisecond, MaxAttempts: 2,
		RetryOn: RetryOn5xx, RetryCap: 3},
		"Envoy router: retry_on 5xx (a 429 is retried only under retriable-status-codes or retry_on retriable-4xx… not by default), num_retries 1, base interval 25 ms, max interval 10 × base; cluster circuit breaker max_retries default 3 (source/common/router/retry_state_impl.cc: retries().canCreate() before a retry, dec() when it ends)",
		"one Envoy in front of the whole fleet (clients_per_process 0): its cap of 3 retries outstanding is shared by every client; a retry the cap refuses, or a 429, goes back to the client, which gives up", ""},
	{"aws-sdk-go-v2-adaptive", withComponents(aws2026, Policy{AWSAdaptive: true, ClientsPerProcess: 1}),
		"aws-sdk-go-v2 aws/retry/adaptive.go (NewAdaptiveMode: the standard retryer plus a client rate limiter) and adaptive_ratelimit.go; the standard retryer as the aws-sdk-go-v2 preset (v1.48.0, retry behaviour 2.1)",
		"the current standard retryer's delays and 500-token quota, plus the CUBIC rate limiter, one per SDK client (clients_per_process 1)", ""},
}

// withComponents is p with the client components of c.
func withComponents(p, c Policy) Policy {
	p.ClientsPerProcess, p.ThrottleK, p.ThrottleWindow, p.AWSAdaptive = c.ClientsPerProcess, c.ThrottleK, c.ThrottleWindow, c.AWSAdaptive
	p.RetryTokens, p.RetryTokenRatio, p.Pushback, p.RetryCap = c.RetryTokens, c.RetryTokenRatio, c.Pushback, c.RetryCap
	p.BreakerRatio, p.BreakerMinThroughput, p.BreakerWindow, p.BreakerBreak = c.BreakerRatio, c.BreakerMinThroughput, c.BreakerWindow, c.BreakerBreak
	return p
}
