package dataset

import (
	"io"
	"io/fs"
)

// File is an open file of a dataset: what a Format reads.
type File interface {
	io.ReaderAt
	io.Seeker
}

// Format reads the files of a dataset's tables. analysis reads datasets
// only through it, so that it needs no file-format library; the program
// picks the implementation and passes it in with the folder (Folder).
type Format interface {
	// ScanRuns reads the named columns of a runs file in batches, in row
	// order; a batch is valid only during the call that receives it.
	ScanRuns(r File, columns []string, fn func(Batch) error) (Meta, error)
	ReadRuns(r File) ([]Record, Meta, error)
	ReadRunKeys(r File) ([]string, Meta, error)
	// ReadTimelinesOf reads the timeline rows of the given runs.
	ReadTimelinesOf(r File, keys map[string]bool) ([]TimelineRow, Meta, error)
	ReadGroups(r File) ([]GroupRow, Meta, error)
	// FindRunsOf finds the runs of the wanted cells, skipping row groups
	// whose statistics exclude them.
	FindRunsOf(r File, want Want) (*Found, Meta, Selected, error)
}

// Batch is consecutive rows of a runs file holding the columns a scan
// asked for; an accessor of a column not asked for panics (a programmer's
// error). A string kept beyond the call must be copied (strings.Clone).
type Batch interface {
	Len() int
	Strings(name string) StringColumn
	Int64s(name string) Int64Column
	// Float64s returns a float64 column: a null is a milestone never reached.
	Float64s(name string) Float64Column
	// Column returns the named column as one of the *Column interfaces of
	// its type (BoolColumn for a bool).
	Column(name string) any
	// Seed returns the seed of row i, checked to be a Mulberry32 seed.
	Seed(i int) (uint32, error)
}

// Typed columns of a Batch.
type (
	StringColumn interface {
		Value(i int) string
	}
	Int64Column interface {
		Value(i int) int64
	}
	Float64Column interface {
		Value(i int) float64
		IsNull(i int) bool
	}
	BoolColumn interface {
		Value(i int) bool
	}
)

// Folder is a dataset to read: its folder (the root of FS holds runs/,
// timelines/ and groups/) and the Format its parts are read with.
type Folder struct {
	FS     fs.FS
	Format Format
}
