package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A fresh unsharded run of a sweep whose runs are distinct does every run
// without keying them (toRun): what keying them would give. On random
// sweeps, some with a cell or a seed twice: where Sweep.Distinct says
// so, keyedRuns with nothing stored is every run, in order; where it
// does not, keyedRuns drops the runs listed twice.
func TestDistinctSweepsNeedNoKeys(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	both := 0
	for trial := range 200 {
		s := &experiments.Sweep{Name: "x"}
		for range 1 + rng.IntN(6) {
			sc := sim.Article()
			sc.Capacity = float64(10 * (1 + rng.IntN(4)))
			sc.RecoverAt = time.Duration(1+rng.IntN(3)) * time.Second
			s.Cells = append(s.Cells, grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)})
		}
		for range 1 + rng.IntN(8) {
			s.Seeds = append(s.Seeds, uint32(rng.IntN(12)))
		}
		got := keyedRuns(s, shardSpec{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, &sweepStats{})
		all := make([]int32, s.Len())
		for i := range all {
			all[i] = int32(i)
		}
		if s.Distinct() {
			if !slices.Equal(got, all) {
				t.Fatalf("trial %d: distinct, yet keyed runs are %v of %d", trial, got, s.Len())
			}
			both |= 1
		} else {
			if len(got) >= s.Len() {
				t.Fatalf("trial %d: not distinct, yet all %d runs keyed apart", trial, s.Len())
			}
			both |= 2
		}
	}
	if both != 3 {
		t.Fatalf("the trials were all distinct or all not (%b)", both)
	}
}
