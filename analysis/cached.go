package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Cached is what a results folder holds of some cells: their runs, and how
// much of the folder was read to find them.
type Cached struct {
	Files            int // runs parts in the folder
	dataset.Selected     // row groups, summed over the parts
	// parts are the runs found, per part, with what Aggregates reads:
	// the cell, seed, label and the metrics' results (their run keys and
	// other results are zero). A run's record is built only when Find
	// asks for it: a record is over a kilobyte, and building every one
	// cost more than the reading.
	parts  []*dataset.Found
	sweeps []string                       // of each part
	at     map[runID]struct{ p, i int32 } // where each run is in parts
}

// runID names a run by its cell's key and its seed: the run its run key
// names (both hash the cell's canonical form and the simulator's version).
type runID struct {
	cell string
	seed uint32
}

// Runs is the number of runs found.
func (c *Cached) Runs() int { return len(c.at) }

// Find writes into r the run of the cell with key cellKey and the given
// seed, as a record of the sweep that stored it (a record is large: it is
// built in place); false, and r untouched, when the folder has none.
func (c *Cached) Find(cellKey string, seed uint32, r *Record) bool {
	w, ok := c.at[runID{cellKey, seed}]
	if !ok {
		return false
	}
	c.parts[w.p].RecordInto(int(w.i), &r.Record)
	r.Sweep = c.sweeps[w.p]
	return true
}

// LoadCells reads the runs of the given cells from a results folder, and
// nothing else it can avoid: a part of another simulator version is read
// no further than its footer, a row group whose statistics rule out every
// cell (a capacity, fleet size, outage … none of the cells has) is skipped
// unread, of the others only the cell_key column is read, and the seed and
// the metrics' columns only of the row groups that hold some of the cells.
// A run (a cell and seed) stored more than once counts once, the first
// copy read, as in Load. A folder without runs parts holds none of them
// (not an error: the caller simulates).
func LoadCells(d dataset.Folder, cells []grid.Cell) (*Cached, error) {
	fsys, format := d.FS, formatOf(d)
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	out := &Cached{Files: len(l.Runs), at: map[runID]struct{ p, i int32 }{}}
	if len(cells) == 0 {
		return out, nil
	}
	want := WantCells(cells)
	for _, part := range l.Runs {
		p := part.Path()
		var sel dataset.Selected
		var found *dataset.Found
		_, _, err := readParquet(fsys, p, func(r dataset.File) ([]struct{}, dataset.Meta, error) {
			f, meta, s, err := format.FindRunsOf(r, want)
			found, sel = f, s
			return nil, meta, err
		})
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		out.RowGroups += sel.RowGroups
		out.Pruned += sel.Pruned
		out.Scanned += sel.Scanned
		out.Read += sel.Read
		if found.Len() == 0 {
			continue
		}
		pi := int32(len(out.parts))
		for i := range found.Len() {
			id := runID{found.Keys[i], found.Seeds[i]}
			if _, ok := out.at[id]; !ok {
				out.at[id] = struct{ p, i int32 }{pi, int32(i)}
			}
		}
		out.parts, out.sweeps = append(out.parts, found), append(out.sweeps, part.Sweep)
	}
	return out, nil
}

// WantCells is the selection of the given cells' runs: their keys, for
// every numeric parameter the least and greatest value among them, which a
// row group's statistics must reach to hold any of them, and the columns
// Aggregates reads (no run key: a run is its cell and seed): the queueing
// metrics too when a cell is a queueing server's.
func WantCells(cells []grid.Cell) dataset.Want {
	metrics := Metrics
	if slices.ContainsFunc(cells, func(c grid.Cell) bool { return c.Scenario.Concurrency > 0 || inBrownout(c.Scenario) }) {
		metrics = AllMetrics() // a queueing server's runs are judged on its own metrics too (Query.Recovery), a brownout's on its own
	}
	w := dataset.Want{Cells: make(map[string]grid.Cell, len(cells)), Bounds: map[string]dataset.Bound{}, Sim: sim.Version,
		Results: recordColumns(metrics)}
	for _, c := range cells {
		w.Cells[c.Key()] = c
	}
	for i := range grid.Params {
		p := &grid.Params[i]
		if p.Type != grid.Int && p.Type != grid.Float {
			continue
		}
		b := dataset.Bound{Lo: math.Inf(1), Hi: math.Inf(-1)}
		for j := range cells {
			var v float64
			switch x := p.Of(&cells[j]).(type) {
			case int64:
				v = float64(x)
			case float64:
				v = x
			default:
				panic(fmt.Sprintf("analysis: parameter %s of type %T", p.Key, x))
			}
			b.Lo, b.Hi = min(b.Lo, v), max(b.Hi, v)
		}
		w.Bounds[p.Key] = b
	}
	return w
}
