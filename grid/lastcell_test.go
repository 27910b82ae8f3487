package grid

import (
	"math/rand/v2"
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// LastCell never takes a new cell for the last one: over random runs of
// three cells, numbered as a sweep numbers them (one number a cell),
// not numbered, or numbered apart for one cell (two numbers), Changed is
// true whenever the cell differs from the last; and with numbers it does
// not compare (the same number is the same cell without a look).
func TestLastCell(t *testing.T) {
	t.Parallel()
	var cells []Cell
	for _, c := range []float64{50, 60, 70} {
		sc := sim.Article()
		sc.Capacity = c
		cells = append(cells, Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.FullJitter)})
	}
	rng := rand.New(rand.NewPCG(5, 8))
	for _, numbering := range []string{"sweep", "none", "apart"} {
		var l LastCell
		prev := -1
		changes := 0
		for range 500 {
			i := rng.IntN(len(cells))
			if rng.IntN(3) > 0 && prev >= 0 {
				i = prev // a cell's seeds in a row
			}
			id := 0
			switch numbering {
			case "sweep":
				id = 1 + i
			case "apart":
				id = 1 + i + 3*rng.IntN(2) // two numbers for one cell
			}
			c := cells[i]
			changed := l.Changed(&c, id)
			if i != prev && !changed {
				t.Fatalf("%s: cell %d after cell %d taken for the same", numbering, i, prev)
			}
			if i == prev && changed && numbering != "apart" {
				t.Fatalf("%s: cell %d again taken for a new one", numbering, i)
			}
			if *l.Cell() != c {
				t.Fatalf("%s: the last cell is not the one given", numbering)
			}
			if changed {
				changes++
			}
			prev = i
		}
		if changes < 50 {
			t.Fatalf("%s: %d changes in 500 runs", numbering, changes)
		}
	}
}
