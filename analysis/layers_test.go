package analysis

import (
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Two chains that read alike (who retries) but differ in a service's
// capacity or policy get words of their own, each naming its services'
// settings; a chain without a twin keeps the short words.
func TestLayerWordsAreUnique(t *testing.T) {
	t.Parallel()
	cell := func(layers string) *Aggregate {
		c := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: layers}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return &Aggregate{Cell: c}
	}
	a := cell(`capacity_rps=0 outage_start_s=0 recover_s=0 policy="full-jitter base_s=0.1 max_attempts=3"`)
	b := cell(`capacity_rps=20 outage_start_s=0 recover_s=0 policy="full-jitter base_s=0.1 max_attempts=3"`)
	c := cell(`capacity_rps=0 outage_start_s=0 recover_s=0 policy="none"`)
	s := LayerScenario{Rows: []*Aggregate{a, b, c}}
	wa, wb, wc := s.Words(a), s.Words(b), s.Words(c)
	if wa == wb || !strings.Contains(wb, "A 20 req/s") || !strings.Contains(wa, "A no limit") {
		t.Errorf("twins read %q and %q: want each with its services", wa, wb)
	}
	if wc != ChainWords(c) {
		t.Errorf("a chain without a twin reads %q, want %q", wc, ChainWords(c))
	}
}
