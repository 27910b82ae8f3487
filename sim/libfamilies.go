package sim

import (
	"math"
	"time"
)

// libraryFamilies are the families that compute one library's formula
// where no family of families.go does exactly; families appends them, so
// every list, check and name follows as for the others.
var libraryFamilies = []family{
	{
		// aws-sdk-go-v2 v1.48.0 aws/retry/jitter_backoff.go backoffDelay2026:
		// t_i = b·min(x·2^i, MAX_BACKOFF), i = attempt − 1, x = baseDelay
		// (50 ms) or 1 s for a throttling error; middleware.go
		// adjustForRetryAfterHeader clamps x-amz-retry-after to [t_i, t_i + 5 s].
		// botocore retries/standard.py ExponentialBackoff (mode 2.1) is the same.
		Family: Family{Kind: AWS2026, Title: "AWS SDK retry behaviour 2.1 (2026)",
			Formula: "t = U·min(cap, b·2^(n−1)), b = base for a 503, 1 s for a 429 (throttling); with a Retry-After and honor_retry_after: min(max(RA, t), t + 5 s)",
			Source:  "aws-sdk-go-v2 v1.48.0 aws/retry/jitter_backoff.go (backoffDelay2026), middleware.go (adjustForRetryAfterHeader); botocore retries/standard.py (ExponentialBackoff, STANDARD_RETRY_MODE_VERSION 2.1)",
			Note:    "the cap applies before the jitter, so no wait exceeds cap (+ 5 s with a Retry-After); RA stands for x-amz-retry-after, which the SDK reads (not Retry-After); one draw per rejection"},
		ra:   raWithHonor,
		uses: pBase | pCap | pHonor, defaults: Policy{Base: 50 * time.Millisecond, Cap: 20 * time.Second, HonorRetryAfter: true, MaxAttempts: 3},
		bounds: func(p Policy, ra float64, _ bool) (float64, float64) {
			hi := capMS(p)
			if p.HonorRetryAfter && ra > 0 {
				hi += awsRetryAfterSlack
			}
			return 0, hi
		},
		build: func(p Policy) delayer {
			q := p
			q.Multiplier = 2
			t := q
			t.Base = awsThrottleBase
			return aws2026Delay{transient: newCurve(q), throttle: newCurve(t), honor: p.HonorRetryAfter}
		},
	},
	{
		// urllib3 src/urllib3/util/retry.py Retry.get_backoff_time: 0 while
		// the consecutive errors are ≤ 1, else backoff_factor·2^(errors−1)
		// (+ random()·backoff_jitter), then min(backoff_max, …); Retry.sleep
		// waits a Retry-After instead when respect_retry_after_header.
		Family: Family{Kind: URLLib3, Title: "urllib3 Retry",
			Formula: "RA if honor_retry_after and the response has one; else 0 if n = 1, else min(cap, base·2^(n−1) + U·width·base)",
			Source:  "urllib3 src/urllib3/util/retry.py (Retry.get_backoff_time, Retry.sleep, DEFAULT_BACKOFF_MAX 120)",
			Note:    "base is backoff_factor, cap backoff_max, honor_retry_after respect_retry_after_header; backoff_jitter (seconds) is width·base, so width ≤ 1 allows a jitter up to backoff_factor; the first retry waits nothing and draws nothing; a Retry-After is used as sent (urllib3 caps it at retry_after_max, 6 h)"},
		ra:   raWithHonor,
		uses: pBase | pCap | pWidth | pHonor, defaults: Policy{Base: 500 * time.Millisecond, Cap: 120 * time.Second, HonorRetryAfter: true},
		bounds: func(p Policy, ra float64, _ bool) (float64, float64) {
			if p.HonorRetryAfter && ra > 0 {
				return ra, ra
			}
			return 0, capMS(p)
		},
		build: func(p Policy) delayer {
			q := p
			q.Multiplier = 2
			return honoring(p.HonorRetryAfter, urllib3Delay{curve: newCurve(q), jitter: float64(p.Width * ms(p.Base))})
		},
	},
	{
		// resilience4j-core IntervalFunction.ofExponentialRandomBackoff
		// (v2.4.0, commit af9e7c97): interval(attempt) iterates
		// x → (long)(x·multiplier) from the initial interval, then
		// (long)IntervalFunctionCompanion.randomize(interval, factor) =
		// (long)max(1, min + Math.random()·(max − min + 1)), min and max =
		// interval·(1 ∓ factor), then min(…, maxInterval). The "+ 1" makes
		// the draw's range one ms wider than [min, max]; Math.random() is
		// called at factor 0 too.
		Family: Family{Kind: Resilience4j, Title: "exponential random backoff, whole ms (Resilience4j)",
			Formula: "min(cap, ⌊max(1, lo + U·(hi − lo + 1))⌋), lo, hi = i_n·(1 ∓ width), i_1 = base, i_(k+1) = ⌊i_k·multiplier⌋ (ms)",
			Source:  "resilience4j-core v2.4.0 IntervalFunction.java (ofExponentialRandomBackoff, IntervalFunctionCompanion.randomize)",
			Note:    "Resilience4j truncates every interval to whole milliseconds, draws from [lo, hi + 1) ms (one ms past the band, as its randomize writes it), at least 1 ms, and caps after the randomisation (cenkalti and gRPC cap before); cap 0 = no maxInterval; one draw per retry, at width 0 too (it calls Math.random() whatever the factor; Resilience4j refuses a factor ≥ 1)"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: 500 * time.Millisecond, Multiplier: 1.5, Width: 0.5, MaxAttempts: 3},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			r := newR4j(p)
			lo := math.Floor(maxf(1, float64(r.iv[0]-float64(p.Width*r.iv[0]))))
			last := r.iv[curveTab-1]
			return minf(r.cap, lo), minf(r.cap, float64(last+float64(p.Width*last))+1)
		},
		build: func(p Policy) delayer { return newR4j(p) },
	},
	{
		// k8s.io/apimachinery pkg/util/wait backoff.go delay: the step's
		// duration (capped when it was computed as the previous step's next),
		// then Jitter(duration, jitter) = duration + rand·jitter·duration.
		Family: Family{Kind: K8sWait, Title: "exponential + upward jitter (Kubernetes wait.Backoff)",
			Formula: "min(cap, base·multiplier^(n−1)) · (1 + width·U)",
			Source:  "k8s.io/apimachinery v0.37.2 pkg/util/wait/backoff.go (Backoff.Step, delay), wait.go (Jitter)",
			Note:    "base is Duration, multiplier Factor, width Jitter, cap Cap (0 = none); max_attempts = Steps (wait.ExponentialBackoff tries Steps times); the jitter only lengthens a wait, after the cap; no draw when width is 0"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: 10 * time.Millisecond, Multiplier: 5, Width: 0.1, MaxAttempts: 4},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			c := newCurve(p)
			return c.at(0), c.cap * (1 + p.Width)
		},
		build: func(p Policy) delayer { return k8sDelay{newCurve(p), p.Width} },
	},
	{
		// The second source's WatchDog and RetryOptions with Jitter j read as
		// ±j (its own example, 7.1 s for a nominal 8 s at Jitter 0.2, needs
		// it) rather than as a band j wide: families watchdog and http-retry.
		Family: Family{Kind: SgcPM, Title: "second source, Jitter read as ±j",
			Formula: "RA if honor_retry_after and the response has one, else min(cap, base·multiplier^(n−1)) · (1 + width·(2U − 1))",
			Source:  "second source: WatchDog and RetryOptions (Interval, BackoffMultiplier, MaxInterval, Jitter, HonorRetryAfter), its example of 7.1 s for 8 s at Jitter 0.2",
			Note:    "the other reading of Jitter than watchdog and http-retry (a band width·d wide, ±width/2); no draw when width is 0"},
		ra:   raWithHonor,
		uses: pBase | pCap | pMultiplier | pWidth | pHonor, defaults: Policy{Base: time.Second, Multiplier: 2},
		bounds: func(p Policy, ra float64, _ bool) (float64, float64) {
			if p.HonorRetryAfter && ra > 0 {
				return ra, ra
			}
			c := newCurve(p)
			return c.at(0) * (1 - p.Width), c.cap * (1 + p.Width)
		},
		build: func(p Policy) delayer {
			return honoring(p.HonorRetryAfter, sgcPMDelay{symmetricDelay{newCurve(p), p.Width}})
		},
	},
}

// awsThrottleBase is the AWS SDKs' base delay for a throttling error, which
// no option changes (aws-sdk-go-v2 StandardOptions.BaseDelay: "Throttling
// errors always use 1s").
const awsThrottleBase = time.Second

// awsRetryAfterSlack (ms) is how far past the computed delay the AWS SDKs
// follow an x-amz-retry-after.
const awsRetryAfterSlack = 5000

type aws2026Delay struct {
	transient, throttle curve
	honor               bool
}

func (d aws2026Delay) delay(c *client, r response, rng *Mulberry32) float64 {
	x := d.transient
	if r.up {
		x = d.throttle
	}
	t := float64(rng.Float64() * x.at(c.att-1))
	if d.honor && r.retryAfter > 0 {
		return minf(maxf(r.retryAfter, t), t+awsRetryAfterSlack)
	}
	return t
}

type urllib3Delay struct {
	curve
	jitter float64 // ms
}

func (d urllib3Delay) delay(c *client, _ response, rng *Mulberry32) float64 {
	if c.att <= 1 {
		return 0
	}
	// min(cap, min(cap, x) + j) = min(cap, x + j): the capped curve serves.
	v := d.at(c.att - 1)
	if d.jitter > 0 {
		v += float64(rng.Float64() * d.jitter)
	}
	return minf(d.cap, v)
}

// r4jDelay is Resilience4j's exponential random backoff with its intervals
// tabulated, each truncated to whole ms as IntervalFunction computes them.
type r4jDelay struct {
	iv         *[curveTab]float64
	cap, width float64
}

func newR4j(p Policy) r4jDelay {
	d := r4jDelay{iv: new([curveTab]float64), cap: capMS(p), width: p.Width}
	x := ms(p.Base)
	for i := range d.iv {
		d.iv[i] = x
		x = math.Floor(float64(x * p.Multiplier))
	}
	return d
}

func (d r4jDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	i := d.iv[min(int(c.att), curveTab)-1]
	lo := float64(i - float64(d.width*i))
	hi := float64(i + float64(d.width*i))
	v := math.Floor(maxf(1, float64(lo+float64(rng.Float64()*float64(hi-lo+1)))))
	return minf(d.cap, v)
}

type k8sDelay struct {
	curve
	width float64
}

func (d k8sDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	v := d.at(c.att - 1)
	if d.width > 0 {
		v += float64(rng.Float64() * float64(d.width*v))
	}
	return v
}

// sgcPMDelay is symmetricDelay that draws nothing at width 0, as the second
// source's sgcNextBackoffMs.
type sgcPMDelay struct{ symmetricDelay }

func (d sgcPMDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	if d.width == 0 {
		return d.at(c.att - 1)
	}
	return d.symmetricDelay.delay(c, r, rng)
}
