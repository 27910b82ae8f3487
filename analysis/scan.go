package analysis

import (
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

// ScanOptions says what Scan keeps beside the aggregates.
type ScanOptions struct {
	// Keep names the cells whose runs are also returned whole, as Load
	// returns them (the article's cells, for its comparison); nil keeps
	// none.
	Keep func(cellKey string) bool
	// Metrics are the metrics summarised; nil is every one of Metrics. An
	// aggregate's Summary and PerSeed of another metric are empty.
	Metrics []Metric
}

// Scanned is a dataset read in one streaming pass: its aggregates, and
// what the report says about the dataset itself.
type Scanned struct {
	// Dataset holds Metas, Files, Repeated, Shared and Warnings as Load
	// gives them; Records only the runs of the cells ScanOptions.Keep
	// names, in read order.
	Dataset
	Aggregates []*Aggregate // as Aggregates(Load(fsys).Records) gives them
	Runs       int          // runs counted, each once
	Sweeps     []SweepSeeds // in the order their first run was read
}

// SweepSeeds is the seeds of a sweep's runs.
type SweepSeeds struct {
	Sweep string
	Seeds []uint32 // ascending, each once
}

// cellAcc is one cell while the scan reads: its seeds in read order, the
// part each seed's run was kept from, and each metric's values.
type cellAcc struct {
	agg    *Aggregate
	seedAt map[uint32]int32 // seed → index in seeds
	seeds  []uint32
	part   []int32     // index in the listing of the part each run was kept from
	per    [][]float64 // per metric, aligned with seeds; NaN where no value
}

// scanColumns are the runs table's columns a scan reads for every run: no
// run key (a run is its cell and seed), no parameters (read once per cell,
// by readCells), the metrics.
func scanColumns(metrics []Metric) []string {
	cols := []string{dataset.ColCellKey, dataset.ColSeed}
	for _, m := range metrics {
		if !slices.Contains(cols, m.Key) {
			cols = append(cols, m.Key)
		}
	}
	return cols
}

// cellColumns are the columns that describe a cell: its label and parameters.
func cellColumns() []string {
	cols := []string{dataset.ColCellKey, dataset.ColLabel}
	for _, p := range experiments.Params {
		cols = append(cols, p.Key)
	}
	return cols
}

// Scan reads every committed runs part of a results folder, as Load does,
// but aggregates as it reads: only the columns the aggregates need are
// read, row group by row group, and each run adds its metrics to its
// cell's per-seed values, which the paired comparisons need anyway.
// Memory grows with cells × seeds × metrics, not with the runs' full rows.
//
// Its aggregates are Aggregates(Load(fsys).Records)'s, bit for bit: the
// same cells in the same order, labels, sweeps, seeds, per-seed values,
// and summaries (Summarize over each cell's values in seed order, once the
// cell is read: a running mean would differ in the last bits with the
// read order, and break the exact ties of means of times counted in whole
// ticks, on which rankings depend). A run is its cell and seed: a (cell,
// seed) read again counts once, as a run key read again does in Load,
// with the same warnings.
func Scan(fsys fs.FS, opt ScanOptions) (*Scanned, error) {
	metrics := opt.Metrics
	if metrics == nil {
		metrics = Metrics
	}
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	if len(l.Runs) == 0 {
		return nil, fmt.Errorf("no Parquet files under runs/: run `sweep run` first, or point --results at a dataset")
	}
	out := &Scanned{Dataset: Dataset{Files: len(l.Runs)}}
	cells := map[string]*cellAcc{}
	var order []*cellAcc
	sweepSeeds := map[string]map[uint32]bool{}
	var sweepOrder []string
	keepParts := map[int32]bool{}
	example := struct {
		part int
		row  int
	}{-1, -1}
	cols := scanColumns(metrics)
	for pi, part := range l.Runs {
		p := part.Path()
		row := 0
		fresh := map[int]*cellAcc{} // row → a cell first met there, its parameters to read
		meta, err := scanPart(fsys, p, cols, func(b *dataset.Batch) error {
			ck := b.Strings(dataset.ColCellKey)
			for i := range b.Len() {
				s, err := b.Seed(i)
				if err != nil {
					return fmt.Errorf("column %q row %d: %w", dataset.ColSeed, row+i, err)
				}
				acc := cells[ck.Value(i)]
				if acc == nil {
					acc = newCellAcc(strings.Clone(ck.Value(i)), len(metrics))
					cells[acc.agg.CellKey] = acc
					order = append(order, acc)
					fresh[row+i] = acc
				}
				if j, ok := acc.seedAt[s]; ok {
					if l.Runs[acc.part[j]].Sweep == part.Sweep {
						out.Repeated++
						if example.part < 0 {
							example.part, example.row = pi, row+i
						}
					} else {
						out.Shared++
					}
					continue
				}
				acc.seedAt[s] = int32(len(acc.seeds))
				acc.seeds = append(acc.seeds, s)
				acc.part = append(acc.part, int32(pi))
				if !slices.Contains(acc.agg.Sweeps, part.Sweep) {
					acc.agg.Sweeps = append(acc.agg.Sweeps, part.Sweep)
				}
				for k, m := range metrics {
					v, _ := metricValue(b.Column(m.Key), i) // NaN: no value
					acc.per[k] = append(acc.per[k], v)
				}
				if sweepSeeds[part.Sweep] == nil {
					sweepSeeds[part.Sweep] = map[uint32]bool{}
					sweepOrder = append(sweepOrder, part.Sweep)
				}
				sweepSeeds[part.Sweep][s] = true
				if opt.Keep != nil && opt.Keep(acc.agg.CellKey) {
					keepParts[int32(pi)] = true
				}
				out.Runs++
			}
			row += b.Len()
			return nil
		})
		if err == nil && len(fresh) > 0 {
			err = readCells(fsys, p, fresh)
		}
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		out.Metas = append(out.Metas, meta)
	}
	for _, sw := range sweepOrder {
		seeds := make([]uint32, 0, len(sweepSeeds[sw]))
		for s := range sweepSeeds[sw] {
			seeds = append(seeds, s)
		}
		slices.Sort(seeds)
		out.Sweeps = append(out.Sweeps, SweepSeeds{Sweep: sw, Seeds: seeds})
	}
	out.Aggregates = make([]*Aggregate, len(order))
	for i, acc := range order {
		out.Aggregates[i] = acc.finish(metrics)
	}
	if len(keepParts) > 0 {
		if err := out.keep(fsys, l, cells, keepParts, opt.Keep); err != nil {
			return nil, err
		}
	}
	if out.Repeated > 0 {
		p := l.Runs[example.part].Path()
		keys, _, err := readParquet(fsys, p, dataset.ReadRunKeys)
		if err != nil || example.row >= len(keys) {
			return nil, &FileError{Path: p, Err: fmt.Errorf("reading its run keys again: %v", err)}
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d rows repeat a run already stored in the same sweep (run %s again in %s): each run counted once; `sweep check` lists them", out.Repeated, keys[example.row], p))
	}
	if out.Shared > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d runs are stored in more than one sweep's folder: each counted once", out.Shared))
	}
	return out, nil
}

func scanPart(fsys fs.FS, p string, cols []string, fn func(*dataset.Batch) error) (dataset.Meta, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return dataset.Meta{}, err
	}
	defer f.Close()
	ra, ok := f.(parquet.ReaderAtSeeker)
	if !ok {
		return dataset.Meta{}, fmt.Errorf("cannot seek in %s", p)
	}
	return dataset.ScanRuns(ra, cols, fn)
}

// newCellAcc starts the cell of the given key; readCells sets its
// parameters and label.
func newCellAcc(key string, metrics int) *cellAcc {
	return &cellAcc{
		agg:    &Aggregate{CellKey: key},
		seedAt: map[uint32]int32{},
		per:    make([][]float64, metrics),
	}
}

// readCells reads the label and parameters of the cells first met in part
// p, at the rows given, setting them in the order of the columns as
// dataset.ReadRuns does.
func readCells(fsys fs.FS, p string, fresh map[int]*cellAcc) error {
	row := 0
	_, err := scanPart(fsys, p, cellColumns(), func(b *dataset.Batch) error {
		for i := range b.Len() {
			acc := fresh[row+i]
			if acc == nil {
				continue
			}
			if k := b.Strings(dataset.ColCellKey).Value(i); k != acc.agg.CellKey {
				return fmt.Errorf("row %d: cell key %s, read as %s a moment ago (file changed while read?)", row+i, k, acc.agg.CellKey)
			}
			c := experiments.Cell{Scenario: sim.Article()}
			for pi := range experiments.Params {
				p := &experiments.Params[pi]
				switch a := b.Column(p.Key).(type) {
				case *array.Int64:
					p.Set(&c, a.Value(i))
				case *array.Float64:
					p.Set(&c, a.Value(i))
				case *array.String:
					p.Set(&c, strings.Clone(a.Value(i)))
				case *array.Boolean:
					p.Set(&c, a.Value(i))
				}
			}
			acc.agg.Cell, acc.agg.Label = c, strings.Clone(b.Strings(dataset.ColLabel).Value(i))
		}
		row += b.Len()
		return nil
	})
	return err
}

// value reads a metric's column at row i: a null is no value.
func metricValue(a arrow.Array, i int) (float64, bool) {
	switch a := a.(type) {
	case *array.Float64:
		if a.IsNull(i) {
			return math.NaN(), false
		}
		return a.Value(i), true
	case *array.Int64:
		return float64(a.Value(i)), true
	}
	panic(fmt.Sprintf("analysis: metric column of type %s", a.DataType()))
}

// finish orders the cell's seeds and values and summarises each metric.
func (acc *cellAcc) finish(metrics []Metric) *Aggregate {
	a := acc.agg
	perm := make([]int, len(acc.seeds))
	for i := range perm {
		perm[i] = i
	}
	sort.Slice(perm, func(i, j int) bool { return acc.seeds[perm[i]] < acc.seeds[perm[j]] })
	a.Seeds = make([]uint32, len(perm))
	for i, j := range perm {
		a.Seeds[i] = acc.seeds[j]
	}
	a.summary = make(map[string]Summary, len(metrics))
	a.perSeed = make(map[string][]float64, len(metrics))
	xs := make([]float64, 0, len(perm))
	for k, m := range metrics {
		per := make([]float64, len(perm))
		xs, unfinished := xs[:0], 0
		for i, j := range perm {
			per[i] = acc.per[k][j]
			if math.IsNaN(per[i]) {
				unfinished++
			} else {
				xs = append(xs, per[i])
			}
		}
		a.perSeed[m.Key] = per
		a.summary[m.Key] = Summarize(xs, unfinished)
		acc.per[k] = nil
	}
	a.Warnings = warnings(a)
	return a
}

// keep reads again the parts that hold runs of kept cells and keeps those
// runs whole, each from the part its cell and seed were counted from.
func (out *Scanned) keep(fsys fs.FS, l *dataset.Listing, cells map[string]*cellAcc, parts map[int32]bool, keep func(string) bool) error {
	for pi, part := range l.Runs {
		if !parts[int32(pi)] {
			continue
		}
		p := part.Path()
		recs, _, err := readParquet(fsys, p, dataset.ReadRuns)
		if err != nil {
			return &FileError{Path: p, Err: err}
		}
		taken := map[string]bool{}
		for _, r := range recs {
			acc := cells[r.CellKey]
			if acc == nil || !keep(r.CellKey) || taken[r.RunKey] {
				continue
			}
			if j, ok := acc.seedAt[r.Seed]; !ok || acc.part[j] != int32(pi) {
				continue
			}
			taken[r.RunKey] = true
			out.Records = append(out.Records, Record{Record: r, Sweep: part.Sweep})
		}
	}
	return nil
}
