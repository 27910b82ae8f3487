package analysis

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// brownoutDataset simulates brownout cells of both servers (shares 0 and
// 0.4, an open loop on the queueing one) into a Parquet part.
func brownoutDataset(t *testing.T) (fstest.MapFS, []grid.Run, []Record) {
	t.Helper()
	q := sim.Scenario{Clients: 1, Tick: 100 * time.Millisecond, Horizon: 20 * time.Second, Concurrency: 4, Service: "exponential",
		ServiceTime: 10 * time.Millisecond, Timeout: time.Second, ArrivalRate: 100, AddedLatency: 20 * time.Millisecond}
	c := sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: time.Second, Capacity: 100, Spread: 2 * time.Second, Horizon: time.Minute}
	var runs []grid.Run
	for _, sc := range []sim.Scenario{q, c} {
		for _, share := range []float64{0, 0.4} {
			sc.FailShare = share
			for seed := uint32(1); seed <= 3; seed++ {
				runs = append(runs, grid.Run{Cell: grid.Cell{Scenario: sc, Policy: sim.Policy{Kind: sim.Fixed, Base: time.Second, MaxAttempts: 3}.Normalize()}, Seed: seed})
			}
		}
	}
	recs, err := simulate(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := parquetio.NewRunsWriter(&b, dataset.Meta{Sim: sim.Version, Tool: "test"})
	for i := range runs {
		w.Append(runs[i], recs[i].Result)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{"runs/sweep=b/part-1.parquet": {Data: b.Bytes()}}, runs, recs
}

// The success rate and the load amplification go through the dataset: a
// run read back has the simulator's (failed and offered_succeeded stored,
// the rates derived from the counts); a streamed scan summarises them for
// the cells in a brownout, and only those, as the simulator's runs give
// them; and LoadCells' records (what recommend reads) aggregate as Load's.
func TestBrownoutMetricsThroughTheDataset(t *testing.T) {
	t.Parallel()
	fsys, runs, recs := brownoutDataset(t)
	ds, err := Load(parquet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{} // cell key → per-seed success rates, from the simulator
	amp := map[string][]float64{}
	for i, r := range recs {
		res := r.Result
		want[runs[i].Cell.Key()] = append(want[runs[i].Cell.Key()], res.SuccessRate())
		amp[runs[i].Cell.Key()] = append(amp[runs[i].Cell.Key()], res.Amplification())
		if runs[i].Cell.Scenario.FailShare > 0 && res.Failed == 0 {
			t.Errorf("%s seed %d: nothing failed", runs[i].Cell.Label(), runs[i].Seed)
		}
	}
	for _, r := range ds.Records {
		if got, _ := successRate(int64(r.Result.Succeeded), r.Result.OfferedSucceeded, int64(r.Cell.Scenario.Clients), r.Result.Offered); got != want[r.CellKey][r.Seed-1] {
			t.Errorf("%s seed %d: success rate read back %g, simulated %g", r.Label, r.Seed, got, want[r.CellKey][r.Seed-1])
		}
	}
	s, err := Scan(parquet(fsys), ScanOptions{Metrics: AllMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range s.Aggregates {
		in := a.Cell.Scenario.FailShare > 0
		if a.Has(SuccessRate) != in || a.Has(Amplification) != in {
			t.Errorf("%s: has the brownout's metrics %v, %v; want %v", a.Label, a.Has(SuccessRate), a.Has(Amplification), in)
		}
		if !in {
			continue
		}
		for i, v := range a.PerSeed(SuccessRate) {
			if v != want[a.CellKey][i] || a.PerSeed(Amplification)[i] != amp[a.CellKey][i] {
				t.Errorf("%s seed %d: scanned %g, %g; simulated %g, %g", a.Label, a.Seeds[i], v, a.PerSeed(Amplification)[i], want[a.CellKey][i], amp[a.CellKey][i])
			}
		}
	}
	loadCellsAsLoad(t, fsys)
	for _, r := range runs {
		if r.Cell.Scenario.FailShare == 0 {
			continue
		}
		got := WantCells([]grid.Cell{r.Cell}).Results
		for _, col := range []string{dataset.ColSent, dataset.ColSucceeded, dataset.ColOfferedSucceeded, dataset.ColOffered} {
			if !slices.Contains(got, col) {
				t.Errorf("%s: LoadCells reads %v, not %s", r.Cell.Label(), got, col)
			}
		}
	}
}
