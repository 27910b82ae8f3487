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

// rowWriter writes rows of type W of a table through its column list:
// column i of the list is field i of the writer's schema.
type rowWriter[W, R any] struct {
	cols []dataset.TableColumn[W, R]
	out  []colBuilder
	// cell holds the values of the columns of the row's cell alone
	// (TableColumn.OfCell), got again only when the cell changes: a
	// sweep hands out a cell's seeds in a row, and most of the runs
	// table's columns are its cell's parameters.
	cell []dataset.Value
}

func newRowWriter[W, R any](w *writer, cols []dataset.TableColumn[W, R]) rowWriter[W, R] {
	if len(cols) != len(w.schema.Fields()) {
		panic(fmt.Sprintf("parquetio: %d columns for a schema of %d", len(cols), len(w.schema.Fields())))
	}
	rw := rowWriter[W, R]{cols: cols, out: make([]colBuilder, len(cols)), cell: make([]dataset.Value, len(cols))}
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
	}
	return rw
}

// append writes one row; fresh says that its cell is not the last row's
// (always true for a table without OfCell columns, where it changes
// nothing).
func (rw *rowWriter[W, R]) append(row *W, fresh bool) {
	for i := range rw.cols {
		c := &rw.cols[i]
		if !c.OfCell {
			v := c.Get(row)
			rw.out[i].append(&v)
			continue
		}
		if fresh {
			rw.cell[i] = c.Get(row)
		}
		rw.out[i].append(&rw.cell[i])
	}
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
