package parquetio

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/herdsweep/herdsweep/dataset"
)

// Numeric columns of few distinct values in no order are written as a
// dictionary with bit-packed indices (every width from 1 bit up, row
// counts not a multiple of eight, nulls, NaN, ±0, ±Inf and the int64
// extremes among the values), and both readers read every value back with
// the chunk's statistics right (compareReaders); a column of values that
// rarely repeat is PLAIN.
func TestPackedDictionary(t *testing.T) {
	t.Parallel()
	odd := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1)}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, rows := range []int{64, 77, 1000, 5003} {
		for _, distinct := range []int{1, 2, 3, 9, 100, 300, rows} {
			name := fmt.Sprintf("%d rows of %d values", rows, distinct)
			fields := []arrow.Field{
				{Name: "f", Type: arrow.PrimitiveTypes.Float64},
				{Name: "fn", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
				{Name: "i", Type: arrow.PrimitiveTypes.Int64},
			}
			var buf bytes.Buffer
			w := newWriter(&buf, fields, fileMetadata(meta, dataset.RunsSchema))
			for r := range rows {
				k := rng.IntN(distinct)
				if distinct == rows {
					k = r // every value once
				}
				f := float64(k) * 0.01
				if k < len(odd) && distinct < rows {
					f = odd[k]
				}
				i := int64(k) - 1
				switch k {
				case 1:
					i = math.MinInt64
				case 2:
					i = math.MaxInt64
				}
				w.cols[0].append(&dataset.Value{Float: f})
				w.cols[1].append(&dataset.Value{Float: f, Null: rng.IntN(7) == 0})
				w.cols[2].append(&dataset.Value{Int: i})
				w.rows++
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			dicts := compareReaders(t, name, buf.Bytes())
			want := 3
			if 8*distinct > rows-rows/7-1 { // too many for a dictionary (fn has fewer values)
				want = 0
			}
			if distinct == rows || distinct <= 3 && rows >= 1000 {
				if dicts != want {
					t.Errorf("%s: %d columns a dictionary, want %d", name, dicts, want)
				}
			}
			if distinct <= 100 && rows >= 1000 { // bit-packed: far smaller than 8 bytes a value
				pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				cc, _ := pf.MetaData().RowGroup(0).ColumnChunk(0)
				width := max(1, bits.Len(uint(distinct-1)))
				if u, most := cc.TotalUncompressedSize(), int64(rows*width/8+8*distinct+64); u > most {
					t.Errorf("%s: column f is %d bytes uncompressed, want at most %d (%d bits a value and the dictionary)", name, u, most, width)
				}
			}
		}
	}
}
