package analysis

import (
	"bytes"
	"context"
	"math"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// queueDataset simulates a small dataset of queueing cells (with and
// without open-loop traffic, one whose server stays down till the horizon)
// beside a counting cell, seeds out of order across two parts.
func queueDataset(t testing.TB) (fstest.MapFS, []Record) {
	t.Helper()
	open := queueScenario()
	open.ArrivalRate = 200
	open.Horizon = open.RecoverAt + 90*time.Second
	closed := open
	closed.ArrivalRate, closed.Clients = 0, 200
	over := open
	over.ArrivalRate = 600 // above the server's 500 requests/s: never back
	cells := []grid.Cell{
		{Scenario: smallScenario(60, 300), Policy: sim.DefaultPolicy(sim.FullJitter).Normalize()},
		{Scenario: open, Policy: sim.DefaultPolicy(sim.FullJitter).Normalize()},
		{Scenario: open, Policy: sim.Policy{Kind: sim.Fixed, Base: time.Second}.Normalize()},
		{Scenario: closed, Policy: sim.DefaultPolicy(sim.Decorrelated).Normalize()},
		{Scenario: over, Policy: sim.DefaultPolicy(sim.FullJitter).Normalize()},
	}
	var runs []grid.Run
	for _, seed := range []uint32{4, 1, 3, 2} {
		for _, c := range cells {
			runs = append(runs, grid.Run{Cell: c, Seed: seed})
		}
	}
	recs, err := simulate(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	part := func(from, to int) []byte {
		var b bytes.Buffer
		w := parquetio.NewRunsWriter(&b, dataset.Meta{Sim: sim.Version, Tool: "test"})
		for i := from; i < to; i++ {
			w.Append(runs[i], recs[i].Result)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	n := len(runs)
	return fstest.MapFS{
		"runs/sweep=q/part-1.parquet": {Data: part(0, n/2)},
		"runs/sweep=q/part-2.parquet": {Data: part(n/2, n)},
	}, recs
}

// Scan summarises the queueing metrics of queueing cells as
// QueueAggregates does from whole records, bit for bit, and leaves them out
// of the counting server's cells (and the time back to steady state out of
// cells without open-loop traffic): no state per run for them. Values are
// also checked against the records' own fields, computed here by hand.
func TestScanSummarisesQueueingMetrics(t *testing.T) {
	t.Parallel()
	fsys, _ := queueDataset(t)
	ds, err := Load(parquet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	want := QueueAggregates(ds.Records)
	got, err := Scan(parquet(fsys), ScanOptions{Metrics: AllMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Aggregates) != 5 || len(want) != 4 {
		t.Fatalf("%d aggregates scanned (want 5), %d queueing (want 4)", len(got.Aggregates), len(want))
	}
	bySeedRec := map[string]map[uint32]*Record{}
	for i := range ds.Records {
		r := &ds.Records[i]
		if bySeedRec[r.CellKey] == nil {
			bySeedRec[r.CellKey] = map[uint32]*Record{}
		}
		bySeedRec[r.CellKey][r.Seed] = r
	}
	var never, back, timedOut int
	for _, g := range got.Aggregates {
		if !Queueing(g) {
			for _, m := range QueueMetrics {
				if g.Has(m) || g.packed[m.Key] != nil {
					t.Errorf("counting cell %s has %s", g.Label, m.Key)
				}
			}
			for _, m := range Metrics {
				if !g.Has(m) {
					t.Errorf("counting cell %s lacks %s", g.Label, m.Key)
				}
			}
			continue
		}
		var w *Aggregate
		for _, a := range want {
			if a.CellKey == g.CellKey {
				w = a
			}
		}
		if w == nil {
			t.Fatalf("cell %s not among QueueAggregates'", g.Label)
		}
		for _, m := range AllMetrics() {
			if has := g.Has(m); has != m.For(g.Cell.Scenario) {
				t.Errorf("%s: has %s %v", g.Label, m.Key, has)
				continue
			}
			if !g.Has(m) {
				continue
			}
			if !samePerSeed(g.PerSeed(m), w.PerSeed(m)) || !identical(g.Summary(m), w.Summary(m)) {
				t.Errorf("%s %s: %v %+v, want %v %+v", g.Label, m.Key, g.PerSeed(m), g.Summary(m), w.PerSeed(m), w.Summary(m))
			}
		}
		// By hand, from the records' fields.
		for j, s := range g.Seeds {
			r := bySeedRec[g.CellKey][s].Result
			sc := g.Cell.Scenario
			check := func(m Metric, want float64, ok bool) {
				v := g.PerSeed(m)[j]
				if !ok && !math.IsNaN(v) || ok && v != want {
					t.Errorf("%s seed %d %s = %v, want %v (value: %v)", g.Label, s, m.Key, v, want, ok)
				}
			}
			check(GoodputShare, float64(r.Goodput)/float64(r.Offered+int64(sc.Clients)), true)
			check(TimedOutShare, float64(r.TimedOut)/float64(r.Sent), true)
			check(WastedShare, r.WastedMS/r.BusyMS, r.BusyMS > 0)
			check(LatencyP99, r.LatencyP99, r.Goodput > 0)
			if SteadyState(sc) {
				check(Recovered, (r.Recovered.At - sc.RecoverAt).Seconds(), r.Recovered.Reached)
				if r.Recovered.Reached {
					back++
				} else {
					never++
				}
			}
			if r.TimedOut > 0 {
				timedOut++
			}
		}
	}
	if never == 0 || back == 0 || timedOut == 0 {
		t.Errorf("the test dataset should have runs back to steady state (%d), runs never back (%d) and timeouts (%d)", back, never, timedOut)
	}
}
