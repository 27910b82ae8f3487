package dataset

import (
	"fmt"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Value is one value of a column, as a table's column list gets it from a
// row for a writer and puts it back into a row for a reader: Int of an
// Int64 column, Float of a Float64 one, Str of a Utf8 one, Bool of a Bool
// one. Null is a null: a milestone never reached, a nullable string
// column's "" (its writer stores "" as null where the column is nullable,
// and a reader reads a null string as "").
type Value struct {
	Int   int64
	Float float64
	Str   string
	Bool  bool
	Null  bool
}

// TableColumn is a column of a table whose writer gets its values from
// rows of type W and whose reader puts them back into rows of type R: its
// field, what it means, and how it is got and set. Each table has one list
// of them (RunsTable, TimelineTable, GroupsTable, CellsTable), the one
// place its columns are named, in order: the file format's schema
// (…Fields), the documentation (…Columns), the writers and the readers are
// built from it.
type TableColumn[W, R any] struct {
	Field
	Doc string
	// Optional columns were added after parts of the table's schema
	// version were written: a part without one reads it as its zero (null
	// where nullable), which is what those rows had.
	Optional bool
	// OfCell: the value depends on the row's cell alone (its parameters,
	// keys, label): a selective read of wanted cells takes it from the
	// cell, not from the file (the runs table).
	OfCell bool
	// Get puts the column's value of a row in out, for a writer. (A
	// Value returned, not put, cost a writer a wait for each: the
	// caller copies it whole as soon as the call has stored it field by
	// field, which a processor cannot forward.)
	Get func(row *W, out *Value)
	// Ints and Floats, when set, append the column's values of rows to
	// dst, as Get gets them one by one (Value.Int of an Int64 column,
	// Value.Float of a Float64 one), at one call for them all: a writer
	// of many small rows spent as much in Get's calls, a few levels deep
	// for a result's metric, as in the rest of its work. Floats appends
	// nothing and reports false if a row's value is null. Both are held
	// to Get by TestBatchesAreGet.
	Ints   func(rows []W, dst []int64) []int64
	Floats func(rows []W, dst []float64) ([]float64, bool)
	// at is where the column's value is in a row of type W, for a column
	// of one of the kinds below: what metric lifts to a runs row's result.
	at fieldOf[W]
	// Zero, when set, reports that the column is zero in every row of
	// the row's cell (a chain's columns for a cell without one): a
	// writer asks it once per cell and then does not get the column
	// row by row. Each is held to that by TestZeroColumnsAreZero.
	Zero func(row *W) bool
	// Set puts a value read into a row; nil for a column derived from
	// others, which a reader checks but does not read back. It fails on a
	// value the row cannot hold (a seed out of range).
	Set func(*R, Value) error
}

// fieldsOf is the fields of a table's columns, in order.
func fieldsOf[W, R any](cols []TableColumn[W, R]) []Field {
	out := make([]Field, len(cols))
	for i, c := range cols {
		out[i] = c.Field
	}
	return out
}

// docsOf documents a table's columns, in order.
func docsOf[W, R any](cols []TableColumn[W, R]) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{c.Name, c.docType(), c.Doc}
	}
	return out
}

// docType is the column's type as `sweep schema` shows it.
func (f Field) docType() string {
	t := string(f.Type)
	if f.Type == Utf8 {
		t = "string"
	}
	if f.Nullable {
		t += " (null)"
	}
	return t
}

// Seconds is a time read from a column of seconds, rounded to the
// nanosecond.
func Seconds(s float64) time.Duration { return time.Duration(s*1e9 + 0.5) }

// The column kinds the tables' lists are made of: a field of the row type
// reached through a pointer, read and written alike.

// fieldOf is where a numeric column's value is in a row of type R: one
// of its accessors is set.
type fieldOf[R any] struct {
	i64       func(*R) *int64
	i         func(*R) *int
	u32       func(*R) *uint32
	f64       func(*R) *float64
	seconds   func(*R) *time.Duration // as seconds
	milestone func(*R) *sim.Milestone // its time in seconds, null when never reached
}

// batches are the Ints or Floats of the column whose value is at a in the
// row that in(w) is in: the one place each kind's values are got in
// bulk, which TestBatchesAreGet holds to Get.
func batches[W, R any](a fieldOf[R], in func(*W) *R) (ints func([]W, []int64) []int64, floats func([]W, []float64) ([]float64, bool)) {
	switch {
	case a.i64 != nil:
		ints = intsOf(a.i64, in)
	case a.i != nil:
		ints = intsOf(a.i, in)
	case a.u32 != nil:
		ints = intsOf(a.u32, in)
	case a.f64 != nil:
		f := a.f64
		floats = func(rows []W, dst []float64) ([]float64, bool) {
			for i := range rows {
				dst = append(dst, *f(in(&rows[i])))
			}
			return dst, true
		}
	case a.seconds != nil:
		f := a.seconds
		floats = func(rows []W, dst []float64) ([]float64, bool) {
			for i := range rows {
				dst = append(dst, f(in(&rows[i])).Seconds())
			}
			return dst, true
		}
	case a.milestone != nil:
		f := a.milestone
		floats = func(rows []W, dst []float64) ([]float64, bool) {
			n := len(dst)
			for i := range rows {
				m := f(in(&rows[i]))
				if !m.Reached {
					return dst[:n], false
				}
				dst = append(dst, m.At.Seconds())
			}
			return dst, true
		}
	}
	return ints, floats
}

// intsOf is the Ints of an integer field at f in the row in(w) is in.
func intsOf[W, R any, T int64 | int | uint32](f func(*R) *T, in func(*W) *R) func([]W, []int64) []int64 {
	return func(rows []W, dst []int64) []int64 {
		for i := range rows {
			dst = append(dst, int64(*f(in(&rows[i]))))
		}
		return dst
	}
}

// self is a row as the row its column's value is in.
func self[R any](r *R) *R { return r }

// withBatches sets c's Ints and Floats from where its value is (c.at).
func withBatches[R any](c TableColumn[R, R]) TableColumn[R, R] {
	c.Ints, c.Floats = batches(c.at, self[R])
	return c
}

func strCol[R any](name, doc string, f func(*R) *string) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: name, Type: Utf8}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Str: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Str; return nil }}
}

func int64Col[R any](name, doc string, f func(*R) *int64) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: name, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Int; return nil },
		at:  fieldOf[R]{i64: f}})
}

func intCol[R any](name, doc string, f func(*R) *int) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: name, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: int64(*f(r))} },
		Set: func(r *R, v Value) error { *f(r) = int(v.Int); return nil },
		at:  fieldOf[R]{i: f}})
}

func floatCol[R any](name, doc string, f func(*R) *float64) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: name, Type: Float64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Float: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Float; return nil },
		at:  fieldOf[R]{f64: f}})
}

// seedCol is a run's seed: an Int64 column that must hold a Mulberry32
// seed.
func seedCol[R any](doc string, f func(*R) *uint32) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: ColSeed, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: int64(*f(r))} },
		Set: func(r *R, v Value) (err error) { *f(r), err = Seed(v.Int); return err },
		at:  fieldOf[R]{u32: f}})
}

// Seed checks that a seed column's value is a Mulberry32 seed.
func Seed(v int64) (uint32, error) {
	if v < 0 || v > 1<<32-1 {
		return 0, fmt.Errorf("seed %d: want a whole number in [0, %d]", v, uint32(1<<32-1))
	}
	return uint32(v), nil
}

// nullable marks a column nullable.
func nullable[W, R any](c TableColumn[W, R]) TableColumn[W, R] {
	c.Nullable = true
	return c
}
