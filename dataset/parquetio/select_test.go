package parquetio

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
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
		want dataset.Want
		rows []int // of all
		sel  dataset.Selected
	}{
		{"one cell", dataset.Want{Cells: map[string]grid.Cell{c0.Key(): c0}}, []int{0, 1}, dataset.Selected{RowGroups: 1, Read: 1}},
		{"two cells, bounds that hold them", dataset.Want{Cells: map[string]grid.Cell{c0.Key(): c0, c2.Key(): c2},
			Bounds: map[string]dataset.Bound{"clients": {Lo: 300, Hi: 2000}}}, []int{0, 1, 4, 5}, dataset.Selected{RowGroups: 1, Read: 1}},
		{"a cell the file lacks", dataset.Want{Cells: map[string]grid.Cell{"nope": c0}}, nil, dataset.Selected{RowGroups: 1, Scanned: 1}},
		{"bounds outside the file's", dataset.Want{Cells: map[string]grid.Cell{c0.Key(): c0}, Bounds: map[string]dataset.Bound{"clients": {Lo: 5000, Hi: 9000}}},
			nil, dataset.Selected{RowGroups: 1, Pruned: 1}},
		{"a float bound outside", dataset.Want{Cells: map[string]grid.Cell{c0.Key(): c0}, Bounds: map[string]dataset.Bound{"capacity_rps": {Lo: 121, Hi: 300}}},
			nil, dataset.Selected{RowGroups: 1, Pruned: 1}},
		{"another simulator", dataset.Want{Cells: map[string]grid.Cell{c0.Key(): c0}, Sim: sim.Version + "-other"}, nil, dataset.Selected{RowGroups: 1, Pruned: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, m, sel, err := ReadRunsOf(bytes.NewReader(part), tt.want)
			if err != nil {
				t.Fatal(err)
			}
			var want []dataset.Record
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
	if _, _, _, err := ReadRunsOf(bytes.NewReader([]byte("garbage")), dataset.Want{}); err == nil {
		t.Error("garbage read without an error")
	}
}

// With Results, a record holds its cell, seed and the named results, and
// zero in every other field; a name that is not a result column is an
// error. The cell keys are read the same whether the writer encoded them
// with a dictionary (as it does) or plain.
func TestReadRunsOfReadsOnlyTheResultsAsked(t *testing.T) {
	t.Parallel()
	runs, res, _ := sampleRuns(t)
	part := func(plainKeys bool) []byte {
		var b bytes.Buffer
		w := NewRunsWriter(&b, meta)
		if plainKeys {
			w.plain = append(w.plain, dataset.ColCellKey)
		}
		for i := range runs {
			w.Append(runs[i], res[i])
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	all, _, err := ReadRuns(bytes.NewReader(part(false)))
	if err != nil {
		t.Fatal(err)
	}
	c := runs[4].Cell // 2,000 clients: never finishes, null milestones
	cells := map[string]grid.Cell{c.Key(): c}
	var want []dataset.Record
	for _, r := range all[4:6] {
		want = append(want, dataset.Record{CellKey: r.CellKey, Seed: r.Seed, Label: r.Label, Cell: r.Cell,
			Result: sim.Result{Clients: r.Result.Clients, PeakRPS: r.Result.PeakRPS, T99: r.Result.T99, GaveUp: r.Result.GaveUp}})
	}
	if want[0].Result.PeakRPS == 0 || want[0].Result.T99.Reached {
		t.Fatalf("the sample should have a peak and an unreached t99: %+v", want[0].Result)
	}
	for _, plain := range []bool{false, true} {
		got, _, _, err := ReadRunsOf(bytes.NewReader(part(plain)), dataset.Want{Cells: cells, Results: []string{dataset.ColPeakRPS, dataset.ColT99, dataset.ColGaveUp}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("plain cell keys %v: records (-want +got):\n%s", plain, diff)
		}
	}
	if _, _, _, err := ReadRunsOf(bytes.NewReader(part(false)), dataset.Want{Cells: cells, Results: []string{dataset.ColT99After}}); err == nil {
		t.Errorf("a derived column read without an error")
	}
}
