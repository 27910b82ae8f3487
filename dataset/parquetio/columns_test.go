package parquetio

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// cellsOfEveryKind are cells of every kind a runs row holds: the counting
// server, a queueing server with open-loop traffic, a library preset (its
// preset column not null), and a mixed fleet (groups rows).
func cellsOfEveryKind() []grid.Cell {
	plain := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	q := sim.Article()
	q.Concurrency, q.Service, q.ServiceTime, q.ArrivalRate = 4, "fixed", 20*time.Millisecond, 10
	queueing := grid.Cell{Scenario: q, Policy: sim.DefaultPolicy(sim.FullJitter)}
	pr, ok := sim.PresetByName("grpc")
	if !ok {
		panic("no preset grpc")
	}
	preset := grid.Cell{Scenario: sim.Article(), Policy: pr.Policy}
	mixed := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.GRPC)}
	mixed.Mix[0] = sim.Group{Share: 0.25, Policy: sim.DefaultPolicy(sim.Fixed)}
	mixed.Mix[1] = sim.Group{Share: 0.25, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	return []grid.Cell{plain, queueing, preset, mixed}
}

// randomResult is a result whose every field a runs or groups row holds
// has a value of its own: a column that is not written, or read back into
// another field, shows. Times are whole milliseconds, as the simulator's
// ticks are; a milestone is reached or not at random.
func randomResult(rng *rand.Rand, c grid.Cell) sim.Result {
	ms := func() time.Duration { return time.Duration(1+rng.IntN(900_000)) * time.Millisecond }
	mile := func() sim.Milestone {
		if rng.IntN(4) == 0 {
			return sim.Milestone{}
		}
		return sim.Milestone{At: ms(), Reached: true}
	}
	i64 := func() int64 { return 1 + rng.Int64N(1e9) }
	f64 := func() float64 { return rng.Float64() * 1e4 }
	r := sim.Result{Clients: c.Scenario.Clients, Sent: i64(), SentAfterRecovery: i64(), PeakArrivals: rng.IntN(1e6), PeakRPS: f64(),
		T50: mile(), T90: mile(), T99: mile(), AllDone: mile(), Succeeded: rng.IntN(1e6), GaveUp: rng.IntN(1e6), Pending: rng.IntN(1e6), End: ms(),
		Offered: i64(), OfferedGaveUp: i64(), Goodput: i64(), TimedOut: i64(), Rejected: i64(), BusyMS: f64(), WastedMS: f64(),
		LatencyMean: f64(), LatencyP50: f64(), LatencyP90: f64(), LatencyP99: f64(), Recovered: mile(), LocalRejections: i64()}
	if r.Recovered.Reached { // back after the outage, never before
		r.Recovered.At += c.Scenario.RecoverAt
	}
	if c.Mixed() {
		r.NGroups = len(c.Groups())
		for g := range r.NGroups {
			r.Groups[g] = sim.GroupResult{Clients: rng.IntN(1e5), Succeeded: rng.IntN(1e5), GaveUp: rng.IntN(1e5), Sent: i64(), SentAfterRecovery: i64(),
				T50: mile(), T99: mile(), AllDone: mile()}
		}
	}
	return r
}

// Every table is written and read through its column list, and what is
// written is what is read: random runs of every kind of cell, their
// groups and timelines, read back by ReadRuns, FindRunsOf, ReadGroups and
// ReadTimelines, are the records built from the runs themselves (not from
// the column lists), field for field.
func TestEveryColumnIsWrittenAndReadBack(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 3))
	var runs, groups, timelines bytes.Buffer
	rw, gw, tw := NewRunsWriter(&runs, meta), NewGroupsWriter(&groups, meta), NewTimelineWriter(&timelines, meta)
	var want []dataset.Record
	var wantGroups []dataset.GroupRow
	var wantTimelines []dataset.TimelineRow
	cells := map[string]grid.Cell{}
	for i := range 200 {
		c := cellsOfEveryKind()[rng.IntN(4)]
		c.Scenario.Clients = 1 + rng.IntN(5000)
		run := grid.Run{Cell: c, Seed: uint32(i) * 2654435761}
		res := randomResult(rng, c)
		tl := &sim.Timeline{Tick: 10 * time.Millisecond, Arrivals: []int32{0, int32(rng.IntN(9)), 0}, Served: []int32{0, 1, 0}, GaveUp: []int32{0, 0, 0}}
		rw.Append(run, res)
		gw.Append(run, res)
		tw.Append(run, tl)
		cells[c.Key()] = c
		rec := dataset.Record{RunKey: run.Key(), CellKey: c.Key(), Seed: run.Seed, Label: c.Label(), Cell: c, Result: res}
		rec.Result.Groups, rec.Result.NGroups = [sim.MaxGroups]sim.GroupResult{}, 0 // the groups table holds them
		want = append(want, rec)
		for g, p := range c.Groups()[:res.NGroups] {
			wantGroups = append(wantGroups, dataset.GroupRow{RunKey: run.Key(), CellKey: c.Key(), Seed: run.Seed, Group: g, Share: p.Share,
				Policy: string(p.Policy.Kind), Preset: p.Policy.Preset, Label: p.Policy.Describe(), Result: res.Groups[g]})
		}
		wantTimelines = append(wantTimelines, dataset.TimelineRow{RunKey: run.Key(), CellKey: c.Key(), Seed: run.Seed, Tick: 1, T: 0.01, Arrivals: int(tl.Arrivals[1]), Served: 1})
	}
	for _, w := range []interface{ Close() error }{rw, gw, tw} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := ReadRuns(bytes.NewReader(runs.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadRuns (-written +read):\n%s", diff)
	}
	found, _, _, err := ReadRunsOf(bytes.NewReader(runs.Bytes()), dataset.Want{Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Cell = cells[want[i].CellKey] // a selective read gives the wanted cell
	}
	if diff := cmp.Diff(want, found); diff != "" {
		t.Errorf("ReadRunsOf (-written +read):\n%s", diff)
	}
	gotGroups, _, err := ReadGroups(bytes.NewReader(groups.Bytes()))
	if err != nil || len(wantGroups) == 0 {
		t.Fatalf("%d groups rows written: %v", len(wantGroups), err)
	}
	if diff := cmp.Diff(wantGroups, gotGroups); diff != "" {
		t.Errorf("ReadGroups (-written +read):\n%s", diff)
	}
	gotTimelines, _, err := ReadTimelines(bytes.NewReader(timelines.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTimelines, gotTimelines); diff != "" {
		t.Errorf("ReadTimelines (-written +read):\n%s", diff)
	}
}

// A table is its column list: a list in another order (or of other
// columns) gives a writer and a reader of that list with no other change,
// its schema the list's fields. Here the timelines table's columns
// reversed: the file's columns come in that order, and its rows read back.
func TestATableIsItsColumnList(t *testing.T) {
	t.Parallel()
	cols := dataset.TimelineTable()
	slices.Reverse(cols)
	fields := make([]dataset.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.Field
	}
	var buf bytes.Buffer
	w := newWriter(&buf, arrowFields(fields), fileMetadata(meta, dataset.TimelineSchema))
	rw := newRowWriter(w, cols)
	rows := []dataset.TimelineRow{{RunKey: "r1", CellKey: "c1", Seed: 7, Tick: 3, T: 0.3, Arrivals: 4, Served: 2, GaveUp: 1},
		{RunKey: "r2", CellKey: "c2", Seed: 8, Tick: 9, T: 0.9, Arrivals: 1}}
	for i := range rows {
		rw.append(&rows[i], true)
		w.rows++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tbl, _, err := readTable(bytes.NewReader(buf.Bytes()), dataset.TimelineSchema, arrowFields(fields), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if got := tbl.Schema().Field(0).Name; got != dataset.ColGaveUp {
		t.Errorf("first column %s, want %s: the list's order", got, dataset.ColGaveUp)
	}
	if c := tbl.Column(0).Data().Chunk(0).(*array.Int64); !arrow.TypeEqual(c.DataType(), arrow.PrimitiveTypes.Int64) || c.Value(0) != 1 {
		t.Errorf("column %s holds %v", dataset.ColGaveUp, c)
	}
	got := make([]dataset.TimelineRow, len(rows))
	if err := readRows(tbl, cols, func(i int) *dataset.TimelineRow { return &got[i] }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("rows (-written +read):\n%s", diff)
	}
}
