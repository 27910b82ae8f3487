package parquetio

import (
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
)

// CellsWriter writes a cells table: one row per cell.
type CellsWriter struct {
	writer
	metrics int
}

// NewCellsWriter returns a writer of the cells table of the given metrics
// to w.
func NewCellsWriter(w io.Writer, meta dataset.Meta, metrics []string) *CellsWriter {
	return &CellsWriter{*newWriter(w, arrowFields(dataset.CellsFields(metrics)), fileMetadata(meta, dataset.CellsSchema)), len(metrics)}
}

// Append adds a cell: its key, label, sweeps and runs, and one Stat per
// metric, in the order the writer was given them.
func (w *CellsWriter) Append(key, label string, c grid.Cell, sweeps []string, runs int, stats []dataset.Stat) {
	if len(stats) != w.metrics {
		panic("dataset: CellsWriter.Append: one Stat per metric")
	}
	b := w.b
	i := 0
	next := func() array.Builder { i++; return b.Field(i - 1) }
	next().(*array.StringBuilder).Append(key)
	next().(*array.StringBuilder).Append(label)
	next().(*array.StringBuilder).Append(c.PolicySpec())
	for pi := range grid.Params {
		nullEmpty := w.schema.Field(i).Nullable // the next column's
		switch v := grid.Params[pi].Get(c).(type) {
		case int64:
			next().(*array.Int64Builder).Append(v)
		case float64:
			next().(*array.Float64Builder).Append(v)
		case string:
			appendString(next().(*array.StringBuilder), v, nullEmpty)
		case bool:
			next().(*array.BooleanBuilder).Append(v)
		}
	}
	next().(*array.StringBuilder).Append(strings.Join(sweeps, ","))
	next().(*array.Int64Builder).Append(int64(runs))
	for _, s := range stats {
		next().(*array.Int64Builder).Append(int64(s.N))
		next().(*array.Int64Builder).Append(int64(s.Unfinished))
		s.EachValue(func(v float64) {
			fb := next().(*array.Float64Builder)
			if s.Unfinished > 0 || s.N == 0 || math.IsNaN(v) {
				fb.AppendNull()
			} else {
				fb.Append(v)
			}
		})
	}
	w.rows++
}
