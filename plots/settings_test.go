package plots

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A figure with a line per cap (or per family) draws one setting of a
// family measured at several bases or multipliers — the one measured
// most, the article's base 1 s ×2 on a tie — and its caption says how
// many it left out: otherwise lines would differ in what the legend does
// not name (recommend's candidate space in the main job's dataset).
func TestOneSettingPerLine(t *testing.T) {
	var pols []sim.Policy
	for _, base := range []time.Duration{500 * time.Millisecond, time.Second} {
		for _, cp := range []time.Duration{5 * time.Second, 30 * time.Second} {
			for _, w := range []float64{0.2, 1} {
				pols = append(pols, sim.Policy{Kind: sim.GRPC, Base: base, Multiplier: 2, Cap: cp, Width: w})
			}
			pols = append(pols, sim.Policy{Kind: sim.Decorrelated, Base: base, Cap: cp})
		}
	}
	aggs, _ := aggregates(t, pols, []float64{120})
	f := Param("t", aggs, sim.GRPC, true)
	if len(f.Panels) != 1 || len(f.Panels[0].Series) != 2 {
		t.Fatalf("width figure: %d panels, want 1 with a line per cap (2)", len(f.Panels))
	}
	for _, s := range f.Panels[0].Series {
		if len(s.Points) != 2 {
			t.Errorf("line %s: %d points, want one per width (2)", s.Name, len(s.Points))
		}
	}
	if !strings.Contains(f.Caption, "Drawn at base 1s, ×2, the setting measured most; 1 other setting left out") {
		t.Errorf("caption %q", f.Caption)
	}
	c := Caps("t", aggs, func(p sim.Policy) bool { return p.Kind == sim.Decorrelated })
	if len(c.Panels) != 1 || len(c.Panels[0].Series) != 1 || c.Panels[0].Series[0].Name != "decorrelated 1s" {
		t.Fatalf("cap figure: want one line, decorrelated at base 1s: %+v", c.Panels)
	}
	if !strings.Contains(c.Caption, "(1 other setting left out)") {
		t.Errorf("caption %q", c.Caption)
	}
}
