package reports

import (
	"fmt"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"

	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
)

// writeMixed writes the mixed fleets' table: what an old client costs the
// rest of the fleet. Its columns add up: the main group's t99 and the same
// policy's alone are both over the seeds of the paired comparison (those
// where both brought 99 % back), and the cost is the first minus the
// second, paired seed by seed (analysis.GroupAggregate.Effect).
func writeMixed(ew *errWriter, fleets []analysis.MixedFleet) {
	if len(fleets) == 0 {
		return
	}
	ew.printf("## Mixed fleets: what an old client costs everyone else\n\n")
	ew.printf("Each fleet splits its clients between policies (interleaved, so no group is served first). Times are t99 after recovery. **main t99** and **alone: t99** (the same policy without the old clients, same scenario) are over the same seeds, those where both brought 99 %% back, and **cost** is the first minus the second, paired seed by seed, with its 95 %% interval: main − alone = cost, to rounding. The old clients' t99 is over the seeds where they reached 99 %%.\n\n")
	t := table.New("", table.L("scenario"), table.L("main policy"), table.L("old clients"), table.R("old clients' t99"), table.R("main t99"),
		table.R("alone: t99"), table.R("cost = main − alone (s)"))
	for _, f := range fleets {
		sc := f.Cell.Cell.Scenario
		name := fmt.Sprintf("%s req/s, %s", thousands(sc.Capacity), num.Plural(sc.Clients, "client"))
		if len(f.Groups) == 0 {
			continue
		}
		g0 := f.Groups[0]
		var old, oldT []string
		for _, g := range f.Groups[1:] {
			old = append(old, fmt.Sprintf("%.0f %% %s", 100*g.Share, g.Label))
			t := seconds(g.T99)
			if g.GaveUp.Mean > 0 {
				t += fmt.Sprintf(", %s gave up", thousands(g.GaveUp.Mean))
			}
			oldT = append(oldT, t)
		}
		main, alone, cost := seconds(g0.T99), "—", "—"
		if e := g0.Effect; g0.Alone != nil && e.Seeds > 0 {
			main, alone = seconds(e.Group), seconds(e.Alone)
			cost = fmt.Sprintf("%s over %s", signed(e.Diff, 1), num.Plural(e.Seeds, "seed"))
			if e.Seeds >= 2 {
				cost = fmt.Sprintf("%s [%s, %s] over %s", signed(e.Diff, 1), signed(e.Lo, 1), signed(e.High, 1), num.Plural(e.Seeds, "seed"))
			}
		} else if g0.Alone != nil {
			alone = seconds(g0.Alone.Summary(analysis.T99)) + ", no seed in common"
		}
		t.Add(name, analysis.ShortName(f.Cell.Cell.Policy), strings.Join(old, "; "), strings.Join(oldT, "; "), main, alone, cost)
	}
	ew.table(t)
	ew.printf("\n")
}
