package dataset

import (
	"fmt"
	"time"
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

func strCol[R any](name, doc string, f func(*R) *string) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: name, Type: Utf8}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Str: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Str; return nil }}
}

func int64Col[R any](name, doc string, f func(*R) *int64) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: name, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Int; return nil }}
}

func intCol[R any](name, doc string, f func(*R) *int) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: name, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: int64(*f(r))} },
		Set: func(r *R, v Value) error { *f(r) = int(v.Int); return nil }}
}

func floatCol[R any](name, doc string, f func(*R) *float64) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: name, Type: Float64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Float: *f(r)} },
		Set: func(r *R, v Value) error { *f(r) = v.Float; return nil }}
}

// seedCol is a run's seed: an Int64 column that must hold a Mulberry32
// seed.
func seedCol[R any](doc string, f func(*R) *uint32) TableColumn[R, R] {
	return TableColumn[R, R]{Field: Field{Name: ColSeed, Type: Int64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Int: int64(*f(r))} },
		Set: func(r *R, v Value) (err error) { *f(r), err = Seed(v.Int); return err }}
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
