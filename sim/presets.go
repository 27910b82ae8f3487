package sim

import (
	"slices"
	"time"
)

// Preset is a library's default retry policy, under a stable name.
type Preset struct {
	Name   string
	Policy Policy
	Source string // where the numbers come from
	Note   string // what could not be confirmed, and quirks
	// Scope says, where it is not a library's retries of failed calls,
	// what the preset's backoff is for ("connection backoff, not call
	// retries"): every verdict on the preset says it beside its name.
	Scope string
}

// Candidate reports whether the preset is in recommend's candidate space
// (grid.CandidateSpace): one of spacePresets.
func (p Preset) Candidate() bool { return slices.Contains(spacePresets, p.Name) }

// spacePresets are the presets in recommend's candidate space: those that
// jittered when the space was fixed. Presets added since are judged
// (--library, --mine), not candidates: a dated name of another
// (aws-sdk-go-v2-2026), the other reading of a document (sgc-*-pm), a
// conflict-retry helper (client-go-default-*), SDK defaults that give up
// after a few attempts and cannot be feasible; a candidate more changes
// every recommendation's confidence.
var spacePresets = []string{"grpc", "aws-sdk-go-v2", "cenkalti-backoff", "polly-v2", "google-api-core", "envoy",
	"sgc-watchdog-example", "sgc-fleet", "sgc-http-retry"}

// presets is the one place library defaults are kept. Each cites where its
// numbers come from; where a number could not be confirmed from the
// library's own files, the Note says so.
var presets = []Preset{
	{"grpc", Policy{Kind: GRPCGo, Base: time.Second, Multiplier: 1.6, Cap: 2 * time.Minute, Width: 0.2},
		"grpc-go v1.85.0 backoff/backoff.go DefaultConfig (BaseDelay 1 s, Multiplier 1.6, Jitter 0.2, MaxDelay 120 s) and internal/backoff/backoff.go (Exponential.Backoff(0) = BaseDelay, no jitter); gRPC doc/connection-backoff.md",
		"connection backoff, not call retries: gRPC retries a failed call only under a configured retry policy (maxAttempts ≤ 5, retry throttling), which this is not; retries forever; the first retry waits exactly 1 s, without jitter (checked live: sweep live --library grpc-go)",
		grpcScope},
	{"aws-sdk-go-v2", aws2026,
		"aws-sdk-go-v2 v1.48.0 (release 2026-11-10, the current one read): retry behaviour 2.1 is the default and AWS_NEW_RETRIES_2026 is gone; as aws-sdk-go-v2-2026",
		"the current release's default; rows stored before this preset changed (policy column aws-standard) are aws-sdk-go-v2-standard-2020", ""},
	{"aws-sdk-go-v2-2026", aws2026,
		"aws-sdk-go-v2 v1.48.0 aws/retry/standard.go (DefaultMaxAttempts 3, DefaultMaxBackoff 20 s, DefaultRetryRateTokens 500, defaultRetryCost 14, DefaultThrottlingRetryCost 5, BaseDelay 50 ms), jitter_backoff.go (backoffDelay2026: throttling base 1 s, cap before the jitter), middleware.go (adjustForRetryAfterHeader: x-amz-retry-after clamped to [t, t + 5 s])",
		"a 429 counts as throttling (v1.48.0 retries unmodelled 429s as throttling errors); the bucket's cost is 14, and a throttled retry's 5 is not told apart: with 3 attempts a client never empties its own 500 tokens", ""},
	{"aws-sdk-go-v2-standard-2020", Policy{Kind: AWSStandard, Base: time.Second, Cap: 20 * time.Second, MaxAttempts: 3, BucketTokens: 500, BucketCost: 5},
		"aws-sdk-go-v2 aws/retry/standard.go before v1.48.0 (DefaultMaxAttempts 3, DefaultMaxBackoff 20 s, DefaultRetryRateTokens 500, DefaultRetryCost 5) and jitter_backoff.go (backoffDelayLegacy, still in v1.48.0 behind NewExponentialJitterBackoff)",
		"the standard retryer from 2020 to v1.47.x; the token bucket belongs to one SDK client: with 3 attempts a device never empties its own 500 tokens", ""},
	{"botocore-legacy", Policy{Kind: APICore, Base: time.Second, Multiplier: 2, MaxAttempts: 5},
		"botocore retryhandler.py (delay_exponential: base 'rand' × growth_factor^(attempts − 1)) and data/_retry.json (__default__: max_attempts 5, base rand, growth_factor 2; retries 429, 500, 503, 509, throttling codes); configprovider.py retry_mode 'legacy' (the default)",
		"botocore's and boto3's default mode: no cap and no retry quota", ""},
	{"botocore-standard", Policy{Kind: APICore, Base: time.Second, Multiplier: 2, Cap: 20 * time.Second, MaxAttempts: 3, BucketTokens: 500, BucketCost: 5},
		"botocore retries/standard.py (ExponentialBackoff: rand·min(2^(attempt − 1), 20) in mode 2.0, DEFAULT_MAX_ATTEMPTS 3; RetryQuotaChecker _RETRY_COST 5) and retries/quota.py (INITIAL_CAPACITY 500), commit 0719e795",
		"retry_mode = standard; a 429 is retried only with a throttling error code (TransientRetryableChecker has 500, 502, 503, 504), as AWS services send it; mode 2.1, where an internal module switches it, computes aws-sdk-go-v2-2026's numbers", ""},
	// urllib3 has two "defaults": the Retry.DEFAULT its pools use when
	// given no retries (3), and the Retry() constructor's total (10);
	// requests gives urllib3 Retry(0, read=False). The name "urllib3"
	// meant the second until policy-1, when it was retired so that no one
	// reads it as the first; stored rows under it keep their key.
	{"urllib3-default", Policy{Kind: HTTPRetry, Base: time.Millisecond, Multiplier: 1, MaxAttempts: 4, HonorRetryAfter: true, RetryOn: RetryOnRetryAfter},
		"urllib3 2.7.0 (commit 6a8536b6) src/urllib3/util/retry.py (Retry.DEFAULT = Retry(3): total 3, backoff_factor 0, respect_retry_after_header True, status_forcelist None; is_retry: 413, 429 and 503 retried only with a Retry-After) and connectionpool.py (urlopen: retries None → Retry.DEFAULT; PoolManager and urllib3.request() the same)",
		"what urllib3 does when it is given no retries: 3 retries (4 attempts); a rejection without a Retry-After is not retried, one with it waits it exactly; read timeouts are retried at once; backoff_factor 0 is taken as 1 ms, which reaches the next tick exactly as 0 does; not what requests does (requests-default), nor Retry() (urllib3-retry-10)",
		""},
	{"urllib3-retry-10", Policy{Kind: HTTPRetry, Base: time.Millisecond, Multiplier: 1, MaxAttempts: 11, HonorRetryAfter: true, RetryOn: RetryOnRetryAfter},
		"urllib3 2.7.0 (commit 6a8536b6) src/urllib3/util/retry.py (Retry.__init__: total 10, backoff_factor 0, respect_retry_after_header True, status_forcelist None; is_retry: 413, 429 and 503 retried only with a Retry-After)",
		"a Retry() object built with no arguments and passed as retries (total 10: 11 attempts), not urllib3's default when none is passed (urllib3-default, 3 retries); as urllib3-default otherwise; stored rows of the preset named urllib3 before policy-1 are this one",
		""},
	{"requests-default", Policy{Kind: HTTPRetry, Base: time.Millisecond, Multiplier: 1, MaxAttempts: 1, HonorRetryAfter: true, RetryOn: RetryOnRetryAfter},
		"requests v2.34.2 (commit 1f6589ec) src/requests/adapters.py (DEFAULT_RETRIES 0; HTTPAdapter: max_retries == DEFAULT_RETRIES → Retry(0, read=False)) on urllib3 Retry.is_retry (total 0: nothing retried)",
		"requests retries nothing by default: every rejection reaches the caller (one attempt); mount an HTTPAdapter(max_retries=Retry(…)) to retry (urllib3-retry-10, urllib3-backoff)",
		""},
	{"urllib3-backoff", Policy{Kind: URLLib3, Base: 500 * time.Millisecond, Cap: 120 * time.Second, Width: 1, MaxAttempts: 6, HonorRetryAfter: true, RetryOn: RetryOn5xxOrRetryAfter},
		"urllib3 src/urllib3/util/retry.py, commit 00f30f01: Retry(total=5, backoff_factor=0.5, backoff_jitter=0.5, status_forcelist=[500, 502, 503, 504]), backoff_max 120 s by default",
		"a configuration, not a default: the docstring recommends a factor of 0.5 to 1.0 with backoff_jitter in production; a 429 is retried only with a Retry-After", ""},
	{"client-go-rest", Policy{Kind: HTTPRetry, Base: time.Second, Multiplier: 1, MaxAttempts: 11, HonorRetryAfter: true, RetryOn: RetryOnRetryAfterOnly},
		"k8s.io/client-go v0.37.2 rest/request.go (maxRetries 10; request(): isErrRetryableFunc retries a GET's connection reset, probable EOF or lost HTTP/2 connection, not a timeout; Watch: probable EOF and timeouts), rest/with_retry.go (IsNextRetry, checkWait: 429 and 5xx retried only with a Retry-After; a retryable error gets a Retry-After of 1 s), rest/client.go (readExpBackoffConfig: NoBackoff unless KUBE_CLIENT_BACKOFF_BASE is set); read again at commit 32ce75a7",
		"the REST client's own retries in Request.Do and DoRaw: it waits exactly the server's Retry-After, and gives up on a timeout (retry_on retry-after-only; only Watch retries timeouts); a GET's connection reset would be retried after 1 s, which the simulator has no event for",
		""},
	{"client-go-default-backoff", Policy{Kind: K8sWait, Base: 10 * time.Millisecond, Multiplier: 5, Width: 0.1, MaxAttempts: 4},
		"k8s.io/client-go v0.37.2 util/retry/util.go DefaultBackoff (Steps 4, Duration 10 ms, Factor 5, Jitter 0.1) on k8s.io/apimachinery v0.37.2 wait.Backoff",
		"what client-go recommends for retry.OnError; a conflict retry, not a herd's", ""},
	{"client-go-default-retry", Policy{Kind: K8sWait, Base: 10 * time.Millisecond, Multiplier: 1, Width: 0.1, MaxAttempts: 5},
		"k8s.io/client-go v0.37.2 util/retry/util.go DefaultRetry (Steps 5, Duration 10 ms, Factor 1, Jitter 0.1), the backoff of retry.RetryOnConflict examples",
		"", ""},
	{"resilience4j", Policy{Kind: Fixed, Base: 500 * time.Millisecond, MaxAttempts: 3},
		"resilience4j-retry RetryConfig.java (DEFAULT_MAX_ATTEMPTS 3, DEFAULT_WAIT_DURATION 500 ms, IntervalFunction.ofDefaults: a fixed 500 ms)",
		"Retry.ofDefaults(): retries every exception, 500 ms apart", ""},
	{"resilience4j-exponential-random", Policy{Kind: Resilience4j, Base: 500 * time.Millisecond, Multiplier: 1.5, Width: 0.5, MaxAttempts: 3},
		"resilience4j-core IntervalFunction.java (ofExponentialRandomBackoff(): DEFAULT_INITIAL_INTERVAL 500, DEFAULT_MULTIPLIER 1.5, DEFAULT_RANDOMIZATION_FACTOR 0.5, no maxInterval) with RetryConfig's 3 attempts",
		"RetryConfig.custom().intervalFunction(IntervalFunction.ofExponentialRandomBackoff())", ""},
	{"failsafe-go", Policy{Kind: Fixed, Base: time.Millisecond, MaxAttempts: 3},
		"failsafe-go v0.9.8 retrypolicy/retry.go (NewWithDefaults: defaultMaxRetries 2, no delay), retrypolicy/retryexecutor.go (getDelay)",
		"no delay at all: 1 ms, the least delay the simulator takes, reaches the next tick exactly as 0 does", ""},
	{"cenkalti-backoff", Policy{Kind: GRPC, Base: 500 * time.Millisecond, Multiplier: 1.5, Cap: time.Minute, Width: 0.5, MaxElapsed: 15 * time.Minute},
		"cenkalti/backoff v5.0.3 exponential.go (DefaultInitialInterval 500 ms, DefaultRandomizationFactor 0.5, DefaultMultiplier 1.5, DefaultMaxInterval 60 s) and retry.go (DefaultMaxElapsedTime 15 min); v4.3.0 has the same numbers",
		"MaxInterval caps the interval before randomisation, so a wait can reach 90 s; v5 moved MaxElapsedTime from ExponentialBackOff to Retry's options (same 15 min), added WithMaxTries (default: none) and RetryAfterError (the operation's own wait, then a reset), none of which changes the defaults", ""},
	{"go-retryablehttp", Policy{Kind: HTTPRetry, Base: time.Second, Multiplier: 2, Cap: 30 * time.Second, MaxAttempts: 5, HonorRetryAfter: true},
		"hashicorp/go-retryablehttp v0.7.8 client.go (defaultRetryWaitMin 1 s, defaultRetryWaitMax 30 s, defaultRetryMax 4; DefaultBackoff honours Retry-After on 429 and 503)",
		"no jitter; a Retry-After is used as is, not capped by RetryWaitMax", ""},
	{"polly-v8", Policy{Kind: Fixed, Base: 2 * time.Second, MaxAttempts: 4},
		"Polly src/Polly.Core/Retry/RetryConstants.cs, commit 243b0443 (DefaultBackoffType Constant, DefaultRetryCount 3, DefaultBaseDelay 2 s), RetryStrategyOptions.TResult.cs (UseJitter false; ShouldHandle: any exception but OperationCanceledException) and RetryHelper.cs (Constant without jitter: the base delay)",
		"new RetryStrategyOptions() as shipped; its ShouldRetry handles exceptions, so an HTTP 503 result is retried only once it is configured to be", ""},
	{"polly-v2", Policy{Kind: PollyV2, Base: time.Second, MaxAttempts: 6},
		"Polly.Contrib.WaitAndRetry Backoff.DecorrelatedJitterV2.cs (the formula), also Polly.Core RetryHelper.cs DecorrelatedJitterBackoffV2 (Exponential with UseJitter)",
		"medianFirstRetryDelay 1 s and 5 retries are the Contrib README's example, not defaults (Polly v8's are 2 s and 3 retries, constant: polly-v8); Polly calls the base the median first delay, not the mean", ""},
	{"google-api-core", Policy{Kind: APICore, Base: time.Second, Multiplier: 2, Cap: time.Minute, MaxElapsed: 2 * time.Minute},
		"googleapis/python-api-core google/api_core/retry (retry_unary.py: _DEFAULT_INITIAL_DELAY 1.0, _DEFAULT_MAXIMUM_DELAY 60.0, _DEFAULT_DELAY_MULTIPLIER 2.0, _DEFAULT_DEADLINE and _DEFAULT_TIMEOUT 120 s; retry_base.py exponential_sleep_generator: uniform(0, delay), delay = min(delay·multiplier, maximum))",
		"retries InternalServerError, TooManyRequests (429), ServiceUnavailable (503) and connection errors (if_transient_error)", ""},
	{"envoy", Policy{Kind: APICore, Base: 25 * time.Millisecond, Multiplier: 2, Cap: 250 * time.Millisecond, MaxAttempts: 2},
		"Envoy router: retry base interval 25 ms, max interval 10 × base, num_retries 1 (docs: x-envoy-max-retries)",
		"the backoff alone, as a route whose retry_on also names 429 (retriable-status-codes) and no cluster cap: Envoy's defaults (retry_on 5xx: a 429 is not retried; at most 3 retries outstanding per cluster) are the envoy-retry-cap preset; the name stays for stored rows' keys; Envoy draws whole milliseconds (random() % interval); we keep the fraction", ""},
	{"sgc-watchdog", Policy{Kind: WatchDog, Base: time.Second, Multiplier: 1},
		"second source: WatchDog defaults Backoff wdbFixed, Jitter 0, MaxInterval 0, Attempts 0",
		"the source states no default Interval; 1 s is its example's value", ""},
	{"sgc-watchdog-example", Policy{Kind: WatchDog, Base: time.Second, Multiplier: 2, Cap: time.Minute, Width: 0.2},
		"second source: the WatchDog example (Interval 1, wdbExponential, BackoffMultiplier 2.0, MaxInterval 60, Jitter 0.2)", "Jitter read as a band 0.2·d wide (±10 %); sgc-watchdog-example-pm reads it as ±20 %", ""},
	{"sgc-watchdog-example-pm", Policy{Kind: SgcPM, Base: time.Second, Multiplier: 2, Cap: time.Minute, Width: 0.2},
		"second source: the WatchDog example, Jitter read as ±j", "the reading its own example (7.1 s for 8 s at Jitter 0.2) needs", ""},
	{"sgc-fleet", Policy{Kind: WatchDog, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5},
		"second source: the conservative fleet profile (Interval 2, BackoffMultiplier 1.5, MaxInterval 120, Jitter 0.5)", "Jitter read as a band 0.5·d wide (±25 %); sgc-fleet-pm reads it as ±50 %", ""},
	{"sgc-fleet-pm", Policy{Kind: SgcPM, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5},
		"second source: the conservative fleet profile, Jitter read as ±j", "", ""},
	{"sgc-http-retry", Policy{Kind: HTTPRetry, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second, Width: 0.2, MaxAttempts: 4, HonorRetryAfter: true},
		"second source: RetryOptions example (MaxRetries 3, InitialInterval 500 ms, MaxInterval 30 s, Multiplier 2.0, Jitter 0.2, HonorRetryAfter True by default)",
		"the source gives no defaults but HonorRetryAfter's; these are its example's values; Jitter read as a band (±10 %), sgc-http-retry-pm reads it as ±20 %", ""},
	{"sgc-http-retry-pm", Policy{Kind: SgcPM, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second, Width: 0.2, MaxAttempts: 4, HonorRetryAfter: true},
		"second source: RetryOptions example, Jitter read as ±j", "", ""},
}

// grpcScope is what the grpc preset's backoff is for.
const grpcScope = "connection backoff, not call retries"

// aws2026 is the AWS SDKs' retry behaviour 2.1: the default of
// aws-sdk-go-v2 since v1.48.0.
var aws2026 = Policy{Kind: AWS2026, Base: 50 * time.Millisecond, Cap: 20 * time.Second, HonorRetryAfter: true, MaxAttempts: 3, BucketTokens: 500, BucketCost: 14}

// Presets returns every library preset, each with Policy.Preset set.
func Presets() []Preset {
	out := make([]Preset, len(presets)+len(componentPresets))
	for i, p := range append(presets[:len(presets):len(presets)], componentPresets...) {
		p.Policy.Preset = p.Name
		out[i] = p
	}
	return out
}

// PresetScope is the Scope of the preset p is ("" for none, or for a
// policy that is no preset).
func (p Policy) PresetScope() string {
	if p.Preset == "" {
		return ""
	}
	pr, _ := PresetByName(p.Preset)
	return pr.Scope
}

// PresetLabel names p's preset where a verdict judges it: the name, and
// its Scope in brackets when it has one ("grpc (connection backoff, not
// call retries)"); "" for a policy that is no preset.
func (p Policy) PresetLabel() string {
	if sc := p.PresetScope(); sc != "" {
		return p.Preset + " (" + sc + ")"
	}
	return p.Preset
}

// retiredPresets are the names no preset has any longer, each with what
// to use instead: a name that meant one library setting does not come
// back meaning another, and a user who writes it is told where it went.
var retiredPresets = map[string]string{
	"urllib3": "urllib3 was a Retry() built without arguments (10 retries) until simulator policy-1: it is urllib3-retry-10; urllib3's own default, when it is given no retries, is urllib3-default (Retry.DEFAULT = Retry(3)), and requests' is requests-default (no retries)",
}

// RetiredPreset says where a retired preset name went, and whether name
// is one.
func RetiredPreset(name string) (string, bool) {
	why, ok := retiredPresets[name]
	return why, ok
}

// PresetByName returns the preset called name, as Presets has it. It
// copies no other preset: loading a config calls it for every cell.
func PresetByName(name string) (Preset, bool) {
	for _, list := range [...][]Preset{presets, componentPresets} {
		for _, p := range list {
			if p.Name == name {
				p.Policy.Preset = p.Name
				return p, true
			}
		}
	}
	return Preset{}, false
}
