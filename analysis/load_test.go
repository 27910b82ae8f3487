package analysis

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Readers count a run stored twice once and say so; a side part whose runs
// part was never committed is not data.
func TestLoadDeduplicatesAndIgnoresOrphans(t *testing.T) {
	t.Parallel()
	recs := records(120, []synth{{sim.Decorrelated, 0, []float64{70, 71}, 200, 2000}})
	var runs, tl bytes.Buffer
	w := parquetio.NewRunsWriter(&runs, dataset.Meta{Sim: sim.Version})
	tw := parquetio.NewTimelineWriter(&tl, dataset.Meta{Sim: sim.Version})
	timeline := &sim.Timeline{Tick: 100e6, Arrivals: []int32{0, 3, 2}, Served: []int32{0, 1, 2}, GaveUp: []int32{0, 0, 0}}
	for _, r := range recs {
		run := grid.Run{Cell: r.Cell, Seed: r.Seed}
		w.Append(run, r.Result)
		tw.Append(run, timeline)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"runs/sweep=a/part-1.parquet":      {Data: runs.Bytes()},
		"runs/sweep=a/part-2.parquet":      {Data: runs.Bytes()}, // the same runs again
		"runs/sweep=b/part-1.parquet":      {Data: runs.Bytes()}, // and in another sweep
		"timelines/sweep=a/part-1.parquet": {Data: tl.Bytes()},
		"timelines/sweep=a/part-2.parquet": {Data: tl.Bytes()},
		"timelines/sweep=a/part-9.parquet": {Data: []byte("an orphan: never read")},
		"runs/sweep=a/_lock.all":           {Data: []byte("host=h\npid=1\n")},
	}
	ds, err := Load(parquet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Records) != 2 || ds.Repeated != 2 || ds.Shared != 2 || len(ds.Warnings) != 2 ||
		!strings.Contains(ds.Warnings[0], "2 rows repeat a run already stored in the same sweep") {
		t.Errorf("Load: %d records, %d repeated, %d shared, warnings %q", len(ds.Records), ds.Repeated, ds.Shared, ds.Warnings)
	}
	keys := map[string]bool{ds.Records[0].RunKey: true, ds.Records[1].RunKey: true}
	tls, err := Timelines(parquet(fsys), keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(tls) != 2 {
		t.Errorf("timelines of %d runs, want 2", len(tls))
	}
	for k, rows := range tls {
		if len(rows) != 2 {
			t.Errorf("run %s: %d timeline rows, want its 2 ticks once", k, len(rows))
		}
	}
}
