package reports

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The mixed fleets' table adds up (issue 22: its columns did not): main
// t99 − alone: t99 = cost, to the printed rounding, in every row, and each
// side is over the seeds of the paired cost. Here the policy alone has 8
// seeds and the fleets 4 (as the default sweep's 30 beside the mixed
// sweep's 20), so the alone cell's own mean is over other seeds than the
// cost's; each figure is checked against the records, computed without
// the analysis.
func TestMixedFleetColumnsAddUp(t *testing.T) {
	t.Parallel()
	alone := grid.Cell{Scenario: world(30), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	var fleets []grid.Cell
	for _, share := range []float64{0.1, 0.3} {
		c := alone
		c.Mix[0] = sim.Group{Share: share, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
		fleets = append(fleets, c)
	}
	in := simulate(t, []grid.Cell{alone}, 8, false)
	mixed := simulate(t, fleets, 4, false)
	in.Dataset.Records = append(in.Dataset.Records, mixed.Dataset.Records...)
	in.Groups = mixed.Groups
	_, files := build(t, in)
	md := files["report.md"]
	i := strings.Index(md, "| scenario | main policy |")
	if i < 0 {
		t.Fatalf("no mixed fleets' table in\n%s", md)
	}
	table := md[i:]
	table = table[:strings.Index(table, "\n\n")]
	rows := strings.Split(table, "\n")
	col := map[string]int{} // the columns by their heading's start
	for j, h := range strings.Split(strings.Trim(rows[0], "| "), " | ") {
		for _, name := range []string{"main t99", "alone: t99", "cost"} {
			if strings.HasPrefix(h, name) {
				col[name] = j
			}
		}
	}
	if len(col) != 3 {
		t.Fatalf("columns %v in %q: want main t99, alone: t99 and cost", col, rows[0])
	}
	rows = rows[2:]
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(rows), table)
	}
	// The truth: t99 after recovery per seed of the policy alone, and of
	// each fleet's main group (group 0).
	rec := alone.Scenario.RecoverAt
	aloneT := map[uint32]float64{}
	for _, r := range in.Dataset.Records {
		if r.CellKey == alone.Key() && r.Result.T99.Reached {
			aloneT[r.Seed] = (r.Result.T99.At - rec).Seconds()
		}
	}
	num := regexp.MustCompile(`^([+−]?[0-9.]+)`)
	parse := func(s string) float64 {
		m := num.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			t.Fatalf("no number in %q", s)
		}
		v, err := strconv.ParseFloat(strings.Replace(strings.TrimPrefix(m[1], "+"), "−", "-", 1), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for k, row := range rows {
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		mainT, aloneP, cost := parse(cells[col["main t99"]]), parse(cells[col["alone: t99"]]), parse(cells[col["cost"]])
		const rounding = 0.1 + 1e-9 // each figure printed to 0.1 s
		if math.Abs(mainT-aloneP-cost) > rounding {
			t.Errorf("row %d: main %v − alone %v = %.1f, cost %v: the columns do not add up\n%s", k, mainT, aloneP, mainT-aloneP, cost, row)
		}
		var g, a []float64
		var seeds []uint32
		for _, gr := range in.Groups {
			if gr.CellKey != fleets[k].Key() || gr.Group != 0 || !gr.Result.T99.Reached {
				continue
			}
			if at, ok := aloneT[gr.Seed]; ok {
				g, a, seeds = append(g, (gr.Result.T99.At-rec).Seconds()), append(a, at), append(seeds, gr.Seed)
			}
		}
		mean := func(xs []float64) float64 {
			s := 0.0
			for _, x := range xs {
				s += x
			}
			return s / float64(len(xs))
		}
		if len(seeds) != 4 || !strings.Contains(cells[col["cost"]], "over 4 seeds") {
			t.Errorf("row %d: paired over seeds %v, cost %q: want the fleet's 4", k, seeds, cells[col["cost"]])
		}
		if math.Abs(mainT-mean(g)) > 0.05+1e-9 || math.Abs(aloneP-mean(a)) > 0.05+1e-9 {
			t.Errorf("row %d: main %v alone %v, want %.2f and %.2f over seeds %v", k, mainT, aloneP, mean(g), mean(a), seeds)
		}
	}
	if len(aloneT) != 8 {
		t.Errorf("the policy alone finished %d of 8 seeds: the test wants all", len(aloneT))
	}
}
