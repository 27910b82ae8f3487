package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A queueing server without an outage is in its own steady state from the
// start, and queueing.md says so: every policy back at once in every seed,
// with no "Not back to steady state by the horizon". Before, M/M/6 at 90 %
// load (50 ms service) was back late or never in most seeds, and a server
// whose steady state turns away what would wait over 50 ms (10–11 % of its
// requests) was "not back" in every one: the page said so of a server that
// never went down.
func TestQueueingPageWithoutOutage(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Clients, sc.Spread, sc.RecoverAt, sc.Horizon = 1, 0, 0, 1000*time.Second
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.ArrivalRate = 6, "exponential", 50*time.Millisecond, 108 // 90 % load
	lossy := sc
	lossy.QueueWait = 50 * time.Millisecond
	never := sim.Policy{Kind: sim.Fixed, Base: time.Second, MaxAttempts: 1}
	retry := sim.Policy{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 10 * time.Second, Multiplier: 2}
	var cells []grid.Cell
	for _, s := range []sim.Scenario{sc, lossy} {
		for _, p := range []sim.Policy{never, retry} {
			cells = append(cells, grid.Cell{Scenario: s, Policy: p})
		}
	}
	in := simulate(t, cells, 4, false)
	loss := 0.0
	for _, r := range in.Dataset.Records {
		if r.Cell.Scenario.QueueWait > 0 && r.Cell.Policy.MaxAttempts == 1 {
			loss += float64(r.Result.Rejected) / float64(r.Result.Sent) / 4
		}
	}
	if loss < 0.05 {
		t.Fatalf("the 50 ms wait bound turns away %.3f of the requests, want a lossy steady state (over 5 %%)", loss)
	}
	r, files := build(t, in)
	page := files[QueueingPage]
	if len(r.Queueing) != 2 || strings.Count(page, "Every policy came back to steady state in every seed.") != 2 || strings.Contains(page, "Not back") {
		t.Errorf("%d scenarios; %s:\n%s", len(r.Queueing), QueueingPage, page)
	}
	for _, q := range r.Queueing {
		for _, a := range q.Ranked {
			if s := a.Summary(analysis.Recovered); s.N != 4 || s.Mean != 0 {
				t.Errorf("%s, %s: back in %d seeds, mean %g s; want 4 at 0", serverShort(q.Scenario), queueName(a.Cell.Policy), s.N, s.Mean)
			}
		}
	}
}
