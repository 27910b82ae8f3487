package sim

import "time"

// componentPresets are the library presets that need client components
// (components.go): a library's retry policy together with the throttling,
// caps and breakers it ships with. Presets lists them after the others.
var componentPresets = []Preset{
	{"grpc-retry-throttled", Policy{Kind: GRPC, Base: 100 * time.Millisecond, Multiplier: 2, Cap: time.Second, Width: 0.2, MaxAttempts: 4,
		RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 1},
		"gRFC A6 (client retries; the 2024 revision: backoff × U(0.8, 1.2), maxAttempts capped at 5) and its canonical example, not a default: retryPolicy maxAttempts 4, initialBackoff 0.1 s, maxBackoff 1 s, backoffMultiplier 2; retryThrottling maxTokens 10, tokenRatio 0.1; grpc-go stream.go shouldRetry (min(initial·multiplier^n, max) × (0.8 + 0.4·U)) and clientconn.go retryThrottler",
		"gRPC has no default retry policy: a channel without one retries no failed call; each client is its own channel (clients_per_process 1): with 4 attempts one client never takes its tokens to half, so a shared channel (clients_per_process 0) is where throttling bites; server pushback is off (its own component)"},
	{"ms-resilience-standard", Policy{Kind: PollyV2, Base: 2 * time.Second, MaxAttempts: 4, MaxElapsed: 30 * time.Second,
		BreakerRatio: 0.1, BreakerMinThroughput: 100, BreakerWindow: 30 * time.Second, BreakerBreak: 5 * time.Second, ClientsPerProcess: 1},
		"dotnet/extensions Microsoft.Extensions.Http.Resilience Resilience/HttpStandardResilienceOptions.cs (total timeout 30 s, retry, circuit breaker, attempt timeout 10 s) and Polly/HttpRetryStrategyOptions.cs (BackoffType Exponential, UseJitter, ShouldRetryAfterHeader); Polly v8 RetryStrategyOptions (MaxRetryAttempts 3, Delay 2 s: exponential with jitter is DecorrelatedJitterBackoffV2) and CircuitBreakerStrategyOptions (0.1, 100, 30 s, 5 s)",
		"the 30 s total timeout is max_elapsed (no retry whose wait ends later); Retry-After is honoured by the library but not here (polly-v2 reads none: only matters when the server sends one); the attempt timeout and the 1,000-permit rate limiter are not modelled; one pipeline per client (clients_per_process 1)"},
	{"aws-sdk-go-v2-adaptive", Policy{Kind: AWSStandard, Base: time.Second, Cap: 20 * time.Second, MaxAttempts: 3, BucketTokens: 500, BucketCost: 5,
		AWSAdaptive: true, ClientsPerProcess: 1},
		"aws-sdk-go-v2 aws/retry/adaptive.go (NewAdaptiveMode: the standard retryer plus a client rate limiter) and adaptive_ratelimit.go; standard.go as the aws-sdk-go-v2 preset",
		"the standard retryer's delays and 500-token quota, plus the CUBIC rate limiter, one per SDK client (clients_per_process 1)"},
}
