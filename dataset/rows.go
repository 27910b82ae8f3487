package dataset

import (
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Record is one row of the runs table.
type Record struct {
	RunKey  string
	CellKey string
	Seed    uint32
	Label   string
	Cell    grid.Cell
	Result  sim.Result
}

// TimelineRow is one row of the timelines table.
type TimelineRow struct {
	RunKey, CellKey string
	Seed            uint32
	Tick            int
	T               float64 // s
	Arrivals        int
	Served          int
	GaveUp          int
}

// GroupRow is one row of the groups table.
type GroupRow struct {
	RunKey, CellKey string
	Seed            uint32
	Group           int
	Share           float64
	Policy, Preset  string
	Label           string
	Result          sim.GroupResult
}

// Want names the runs a selective read keeps: the rows whose cell key is
// in Cells. A kept row's cell is the one Cells maps its key to (the same
// parameters, as the key is their hash), so the parameter columns are not
// read, only the keys, the seed and the results. Bounds give, per numeric column, the least and greatest value
// those cells hold: a row group whose statistics show all its values of a
// column outside that column's bound holds none of the cells and is not
// read at all (only the file's footer is).
type Want struct {
	Cells map[string]grid.Cell
	// Sim, when set, is the simulator version of every wanted cell (its
	// keys hash it): a file of another version holds none of them and is
	// not read beyond its footer.
	Sim    string
	Bounds map[string]Bound
	// Results, when not nil, are the only result columns read besides
	// cell_key and seed (which are always read): a field of a record whose
	// column is not named, run_key included, is left zero. Decoding the
	// columns a caller never looks at is most of a selective read's time.
	Results []string
}

// Bound is the closed interval [Lo, Hi] of a column's wanted values.
type Bound struct{ Lo, Hi float64 }

// Selected says how much of a file a selective read touched.
type Selected struct {
	RowGroups int // in the file
	Pruned    int // skipped by their statistics, unread
	Scanned   int // whose cell keys were read, holding none of the cells
	Read      int // read whole: they hold some of the cells
}

// Found is the runs a Format's FindRunsOf found in a runs file: each one's
// cell key and seed, and their records, built when asked for. A nil *Found
// holds no run. It is not safe for concurrent use.
type Found struct {
	Keys  []string // cell key of each run found, in row order
	Seeds []uint32
	Runs  interface {
		// RecordInto writes run i's record into r (every field: r may
		// hold another record).
		RecordInto(i int, r *Record)
	}
}

// Len is the number of runs found.
func (f *Found) Len() int {
	if f == nil {
		return 0
	}
	return len(f.Keys)
}

// RecordInto writes run i's record into r, as ReadRuns gives it (but for
// the fields of the columns Want.Results left out, which are zero).
func (f *Found) RecordInto(i int, r *Record) { f.Runs.RecordInto(i, r) }
