package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A verdict's "set …" names every policy parameter that differs between
// the user's policy and the one whose t99 it quotes, client components
// and retry_on included; a component switched off is named once, not
// with each of its settings.
func TestParamChangesNamesEveryDifference(t *testing.T) {
	from := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: time.Minute, BreakerRatio: 0.1, ClientsPerProcess: 100, RetryOn: sim.RetryOn5xx}
	to := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 5 * time.Second}
	sc := sim.Article()
	got := paramChanges(grid.Cell{Scenario: sc, Policy: from.Normalize()}, grid.Cell{Scenario: sc, Policy: to.Normalize()})
	for _, want := range []string{"cap 1m0s → 5s", "breaker_ratio 0.1 → off", "retry_on 5xx → any"} {
		if !strings.Contains(got, want) {
			t.Errorf("paramChanges = %q, want it to name %q", got, want)
		}
	}
	for _, not := range []string{"breaker_window_s", "breaker_break_s", "clients_per_process"} {
		if strings.Contains(got, not) {
			t.Errorf("paramChanges = %q: names %s of a breaker switched off", got, not)
		}
	}
	// Switched on, its settings are named.
	got = paramChanges(grid.Cell{Scenario: sc, Policy: to.Normalize()}, grid.Cell{Scenario: sc, Policy: from.Normalize()})
	if !strings.Contains(got, "breaker_window_s off → 30") || !strings.Contains(got, "clients_per_process off → 100") {
		t.Errorf("paramChanges = %q, want the breaker's window and the process size", got)
	}
}
