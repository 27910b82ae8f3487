package sim

import (
	"math"
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"
)

// families is the one place policy families are defined: a new family is one
// entry here (with its delayer below) or, for one library's formula, in
// libraryFamilies, and every list, check and name follows.
var families = append([]family{
	{
		Family: Family{Kind: Fixed, Title: "fixed interval",
			Formula: "base",
			Source:  "article table 1 (fixed 5 s)"},
		uses: pBase, defaults: Policy{Base: 5 * time.Second},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) { return ms(p.Base), ms(p.Base) },
		build:  func(p Policy) delayer { return fixedDelay{ms(p.Base)} },
	},
	{
		Family: Family{Kind: Exponential, Title: "exponential backoff, no jitter",
			Formula: "min(cap, base·multiplier^n)",
			Source:  "article tables 1–3",
			Note:    "n = 1 on the first rejection, so base 1 s gives 2 s, 4 s, 8 s …; the cap re-aligns clients"},
		uses: pBase | pCap | pMultiplier, defaults: Policy{Base: time.Second, Cap: time.Minute, Multiplier: 2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) { c := newCurve(p); return c.at(1), c.cap },
		build:  func(p Policy) delayer { return &expDelay{newCurve(p)} },
	},
	{
		Family: Family{Kind: FullJitter, Title: "exponential + full jitter",
			Formula: "U(0, min(cap, base·multiplier^n))",
			Source:  "article tables 1 and 3"},
		uses: pBase | pCap | pMultiplier, defaults: Policy{Base: time.Second, Cap: time.Minute, Multiplier: 2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) { return 0, capMS(p) },
		build:  func(p Policy) delayer { return &fullJitterDelay{newCurve(p)} },
	},
	{
		Family: Family{Kind: EqualJitter, Title: "exponential + equal jitter",
			Formula: "d/2 + U(0, d/2), d = min(cap, base·multiplier^n)",
			Source:  "article table 1"},
		uses: pBase | pCap | pMultiplier, defaults: Policy{Base: time.Second, Cap: time.Minute, Multiplier: 2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) { c := newCurve(p); return c.at(1) / 2, c.cap },
		build:  func(p Policy) delayer { return &equalJitterDelay{newCurve(p)} },
	},
	{
		Family: Family{Kind: Decorrelated, Title: "decorrelated jitter",
			Formula: "min(cap, base + U·(max(2·base, 3·prev) − base)), prev = the last delay (base at first)",
			Source:  "article tables 1, 3 and 4"},
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute},
		bounds: decorrelatedBounds,
		build:  func(p Policy) delayer { return &decorrelatedDelay{newDecorrelated(p)} },
	},
	{
		Family: Family{Kind: WidthJitter, Title: "exponential ± width jitter",
			Formula: "min(cap, base·multiplier^n) · (1 + width·(2U − 1))",
			Source:  "article table 3 (±10 %, ±25 %)",
			Note:    "applied after the cap, so a delay may exceed it by up to width·cap, as the article measured"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: time.Second, Cap: time.Minute, Multiplier: 2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			c := newCurve(p)
			return c.at(1) * (1 - p.Width), c.cap * (1 + p.Width)
		},
		build: func(p Policy) delayer { return &widthJitterDelay{newCurve(p), p.Width} },
	},
	{
		Family: Family{Kind: RAExact, Title: "honour Retry-After exactly",
			Formula: "RA",
			Source:  "article table 4",
			Note:    "while the server is down every ra-* policy but ra-ignore waits exactly RA and draws nothing (the article's model); without a Retry-After: decorrelated jitter"},
		ra:   raAlways,
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute},
		bounds: raBounds(func(ra, _ float64) (float64, float64) { return ra, ra }),
		build:  func(p Policy) delayer { return raDelay{newDecorrelated(p), raExactRule} },
	},
	{
		Family: Family{Kind: RAFullJitter, Title: "Retry-After + full jitter",
			Formula: "U(0, RA) after recovery; RA while down",
			Source:  "article table 4",
			Note:    "without a Retry-After: decorrelated jitter"},
		ra:   raAlways,
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute},
		bounds: raBounds(func(ra, _ float64) (float64, float64) { return 0, ra }),
		build:  func(p Policy) delayer { return raDelay{newDecorrelated(p), raFullJitterRule} },
	},
	{
		Family: Family{Kind: RALowerBound, Title: "Retry-After as lower bound",
			Formula: "RA + U·max(RA, base) after recovery; RA while down",
			Source:  "article table 4 (×1..2)",
			Note:    "without a Retry-After: decorrelated jitter"},
		ra:   raAlways,
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute},
		bounds: raBounds(func(ra, base float64) (float64, float64) { return ra, ra + maxf(ra, base) }),
		build:  func(p Policy) delayer { return raDelay{newDecorrelated(p), raLowerBoundRule} },
	},
	{
		Family: Family{Kind: RAIgnore, Title: "ignore Retry-After, decorrelated",
			Formula: "decorrelated jitter, whatever the server sends",
			Source:  "article table 4"},
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute},
		bounds: decorrelatedBounds,
		build:  func(p Policy) delayer { return &decorrelatedDelay{newDecorrelated(p)} },
	},
	{
		Family: Family{Kind: ArticleClient, Title: "the article's client",
			Formula: "min(cap, w + offset·base), w = RA + U·max(RA, base) with a Retry-After, else decorrelated; offset = (FNV-1a(install id) mod 100000)/100000",
			Source:  "article's fetchWithRetry (base 1 s, cap 60 s, 6 attempts)",
			Note:    "install id of client i is \"install-i\"; prev is w, without the offset; gives up after max_attempts requests without drawing again"},
		ra:   raAlways,
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: time.Minute, MaxAttempts: 6},
		bounds: func(p Policy, ra float64, _ bool) (float64, float64) {
			c, b := capMS(p), ms(p.Base)
			if ra > 0 {
				return minf(c, ra), minf(c, ra+maxf(ra, b)+b)
			}
			return minf(c, b), c
		},
		build: func(p Policy) delayer { return articleClientDelay{newDecorrelated(p)} },
	},
	{
		// grpc-go backoff (internal/backoff, backoff.DefaultConfig): delay =
		// min(MaxDelay, BaseDelay·Multiplier^retries), then ×(1 + Jitter·(2U−1)),
		// retries counted from 0 — except that grpc-go waits exactly
		// BaseDelay on the first retry: that is family grpc-go. This one is
		// cenkalti/backoff's ExponentialBackOff (RandomizationFactor is the
		// width), which jitters its first interval too.
		Family: Family{Kind: GRPC, Title: "exponential ± symmetric jitter (gRPC, cenkalti)",
			Formula: "min(cap, base·multiplier^(n−1)) · (1 + width·(2U − 1))",
			Source:  "cenkalti/backoff ExponentialBackOff; grpc-go internal/backoff after its first retry",
			Note:    "the first retry waits base ± width (cenkalti; grpc-go waits exactly base: family grpc-go); the jitter is applied after the cap, so a delay may reach cap·(1 + width)"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: time.Second, Cap: 2 * time.Minute, Multiplier: 1.6, Width: 0.2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			c := newCurve(p)
			return c.at(0) * (1 - p.Width), c.cap * (1 + p.Width)
		},
		build: func(p Policy) delayer { return symmetricDelay{newCurve(p), p.Width} },
	},
	{
		// grpc-go internal/backoff Exponential.Backoff(retries): BaseDelay
		// exactly when retries == 0 (no jitter, no draw); else
		// min(MaxDelay, BaseDelay·Multiplier^retries)·(1 + Jitter·(2U − 1)).
		// Connection backoff counts retries from 0 at the first failure, so
		// the n-th rejection uses retries = n − 1.
		Family: Family{Kind: GRPCGo, Title: "exponential ± symmetric jitter, exact first retry (grpc-go)",
			Formula: "base if n = 1, else min(cap, base·multiplier^(n−1)) · (1 + width·(2U − 1))",
			Source:  "grpc-go internal/backoff/backoff.go (Exponential.Backoff); gRPC doc/connection-backoff.md",
			Note:    "the first retry waits exactly base and draws nothing; later ones as the grpc family"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: time.Second, Cap: 2 * time.Minute, Multiplier: 1.6, Width: 0.2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			c := newCurve(p)
			return minf(c.at(0), c.at(1)*(1-p.Width)), maxf(c.at(0), c.cap*(1+p.Width))
		},
		build: func(p Policy) delayer { return grpcGoDelay{symmetricDelay{newCurve(p), p.Width}} },
	},
	{
		// google-api-core retry.exponential_sleep_generator: uniform(0,
		// max_delay), max_delay = min(maximum, initial·multiplier^(n−1)).
		// Envoy's JitteredExponentialBackOffStrategy has the same shape
		// (random() % interval, in whole milliseconds; we keep the fraction).
		Family: Family{Kind: APICore, Title: "full jitter from the base (google-api-core, Envoy)",
			Formula: "U(0, min(cap, base·multiplier^(n−1)))",
			Source:  "google-api-core retry.exponential_sleep_generator; Envoy JitteredExponentialBackOffStrategy",
			Note:    "unlike full-jitter, the first retry draws from [0, base), not [0, 2·base)"},
		uses: pBase | pCap | pMultiplier, defaults: Policy{Base: time.Second, Cap: time.Minute, Multiplier: 2},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) { return 0, capMS(p) },
		build:  func(p Policy) delayer { return apiCoreDelay{newCurve(p)} },
	},
	{
		// aws-sdk-go-v2 aws/retry ExponentialJitterBackoff.BackoffDelay: for
		// attempt > int(log2(MaxBackoff/1s)) the delay is MaxBackoff, exactly;
		// else U·2^attempt seconds. Standard retryer: MaxAttempts 3,
		// MaxBackoff 20 s (aws/retry/standard.go).
		Family: Family{Kind: AWSStandard, Title: "AWS SDK standard retryer",
			Formula: "cap if n > ⌊log2(cap/1 s)⌋, else U·base·2^n",
			Source:  "aws-sdk-go-v2 aws/retry/jitter_backoff.go, standard.go",
			Note:    "base is the SDK's one second unit; past the cap there is no jitter at all"},
		uses: pBase | pCap, defaults: Policy{Base: time.Second, Cap: 20 * time.Second, MaxAttempts: 3},
		bounds: func(p Policy, _ float64, _ bool) (float64, float64) {
			return 0, math.Max(capMS(p), ms(p.Base)*math.Pow(2, awsMaxN(p)))
		},
		build: func(p Policy) delayer { return awsDelay{base: ms(p.Base), cap: capMS(p), maxN: int32(awsMaxN(p))} },
	},
	{
		// Polly.Contrib.WaitAndRetry Backoff.DecorrelatedJitterBackoffV2:
		// t = (n−1) + U; next = 2^t·tanh(√(4t)); delay = (next − prev)·base/1.4.
		Family: Family{Kind: PollyV2, Title: "Polly decorrelated jitter V2",
			Formula: "(f(n−1+U) − f(prev))·base/1.4, f(t) = 2^t·tanh(√(4t)); then min(cap, …)",
			Source:  "Polly.Contrib.WaitAndRetry Backoff.DecorrelatedJitterV2.cs",
			Note:    "base is Polly's medianFirstRetryDelay (Polly v8: BaseDelay, \"the median delay to target before the first retry\"); cap 0 = none (Contrib has none; Polly v8 adds MaxDelay)"},
		ra:   raWithHonor,
		uses: pBase | pCap | pHonor, defaults: Policy{Base: time.Second, MaxAttempts: 6},
		bounds: func(p Policy, ra float64, _ bool) (float64, float64) {
			if p.HonorRetryAfter && ra > 0 {
				return ra, ra
			}
			return 0, capMS(p)
		},
		// honor_retry_after: Microsoft.Extensions.Http.Resilience's
		// HttpRetryStrategyOptions.ShouldRetryAfterHeader (true by default),
		// whose DelayGenerator returns the header's value, which Polly v8's
		// retry then waits instead of its computed delay: computed all the
		// same (pollyDelay.delay).
		build: func(p Policy) delayer {
			return pollyDelay{base: ms(p.Base), cap: capMS(p), honor: p.HonorRetryAfter}
		},
	},
	{
		Family: Family{Kind: WatchDog, Title: "exponential with a jitter band (sgcWebSockets WatchDog)",
			Formula: "d·(1 + width·(U − 0.5)), d = min(cap, base·multiplier^(n−1))",
			Source:  "second source: WatchDog Interval, Backoff, BackoffMultiplier, MaxInterval, Jitter, Attempts",
			Note:    "multiplier 1 is Backoff = wdbFixed; cap 0 is MaxInterval = 0 (no cap); width is Jitter read as \"a band width·d wide centred on d\" (the source's words; its own example of 7.1 s for 8 s at 0.2 lies outside that band); max_attempts = Attempts + 1; no draw when width is 0; the default multiplier 2 is not the document's fixed interval (Backoff wdbFixed, preset sgc-watchdog): family defaults are part of stored runs' keys, so they stay; sgc-pm reads Jitter as ±width"},
		uses: pBase | pCap | pMultiplier | pWidth, defaults: Policy{Base: time.Second, Multiplier: 2},
		bounds: sgcBounds,
		build:  func(p Policy) delayer { return sgcDelay{newSgc(p)} },
		band:   true,
	},
	{
		Family: Family{Kind: HTTPRetry, Title: "HTTP retry honouring Retry-After (sgcWebSockets RetryOptions)",
			Formula: "RA if honor_retry_after and the response has one, else as watchdog",
			Source:  "second source: RetryOptions InitialInterval, Multiplier, MaxInterval, Jitter, MaxRetries, HonorRetryAfter",
			Note:    "max_attempts = MaxRetries + 1; a Retry-After overrides the computed delay exactly, without jitter or cap; the document defaults HonorRetryAfter to true, the family to false (set honor_retry_after, or use the preset sgc-http-retry): family defaults are part of stored runs' keys, so they stay"},
		ra:   raWithHonor,
		uses: pBase | pCap | pMultiplier | pWidth | pHonor, defaults: Policy{Base: 500 * time.Millisecond, Multiplier: 2},
		bounds: func(p Policy, ra float64, up bool) (float64, float64) {
			if p.HonorRetryAfter && ra > 0 {
				return ra, ra
			}
			return sgcBounds(p, ra, up)
		},
		build: func(p Policy) delayer { return honoring(p.HonorRetryAfter, sgcDelay{newSgc(p)}) },
		band:  true,
	},
}, libraryFamilies...)

func decorrelatedBounds(p Policy, _ float64, _ bool) (float64, float64) {
	return minf(capMS(p), ms(p.Base)), capMS(p)
}

func raBounds(rule func(ra, base float64) (lo, hi float64)) func(Policy, float64, bool) (float64, float64) {
	return func(p Policy, ra float64, up bool) (float64, float64) {
		switch {
		case ra <= 0:
			return decorrelatedBounds(p, ra, up)
		case !up:
			return ra, ra
		}
		return rule(ra, ms(p.Base))
	}
}

func sgcBounds(p Policy, _ float64, _ bool) (float64, float64) {
	c := newCurve(p)
	return c.at(0) * (1 - p.Width/2), c.cap * (1 + p.Width/2)
}

// capMS returns the cap in ms, +Inf for none.
func capMS(p Policy) float64 {
	if p.Cap == 0 {
		return math.Inf(1)
	}
	return ms(p.Cap)
}

func minf(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func maxf(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}

type fixedDelay struct{ d float64 }

func (f fixedDelay) delay(c *client, _ response, _ *Mulberry32) float64 { return f.d }

// curve is the article's exponential: min(cap, base·m^n). The first
// values are tabulated: math.Pow is the slowest step of a rejection, and a
// table of its own results keeps every bit.
type curve struct {
	base, cap, mult float64
	tab             *[curveTab]float64
}

const curveTab = 64

func newCurve(p Policy) curve {
	c := curve{base: ms(p.Base), cap: capMS(p), mult: p.Multiplier}
	c.tab = curveTables.of(c)
	return c
}

// curveTables remembers the tables of the last curves built, by their
// parameters: a run builds its policy's delayer, and 64 math.Pow calls
// and an allocation were a tenth of a run of exponential backoff without
// jitter (BenchmarkTable1). A table is never written once published, so
// runs on other goroutines may share it; a slot lost to a race is only a
// table computed again.
var curveTables curveMemo

type curveMemo [16]atomic.Pointer[curveTable]

type curveTable struct {
	key [3]uint64 // the bits of base, cap and mult
	tab [curveTab]float64
}

func (m *curveMemo) of(c curve) *[curveTab]float64 {
	key := [3]uint64{math.Float64bits(c.base), math.Float64bits(c.cap), math.Float64bits(c.mult)} // bits: -0 is not 0 here
	h := key[0]*31 ^ key[1]*17 ^ key[2]
	slot := &m[(h^h>>29^h>>47)%uint64(len(m))]
	if t := slot.Load(); t != nil && t.key == key {
		return &t.tab
	}
	t := &curveTable{key: key}
	for n := range t.tab {
		t.tab[n] = c.calc(int32(n))
	}
	slot.Store(t)
	return &t.tab
}

func (c curve) calc(n int32) float64 { return minf(c.cap, c.base*math.Pow(c.mult, float64(n))) }

func (c curve) at(n int32) float64 {
	if uint32(n) < curveTab {
		return c.tab[n]
	}
	return c.calc(n)
}

// The article's families' delayers have pointer receivers, as the
// interface holds them: with value receivers every call went through a
// wrapper that copied the delayer and called the method (the wrappers'
// own time: 3–5 % of the profile of a table 1 row with jitter).
type expDelay struct{ curve }

func (e *expDelay) delay(c *client, _ response, _ *Mulberry32) float64 { return e.at(c.att) }

type fullJitterDelay struct{ curve }

func (e *fullJitterDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	return float64(rng.Float64() * e.at(c.att))
}

type equalJitterDelay struct{ curve }

func (e *equalJitterDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	d := e.at(c.att)
	return d/2 + float64(rng.Float64()*d)/2
}

type widthJitterDelay struct {
	curve
	width float64
}

func (e *widthJitterDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	return float64(e.at(c.att) * (1 + float64(e.width*(float64(2*rng.Float64())-1))))
}

// decorrelated is the article's decorrelated jitter; it reads and sets prev.
type decorrelated struct{ base, cap float64 }

func newDecorrelated(p Policy) decorrelated { return decorrelated{ms(p.Base), capMS(p)} }

func (d decorrelated) next(c *client, rng *Mulberry32) float64 {
	v := minf(d.cap, d.base+float64(rng.Float64()*(maxf(2*d.base, 3*c.prev)-d.base)))
	c.prev = v
	return v
}

type decorrelatedDelay struct{ decorrelated }

func (d *decorrelatedDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	return d.next(c, rng)
}

type raRule uint8

const (
	raExactRule raRule = iota
	raFullJitterRule
	raLowerBoundRule
)

// raDelay is the article's table 4: while down, wait RA exactly; after
// recovery, the row's rule; with no Retry-After at all, decorrelated jitter.
type raDelay struct {
	decorrelated
	rule raRule
}

func (d raDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	ra := r.retryAfter
	if ra <= 0 {
		return d.next(c, rng)
	}
	v := ra
	if r.up {
		switch d.rule {
		case raFullJitterRule:
			v = float64(rng.Float64() * ra)
		case raLowerBoundRule:
			v = ra + float64(rng.Float64()*maxf(ra, d.base))
		}
	}
	c.prev = v
	return v
}

type articleClientDelay struct{ decorrelated }

func (d articleClientDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	var w float64
	if ra := r.retryAfter; ra > 0 {
		w = ra + float64(rng.Float64()*maxf(ra, d.base))
		c.prev = w
	} else {
		w = d.next(c, rng)
	}
	return minf(d.cap, w+float64(InstallOffset(r.index)*d.base))
}

// InstallOffset is the article's per-install offset in [0, 1) for client i:
// 32-bit FNV-1a of its install id "install-i", (h mod 100000)/100000.
func InstallOffset(i int32) float64 {
	var buf [12]byte
	digits := strconv.AppendInt(buf[:0], int64(i), 10)
	h := fnvInstall // the hash of "install-", computed once
	for _, b := range digits {
		h ^= uint32(b)
		h *= 16777619
	}
	return float64(h%100000) / 100000
}

// fnvInstall is 32-bit FNV-1a of "install-".
var fnvInstall = func() uint32 {
	h := uint32(2166136261)
	for _, b := range []byte("install-") {
		h ^= uint32(b)
		h *= 16777619
	}
	return h
}()

// sgc is the second source's sgcNextBackoffMs: min(cap, base·m^(n−1)), then
// a jitter band of width·d centred on d.
type sgc struct {
	curve
	width float64
}

func newSgc(p Policy) sgc { return sgc{newCurve(p), p.Width} }

type sgcDelay struct{ sgc }

func (d sgcDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	v := d.at(c.att - 1)
	if d.width > 0 {
		v = float64(v * (1 + float64(d.width*(rng.Float64()-0.5))))
	}
	return v
}

// honorRA waits a response's Retry-After exactly when it carries one, and
// asks inner otherwise: honor_retry_after in every family that reads it so.
type honorRA struct{ inner delayer }

func (h honorRA) delay(c *client, r response, rng *Mulberry32) float64 {
	if r.retryAfter > 0 {
		return r.retryAfter
	}
	return h.inner.delay(c, r, rng)
}

// honoring wraps d in honorRA when honor is set.
func honoring(honor bool, d delayer) delayer {
	if honor {
		return honorRA{d}
	}
	return d
}

// symmetricDelay is gRPC's and cenkalti's: d·(1 + w·(2U − 1)), d from n−1.
type symmetricDelay struct {
	curve
	width float64
}

func (d symmetricDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	return float64(d.at(c.att-1) * (1 + float64(d.width*(float64(2*rng.Float64())-1))))
}

// grpcGoDelay is grpc-go's: the first retry waits exactly base, with no draw.
type grpcGoDelay struct{ symmetricDelay }

func (d grpcGoDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	if c.att == 1 {
		return d.at(0)
	}
	return d.symmetricDelay.delay(c, r, rng)
}

type apiCoreDelay struct{ curve }

func (d apiCoreDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	return float64(rng.Float64() * d.at(c.att-1))
}

// awsMaxN is int(log2(cap in base units)): the last attempt with jitter.
func awsMaxN(p Policy) float64 {
	if p.Cap == 0 {
		return 62
	}
	if p.Cap < p.Base {
		return math.Floor(math.Log2(float64(p.Cap) / float64(p.Base)))
	}
	// ⌊log2(cap/base)⌋ = ⌊log2(⌊cap/base⌋)⌋, in integers: math.Log2 may
	// round differently on other CPUs.
	return float64(bits.Len64(uint64(p.Cap/p.Base)) - 1)
}

type awsDelay struct {
	base, cap float64
	maxN      int32
}

func (d awsDelay) delay(c *client, _ response, rng *Mulberry32) float64 {
	if c.att > d.maxN {
		return d.cap
	}
	return float64(rng.Float64() * d.base * float64(int64(1)<<uint(c.att)))
}

type pollyDelay struct {
	base, cap float64
	honor     bool // a Retry-After replaces the computed delay
}

// delay keeps Polly's running "prev" (the formula's last value, not a
// delay) in c.prev, which starts at the family's base: Polly starts at 0.
//
// It computes the formula, and so draws and moves prev, on every retry,
// also when a Retry-After then replaces the delay: Polly
// src/Polly.Core/Retry/RetryResilienceStrategy.cs (commit 173d6d1d, after
// 8.7.0) calls RetryHelper.GetRetryDelay(…, ref retryState, _randomizer)
// first and lets the DelayGenerator (the standard handler's Retry-After)
// replace the value after. Before PolicyVersion policy-1 the Retry-After
// skipped the formula, and the next retry read prev still at the base, in
// ms, as if it were the formula's value: a negative wait, so the client
// gave up.
func (d pollyDelay) delay(c *client, r response, rng *Mulberry32) float64 {
	prev := c.prev
	if c.att == 1 {
		prev = 0
	}
	t := float64(c.att-1) + rng.Float64()
	next := float64(exp2(t) * tanh(2*math.Sqrt(t))) // 2^t·tanh(√(4t)), as Polly writes it
	c.prev = next
	if d.honor && r.retryAfter > 0 {
		return r.retryAfter
	}
	return minf(d.cap, float64((next-prev)*(1/1.4)*d.base))
}
