package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Which policies read a Retry-After has one owner, sim.Policy.ReadsRetryAfter
// (held to the simulator by sim's TestReadsRetryAfterAsTheSimulatorDoes):
// the analysis asks it, so the presets whose families read one with
// honor_retry_after are readers here too (this list once said "does not
// read Retry-After" of each of them).
func TestReadsRetryAfterAsksTheSimulator(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"aws-sdk-go-v2", "aws-sdk-go-v2-2026", "aws-sdk-go-v2-adaptive", "urllib3-backoff", "sgc-http-retry-pm", "ms-resilience-standard"} {
		pr, ok := sim.PresetByName(name)
		if !ok {
			t.Fatalf("no preset %s", name)
		}
		if !ReadsRetryAfter(pr.Policy) {
			t.Errorf("%s: does not read Retry-After, say the analysis; its family reads it", name)
		}
	}
	for _, pr := range sim.Presets() {
		if ReadsRetryAfter(pr.Policy) != pr.Policy.ReadsRetryAfter() {
			t.Errorf("%s: the analysis says %v, sim %v", pr.Name, ReadsRetryAfter(pr.Policy), pr.Policy.ReadsRetryAfter())
		}
	}
	for _, k := range sim.Kinds() {
		p := sim.DefaultPolicy(k)
		if ReadsRetryAfter(p) != p.ReadsRetryAfter() {
			t.Errorf("%s: the analysis says %v, sim %v", k, ReadsRetryAfter(p), p.ReadsRetryAfter())
		}
	}
}

// Table 5's Retry-After row chooses among the clients that read one, as
// sim says: aws-sdk-go-v2's defaults (x-amz-retry-after within [t, t +
// 5 s]) are one, and here the best; ra-ignore is not.
func TestTable5RetryAfterRowAsksTheSimulator(t *testing.T) {
	t.Parallel()
	aws, _ := sim.PresetByName("aws-sdk-go-v2")
	var recs []Record
	for _, c := range []struct {
		p   sim.Policy
		t99 float64
	}{{aws.Policy, 20}, {sim.DefaultPolicy(sim.RAIgnore), 10}} {
		sc := sim.Article()
		sc.Capacity, sc.RetryAfter = 120, 30*time.Second
		cell := grid.Cell{Scenario: sc, Policy: c.p.Normalize()}
		for seed := uint32(1); seed <= 3; seed++ {
			r := grid.Run{Cell: cell, Seed: seed}
			res := sim.Result{Clients: 2000, PeakRPS: 200, SentAfterRecovery: 2400, Succeeded: 2000,
				T99: sim.Milestone{At: sc.RecoverAt + time.Duration(c.t99*1e9), Reached: true}}
			recs = append(recs, Record{Sweep: "s", Record: dataset.Record{RunKey: r.Key(), CellKey: cell.Key(), Seed: seed, Label: cell.Label(), Cell: cell, Result: res}})
		}
	}
	got := Table5(Aggregates(recs), Query{Capacity: 120})
	row := got[2]
	if row.Situation != "server can send Retry-After" || !strings.HasPrefix(row.Recommended, "aws-sdk-go-v2's defaults") {
		t.Errorf("row %q → %q (%s), want aws-sdk-go-v2's defaults, the client that reads the Retry-After", row.Situation, row.Recommended, row.Reason)
	}
}
