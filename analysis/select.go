package analysis

import (
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Representatives picks one aggregate per policy family among those that
// match, for plots with one line per policy: the article's settings where
// the data has them (cap 60 s, ±25 % for width jitter, Retry-After 30 s
// for the families that read it), else the first in dataset order.
// Families come in sim.Kinds order.
func Representatives(aggs []*Aggregate, match func(*Aggregate) bool) []*Aggregate {
	var out []*Aggregate
	for _, k := range sim.Kinds() {
		var best *Aggregate
		bestScore := -1
		for _, a := range aggs {
			if a.Cell.Policy.Kind != k || !match(a) {
				continue
			}
			if s := articleLikeness(a.Cell); s > bestScore {
				best, bestScore = a, s
			}
		}
		if best != nil {
			out = append(out, best)
		}
	}
	return out
}

// table4 are the families of the article's table 4, which it ran with a
// Retry-After of 30 s (http-retry stands for its RetryOptions row whether
// or not it reads the header): a likeness to the article, not whether a
// policy reads a Retry-After (sim.Policy.ReadsRetryAfter says that).
var table4 = map[sim.Kind]bool{sim.RAExact: true, sim.RAFullJitter: true, sim.RALowerBound: true, sim.ArticleClient: true,
	sim.HTTPRetry: true, sim.RAIgnore: true}

func articleLikeness(c grid.Cell) int {
	p := c.Policy
	s := 0
	if p.Cap == time.Minute {
		s += 4
	}
	switch {
	case p.Kind == sim.WidthJitter && p.Width == 0.25:
		s += 2
	case (p.Kind == sim.WatchDog || p.Kind == sim.HTTPRetry) && p.Width == 0.2:
		s += 2
	}
	if table4[p.Kind] == (c.Scenario.RetryAfter == 30*time.Second) {
		s++
	}
	return s
}

// PolicyLabel names a cell's policy in words for a table whose rows share
// the scenario: the policy, and the server's Retry-After when it sends one.
func PolicyLabel(c grid.Cell) string {
	l := c.Policy.Describe()
	if c.Scenario.RetryAfter > 0 {
		l += "; server sends Retry-After " + c.Scenario.RetryAfter.String()
	}
	return l
}
