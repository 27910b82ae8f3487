package reports

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A server whose queue holds at most N requests is said in a sentence:
// "a queue that holds at most 50 waiting", not "a queue that at most 50
// waiting"; with a wait bound as well, both clauses read after "that".
func TestQueueBoundWords(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 4, "fixed", 20*time.Millisecond, 500*time.Millisecond
	for _, c := range []struct {
		limit int
		wait  time.Duration
		want  string
	}{
		{50, 0, "a queue that holds at most 50 waiting;"},
		{50, 300 * time.Millisecond, "a queue that holds at most 50 waiting, turns away what would wait over 300ms;"},
		{0, 300 * time.Millisecond, "a queue that turns away what would wait over 300ms;"},
	} {
		s := sc
		s.QueueLimit, s.QueueWait = c.limit, c.wait
		if got := serverWords(s); !strings.Contains(got, c.want) {
			t.Errorf("queue_limit %d, queue_wait %v: %q: want it to say %q", c.limit, c.wait, got, c.want)
		}
	}
}

// The service time is a mean for an exponential one, a median for a
// lognormal one and neither for a fixed one ("20ms mean fixed service").
func TestServiceTimeWords(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Concurrency, sc.ServiceTime, sc.ServiceP99 = 4, 20*time.Millisecond, 0
	for svc, want := range map[string]string{"fixed": "4 workers × 20ms fixed service (capacity 200 requests/s)", "exponential": "4 workers × 20ms mean exponential service (capacity 200 requests/s)", "lognormal": "4 workers × 20ms median lognormal (p99 80ms) service"} {
		s := sc
		s.Service = svc
		if svc == "lognormal" {
			s.ServiceP99 = 80 * time.Millisecond
		}
		if got := serverWords(s); !strings.Contains(got, want) {
			t.Errorf("%s: %q: want it to say %q", svc, got, want)
		}
	}
}

// A dataset of queueing servers only has no t99 ranking; its report's
// "Use" section sends the reader to the queueing section instead of
// saying there is no scenario with a single policy per fleet (every one
// of these has one).
func TestQueueOnlyReportPointsToItsRanking(t *testing.T) {
	t.Parallel()
	var cells []grid.Cell
	for _, p := range []sim.Policy{{Kind: sim.Decorrelated, Base: 100 * time.Millisecond, Cap: 5 * time.Second},
		{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 5 * time.Second, Multiplier: 2, MaxAttempts: 3}} {
		sc := sim.Article()
		sc.Clients, sc.Spread = 1, 0
		sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 2, "fixed", 10*time.Millisecond, 400*time.Millisecond
		sc.ArrivalRate = 100
		sc.OutageStart, sc.RecoverAt = 5*time.Second, 10*time.Second
		sc.Horizon = sc.RecoverAt + 30*time.Second
		cells = append(cells, grid.Cell{Scenario: sc, Policy: p})
	}
	_, files := build(t, simulate(t, cells, 2, false))
	md := files["report.md"]
	use, _, _ := strings.Cut(md[strings.Index(md, "## Use"):], "\n## Warnings")
	if strings.Contains(use, "holds no scenario with a single policy") || !strings.Contains(use, "ranked in [their own section](#queueing-servers-back-to-steady-state)") {
		t.Errorf("the Use section of a queueing-only report:\n%s\nwant it to point to the queueing section", use)
	}
	if !strings.Contains(md, "## Queueing servers: back to steady state") {
		t.Errorf("report.md has no queueing section to point to:\n%s", md)
	}
}

// A scenario's ranking that holds the same
// backoff with and without a limit on giving up (attempts, a fleet retry
// budget) names each row differently: no two rows read alike.
func TestRankingRowsCanBeToldApart(t *testing.T) {
	t.Parallel()
	dec := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: time.Minute}
	att, bud := dec, dec
	att.MaxAttempts, bud.RetryBudget = 8, 0.2
	fj := sim.Policy{Kind: sim.FullJitter, Base: 500 * time.Millisecond, Cap: 5 * time.Second, Multiplier: 2}
	fjAtt := fj
	fjAtt.MaxAttempts = 8
	small := func(s *sim.Scenario) { s.Clients = 200 }
	_, files := build(t, simulate(t, cellsOf([]sim.Policy{dec, att, bud, fj, fjAtt}, []float64{40}, small), 2, false))
	row := regexp.MustCompile(`(?m)^\| [0-9]+ \| ([^|]+?) \|`)
	pages := 0
	for name, md := range files {
		if !strings.HasPrefix(name, "scenarios/") {
			continue
		}
		pages++
		seen := map[string]bool{}
		for _, m := range row.FindAllStringSubmatch(md, -1) {
			label := strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(m[1], "**use**", "")), " *")
			if seen[label] {
				t.Errorf("%s: two ranking rows read %q", name, label)
			}
			seen[label] = true
		}
		if len(seen) < 5 {
			t.Errorf("%s: %d ranking rows, want the 5 policies:\n%s", name, len(seen), md)
		}
	}
	if pages == 0 {
		t.Fatalf("no scenario page among %d files", len(files))
	}
}

// The report's warning about runs that did not bring 99 % of clients back
// counts the counting server's cells only: a queueing cell is judged on
// the time back to steady state ("not back" in its own section), and its
// cohort of one client says nothing about the fleet.
func TestT99WarningLeavesOutQueueingCells(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Clients, sc.Spread = 1, 0
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 2, "fixed", 10*time.Millisecond, 400*time.Millisecond
	sc.ArrivalRate = 300 // over the 200 requests/s it serves: the cohort's client is never answered in time
	sc.OutageStart, sc.RecoverAt = 5*time.Second, 10*time.Second
	sc.Horizon = sc.RecoverAt + 20*time.Second
	cells := []grid.Cell{{Scenario: sc, Policy: sim.Policy{Kind: sim.Fixed, Base: time.Second}}}
	in := simulate(t, cells, 2, false)
	aggs := analysis.Aggregates(in.Dataset.Records)
	if len(aggs) != 1 || aggs[0].Summary(analysis.T99).Unfinished == 0 {
		t.Fatalf("the queueing cell's cohort finished: the case tests nothing")
	}
	for _, w := range datasetWarnings(Provenance{}, aggs) {
		if strings.Contains(w, "did not bring 99 %") {
			t.Errorf("warning about a queueing cell's t99: %s", w)
		}
	}
}
