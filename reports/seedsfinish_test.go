package reports

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// The review's case: fixed 5 s with throttling (K = 2) where a 429 costs
// half a request, at 60 req/s with the article's clients, finishes in 7 of
// 10 seeds and the backoff alone in none. The section says so and counts
// it as faster, not as no clear change.
func TestControlsSayHowManySeedsFinish(t *testing.T) {
	t.Parallel()
	fixed := sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}
	thr := fixed
	thr.ThrottleK = 2
	cells := cellsOf([]sim.Policy{fixed, thr.Normalize()}, []float64{60}, func(s *sim.Scenario) { s.RejectCost = 0.5; s.Clients = sim.Article().Clients })
	in := simulate(t, cells, 10, false)
	tr := truths(in)
	var with, without *truth
	for _, x := range tr {
		if x.cell.Policy.ThrottleK > 0 {
			with = x
		} else {
			without = x
		}
	}
	if n, m := finishedSeeds(with), finishedSeeds(without); n != 7 || m != 0 {
		t.Fatalf("finished in %d and %d of 10 seeds; the case needs 7 and 0", n, m)
	}
	_, files := build(t, in)
	md := files["report.md"]
	sec := md[strings.Index(md, "## Client-side throttling"):]
	for _, want := range []string{
		"Of 1 comparison: 1 faster, 0 slower, 0 with clients giving up, 0 without a clear change.",
		"| **faster**: ",
		"finishes in 7 of 10 seeds where the backoff alone finishes in 0 |",
		"with throttling, 1 of 1 comparison did not finish in every seed.",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("no %q in\n%s", want, sec)
		}
	}
}

func finishedSeeds(tr *truth) int {
	n := 0
	for _, v := range tr.t99 {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// The throttling note is there only when throttled runs did not finish:
// a breaker alone, which finishes, gets none.
func TestThrottlingNoteOnlyWhenItHolds(t *testing.T) {
	t.Parallel()
	dec := sim.Policy{Kind: sim.Decorrelated}.Normalize()
	br := dec
	br.BreakerRatio, br.ClientsPerProcess = 0.1, 100
	cells := cellsOf([]sim.Policy{dec, br.Normalize()}, []float64{480}, func(s *sim.Scenario) { s.Clients = sim.Article().Clients })
	in := simulate(t, cells, 3, false)
	_, files := build(t, in)
	md := files["report.md"]
	if !strings.Contains(md, "## Client-side throttling") {
		t.Fatal("no client-controls section")
	}
	if strings.Contains(md, "Adaptive throttling counts") {
		t.Errorf("the throttling note with no throttled runs:\n%s", md[strings.Index(md, "## Client-side throttling"):])
	}
}
