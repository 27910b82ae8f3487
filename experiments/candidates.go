package experiments

import (
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Candidates returns the policies `sweep recommend` tries when no dataset
// covers a scenario: every textbook family at the article's settings, width
// jitter at three widths, the article's client and the second source's
// WatchDog (its fleet profile); with the families that read a Retry-After
// when the scenario's server sends one.
func Candidates(sc sim.Scenario) []Cell {
	ps := []sim.Policy{
		{Kind: sim.Fixed, Base: 5 * time.Second},
		sim.DefaultPolicy(sim.Exponential),
		sim.DefaultPolicy(sim.FullJitter),
		sim.DefaultPolicy(sim.EqualJitter),
		sim.DefaultPolicy(sim.Decorrelated),
	}
	for _, w := range []float64{0.1, 0.25, 0.5} {
		p := sim.DefaultPolicy(sim.WidthJitter)
		p.Width = w
		ps = append(ps, p)
	}
	ps = append(ps,
		sim.DefaultPolicy(sim.ArticleClient),
		sim.Policy{Kind: sim.WatchDog, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5},
	)
	if sc.RetryAfter > 0 {
		ps = append(ps, sim.DefaultPolicy(sim.RAExact), sim.DefaultPolicy(sim.RAFullJitter), sim.DefaultPolicy(sim.RALowerBound),
			sim.Policy{Kind: sim.HTTPRetry, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second, Width: 0.2, HonorRetryAfter: true})
	}
	cells := make([]Cell, len(ps))
	for i, p := range ps {
		cells[i] = Cell{Scenario: sc, Policy: p.Normalize()}
	}
	return cells
}
