package paste

import (
	"math/rand/v2"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// answers are the answers the envelope's search can give (analysis
// BeyondBackoff on BeyondBackoffCurves): each curve alone, with a retry
// budget, with gRPC retry throttling, and with an attempt limit.
func answers() []sim.Policy {
	curves := []sim.Policy{
		{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second},
		{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute},
		{Kind: sim.APICore, Base: time.Second, Multiplier: 2, Cap: time.Minute},
		{Kind: sim.GRPC, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 10 * time.Second, Width: 0.2},
	}
	extras := []sim.Policy{
		{},
		{RetryBudget: 0.1, BudgetMinRPS: 10, ClientsPerProcess: 100},
		{RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 100},
		{MaxAttempts: 4},
	}
	var out []sim.Policy
	for _, c := range curves {
		for _, e := range extras {
			p := c
			p.RetryBudget, p.BudgetMinRPS, p.RetryTokens, p.RetryTokenRatio = e.RetryBudget, e.BudgetMinRPS, e.RetryTokens, e.RetryTokenRatio
			p.ClientsPerProcess, p.MaxAttempts = e.ClientsPerProcess, e.MaxAttempts
			out = append(out, p.Normalize())
		}
	}
	return out
}

// randomPolicies are n valid policies drawn from the families a library
// setting can carry, with attempt limits, per-client retry buckets and
// gRPC retry throttling.
func randomPolicies(seed uint64, n int) []sim.Policy {
	rng := rand.New(rand.NewPCG(seed, 21))
	pick := func(ds ...time.Duration) time.Duration { return ds[rng.IntN(len(ds))] }
	var out []sim.Policy
	for len(out) < n {
		var p sim.Policy
		switch rng.IntN(5) {
		case 0:
			p = sim.Policy{Kind: sim.GRPC, Base: pick(100*time.Millisecond, 500*time.Millisecond, time.Second), Multiplier: []float64{1.5, 1.6, 2}[rng.IntN(3)], Width: 0.2}
		case 1:
			p = sim.Policy{Kind: sim.APICore, Base: pick(500*time.Millisecond, time.Second, 2*time.Second), Multiplier: 2}
		case 2:
			p = sim.Policy{Kind: sim.FullJitter, Base: pick(250*time.Millisecond, 500*time.Millisecond, time.Second), Multiplier: 2}
		case 3:
			p = sim.Policy{Kind: sim.Decorrelated, Base: pick(500*time.Millisecond, time.Second, 2*time.Second)}
		default:
			p = sim.Policy{Kind: sim.Exponential, Base: pick(500*time.Millisecond, time.Second), Multiplier: 2}
		}
		p.Cap = pick(10*time.Second, 30*time.Second, time.Minute, 2*time.Minute)
		if rng.IntN(2) == 0 {
			p.MaxAttempts = 2 + rng.IntN(8)
		}
		switch rng.IntN(4) {
		case 0:
			p.BucketTokens, p.BucketCost = 5+rng.IntN(96), 1+rng.IntN(10)
		case 1:
			p.RetryTokens = float64(2+rng.IntN(199)) / 2         // 1 … 100, halves too
			p.RetryTokenRatio = float64(1+rng.IntN(1000)) / 1000 // gRPC supports 3 decimals
			p.ClientsPerProcess = []int{0, 10, 100}[rng.IntN(3)]
		}
		p = p.Normalize()
		if p.Validate() == nil {
			out = append(out, p)
		}
	}
	return out
}

func awsPolicies() []sim.Policy { return append(answers(), randomPolicies(1, 200)...) }
