package parquetio

import (
	"fmt"
	"io"
	"testing"

	"github.com/herdsweep/herdsweep/grid"
)

// BenchmarkRunsWriter writes parts of 5,000 runs (sweep run's default
// part size), 30 seeds of each cell in a row as a sweep hands them out:
// what a sweep of many tiny runs spends in Parquet (ns/op is per part; see
// runs/s).
func BenchmarkRunsWriter(b *testing.B) {
	for _, rows := range []int{5000, 50000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchmarkRunsWriter(b, rows) })
	}
}

func benchmarkRunsWriter(b *testing.B, rows int) {
	runs, res, _ := sampleRuns(b)
	b.ReportAllocs()
	for b.Loop() {
		w := NewRunsWriter(io.Discard, meta)
		w.Reserve(rows)
		for i := range rows {
			r := runs[(i/30)%len(runs)]
			w.Append(grid.Run{Cell: r.Cell, Seed: uint32(i + 1)}, res[i%len(res)])
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "runs/s")
}
