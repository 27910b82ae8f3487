package sim

import (
	"testing"
	"time"
)

// Short tells apart the same backoff with and without a limit on giving
// up: a scenario's ranking that holds both must not show two rows of
// "decorrelated 1s ≤1m0s".
func TestShortNamesLimits(t *testing.T) {
	t.Parallel()
	dec := Policy{Kind: Decorrelated, Base: time.Second, Cap: time.Minute}
	with := func(f func(*Policy)) Policy { p := dec; f(&p); return p }
	fj := Policy{Kind: FullJitter, Base: 500 * time.Millisecond, Cap: 20 * time.Second, Multiplier: 3}
	for _, c := range []struct {
		name string
		p    Policy
		want string
	}{
		{"none", dec, "decorrelated 1s ≤1m0s"},
		{"attempts", with(func(p *Policy) { p.MaxAttempts = 8 }), "decorrelated 1s ≤1m0s, at most 8 attempts"},
		{"fleet budget", with(func(p *Policy) { p.RetryBudget = 0.2 }), "decorrelated 1s ≤1m0s, retry budget 20 %"},
		{"fleet budget and a breaker", with(func(p *Policy) { p.RetryBudget, p.BreakerRatio = 0.2, 0.5 }), "decorrelated 1s ≤1m0s, retry budget 20 % + breaker 0.5"},
		{"per-process budget", with(func(p *Policy) { p.RetryBudget, p.ClientsPerProcess = 0.2, 10 }), "decorrelated 1s ≤1m0s + budget 0.2/10"},
		{"elapsed", func() Policy { p := fj; p.MaxElapsed = 2 * time.Minute; return p }(), "full jitter U(0, 1.5s) ×3 ≤20s, gives up after 2m0s"},
		{"bucket", func() Policy { p := fj; p.BucketTokens, p.BucketCost = 500, 5; return p }(), "full jitter U(0, 1.5s) ×3 ≤20s, 500-token bucket"},
		{"retry_on and attempts", with(func(p *Policy) { p.RetryOn, p.MaxAttempts = RetryOn5xx, 3 }), "decorrelated 1s ≤1m0s, at most 3 attempts, retry_on 5xx"},
	} {
		if got := c.p.Normalize().Short(); got != c.want {
			t.Errorf("%s: Short() = %q, want %q", c.name, got, c.want)
		}
	}
}
