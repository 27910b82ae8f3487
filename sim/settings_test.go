package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// settingPolicies are n valid policies of the families Settings writes
// out, with attempt limits, per-client buckets, budgets (fleet-wide and
// per process), gRPC retry throttling and Envoy's retry cap.
func settingPolicies(seed uint64, n int) []Policy {
	rng := rand.New(rand.NewPCG(seed, 4))
	kinds := []Kind{GRPC, APICore, FullJitter, EqualJitter, Exponential, WidthJitter, Decorrelated}
	var out []Policy
	for len(out) < n {
		p := Policy{Kind: kinds[rng.IntN(len(kinds))], Base: time.Duration(1+rng.IntN(20)) * 100 * time.Millisecond,
			Multiplier: []float64{1.5, 2, 3}[rng.IntN(3)], Width: []float64{0.1, 0.2, 0.5}[rng.IntN(3)]}
		p.Cap = p.Base * time.Duration(10+rng.IntN(100))
		if rng.IntN(2) == 0 {
			p.MaxAttempts = 2 + rng.IntN(10)
		}
		switch rng.IntN(5) {
		case 0:
			p.BucketTokens, p.BucketCost = 5+rng.IntN(100), 1+rng.IntN(10)
		case 1:
			p.RetryBudget, p.BudgetMinRPS = float64(1+rng.IntN(50))/100, float64(rng.IntN(40))/2
		case 2:
			p.RetryTokens, p.RetryTokenRatio = float64(1+rng.IntN(200))/2, float64(1+rng.IntN(1000))/1000
		case 3:
			p.RetryCap = 1 + rng.IntN(20)
		}
		if p.RetryBudget > 0 || p.RetryTokens > 0 || p.RetryCap > 0 {
			p.ClientsPerProcess = []int{0, 100}[rng.IntN(2)]
			if p.RetryBudget == 0 && p.ClientsPerProcess == 0 && p.RetryTokens == 0 && p.RetryCap == 0 {
				p.ClientsPerProcess = 0
			}
		}
		p = p.Normalize()
		if p.Validate() == nil {
			out = append(out, p)
		}
	}
	return out
}

// attemptLimit is the most requests a client of p sends (0: no limit): a
// per-client bucket that successes never refill pays for
// BucketTokens/BucketCost retries.
func attemptLimit(p Policy) int {
	n := p.MaxAttempts
	if p.BucketTokens > 0 {
		if b := p.BucketTokens/p.BucketCost + 1; n == 0 || b < n {
			n = b
		}
	}
	return n
}

func settingOf(p Policy, library string) (Setting, bool) {
	for _, s := range p.Settings() {
		if s.Library == library {
			return s, true
		}
	}
	return Setting{}, false
}

// Polly v8's MaxRetryAttempts is "the maximum number of retries to use, in
// addition to the original call" (RetryStrategyOptions.TResult.cs), and
// int.MaxValue retries indefinitely: a policy of n attempts is n − 1
// retries.
func TestPollyMaxRetryAttemptsCountsRetries(t *testing.T) {
	t.Parallel()
	for _, p := range settingPolicies(1, 300) {
		s, ok := settingOf(p, "Polly v8")
		if !ok {
			t.Fatalf("%s: no Polly v8 setting", p.Short())
		}
		want := "MaxRetryAttempts = int.MaxValue"
		if n := attemptLimit(p); n > 0 {
			want = fmt.Sprintf("MaxRetryAttempts = %d;", n-1)
		}
		if !strings.Contains(s.How, want) {
			t.Errorf("%s (%d attempts): %q, want %q", p.Short(), attemptLimit(p), s.How, want)
		}
	}
}

// Every setting says what it does with each of the policy's limits — the
// retry budget (fleet-wide too), gRPC retry throttling, the per-client
// retry quota, Envoy's cap — and a setting that names a limit as not
// expressible is not exact.
func TestSettingsSayEveryLimit(t *testing.T) {
	t.Parallel()
	for _, p := range settingPolicies(2, 400) {
		for _, s := range p.Settings() {
			check := func(on bool, word string) {
				if on && !strings.Contains(s.How, word) {
					t.Errorf("%s: %s: %q does not say %q", p.Short(), s.Library, s.How, word)
				}
			}
			check(p.RetryBudget > 0, "retry budget")
			check(p.RetryTokens > 0, "retry throttling")
			check(p.BucketTokens > 0, fmt.Sprintf("%d-token", p.BucketTokens))
			check(p.RetryCap > 0, "retries outstanding")
			if s.Exact && (strings.Contains(s.How, "not expressible") || strings.Contains(s.How, "not built in") || strings.Contains(s.How, "not exact")) {
				t.Errorf("%s: %s: exact, yet %q", p.Short(), s.Library, s.How)
			}
		}
	}
}

// Finagle's RetryBudget is the simulator's retry budget (RetryBudget.scala:
// a request deposits 1000 tokens, a retry withdraws 1000/percentCanRetry,
// deposits expire after ttl, plus minRetriesPerSec × ttl retries in
// reserve; ttl 10 s is the simulator's window): exact where
// minRetriesPerSec, an Int, and the withdrawal, an Int, are whole. Envoy's
// and failsafe-go's budgets bound retries in flight, not retries per
// window, and Resilience4j, Polly, grpc-go and the AWS SDK have none.
func TestRetryBudgetSettings(t *testing.T) {
	t.Parallel()
	ps := []Policy{Policy{Kind: Decorrelated, Base: time.Second, Cap: 30 * time.Second, RetryBudget: 0.1, BudgetMinRPS: 10, ClientsPerProcess: 100}.Normalize()}
	for _, p := range settingPolicies(3, 400) {
		if p.RetryBudget > 0 {
			ps = append(ps, p)
		}
	}
	for _, p := range ps {
		fin, ok := settingOf(p, "Finagle")
		if !ok {
			t.Fatalf("%s: no Finagle setting", p.Short())
		}
		call := fmt.Sprintf("RetryBudget(ttl = 10.seconds, minRetriesPerSec = %d, percentCanRetry = %g)", int(p.BudgetMinRPS), p.RetryBudget)
		whole := p.BudgetMinRPS == math.Trunc(p.BudgetMinRPS) && 1000/p.RetryBudget == math.Trunc(1000/p.RetryBudget)
		if !strings.Contains(fin.How, call) || strings.Contains(fin.How, "not exact") == whole {
			t.Errorf("%s: Finagle %q: want %s, exact %v", p.Short(), fin.How, call, whole)
		}
		for _, lib := range []string{"Envoy", "failsafe-go v0.9.8"} {
			s, _ := settingOf(p, lib)
			if s.Exact || !strings.Contains(s.How, "not expressible: ") || !strings.Contains(s.How, "concurrency") {
				t.Errorf("%s: %s %q: want the budget not expressible, said to be a concurrency", p.Short(), lib, s.How)
			}
		}
		for _, lib := range []string{"Resilience4j", "Polly v8", "grpc-go (call retries)", "aws-sdk-go-v2"} {
			if s, _ := settingOf(p, lib); s.Exact || !strings.Contains(s.How, "budget") {
				t.Errorf("%s: %s %q: want the budget said not expressible", p.Short(), lib, s.How)
			}
		}
	}
}
