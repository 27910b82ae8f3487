package parquetio

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herdsweep/herdsweep/dataset"
)

// append appends v to one row.
func (c *colBuf) append(v *dataset.Value) {
	if c.byRun {
		if k := len(c.runLen) - 1; k >= 0 && !v.Null && !c.runNull[k] && c.sameAsLast(v) {
			c.runLen[k]++ // the commonest row of all: a metric the same as in the last run
			c.rows++
			return
		}
		c.appendRun(v, 1)
		if c.adaptive && len(c.runLen) > 32 && 8*len(c.runLen) > c.rows {
			c.flatten()
		}
		return
	}
	if v.Null || c.null != nil || c.kind == dataset.Utf8 && c.nullEmpty && v.Str == "" {
		c.appendN(v, 1)
		return
	}
	c.rows++
	c.push(v)
}

// push appends v to the values of the column's kind.
func (c *colBuf) push(v *dataset.Value) {
	switch c.kind {
	case dataset.Float64:
		c.f64 = append(c.f64, v.Float)
	case dataset.Int64:
		c.i64 = append(c.i64, v.Int)
	case dataset.Utf8:
		c.str = append(c.str, v.Str)
	default:
		c.bools = append(c.bools, v.Bool)
	}
}

// appendFrom appends get's value of each row, through v (a caller's,
// so that it is not made anew for each call).
func appendFrom[W any](c *colBuf, get func(*W, *dataset.Value), rows []W, v *dataset.Value) {
	for j := range rows {
		get(&rows[j], v)
		c.append(v)
	}
}

// rowWriter writes rows of type W of a table through its column list:
// column i of the list is field i of the writer's schema.
type rowWriter[W, R any] struct {
	cols []dataset.TableColumn[W, R]
	out  []*colBuf
	// cell holds the values of the columns of the row's cell alone
	// (TableColumn.OfCell), got again only when the cell changes: a
	// sweep hands out a cell's seeds in a row, and most of the runs
	// table's columns are its cell's parameters. They are appended to
	// their columns at once for the pending rows of a cell, when the
	// next cell comes or the file is written (flush).
	cell    []dataset.Value
	ofCell  []int // the OfCell columns
	perRow  []int // the others
	pending int   // rows whose OfCell values are cell's, not appended yet
	// live are the perRow columns got row by row for the cell; the
	// others are zero in all its rows (TableColumn.Zero), appended as
	// such (zero). ignoreZero gets every column row by row (tests).
	live, zero []int
	ignoreZero bool
	v          dataset.Value // appendFrom's
	// noBatches gets every column row by row, never through its Ints or
	// Floats (tests); ints and floats hold a batch's values of a column
	// kept by runs.
	noBatches bool
	ints      []int64
	floats    []float64
	// batch holds rows whose other columns are not appended yet: they
	// are appended a column at a time (flush), so that one column's
	// getter is called for row after row, which a processor predicts,
	// rather than every column's in turn for each row, which it does
	// not (a third of a part's CPU on a sweep of tiny runs). Rows of a
	// table with OfCell columns share their cell within a batch.
	batch []W
}

// rowBatch is the most rows a rowWriter holds before it appends them:
// enough for the processor to learn a column's getter, few enough that a
// part's fixed cost stays small (a runs writer holds as many results,
// 760 bytes each; TestRowBytesBoundTheWriters).
const rowBatch = 64

// newRowWriter returns the row writer of w, which flushes it before it
// writes the file.
func newRowWriter[W, R any](w *writer, cols []dataset.TableColumn[W, R]) *rowWriter[W, R] {
	if len(cols) != len(w.fields) {
		panic(fmt.Sprintf("parquetio: %d columns for a schema of %d", len(cols), len(w.fields)))
	}
	rw := &rowWriter[W, R]{cols: cols, out: make([]*colBuf, len(cols)), cell: make([]dataset.Value, len(cols))}
	for i := range cols {
		rw.out[i] = &w.cols[i]
		w.cols[i].byRun = true // (byrun.go)
		if cols[i].OfCell {
			rw.ofCell = append(rw.ofCell, i)
		} else {
			rw.perRow = append(rw.perRow, i)
			w.cols[i].adaptive = true
		}
	}
	w.flush = rw.flush
	return rw
}

// slot is the index in the batch the next row takes: a row that points
// at data of its own (a run's result) keeps it there until it is
// appended, which the next rowBatch rows do not outlast.
func (rw *rowWriter[W, R]) slot() int { return len(rw.batch) }

// append writes one row; fresh says that its cell is not the last row's
// (always true for a table without OfCell columns, where it changes
// nothing). A writer whose rows point at their cell calls flush before
// it changes what they point at.
func (rw *rowWriter[W, R]) append(row *W, fresh bool) {
	if fresh && len(rw.ofCell) > 0 {
		rw.flush()
		for _, i := range rw.ofCell {
			rw.cols[i].Get(row, &rw.cell[i])
		}
		rw.live, rw.zero = rw.live[:0], rw.zero[:0]
		for _, i := range rw.perRow {
			if rw.zeroFor(i, row) {
				rw.zero = append(rw.zero, i)
			} else {
				rw.live = append(rw.live, i)
			}
		}
	}
	if rw.batch == nil { // made at the first row: a part's side tables are often empty
		rw.batch = make([]W, 0, rowBatch)
	}
	rw.batch = append(rw.batch, *row)
	rw.pending++
	if len(rw.batch) == rowBatch {
		rw.flushRows()
	}
}

// zeroFor reports whether column i is zero in every row of row's cell:
// its Zero says so, and the cell's first row agrees (a cheap guard: a
// result that breaks the promise in its first run keeps the column live).
func (rw *rowWriter[W, R]) zeroFor(i int, row *W) bool {
	c := &rw.cols[i]
	if c.Zero == nil || rw.ignoreZero || !c.Zero(row) {
		return false
	}
	var v dataset.Value
	c.Get(row, &v)
	return v == (dataset.Value{}) && !math.Signbit(v.Float)
}

// flush appends the rows held: their OfCell values and their other
// columns.
func (rw *rowWriter[W, R]) flush() {
	rw.flushRows()
	for _, i := range rw.ofCell {
		rw.out[i].appendRun(&rw.cell[i], rw.pending)
	}
	rw.pending = 0
}

// flushRows appends the batch's columns that are not OfCell, a column at
// a time.
func (rw *rowWriter[W, R]) flushRows() {
	live := rw.perRow
	if len(rw.ofCell) > 0 { // a table of cells' runs: live is the cell's
		live = rw.live
		for _, i := range rw.zero {
			rw.out[i].appendSame(&dataset.Value{}, len(rw.batch))
		}
	}
	for _, i := range live {
		rw.appendColumn(i)
	}
	rw.batch = rw.batch[:0]
}

// appendColumn appends column i's values of the batch's rows: through
// its Ints or Floats where it has them, straight to a column of rows
// without nulls, else value by value; through Get when it has neither or
// a value is null.
func (rw *rowWriter[W, R]) appendColumn(i int) {
	c, col := rw.out[i], &rw.cols[i]
	rows := !c.byRun && c.null == nil
	switch {
	case rw.noBatches:
	case col.Ints != nil && rows:
		c.i64 = col.Ints(rw.batch, c.i64)
		c.rows += len(rw.batch)
		return
	case col.Ints != nil:
		rw.ints = col.Ints(rw.batch, rw.ints[:0])
		for _, x := range rw.ints {
			rw.v = dataset.Value{Int: x}
			c.append(&rw.v)
		}
		return
	case col.Floats != nil && rows:
		var ok bool
		if c.f64, ok = col.Floats(rw.batch, c.f64); ok {
			c.rows += len(rw.batch)
			return
		}
	case col.Floats != nil:
		var ok bool
		if rw.floats, ok = col.Floats(rw.batch, rw.floats[:0]); ok {
			for _, x := range rw.floats {
				rw.v = dataset.Value{Float: x}
				c.append(&rw.v)
			}
			return
		}
	}
	appendFrom(c, col.Get, rw.batch, &rw.v)
}

// valueAt is value i of a column.
func valueAt(a arrow.Array, i int) dataset.Value {
	if a.IsNull(i) {
		return dataset.Value{Null: true}
	}
	switch a := a.(type) {
	case *array.Int64:
		return dataset.Value{Int: a.Value(i)}
	case *array.Float64:
		return dataset.Value{Float: a.Value(i)}
	case *array.String:
		return dataset.Value{Str: a.Value(i)}
	case *array.Boolean:
		return dataset.Value{Bool: a.Value(i)}
	}
	panic(fmt.Sprintf("parquetio: a column of %s", a.DataType())) // types are checked before
}

// readRows reads tbl's columns into rows through the table's column list:
// at(row) is where row goes, nil for a row not asked for. Every column is
// checked (its type, and no null in a column that has none), an optional
// column a part lacks leaves its field zero, and a column derived from
// others (no Set) is not read back.
func readRows[W, R any](tbl arrow.Table, cols []dataset.TableColumn[W, R], at func(row int) *R) error {
	for _, c := range cols {
		chunks := column(tbl, c.Name)
		if chunks == nil && c.Optional {
			continue
		}
		if chunks == nil {
			return fmt.Errorf("no column %q", c.Name)
		}
		if err := readColumn(chunks, c, at); err != nil {
			return err
		}
	}
	return nil
}

// readColumn reads one column's chunks into rows (readRows).
func readColumn[W, R any](chunks []arrow.Array, c dataset.TableColumn[W, R], at func(row int) *R) error {
	t := arrowType(c.Type)
	row := 0
	for _, ch := range chunks {
		if !arrow.TypeEqual(ch.DataType(), t) {
			return fmt.Errorf("column %q is %s: want %s", c.Name, ch.DataType(), t)
		}
		for i := range ch.Len() {
			if !c.Nullable && ch.IsNull(i) {
				return fmt.Errorf("column %q row %d: null in a column that has none", c.Name, row)
			}
			if r := at(row); r != nil && c.Set != nil {
				if err := c.Set(r, valueAt(ch, i)); err != nil {
					return fmt.Errorf("column %q row %d: %w", c.Name, row, err)
				}
			}
			row++
		}
	}
	return nil
}
