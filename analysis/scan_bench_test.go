package analysis

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// tinyDataset is cells × seeds runs of made-up results (whole ticks of
// 10 ms, small counts, a run in 20 unfinished), written in parts of 5,000
// rows a cell's seeds in a row, as `sweep run` writes million.toml's.
func tinyDataset(b testing.TB, cells, seeds int) fstest.MapFS {
	b.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	fsys := fstest.MapFS{}
	var buf bytes.Buffer
	var w *parquetio.RunsWriter
	rows, parts := 0, 0
	flush := func() {
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		fsys[fmt.Sprintf("runs/sweep=tiny/part-%05d.parquet", parts)] = &fstest.MapFile{Data: bytes.Clone(buf.Bytes())}
		parts++
		buf.Reset()
		w, rows = nil, 0
	}
	for c := range cells {
		sc := smallScenario(10+float64(c), 20)
		cell := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.FullJitter).Normalize()}
		for s := range seeds {
			if w == nil {
				w = parquetio.NewRunsWriter(&buf, dataset.Meta{Sim: sim.Version, Tool: "bench"})
			}
			at := func(ticks int) sim.Milestone {
				return sim.Milestone{At: sc.RecoverAt + time.Duration(ticks)*10*time.Millisecond, Reached: rng.IntN(20) > 0}
			}
			t50 := rng.IntN(3000)
			r := sim.Result{Clients: 20, T50: at(t50), T90: at(t50 + rng.IntN(500)), T99: at(t50 + rng.IntN(2000)), AllDone: at(t50 + rng.IntN(3000)),
				PeakArrivals: rng.IntN(20), SentAfterRecovery: int64(20 + rng.IntN(200)), GaveUp: rng.IntN(3)}
			r.PeakRPS = float64(r.PeakArrivals) / sc.Tick.Seconds()
			w.Append(grid.Run{Cell: cell, Seed: uint32(s + 1)}, r)
			if rows++; rows == 5000 {
				flush()
			}
		}
	}
	if w != nil {
		flush()
	}
	return fsys
}

// BenchmarkScanRetained streams a dataset of small runs and reports what the
// aggregates keep per run (retained-B/run: the live heap Scan's result
// holds, after a collection, over the runs); at two numbers of seeds per
// cell, so that a per-run cost that grows shows as a figure that grows.
// As float64 the per-seed values alone were 56 B a run.
func BenchmarkScanRetained(b *testing.B) {
	for _, seeds := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("cells=50/seeds=%d", seeds), func(b *testing.B) {
			fsys := tinyDataset(b, 50, seeds)
			var retained float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				sc, err := Scan(parquet(fsys), ScanOptions{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = float64(after.HeapAlloc-before.HeapAlloc) / float64(sc.Runs)
				runtime.KeepAlive(sc)
			}
			b.ReportMetric(retained, "retained-B/run")
		})
	}
}
