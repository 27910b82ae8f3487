package analysis

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

// Cached is what a results folder holds of some cells: their runs, and how
// much of the folder was read to find them.
type Cached struct {
	Records          []Record // each run once, in read order
	Files            int      // runs parts in the folder
	dataset.Selected          // row groups, summed over the parts
}

// LoadCells reads the runs of the given cells from a results folder, and
// nothing else it can avoid: a part of another simulator version is read
// no further than its footer, a row group whose statistics rule out every
// cell (a capacity, fleet size, outage … none of the cells has) is skipped
// unread, of the others only the cell_key column is read, and every column
// only of the row groups that hold some of the cells. A run stored more
// than once counts once, the first copy read, as in Load. A folder without
// runs parts holds none of them (not an error: the caller simulates).
func LoadCells(fsys fs.FS, cells []experiments.Cell) (*Cached, error) {
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	out := &Cached{Files: len(l.Runs)}
	if len(cells) == 0 {
		return out, nil
	}
	want := WantCells(cells)
	seen := map[string]bool{}
	var read [][]dataset.Record // per part, copied once into Records
	var sweeps []string
	n := 0
	for _, part := range l.Runs {
		p := part.Path()
		var sel dataset.Selected
		recs, _, err := readParquet(fsys, p, func(r parquet.ReaderAtSeeker) ([]dataset.Record, dataset.Meta, error) {
			recs, meta, s, err := dataset.ReadRunsOf(r, want)
			sel = s
			return recs, meta, err
		})
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		out.RowGroups += sel.RowGroups
		out.Pruned += sel.Pruned
		out.Scanned += sel.Scanned
		out.Read += sel.Read
		if len(recs) > 0 {
			read, sweeps, n = append(read, recs), append(sweeps, part.Sweep), n+len(recs)
		}
	}
	out.Records = make([]Record, 0, n)
	for i, recs := range read {
		for j := range recs {
			r := &recs[j]
			if seen[r.RunKey] {
				continue
			}
			seen[r.RunKey] = true
			out.Records = append(out.Records, Record{Record: *r, Sweep: sweeps[i]})
		}
		read[i] = nil
	}
	return out, nil
}

// WantCells is the selection of the given cells' runs: their keys, and for
// every numeric parameter the least and greatest value among them, which a
// row group's statistics must reach to hold any of them.
func WantCells(cells []experiments.Cell) dataset.Want {
	w := dataset.Want{Cells: make(map[string]experiments.Cell, len(cells)), Bounds: map[string]dataset.Bound{}, Sim: sim.Version}
	for _, c := range cells {
		w.Cells[c.Key()] = c
	}
	for i := range experiments.Params {
		p := &experiments.Params[i]
		if p.Type != experiments.Int && p.Type != experiments.Float {
			continue
		}
		b := dataset.Bound{Lo: math.Inf(1), Hi: math.Inf(-1)}
		for _, c := range cells {
			var v float64
			switch x := p.Get(c).(type) {
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
