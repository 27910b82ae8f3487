package experiments

import (
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/grid"
)

// Sweep is a named grid: its cells (distinct, in the order of the config)
// and the seeds each is run with.
type Sweep struct {
	Name        string
	Description string
	Cells       []grid.Cell
	Seeds       []uint32
	// OnDemand sweeps run only when named: not by a bare `sweep run`.
	OnDemand bool
	// Candidates: the cells are recommend's candidate space at each
	// scenario of the sweep's axes (candidates = true).
	Candidates bool
	// TimelineSeeds asks for the per-tick timeline of each cell's first
	// TimelineSeeds seeds.
	TimelineSeeds int
}

// Len is the number of runs: cells × seeds.
func (s *Sweep) Len() int { return len(s.Cells) * len(s.Seeds) }

// Run returns run i of s, cell-major: all seeds of cell 0, then of cell 1 …
func (s *Sweep) Run(i int) grid.Run {
	return grid.Run{Cell: s.Cells[i/len(s.Seeds)], Seed: s.Seeds[i%len(s.Seeds)]}
}

// Distinct reports whether no two of the sweep's runs are the same run:
// no two cells with one key, no seed listed twice. A loaded sweep's are
// (the loader drops a repeated cell and refuses a repeated seed).
func (s *Sweep) Distinct() bool {
	keys := make(map[string]bool, len(s.Cells))
	for _, c := range s.Cells {
		if k := c.Key(); keys[k] {
			return false
		} else {
			keys[k] = true
		}
	}
	seeds := slices.Sorted(slices.Values(s.Seeds))
	return len(slices.Compact(seeds)) == len(s.Seeds)
}

// WantsTimeline reports whether run i should record its timeline.
func (s *Sweep) WantsTimeline(i int) bool { return i%len(s.Seeds) < s.TimelineSeeds }

// RollingSeeds returns the seeds a night adds to cell c of s beyond its
// configured seeds, n at a time (`sweep run --add-seeds n`): the seeds past
// the largest configured one are taken in blocks of n, and the answer is
// the seeds missing from the first block the dataset does not hold whole
// (stored reports whether it holds a run key). So an unchanged config adds
// n new seeds a night; a rerun after a kill, or a shard that starts after
// another shard of the same night has written, completes the same block
// rather than starting another; and the same dataset and config always give
// the same seeds.
func (s *Sweep) RollingSeeds(c grid.Cell, n int, stored func(runKey string) bool) []uint32 {
	if n <= 0 || len(s.Seeds) == 0 {
		return nil
	}
	top := uint64(slices.Max(s.Seeds))
	canonical := c.Canonical()
	for from := top + 1; from+uint64(n)-1 <= math.MaxUint32; from += uint64(n) {
		var missing []uint32
		for seed := from; seed < from+uint64(n); seed++ {
			if !stored(grid.RunKey(canonical, uint32(seed))) {
				missing = append(missing, uint32(seed))
			}
		}
		if len(missing) > 0 {
			return missing
		}
	}
	return nil
}

// addCell appends c unless a cell with the same key is already there.
func (s *Sweep) addCell(c grid.Cell, seen map[string]bool) { s.addKeyed(c, c.Key(), seen) }

// addKeyed is addCell of cell c whose key is k.
func (s *Sweep) addKeyed(c grid.Cell, k string, seen map[string]bool) {
	if !seen[k] {
		seen[k] = true
		s.Cells = append(s.Cells, c)
	}
}
