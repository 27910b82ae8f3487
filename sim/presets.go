package sim

import "time"

// Preset is a library's default retry policy, under a stable name.
type Preset struct {
	Name   string
	Policy Policy
	Source string // where the numbers come from
	Note   string // what could not be confirmed, and quirks
}

// presets is the one place library defaults are kept. Each cites where its
// numbers come from; where a number could not be confirmed from the
// library's own files, the Note says so.
var presets = []Preset{
	{"grpc", Policy{Kind: GRPCGo, Base: time.Second, Multiplier: 1.6, Cap: 2 * time.Minute, Width: 0.2},
		"grpc-go backoff.DefaultConfig (BaseDelay 1 s, Multiplier 1.6, Jitter 0.2, MaxDelay 120 s) and internal/backoff/backoff.go (Backoff(0) = BaseDelay); gRPC doc/connection-backoff.md",
		"connection backoff: retries forever; the first retry waits exactly 1 s, without jitter (checked live: sweep live --library grpc-go)"},
	{"aws-sdk-go-v2", Policy{Kind: AWSStandard, Base: time.Second, Cap: 20 * time.Second, MaxAttempts: 3, BucketTokens: 500, BucketCost: 5},
		"aws-sdk-go-v2 aws/retry/standard.go (DefaultMaxAttempts 3, DefaultMaxBackoff 20 s, DefaultRetryRateTokens 500, DefaultRetryCost 5, DefaultNoRetryIncrement 1) and jitter_backoff.go",
		"the token bucket belongs to one SDK client: with 3 attempts a device never empties its own 500 tokens"},
	{"cenkalti-backoff", Policy{Kind: GRPC, Base: 500 * time.Millisecond, Multiplier: 1.5, Cap: time.Minute, Width: 0.5, MaxElapsed: 15 * time.Minute},
		"cenkalti/backoff v4 exponential.go (DefaultInitialInterval 500 ms, DefaultRandomizationFactor 0.5, DefaultMultiplier 1.5, DefaultMaxInterval 60 s, DefaultMaxElapsedTime 15 min)",
		"MaxInterval caps the interval before randomisation, so a wait can reach 90 s"},
	{"go-retryablehttp", Policy{Kind: HTTPRetry, Base: time.Second, Multiplier: 2, Cap: 30 * time.Second, MaxAttempts: 5, HonorRetryAfter: true},
		"hashicorp/go-retryablehttp client.go (defaultRetryWaitMin 1 s, defaultRetryWaitMax 30 s, defaultRetryMax 4; DefaultBackoff honours Retry-After on 429 and 503)",
		"no jitter; a Retry-After is used as is, not capped by RetryWaitMax"},
	{"polly-v2", Policy{Kind: PollyV2, Base: time.Second, MaxAttempts: 6},
		"Polly.Contrib.WaitAndRetry Backoff.DecorrelatedJitterV2.cs (the formula)",
		"not confirmed from the library's files: medianFirstRetryDelay 1 s and 5 retries are its README's example, the library has no defaults"},
	{"google-api-core", Policy{Kind: APICore, Base: time.Second, Multiplier: 2, Cap: time.Minute, MaxElapsed: 2 * time.Minute},
		"google-api-core retry (_DEFAULT_INITIAL_DELAY 1.0, _DEFAULT_MAXIMUM_DELAY 60.0, _DEFAULT_DELAY_MULTIPLIER 2.0, _DEFAULT_DEADLINE 120 s)",
		"not confirmed from the library's files here: the constants are quoted from its documented defaults"},
	{"envoy", Policy{Kind: APICore, Base: 25 * time.Millisecond, Multiplier: 2, Cap: 250 * time.Millisecond, MaxAttempts: 2},
		"Envoy router: retry base interval 25 ms, max interval 10 × base, num_retries 1 (docs: x-envoy-max-retries)",
		"Envoy draws whole milliseconds (random() % interval); we keep the fraction"},
	{"sgc-watchdog", Policy{Kind: WatchDog, Base: time.Second, Multiplier: 1},
		"second source: WatchDog defaults Backoff wdbFixed, Jitter 0, MaxInterval 0, Attempts 0",
		"the source states no default Interval; 1 s is its example's value"},
	{"sgc-watchdog-example", Policy{Kind: WatchDog, Base: time.Second, Multiplier: 2, Cap: time.Minute, Width: 0.2},
		"second source: the WatchDog example (Interval 1, wdbExponential, BackoffMultiplier 2.0, MaxInterval 60, Jitter 0.2)", ""},
	{"sgc-fleet", Policy{Kind: WatchDog, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5},
		"second source: the conservative fleet profile (Interval 2, BackoffMultiplier 1.5, MaxInterval 120, Jitter 0.5)", ""},
	{"sgc-http-retry", Policy{Kind: HTTPRetry, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second, Width: 0.2, MaxAttempts: 4, HonorRetryAfter: true},
		"second source: RetryOptions example (MaxRetries 3, InitialInterval 500 ms, MaxInterval 30 s, Multiplier 2.0, Jitter 0.2, HonorRetryAfter True by default)",
		"the source gives no defaults but HonorRetryAfter's; these are its example's values"},
}

// Presets returns every library preset, each with Policy.Preset set.
func Presets() []Preset {
	out := make([]Preset, len(presets)+len(componentPresets))
	for i, p := range append(presets[:len(presets):len(presets)], componentPresets...) {
		p.Policy.Preset = p.Name
		out[i] = p
	}
	return out
}

// PresetByName returns the preset called name.
func PresetByName(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
