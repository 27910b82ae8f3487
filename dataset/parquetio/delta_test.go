package parquetio

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/herdsweep/herdsweep/dataset"
)

// An Int64 column of rows that is not a dictionary is written
// DELTA_BINARY_PACKED, and both readers read back every value (compareReaders): seeds one after another, values that jump
// between int64's extremes (differences that wrap around), random values
// of every width, runs too short for a dictionary, nulls; lengths on and
// around the block and miniblock sizes, in one row group or random ones.
func TestDeltaColumnsReadBack(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 128))
	patterns := map[string]func(i int) int64{
		"seeds":    func(i int) int64 { return int64(i + 1) },
		"extremes": func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[rng.IntN(5)] },
		"random":   func(i int) int64 { return int64(rng.Uint64() >> rng.IntN(64)) },
		"down":     func(i int) int64 { return 1_000_000 - int64(i)*int64(rng.IntN(1000)) },
		"short":    func(i int) int64 { return int64(i / 2) },
	}
	lengths := []int{2, 3, 31, 32, 33, 127, 128, 129, 130, 255, 256, 257, 1000}
	deltas := 0
	for name, next := range patterns {
		for _, n := range lengths {
			for _, nullable := range []bool{false, true} {
				f := arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: nullable}
				var buf bytes.Buffer
				w := newWriter(&buf, []arrow.Field{f}, fileMetadata(meta, dataset.RunsSchema))
				if rng.IntN(3) == 0 {
					w.groupRows = 1 + rng.IntN(n)
				}
				c := &w.cols[0]
				var want []dataset.Value
				for i := range n {
					v := dataset.Value{Int: next(i), Null: nullable && rng.IntN(5) == 0}
					if v.Null {
						v.Int = 0
					}
					c.append(&v)
					want = append(want, v)
				}
				w.rows = n
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if w.groupRows >= n {
					compareReaders(t, name, buf.Bytes())
				}
				if got := readInts(t, buf.Bytes()); !slices.Equal(got, want) {
					t.Fatalf("%s, %d values in row groups of %d: arrow-go reads %v, want %v", name, n, w.groupRows, got, want)
				}
				deltas += deltaChunks(t, buf.Bytes())
			}
		}
	}
	if deltas < 50 {
		t.Errorf("%d chunks DELTA_BINARY_PACKED: the test reads few", deltas)
	}
}

// deltaChunks is how many column chunks of file b are
// DELTA_BINARY_PACKED.
func deltaChunks(t *testing.T, b []byte) (n int) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for g := range pf.NumRowGroups() {
		cc, err := pf.MetaData().RowGroup(g).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
			n++
		}
	}
	return n
}

// readInts is the one Int64 column of file b as arrow-go reads it.
func readInts(t *testing.T, b []byte) []dataset.Value {
	t.Helper()
	_, tbl := arrowRead(t, "ints", b)
	defer tbl.Release()
	var out []dataset.Value
	for _, ch := range tbl.Column(0).Data().Chunks() {
		a := ch.(*array.Int64)
		for i := range a.Len() {
			if a.IsNull(i) {
				out = append(out, dataset.Value{Null: true})
			} else {
				out = append(out, dataset.Value{Int: a.Value(i)})
			}
		}
	}
	return out
}
