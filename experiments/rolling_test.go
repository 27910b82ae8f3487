package experiments

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Rolling seeds: n new seeds past the config's each night, the first block
// of n the dataset does not hold whole, so that a night interrupted, or
// sharded and started at different times, completes its block.
func TestRollingSeeds(t *testing.T) {
	t.Parallel()
	c := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	s := &Sweep{Cells: []grid.Cell{c}, Seeds: []uint32{3, 1, 2}}
	canonical := c.Canonical()
	for _, tt := range []struct {
		name   string
		stored []uint32
		n      int
		want   []uint32
	}{
		{"first night", []uint32{1, 2, 3}, 2, []uint32{4, 5}},
		{"nothing stored yet", nil, 2, []uint32{4, 5}},
		{"second night", []uint32{1, 2, 3, 4, 5}, 2, []uint32{6, 7}},
		{"a killed night: its block completed", []uint32{1, 2, 3, 4, 5, 7}, 2, []uint32{6}},
		{"another shard wrote part of tonight's block", []uint32{4, 6, 8}, 3, []uint32{5}},
		{"none asked", []uint32{1}, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := s.RollingSeeds(c, tt.n, func(k string) bool {
				return slices.ContainsFunc(tt.stored, func(seed uint32) bool { return grid.RunKey(canonical, seed) == k })
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("seeds (-want +got):\n%s", diff)
			}
		})
	}
}
