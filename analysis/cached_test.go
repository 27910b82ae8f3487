package analysis

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/herdsweep/herdsweep/grid"
)

// LoadCells finds every run Load finds of the cells asked for, and none of
// the others; the records it gives (only the columns the metrics read)
// aggregate bit for bit as Load's do. Leaving a metric's column out of
// what it reads fails this test.
// A queueing server's runs hold its own metrics too (goodput, time back):
// recommend judges them from the dataset as from the simulator.
func TestLoadCellsAggregatesAsLoad(t *testing.T) {
	t.Parallel()
	t.Run("counting", func(t *testing.T) { loadCellsAsLoad(t, realDataset(t)) })
	t.Run("queueing", func(t *testing.T) {
		fsys, _ := queueDataset(t)
		loadCellsAsLoad(t, fsys)
	})
}

func loadCellsAsLoad(t *testing.T, fsys fstest.MapFS) {
	ds, err := Load(parquet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	all := allAggregates(ds.Records)
	var cells []grid.Cell
	asked := map[string]bool{}
	for i, a := range all {
		if i%2 == 0 { // half the cells, of both capacities
			cells = append(cells, a.Cell)
			asked[a.CellKey] = true
		}
	}
	c, err := LoadCells(parquet(fsys), cells)
	if err != nil {
		t.Fatal(err)
	}
	var want, got []Record
	for _, r := range ds.Records {
		var found Record
		ok := c.Find(r.CellKey, r.Seed, &found)
		if ok != asked[r.CellKey] {
			t.Fatalf("cell %s seed %d: found %v, asked for %v", r.Label, r.Seed, ok, asked[r.CellKey])
		}
		if ok {
			want, got = append(want, r), append(got, found)
		}
	}
	if c.Runs() != len(want) {
		t.Errorf("%d runs found, Load holds %d of those cells", c.Runs(), len(want))
	}
	if c.Find(cells[0].Key(), 999, new(Record)) {
		t.Error("found a seed the dataset does not hold")
	}
	ga, wa := allAggregates(got), allAggregates(want)
	if len(ga) != len(cells) || len(wa) != len(cells) {
		t.Fatalf("%d and %d aggregates, want %d", len(ga), len(wa), len(cells))
	}
	for i, w := range wa {
		g := ga[i]
		if g.CellKey != w.CellKey || g.Label != w.Label || g.Cell != w.Cell || !reflect.DeepEqual(g.Seeds, w.Seeds) ||
			!reflect.DeepEqual(g.Sweeps, w.Sweeps) || !reflect.DeepEqual(g.Warnings, w.Warnings) {
			t.Errorf("cell %d: got %s %q seeds %v sweeps %v warnings %q, want %s %q %v %v %q", i,
				g.CellKey, g.Label, g.Seeds, g.Sweeps, g.Warnings, w.CellKey, w.Label, w.Seeds, w.Sweeps, w.Warnings)
		}
		for _, m := range AllMetrics() {
			if !m.For(w.Cell.Scenario) {
				continue // not the cell's (a brownout's on a cell without one): LoadCells reads only what its cells have
			}
			if !identical(g.Summary(m), w.Summary(m)) || !samePerSeed(g.PerSeed(m), w.PerSeed(m)) {
				t.Errorf("cell %s %s: got %+v %v, want %+v %v", w.Label, m.Key, g.Summary(m), g.PerSeed(m), w.Summary(m), w.PerSeed(m))
			}
		}
	}
}

// BenchmarkLoadCells reads half the cells of a small simulated dataset and
// builds every run's record, as recommend's measurer does.
func BenchmarkLoadCells(b *testing.B) {
	fsys := realDataset(b)
	ds, err := Load(parquet(fsys))
	if err != nil {
		b.Fatal(err)
	}
	var cells []grid.Cell
	for i, a := range Aggregates(ds.Records) {
		if i%2 == 0 {
			cells = append(cells, a.Cell)
		}
	}
	var r Record
	b.ReportAllocs()
	for b.Loop() {
		c, err := LoadCells(parquet(fsys), cells)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for _, x := range ds.Records {
			if c.Find(x.CellKey, x.Seed, &r) {
				n++
			}
		}
		if n != c.Runs() || n == 0 {
			b.Fatalf("found %d of %d runs", n, c.Runs())
		}
	}
}

// allAggregates are the records' aggregates on every metric that applies
// to their cells.
func allAggregates(recs []Record) []*Aggregate {
	ps := make([]*Record, len(recs))
	for i := range recs {
		ps[i] = &recs[i]
	}
	return aggregatesOf(ps, AllMetrics())
}
