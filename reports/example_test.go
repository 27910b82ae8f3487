package reports_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/sim"
)

// records runs each policy on sc with seeds 1 to seeds, one record per
// run, as a sweep stores them.
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
			recs = append(recs, analysis.Record{Sweep: "example", Record: dataset.Record{
				RunKey: run.Key(), CellKey: c.Key(), Seed: seed, Label: c.Label(), Cell: c, Result: r,
			}})
		}
	}
	return recs
}

// small: 1,000 clients, a 20 s outage, 50 requests/s after it.
func small() sim.Scenario {
	return sim.Scenario{Clients: 1000, Tick: 100 * time.Millisecond, RecoverAt: 20 * time.Second,
		Capacity: 50, Spread: time.Second, Horizon: 320 * time.Second}
}

var specs = []string{"fixed base_s=1", "full-jitter base_s=1 cap_s=20", "decorrelated base_s=1 cap_s=20"}

// WriteAnswer writes what `sweep recommend` prints: the decision analysis
// made, for a person. Here its first lines: the answer, its figures, the
// runner-up and how sure it is (then come how to set the policy in each
// library and the candidates' table).
func ExampleWriteAnswer() {
	aggs := analysis.Aggregates(records(small(), specs, 6))
	q := analysis.Query{Capacity: 50, Clients: 1000, Outage: 20 * time.Second, Objective: analysis.ByT99}
	rec, err := analysis.Recommend(aggs, q)
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	if err := reports.WriteAnswer(&b, &reports.Answer{Rec: rec, Space: len(specs)}, 3); err != nil {
		panic(err)
	}
	lines := strings.Split(b.String(), "\n")
	fmt.Println(strings.Join(lines[:8], "\n"))
	// Output:
	// For 50 requests/s, 1,000 clients, after a 20s outage (times counted from recovery; window 5m0s), optimising t99:
	// judged on one server: counting, 429s free (without --server the answer must hold over an envelope of servers)
	//
	// use: exponential backoff with full jitter: first retry after U(0, 2s), the range ×2 per attempt, at most 20s, no attempt limit
	//   (as --mine: 'full-jitter base_s=1 cap_s=20 multiplier=2')
	//   t99 30.7 [30.2, 31.2] s after recovery, t50 10.3 [10.2, 10.4] s; peak 178 [153, 204] req/s (3.6× capacity); 1.5 requests per client after recovery; 6 seeds
	//   runner-up: decorrelated 1s ≤20s: t99 +8.1 % [+3.3, +13.0] paired over 6 seeds — separated
	//   confidence: P(no other candidate is more than 2 % better on t99) ≥ 0.998 (paired t, Bonferroni over 1)
}

// Build turns a dataset into a Report, a value: the decision for each
// scenario, the figures and the sections the data holds. Files lists what
// it renders, each to an io.Writer; the caller decides where they go.
func ExampleBuild() {
	ds := &analysis.Dataset{Records: records(small(), specs, 3)}
	r, err := reports.Build(context.Background(), reports.Input{Dataset: ds})
	if err != nil {
		panic(err)
	}
	for _, s := range r.Scenarios {
		fmt.Printf("%s: use %s\n", s.File, s.Rec.Best.Cell.PolicySpec())
	}
	for _, f := range r.Files() {
		fmt.Println(f.Name)
	}
	// Output:
	// scenarios/c50-n1000-o20s-w300s.md: use full-jitter base_s=1 cap_s=20 multiplier=2
	// report.md
	// scenarios/c50-n1000-o20s-w300s.md
	// plots/ranking.png
	// plots/ranking.svg
	// plots/pareto.png
	// plots/pareto.svg
}
