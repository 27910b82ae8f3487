package dataset

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

// ReadRunsOf returns exactly ReadRuns's rows of the wanted cells, and reads
// only what it must: a row group the bounds rule out is not read, one
// without a wanted cell is not read beyond its cell keys.
func TestReadRunsOfSelects(t *testing.T) {
	t.Parallel()
	runs, _, _ := sampleRuns(t)
	part, _, _ := sampleParts(t) // those runs
	all, _, err := ReadRuns(bytes.NewReader(part))
	if err != nil {
		t.Fatal(err)
	}
	c0, c2 := runs[0].Cell, runs[4].Cell // 300 clients; 2,000 clients
	for _, tt := range []struct {
		name string
		want Want
		rows []int // of all
		sel  Selected
	}{
		{"one cell", Want{Cells: map[string]experiments.Cell{c0.Key(): c0}}, []int{0, 1}, Selected{RowGroups: 1, Read: 1}},
		{"two cells, bounds that hold them", Want{Cells: map[string]experiments.Cell{c0.Key(): c0, c2.Key(): c2},
			Bounds: map[string]Bound{"clients": {300, 2000}}}, []int{0, 1, 4, 5}, Selected{RowGroups: 1, Read: 1}},
		{"a cell the file lacks", Want{Cells: map[string]experiments.Cell{"nope": c0}}, nil, Selected{RowGroups: 1, Scanned: 1}},
		{"bounds outside the file's", Want{Cells: map[string]experiments.Cell{c0.Key(): c0}, Bounds: map[string]Bound{"clients": {5000, 9000}}},
			nil, Selected{RowGroups: 1, Pruned: 1}},
		{"a float bound outside", Want{Cells: map[string]experiments.Cell{c0.Key(): c0}, Bounds: map[string]Bound{"capacity_rps": {121, 300}}},
			nil, Selected{RowGroups: 1, Pruned: 1}},
		{"another simulator", Want{Cells: map[string]experiments.Cell{c0.Key(): c0}, Sim: sim.Version + "-other"}, nil, Selected{RowGroups: 1, Pruned: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, m, sel, err := ReadRunsOf(bytes.NewReader(part), tt.want)
			if err != nil {
				t.Fatal(err)
			}
			var want []Record
			for _, i := range tt.rows {
				want = append(want, all[i])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if sel != tt.sel {
				t.Errorf("selected %+v, want %+v", sel, tt.sel)
			}
			if m.Sweep != meta.Sweep {
				t.Errorf("meta %+v", m)
			}
		})
	}
	if _, _, _, err := ReadRunsOf(bytes.NewReader([]byte("garbage")), Want{}); err == nil {
		t.Error("garbage read without an error")
	}
}
