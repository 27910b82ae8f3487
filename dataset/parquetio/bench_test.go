package parquetio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/gzip"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// BenchmarkRunsWriter writes parts of 5,000 runs (sweep run's default
// part size), 30 seeds of each cell in a row as a sweep hands them out:
// what a sweep of many tiny runs spends in Parquet (ns/op is per part; see
// runs/s). one-cell is a part of one cell's 5,000 seeds, as
// scripts/bench/million.toml writes them.
func BenchmarkRunsWriter(b *testing.B) {
	for _, rows := range []int{5000, 50000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchmarkRunsWriter(b, rows, 30) })
	}
	b.Run("rows=5000,one-cell", func(b *testing.B) { benchmarkRunsWriter(b, 5000, 5000) })
}

func benchmarkRunsWriter(b *testing.B, rows, seeds int) {
	runs, res, _ := sampleRuns(b)
	b.ReportAllocs()
	for b.Loop() {
		w := NewRunsWriter(io.Discard, meta)
		w.Reserve(rows)
		for i := range rows {
			r := runs[(i/seeds)%len(runs)]
			w.Append(grid.Run{Cell: r.Cell, Seed: uint32(i + 1)}, res[i%len(res)])
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkReadRuns reads a part of 5,000 runs whole (ReadRuns), as the
// report reads the article's cells and a resumed sweep checks an unsealed
// part: ns/op is per part.
func BenchmarkReadRuns(b *testing.B) {
	runs, res, _ := sampleRuns(b)
	var buf bytes.Buffer
	w := NewRunsWriter(&buf, meta)
	for i := range 5000 {
		r := runs[(i/30)%len(runs)]
		w.Append(grid.Run{Cell: r.Cell, Seed: uint32(i + 1)}, res[i%len(res)])
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ReadRuns(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTimelineWriter writes the timelines of 20 runs of 10,000 ticks
// each, every tick with an arrival: ns/op is per part of 200,000 rows.
func BenchmarkTimelineWriter(b *testing.B) {
	runs, _, _ := sampleRuns(b)
	tl := &sim.Timeline{Tick: 10 * time.Millisecond}
	for k := range 10000 {
		tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, int32(1+k%5)), append(tl.Served, int32(k%3)), append(tl.GaveUp, int32(k%2))
	}
	b.ReportAllocs()
	for b.Loop() {
		w := NewTimelineWriter(io.Discard, meta)
		for i := range 20 {
			w.Append(grid.Run{Cell: runs[i%len(runs)].Cell, Seed: uint32(i + 1)}, tl)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHashedColumn compresses a page of 5,000 run keys (PLAIN: a
// length and 16 hex digits each) as the writer would with zstd and with
// gzip's Huffman coding alone, which it uses for such columns
// (writer.hashed): ns/op per page, and the page's bytes compressed.
func BenchmarkHashedColumn(b *testing.B) {
	k := grid.NewKeyer(grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.FullJitter)}.Canonical())
	var page []byte
	for s := range uint32(5000) {
		key := k.Key(s)
		page = binary.LittleEndian.AppendUint32(page, uint32(len(key)))
		page = append(page, key...)
	}
	for _, c := range []struct {
		name  string
		codec compress.Compression
		level int
	}{{"zstd", compress.Codecs.Zstd, 1}, {"huffman", compress.Codecs.Gzip, gzip.HuffmanOnly}} {
		b.Run(c.name, func(b *testing.B) {
			codec, err := compress.GetCodec(c.codec)
			if err != nil {
				b.Fatal(err)
			}
			var out []byte
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				out = codec.EncodeLevel(out[:0], page, c.level)
			}
			b.ReportMetric(float64(len(out)), "bytes")
		})
	}
}
