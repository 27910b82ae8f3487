package parquetio

import (
	"bytes"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A queueing server's run, with timeouts and open-loop traffic, comes back
// from the dataset with every metric, its parameters and its keys.
func TestQueueRunRoundTrip(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Clients, sc.Horizon = 500, 5*time.Minute
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.ServiceP99, sc.Timeout, sc.ArrivalRate, sc.QueueWait = 4, "lognormal", 8*time.Millisecond, 200*time.Millisecond, 400*time.Millisecond, 100, 300*time.Millisecond
	c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.FullJitter)}
	run := grid.Run{Cell: c, Seed: 4}
	var s sim.Sim
	res, err := c.Simulate(&s, sim.NewMulberry32(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Goodput == 0 || res.TimedOut == 0 || !res.Recovered.Reached {
		t.Fatalf("sample run lacks a metric: %+v", res)
	}
	var buf bytes.Buffer
	w := NewRunsWriter(&buf, meta)
	w.Append(run, res)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _, err := ReadRuns(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Cell != c || recs[0].RunKey != run.Key() {
		t.Errorf("cell %+v, key %s; want %+v, %s", recs[0].Cell, recs[0].RunKey, c, run.Key())
	}
	if diff := cmp.Diff(res, recs[0].Result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
}

// A runs part written before the queueing server existed lacks its
// parameter and metric columns: it still reads, with the zero values
// those runs had; a column every part has is still required.
func TestPartWithoutQueueColumnsReads(t *testing.T) {
	t.Parallel()
	var old []arrow.Field
	for _, f := range runsFields() {
		if !dataset.OptionalColumn(f.Name) {
			old = append(old, f)
		}
	}
	if len(old) == len(runsFields()) {
		t.Fatal("no optional column")
	}
	recs, _, err := ReadRuns(bytes.NewReader(rawFile(t, old, "")))
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.Cell.Scenario.Concurrency != 0 || r.Result.Goodput != 0 || r.Result.Recovered.Reached {
		t.Errorf("missing columns read as %+v", r)
	}
	if _, _, err := ReadRuns(bytes.NewReader(rawFile(t, old[:len(old)-1], ""))); err == nil {
		t.Errorf("a part without %s reads", old[len(old)-1].Name)
	}
}

// A scan that asks for columns an old part lacks reads them as ReadRuns
// does (zero, or null where nullable), and the columns after them stay in
// their places.
func TestScanOfPartWithoutQueueColumns(t *testing.T) {
	t.Parallel()
	var old []arrow.Field
	for _, f := range runsFields() {
		if !dataset.OptionalColumn(f.Name) {
			old = append(old, f)
		}
	}
	cols := []string{dataset.ColCellKey, dataset.ColGoodput, dataset.ColRecoveredAfter, dataset.ColSeed, "concurrency", dataset.ColSent}
	n := 0
	_, err := ScanRuns(bytes.NewReader(rawFile(t, old, "")), cols, func(b dataset.Batch) error {
		n += b.Len()
		if b.Int64s(dataset.ColGoodput).Value(0) != 0 || b.Int64s("concurrency").Value(0) != 0 || !b.Float64s(dataset.ColRecoveredAfter).IsNull(0) {
			t.Errorf("absent columns read as %v, %v, %v", b.Int64s(dataset.ColGoodput), b.Int64s("concurrency"), b.Float64s(dataset.ColRecoveredAfter))
		}
		if b.Strings(dataset.ColCellKey).Value(0) != "x" || b.Column(dataset.ColSent).(*array.Int64).Len() != 1 {
			t.Errorf("present columns misread: %v, %v", b.Strings(dataset.ColCellKey), b.Int64s(dataset.ColSent))
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("%d rows, %v", n, err)
	}
}
