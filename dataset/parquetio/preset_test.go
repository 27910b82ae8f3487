package parquetio

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
	pq "github.com/parquet-go/parquet-go"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// presetRuns are runs of a policy without a preset, of a preset (grpc),
// and of a mixed fleet whose other group is a preset.
func presetRuns(t *testing.T) ([]grid.Run, []sim.Result) {
	t.Helper()
	grpc, ok := sim.PresetByName("grpc")
	if !ok {
		t.Fatal("no grpc preset")
	}
	sc := sim.Article()
	sc.Clients = 200
	plain := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	lib := grid.Cell{Scenario: sc, Policy: grpc.Policy}
	mixed := plain
	mixed.Mix[0] = sim.Group{Share: 0.3, Policy: grpc.Policy}
	var runs []grid.Run
	var res []sim.Result
	for _, c := range []grid.Cell{plain, lib, mixed} {
		for seed := uint32(1); seed <= 2; seed++ {
			var s sim.Sim
			r, err := c.Simulate(&s, sim.NewMulberry32(seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			runs, res = append(runs, grid.Run{Cell: c, Seed: seed}), append(res, r)
		}
	}
	return runs, res
}

// withPresetRequired returns fields with the preset column as parts
// before null were written: required, "" for none.
func withPresetRequired(fields []arrow.Field) []arrow.Field {
	out := append([]arrow.Field(nil), fields...)
	for i := range out {
		if out[i].Name == dataset.ColPreset {
			out[i].Nullable = false
		}
	}
	return out
}

// A run without a preset stores null in the preset column, not "" (issue
// 22: "" on 83,350 rows of the main job), in the runs, groups and cells
// tables, read back by an independent Parquet reader; every reader of the
// project reads a part of before (preset "", a required column) and a part
// of now (null) as the same records; keys do not change.
func TestPresetIsNullForNone(t *testing.T) {
	t.Parallel()
	runs, res := presetRuns(t)
	write := func(fields []arrow.Field) (runsPart, groupsPart []byte) {
		var rb, gb bytes.Buffer
		rw := newRunsWriter(&rb, meta, fields)
		gw := newGroupsWriter(&gb, meta, withGroupsPreset(fields))
		for i := range runs {
			rw.Append(runs[i], res[i])
			gw.Append(runs[i], res[i])
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gw.Close(); err != nil {
			t.Fatal(err)
		}
		return rb.Bytes(), gb.Bytes()
	}
	now, nowGroups := write(runsFields())
	before, beforeGroups := write(withPresetRequired(runsFields()))

	// An independent reader: null where no preset, the name where one.
	type runRow struct {
		Key    string  `parquet:"run_key"`
		Preset *string `parquet:"preset,optional"`
	}
	rows, err := pq.Read[runRow](bytes.NewReader(now), int64(len(now)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want := runs[i].Cell.Policy.Preset
		if want == "" && r.Preset != nil || want != "" && (r.Preset == nil || *r.Preset != want) {
			t.Errorf("runs row %d (%s): preset %s, want %q (null for none)", i, runs[i].Cell.Label(), shown(r.Preset), want)
		}
		if r.Key != runs[i].Key() {
			t.Errorf("runs row %d: run_key %s, want %s: keys must not move", i, r.Key, runs[i].Key())
		}
	}
	type groupRow struct {
		Group  int64   `parquet:"group"`
		Preset *string `parquet:"preset,optional"`
	}
	groups, err := pq.Read[groupRow](bytes.NewReader(nowGroups), int64(len(nowGroups)))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 4 {
		t.Fatalf("%d group rows, want 2 runs × 2 groups", len(groups))
	}
	for i, g := range groups {
		if (g.Group == 0) != (g.Preset == nil) || g.Group == 1 && *g.Preset != "grpc" {
			t.Errorf("groups row %d: group %d preset %s, want null for the decorrelated group, grpc for the other", i, g.Group, shown(g.Preset))
		}
	}

	// Every reader: the same records from both parts.
	readAll := func(part, groupsPart []byte) (recs []dataset.Record, scanned [][]string, found []dataset.Record, grs []dataset.GroupRow) {
		recs, _, err := ReadRuns(bytes.NewReader(part))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ScanRuns(bytes.NewReader(part), []string{dataset.ColRunKey, dataset.ColPreset, "mix"}, func(b dataset.Batch) error {
			for i := range b.Len() {
				scanned = append(scanned, []string{b.Strings(dataset.ColRunKey).Value(i), b.Strings(dataset.ColPreset).Value(i),
					b.Column(dataset.ColPreset).(dataset.StringColumn).Value(i)})
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := dataset.Want{Cells: map[string]grid.Cell{}}
		for _, r := range runs {
			want.Cells[r.Cell.Key()] = r.Cell
		}
		found, _, _, err = ReadRunsOf(bytes.NewReader(part), want)
		if err != nil {
			t.Fatal(err)
		}
		grs, _, err = ReadGroups(bytes.NewReader(groupsPart))
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	r1, s1, f1, g1 := readAll(before, beforeGroups)
	r2, s2, f2, g2 := readAll(now, nowGroups)
	for i, r := range r2 {
		if r.Cell != runs[i].Cell || r.RunKey != runs[i].Key() {
			t.Errorf("ReadRuns row %d: %+v, want the run's cell %+v", i, r.Cell.Policy, runs[i].Cell.Policy)
		}
	}
	for name, d := range map[string]string{"ReadRuns": cmp.Diff(r1, r2), "ScanRuns": cmp.Diff(s1, s2),
		"ReadRunsOf": cmp.Diff(f1, f2), "ReadGroups": cmp.Diff(g1, g2)} {
		if d != "" {
			t.Errorf("%s reads the part with null presets otherwise than the one with \"\" (-before +now):\n%s", name, d)
		}
	}
	if bytes.Equal(before, now) {
		t.Error("the two parts are the same bytes: the test compares nothing")
	}

	// The cells table: null likewise.
	var cb bytes.Buffer
	cw := NewCellsWriter(&cb, meta, nil)
	for _, r := range runs {
		cw.Append(r.Cell.Key(), r.Cell.Label(), r.Cell, []string{"s"}, 1, nil)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	type cellRow struct {
		Preset *string `parquet:"preset,optional"`
	}
	cs, err := pq.Read[cellRow](bytes.NewReader(cb.Bytes()), int64(cb.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if want := runs[i].Cell.Policy.Preset; (want == "") != (c.Preset == nil) {
			t.Errorf("cells row %d: preset %s, want %q (null for none)", i, shown(c.Preset), want)
		}
	}
}

// withGroupsPreset is the groups table's fields with the preset column as
// nullable as the runs fields given have it.
func withGroupsPreset(runs []arrow.Field) []arrow.Field {
	nullable := false
	for _, f := range runs {
		if f.Name == dataset.ColPreset {
			nullable = f.Nullable
		}
	}
	out := append([]arrow.Field(nil), groupsFields()...)
	for i := range out {
		if out[i].Name == dataset.ColPreset {
			out[i].Nullable = nullable
		}
	}
	return out
}

// shown is a nullable string as a message says it.
func shown(s *string) string {
	if s == nil {
		return "null"
	}
	return strconv.Quote(*s)
}
