package parquetio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/herdsweep/herdsweep/dataset"
)

// colBuilder appends a column's values to its builder: the one typed
// builder of its kind.
type colBuilder struct {
	kind dataset.Type
	str  *array.StringBuilder
	i64  *array.Int64Builder
	f64  *array.Float64Builder
	bool *array.BooleanBuilder
	// nullEmpty: the string column stores "" as null (its field is
	// nullable: grid.Param.NullZero, the preset).
	nullEmpty bool
}

func (c *colBuilder) append(v *dataset.Value) {
	switch c.kind {
	case dataset.Utf8:
		if v.Null || c.nullEmpty && v.Str == "" {
			c.str.AppendNull()
			return
		}
		c.str.Append(v.Str)
	case dataset.Int64:
		if v.Null {
			c.i64.AppendNull()
			return
		}
		c.i64.Append(v.Int)
	case dataset.Float64:
		if v.Null {
			c.f64.AppendNull()
			return
		}
		c.f64.Append(v.Float)
	default:
		if v.Null {
			c.bool.AppendNull()
			return
		}
		c.bool.Append(v.Bool)
	}
}

// appendN appends v n times: a cell's value to the rows of its seeds.
func (c *colBuilder) appendN(v *dataset.Value, n int) {
	if n <= 0 {
		return
	}
	null := v.Null || c.kind == dataset.Utf8 && c.nullEmpty && v.Str == ""
	switch {
	case c.kind == dataset.Utf8 && null:
		c.str.AppendNulls(n)
	case c.kind == dataset.Utf8:
		c.str.Reserve(n)
		for range n {
			c.str.Append(v.Str)
		}
	case c.kind == dataset.Int64 && null:
		c.i64.AppendNulls(n)
	case c.kind == dataset.Int64:
		c.i64.Reserve(n)
		for range n {
			c.i64.UnsafeAppend(v.Int)
		}
	case c.kind == dataset.Float64 && null:
		c.f64.AppendNulls(n)
	case c.kind == dataset.Float64:
		c.f64.Reserve(n)
		for range n {
			c.f64.UnsafeAppend(v.Float)
		}
	case null:
		c.bool.AppendNulls(n)
	default:
		c.bool.Reserve(n)
		for range n {
			c.bool.UnsafeAppend(v.Bool)
		}
	}
}

// rowWriter writes rows of type W of a table through its column list:
// column i of the list is field i of the writer's schema.
type rowWriter[W, R any] struct {
	cols []dataset.TableColumn[W, R]
	out  []colBuilder
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
}

// newRowWriter returns the row writer of w, which flushes it before it
// writes the file.
func newRowWriter[W, R any](w *writer, cols []dataset.TableColumn[W, R]) *rowWriter[W, R] {
	if len(cols) != len(w.schema.Fields()) {
		panic(fmt.Sprintf("parquetio: %d columns for a schema of %d", len(cols), len(w.schema.Fields())))
	}
	rw := &rowWriter[W, R]{cols: cols, out: make([]colBuilder, len(cols)), cell: make([]dataset.Value, len(cols))}
	for i := range cols {
		switch b := w.b.Field(i).(type) {
		case *array.StringBuilder:
			rw.out[i] = colBuilder{kind: dataset.Utf8, str: b, nullEmpty: w.schema.Field(i).Nullable}
		case *array.Int64Builder:
			rw.out[i] = colBuilder{kind: dataset.Int64, i64: b}
		case *array.Float64Builder:
			rw.out[i] = colBuilder{kind: dataset.Float64, f64: b}
		case *array.BooleanBuilder:
			rw.out[i] = colBuilder{kind: dataset.Bool, bool: b}
		default:
			panic(fmt.Sprintf("parquetio: column %q of %s", cols[i].Name, w.schema.Field(i).Type))
		}
		if cols[i].OfCell {
			rw.ofCell = append(rw.ofCell, i)
		} else {
			rw.perRow = append(rw.perRow, i)
		}
	}
	w.flush = rw.flush
	return rw
}

// append writes one row; fresh says that its cell is not the last row's
// (always true for a table without OfCell columns, where it changes
// nothing).
func (rw *rowWriter[W, R]) append(row *W, fresh bool) {
	if fresh && len(rw.ofCell) > 0 {
		rw.flush()
		for _, i := range rw.ofCell {
			rw.cell[i] = rw.cols[i].Get(row)
		}
	}
	for _, i := range rw.perRow {
		v := rw.cols[i].Get(row)
		rw.out[i].append(&v)
	}
	rw.pending++
}

// flush appends the pending rows' OfCell values.
func (rw *rowWriter[W, R]) flush() {
	for _, i := range rw.ofCell {
		rw.out[i].appendN(&rw.cell[i], rw.pending)
	}
	rw.pending = 0
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
