package reports

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// A dataset of one client, one seed and one candidate that cannot finish
// (a fixed 1 min retry in a window of 100 ms) writes its counts in the
// singular: not "1 clients", "none of 1 candidates", "1 seeds", "1 cells".
func TestOnesAreSingular(t *testing.T) {
	t.Parallel()
	one := func(s *sim.Scenario) { s.Clients, s.Horizon = 1, s.RecoverAt+100*time.Millisecond }
	in := simulate(t, cellsOf([]sim.Policy{{Kind: sim.Fixed, Base: time.Minute}}, []float64{10}, one), 1, false)
	_, files := build(t, in)
	bad := regexp.MustCompile(`\b1 (clients|cells|candidates|problems|seeds|runs|scenarios|policies|assertions)\b|none of 1 |\b1 of [0-9,]+ [a-z]+ (have|hold|are|violate|need)\b`)
	rec, err := analysis.Recommend(analysis.Aggregates(in.Dataset.Records), analysis.Query{Capacity: 10, Objective: analysis.ByT99})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteAnswer(&b, &Answer{Rec: rec, Space: 1}, 5); err != nil {
		t.Fatal(err)
	}
	files["sweep recommend"] = b.String()
	if !strings.Contains(b.String(), "no feasible policy") {
		t.Fatalf("the one candidate is feasible: the case does not test the reasons\n%s", b.String())
	}
	seen := map[string]bool{}
	for name, md := range files { // the report, its scenario page, and the answer
		for _, m := range bad.FindAllString(md, -1) {
			if !seen[name+m] {
				seen[name+m] = true
				t.Errorf("%s: %q", name, m)
			}
		}
	}
	if len(files) < 3 {
		t.Fatalf("%d files: want the report and a scenario page", len(files))
	}
}
