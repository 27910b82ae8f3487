package analysis_test

import (
	"fmt"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// records runs each policy on sc with seeds 1 to seeds, as a sweep would
// store them: one record per run.
func records(sc sim.Scenario, specs []string, seeds int) []analysis.Record {
	var recs []analysis.Record
	var s sim.Sim
	for _, spec := range specs {
		p, err := grid.ParsePolicy(spec)
		if err != nil {
			panic(err)
		}
		c := grid.Cell{Scenario: sc, Policy: p}
		for seed := uint32(1); seed <= uint32(seeds); seed++ {
			r, err := c.Simulate(&s, sim.NewMulberry32(seed), nil)
			if err != nil {
				panic(err)
			}
			run := grid.Run{Cell: c, Seed: seed}
			recs = append(recs, analysis.Record{Record: dataset.Record{
				RunKey: run.Key(), CellKey: c.Key(), Seed: seed, Label: c.Label(), Cell: c, Result: r,
			}})
		}
	}
	return recs
}

// small is a scenario small enough for an example: 1,000 clients, a 20 s
// outage, 50 requests/s after it, 5 minutes to come back.
func small() sim.Scenario {
	return sim.Scenario{Clients: 1000, Tick: 100 * time.Millisecond, RecoverAt: 20 * time.Second,
		Capacity: 50, Spread: time.Second, Horizon: 320 * time.Second}
}

// Summarize is one metric of a cell over its seeds: the mean, the sample
// standard deviation and a Student-t 95 % confidence interval of the mean.
func ExampleSummarize() {
	t99 := []float64{12.1, 11.4, 12.9, 12.2, 11.8} // s after recovery, one per seed
	s := analysis.Summarize(t99, 0)
	fmt.Printf("n=%d mean=%.2f sd=%.3f 95%% CI [%.2f, %.2f]\n", s.N, s.Mean, s.SD, s.Lo, s.Hi)
	// Output: n=5 mean=12.08 sd=0.554 95% CI [11.39, 12.77]
}

// Aggregates groups runs by cell (every parameter but the seed) and
// summarises each metric; a cell over too few seeds carries a warning, as
// data, for the report to print beside its numbers.
func ExampleAggregates() {
	recs := records(small(), []string{"fixed base_s=1", "full-jitter base_s=1 cap_s=20"}, 3)
	for _, a := range analysis.Aggregates(recs) {
		t99 := a.Summary(analysis.T99)
		fmt.Printf("%s: %d seeds, t99 %.1f s after recovery (min %.1f, max %.1f)\n",
			a.Cell.PolicySpec(), len(a.Seeds), t99.Mean, t99.Min, t99.Max)
		for _, w := range a.Warnings {
			fmt.Println("  warning:", w)
		}
	}
	// Output:
	// fixed base_s=1: 3 seeds, t99 21.8 s after recovery (min 21.2, max 22.4)
	//   warning: 3 seeds: too few for a 95 % interval
	// full-jitter base_s=1 cap_s=20 multiplier=2: 3 seeds, t99 30.6 s after recovery (min 30.1, max 31.4)
	//   warning: 3 seeds: too few for a 95 % interval
}

// Recommend ranks the cells of one scenario by an objective (here t99),
// the candidates within the traffic budget first: a fixed delay brings the
// clients back sooner on this server, but only by sending ten requests
// each after recovery.
func ExampleRecommend() {
	recs := records(small(), []string{
		"fixed base_s=1",
		"full-jitter base_s=1 cap_s=20",
		"decorrelated base_s=1 cap_s=20",
		"equal-jitter base_s=1 cap_s=20",
	}, 6)
	q := analysis.Query{Capacity: 50, Clients: 1000, Outage: 20 * time.Second, Objective: analysis.ByT99}
	rec, err := analysis.Recommend(analysis.Aggregates(recs), q)
	if err != nil {
		panic(err)
	}
	for i, a := range rec.Ranked {
		t99 := a.Summary(analysis.T99)
		fmt.Printf("%d. %s: t99 %.1f s\n", i+1, a.Cell.PolicySpec(), t99.Mean)
		if why := rec.Why[a.CellKey]; why != "" {
			fmt.Println("   left out:", why)
		}
	}
	fmt.Println("best:", rec.Best.Cell.Policy.Plain())
	// Output:
	// 1. full-jitter base_s=1 cap_s=20 multiplier=2: t99 30.7 s
	// 2. decorrelated base_s=1 cap_s=20: t99 33.2 s
	// 3. equal-jitter base_s=1 cap_s=20 multiplier=2: t99 36.6 s
	// 4. fixed base_s=1: t99 21.7 s
	//    left out: sends 10.6 requests per client after recovery, above the budget of 4
	// best: exponential backoff with full jitter: first retry after U(0, 2s), the range ×2 per attempt, at most 20s, no attempt limit
}
