package reports

import (
	"regexp"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// With 2 seeds a Student-t interval spans ±12.7 standard errors and its
// lower bound falls below 0 for metrics that cannot be negative (the
// review's "t50 5.7 s [-12.8, 24.1]; peak 15 [−49, 79]"). No printed
// interval of a metric starts below 0, each page that clamps one says so,
// and no number is written with an ASCII hyphen for its minus sign.
func TestFewSeedsPrintNoNegativeBounds(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{sim.DefaultPolicy(sim.FullJitter), sim.DefaultPolicy(sim.Decorrelated)}
	in := simulate(t, cellsOf(pols, []float64{10}, func(s *sim.Scenario) { s.Clients = 1 }), 2, false)
	_, files := build(t, in)
	negLo := regexp.MustCompile(`\[[−-][0-9][0-9.,]*, [0-9]`) // a signed difference's hi has a +
	hyphen := regexp.MustCompile(`[\s\[(]-[0-9]`)
	clamped := false
	for _, a := range analysis.Aggregates(in.Dataset.Records) {
		clamped = clamped || a.Clamped()
	}
	if !clamped {
		t.Fatal("no interval reaches below 0: the case does not test the clamp")
	}
	for name, md := range files {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		if m := negLo.FindString(md); m != "" {
			t.Errorf("%s: an interval of a metric starts below 0: %q", name, m)
		}
		if m := hyphen.FindString(md); m != "" {
			t.Errorf("%s: a hyphen for a minus sign: %q", name, m)
		}
		if strings.Contains(md, "[0.0, ") && !strings.Contains(md, "printed from 0") {
			t.Errorf("%s: prints an interval from 0 without saying why", name)
		}
	}
}
