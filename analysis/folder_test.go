package analysis

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// counting is a Format that counts its calls, by method.
type counting struct {
	dataset.Format
	mu    sync.Mutex
	calls map[string]int
}

func (c *counting) count(m string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[m]++
}

func (c *counting) ScanRuns(r dataset.File, cols []string, fn func(dataset.Batch) error) (dataset.Meta, error) {
	c.count("ScanRuns")
	return c.Format.ScanRuns(r, cols, fn)
}

func (c *counting) ReadRuns(r dataset.File) ([]dataset.Record, dataset.Meta, error) {
	c.count("ReadRuns")
	return c.Format.ReadRuns(r)
}

func (c *counting) ReadRunKeys(r dataset.File) ([]string, dataset.Meta, error) {
	c.count("ReadRunKeys")
	return c.Format.ReadRunKeys(r)
}

func (c *counting) ReadTimelinesOf(r dataset.File, keys map[string]bool) ([]dataset.TimelineRow, dataset.Meta, error) {
	c.count("ReadTimelinesOf")
	return c.Format.ReadTimelinesOf(r, keys)
}

func (c *counting) ReadGroups(r dataset.File) ([]dataset.GroupRow, dataset.Meta, error) {
	c.count("ReadGroups")
	return c.Format.ReadGroups(r)
}

func (c *counting) FindRunsOf(r dataset.File, want dataset.Want) (*dataset.Found, dataset.Meta, dataset.Selected, error) {
	c.count("FindRunsOf")
	return c.Format.FindRunsOf(r, want)
}

// No reader is registered process-wide: every reader of a dataset reads it
// with the Format passed in with its folder, and two folders read side by
// side, each with its own, each through its own alone (a Format set once
// for the process was read by every one of them).
func TestReadersUseTheFormatPassedIn(t *testing.T) {
	t.Parallel()
	recs := records(120, []synth{{sim.Decorrelated, 0, []float64{70, 71}, 200, 2000}})
	var runs, tl, groups bytes.Buffer
	meta := dataset.Meta{Sim: sim.Version}
	w, tw, gw := parquetio.NewRunsWriter(&runs, meta), parquetio.NewTimelineWriter(&tl, meta), parquetio.NewGroupsWriter(&groups, meta)
	timeline := &sim.Timeline{Tick: 100e6, Arrivals: []int32{0, 3}, Served: []int32{0, 1}, GaveUp: []int32{0, 0}}
	var cells []grid.Cell
	for _, r := range recs {
		run := grid.Run{Cell: r.Cell, Seed: r.Seed}
		w.Append(run, r.Result)
		tw.Append(run, timeline)
		cells = append(cells, r.Cell)
	}
	for _, c := range []interface{ Close() error }{w, tw, gw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	fsys := fstest.MapFS{
		"runs/sweep=a/part-1.parquet":      {Data: runs.Bytes()},
		"timelines/sweep=a/part-1.parquet": {Data: tl.Bytes()},
		"groups/sweep=a/part-1.parquet":    {Data: groups.Bytes()},
	}
	one, two := &counting{Format: parquetio.Format{}, calls: map[string]int{}}, &counting{Format: parquetio.Format{}, calls: map[string]int{}}
	readers := []struct {
		want string
		read func(dataset.Folder) error
	}{
		{"ReadRuns", func(d dataset.Folder) error { _, err := Load(d); return err }},
		{"ScanRuns", func(d dataset.Folder) error { _, err := Scan(d, ScanOptions{}); return err }},
		{"ReadTimelinesOf", func(d dataset.Folder) error {
			_, err := Timelines(d, map[string]bool{recs[0].RunKey: true})
			return err
		}},
		{"ReadGroups", func(d dataset.Folder) error { _, err := GroupRows(d); return err }},
		{"ReadRuns", func(d dataset.Folder) error {
			_, err := LoadRunsOf(d, []string{"a"}, map[string]bool{recs[0].CellKey: true})
			return err
		}},
		{"FindRunsOf", func(d dataset.Folder) error { _, err := LoadCells(d, cells[:1]); return err }},
	}
	for i, r := range readers {
		on := []*counting{one, two}[i%2]
		before := on.calls[r.want]
		if err := r.read(dataset.Folder{FS: fsys, Format: on}); err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		if on.calls[r.want] == before {
			t.Errorf("reader %d did not read through the Format passed in (%s)", i, r.want)
		}
	}
	got := [2][]string{}
	for i, c := range []*counting{one, two} {
		for m := range c.calls {
			got[i] = append(got[i], m)
		}
		slices.Sort(got[i])
	}
	want := [2][]string{{"ReadRuns", "ReadTimelinesOf"}, {"FindRunsOf", "ReadGroups", "ScanRuns"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("methods called on each Format (-want +got):\n%s", diff)
	}
	defer func() {
		if p := recover(); p == nil || fmt.Sprint(p) != "analysis: a dataset.Folder without a Format" {
			t.Errorf("Load of a Folder without a Format: panic %v", p)
		}
	}()
	Load(dataset.Folder{FS: fsys})
}
