package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// ScanOptions says what Scan keeps beside the aggregates.
type ScanOptions struct {
	// Keep names the cells whose runs are also returned whole, as Load
	// returns them (the article's cells, for its comparison); nil keeps
	// none.
	Keep func(cellKey string) bool
	// Metrics are the metrics summarised; nil is every one of Metrics. An
	// aggregate's Summary and PerSeed of another metric are empty, as are
	// those of a metric that does not apply to its cell (Metric.For: the
	// queueing metrics of a counting cell), which keeps no value of it.
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
// part each seed's run was kept from, and each metric's values, packed.
// Seeds mostly come in ascending order (a sweep hands a cell's seeds out in
// order), so a seed above the last one is new without a lookup; a map of
// seeds is built only for a cell whose seeds come out of order.
type cellAcc struct {
	agg       *Aggregate
	seeds     []uint32
	ascending bool             // seeds is strictly ascending
	seedAt    map[uint32]int32 // seed → index in seeds, once seeds are not ascending
	parts     []partRun        // the part each run was kept from, run-length coded
	per       []packed         // per metric, aligned with seeds
	absent    uint64           // bit k: metric k does not apply to the cell (Metric.For); per[k] stays empty
}

// partRun says that the runs from index from on (up to the next partRun)
// were kept from the part of index part in the listing.
type partRun struct{ from, part int32 }

// find is the index in seeds of seed s.
func (acc *cellAcc) find(s uint32) (int, bool) {
	if acc.seedAt != nil {
		j, ok := acc.seedAt[s]
		return int(j), ok
	}
	if n := len(acc.seeds); n == 0 || s > acc.seeds[n-1] {
		return 0, false
	}
	return slices.BinarySearch(acc.seeds, s)
}

// add records seed s, kept from part pi, after find said it is new.
func (acc *cellAcc) add(s uint32, pi int32) {
	n := len(acc.seeds)
	if acc.ascending && n > 0 && s < acc.seeds[n-1] {
		acc.ascending = false
		acc.seedAt = make(map[uint32]int32, n+1)
		for j, x := range acc.seeds {
			acc.seedAt[x] = int32(j)
		}
	}
	if acc.seedAt != nil {
		acc.seedAt[s] = int32(n)
	}
	acc.seeds = append(acc.seeds, s)
	if k := len(acc.parts); k == 0 || acc.parts[k-1].part != pi {
		acc.parts = append(acc.parts, partRun{from: int32(n), part: pi})
	}
}

// partOf is the index of the part the run at index j was kept from.
func (acc *cellAcc) partOf(j int) int32 {
	k, _ := slices.BinarySearchFunc(acc.parts, int32(j+1), func(r partRun, t int32) int { return int(r.from - t) })
	return acc.parts[k-1].part
}

// scanColumns are the runs table's columns a scan reads for every run: no
// run key (a run is its cell and seed), no parameters (read once per cell,
// by readCells) but those that say which metrics a cell has (when some
// metric applies to some cells only), the metrics' columns.
func scanColumns(metrics []Metric) []string {
	cols := []string{dataset.ColCellKey, dataset.ColSeed}
	if slices.ContainsFunc(metrics, func(m Metric) bool { return m.applies != nil }) {
		cols = append(cols, appliesParams...)
	}
	for _, m := range metrics {
		for _, c := range m.scanColumns() {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

// absentMetrics is the mask of the metrics that do not apply to the cell
// of row i, read from its appliesParams.
func absentMetrics(metrics []Metric, b dataset.Batch, i int) uint64 {
	var mask uint64
	c := grid.Cell{Scenario: sim.Article()}
	read := false
	for k, m := range metrics {
		if m.applies == nil {
			continue
		}
		if !read {
			for _, key := range appliesParams {
				setParam(b, grid.ParamByKey(key), &c, i)
			}
			read = true
		}
		if !m.For(c.Scenario) {
			mask |= 1 << k
		}
	}
	return mask
}

// cellColumns are the columns that describe a cell: its label and parameters.
func cellColumns() []string {
	cols := []string{dataset.ColCellKey, dataset.ColLabel}
	for _, p := range grid.Params {
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
// Its aggregates are Aggregates(Load(d).Records)'s, bit for bit (a
// queueing cell's queueing metrics QueueAggregates'): the
// same cells in the same order, labels, sweeps, seeds, per-seed values,
// and summaries (Summarize over each cell's values in seed order, once the
// cell is read: a running mean would differ in the last bits with the
// read order, and break the exact ties of means of times counted in whole
// ticks, on which rankings depend). A run is its cell and seed: a (cell,
// seed) read again counts once, as a run key read again does in Load,
// with the same warnings.
func Scan(d dataset.Folder, opt ScanOptions) (*Scanned, error) {
	fsys, format := d.FS, formatOf(d)
	metrics := opt.Metrics
	if metrics == nil {
		metrics = Metrics
	}
	if len(metrics) > 64 {
		return nil, fmt.Errorf("analysis: %d metrics, at most 64", len(metrics)) // cellAcc.absent
	}
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	if len(l.Runs) == 0 {
		return nil, fmt.Errorf("no Parquet files under runs/: run `sweep run` first, or point --results at a dataset")
	}
	s := &scanner{out: &Scanned{Dataset: Dataset{Files: len(l.Runs)}}, keep: opt.Keep, metrics: metrics, parts: l.Runs,
		cells: map[string]*cellAcc{}, sweepSeeds: map[string]map[uint32]bool{}, keepParts: map[int32]bool{}, example: runAt{-1, -1}}
	cols := scanColumns(metrics)
	for pi := range l.Runs {
		if err := s.readPart(d, pi, cols); err != nil {
			return nil, err
		}
	}
	out := s.out
	out.Sweeps = sweepSeedLists(s.sweepOrder, s.sweepSeeds)
	s.aggregate()
	if len(s.keepParts) > 0 {
		if err := out.keep(d, l, s.cells, s.keepParts, opt.Keep); err != nil {
			return nil, err
		}
	}
	if out.Repeated > 0 {
		p := l.Runs[s.example.part].Path()
		keys, _, err := readParquet(fsys, p, format.ReadRunKeys)
		if err != nil || s.example.row >= len(keys) {
			return nil, &FileError{Path: p, Err: fmt.Errorf("reading its run keys again: %v", err)}
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d rows repeat a run already stored in the same sweep (run %s again in %s): each run counted once; `sweep check` lists them", out.Repeated, keys[s.example.row], p))
	}
	if out.Shared > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d runs are stored in more than one sweep's folder: each counted once", out.Shared))
	}
	return out, nil
}

// scanner is Scan's state while it reads the runs parts: the cells met so
// far, in the order met, each sweep's seeds, the parts that hold runs of
// kept cells, and the first run read again in the same sweep.
type scanner struct {
	out        *Scanned
	keep       func(cellKey string) bool // ScanOptions.Keep
	metrics    []Metric
	parts      []dataset.Part // the runs parts, as listed
	cells      map[string]*cellAcc
	order      []*cellAcc
	sweepSeeds map[string]map[uint32]bool
	sweepOrder []string
	keepParts  map[int32]bool
	example    runAt // the first run read again in its sweep; part -1: none
}

// runAt is a run's place: the index of its part, and its row there.
type runAt struct{ part, row int }

// readPart reads the runs of part pi, then the parameters of the cells
// first met there, and keeps the part's metadata.
func (s *scanner) readPart(d dataset.Folder, pi int, cols []string) error {
	p := s.parts[pi].Path()
	row := 0
	fresh := map[int]*cellAcc{} // row → a cell first met there, its parameters to read
	meta, err := scanPart(d, p, cols, func(b dataset.Batch) error {
		ck := b.Strings(dataset.ColCellKey)
		for i := range b.Len() {
			seed, err := b.Seed(i)
			if err != nil {
				return fmt.Errorf("column %q row %d: %w", dataset.ColSeed, row+i, err)
			}
			s.readRun(b, i, ck.Value(i), seed, runAt{pi, row + i}, fresh)
		}
		row += b.Len()
		return nil
	})
	if err == nil && len(fresh) > 0 {
		err = readCells(d, p, fresh)
	}
	if err != nil {
		return &FileError{Path: p, Err: err}
	}
	s.out.Metas = append(s.out.Metas, meta)
	return nil
}

// readRun counts the run of cell key and seed at row i of batch b (at in
// the listing): a cell first met is started and noted in fresh; a run read
// before counts as repeated (same sweep) or shared (another), else its
// metrics join its cell's.
func (s *scanner) readRun(b dataset.Batch, i int, key string, seed uint32, at runAt, fresh map[int]*cellAcc) {
	sweep := s.parts[at.part].Sweep
	acc := s.cells[key]
	if acc == nil {
		acc = newCellAcc(strings.Clone(key), len(s.metrics))
		acc.absent = absentMetrics(s.metrics, b, i)
		s.cells[acc.agg.CellKey] = acc
		s.order = append(s.order, acc)
		fresh[at.row] = acc
	}
	if j, ok := acc.find(seed); ok {
		if s.parts[acc.partOf(j)].Sweep == sweep {
			s.out.Repeated++
			if s.example.part < 0 {
				s.example = at
			}
		} else {
			s.out.Shared++
		}
		return
	}
	acc.add(seed, int32(at.part))
	if !slices.Contains(acc.agg.Sweeps, sweep) {
		acc.agg.Sweeps = append(acc.agg.Sweeps, sweep)
	}
	for k, m := range s.metrics {
		if acc.absent&(1<<k) == 0 {
			acc.per[k].Append(m.scan(b, i)) // NaN: no value
		}
	}
	if s.sweepSeeds[sweep] == nil {
		s.sweepSeeds[sweep] = map[uint32]bool{}
		s.sweepOrder = append(s.sweepOrder, sweep)
	}
	s.sweepSeeds[sweep][seed] = true
	if s.keep != nil && s.keep(acc.agg.CellKey) {
		s.keepParts[int32(at.part)] = true
	}
	s.out.Runs++
}

// aggregate finishes every cell, in the order met, into out.Aggregates;
// cells with the same seeds share one list of them.
func (s *scanner) aggregate() {
	s.out.Aggregates = make([]*Aggregate, len(s.order))
	var xs []float64
	for i, acc := range s.order {
		s.out.Aggregates[i], xs = acc.finish(s.metrics, xs)
		if i > 0 && slices.Equal(s.out.Aggregates[i].Seeds, s.out.Aggregates[i-1].Seeds) {
			// Seeds is never written to: cells of one grid share one list.
			s.out.Aggregates[i].Seeds = s.out.Aggregates[i-1].Seeds
			if acc.ascending {
				acc.seeds = s.out.Aggregates[i].Seeds
			}
		}
	}
}

// sweepSeedLists lists each sweep's seeds, sorted, in the order the
// sweeps were met.
func sweepSeedLists(order []string, seeds map[string]map[uint32]bool) []SweepSeeds {
	var out []SweepSeeds
	for _, sw := range order {
		ss := make([]uint32, 0, len(seeds[sw]))
		for s := range seeds[sw] {
			ss = append(ss, s)
		}
		slices.Sort(ss)
		out = append(out, SweepSeeds{Sweep: sw, Seeds: ss})
	}
	return out
}

func scanPart(d dataset.Folder, p string, cols []string, fn func(dataset.Batch) error) (dataset.Meta, error) {
	f, err := d.FS.Open(p)
	if err != nil {
		return dataset.Meta{}, err
	}
	defer f.Close()
	ra, ok := f.(dataset.File)
	if !ok {
		return dataset.Meta{}, fmt.Errorf("cannot seek in %s", p)
	}
	return formatOf(d).ScanRuns(ra, cols, fn)
}

// newCellAcc starts the cell of the given key; readCells sets its
// parameters and label.
func newCellAcc(key string, metrics int) *cellAcc {
	return &cellAcc{
		agg:       &Aggregate{CellKey: key},
		ascending: true,
		per:       make([]packed, metrics),
	}
}

// readCells reads the label and parameters of the cells first met in part
// p, at the rows given, setting them in the order of the columns as
// dataset.Format.ReadRuns does.
func readCells(d dataset.Folder, p string, fresh map[int]*cellAcc) error {
	row := 0
	_, err := scanPart(d, p, cellColumns(), func(b dataset.Batch) error {
		for i := range b.Len() {
			acc := fresh[row+i]
			if acc == nil {
				continue
			}
			if k := b.Strings(dataset.ColCellKey).Value(i); k != acc.agg.CellKey {
				return fmt.Errorf("row %d: cell key %s, read as %s a moment ago (file changed while read?)", row+i, k, acc.agg.CellKey)
			}
			c := grid.Cell{Scenario: sim.Article()}
			for pi := range grid.Params {
				setParam(b, &grid.Params[pi], &c, i)
			}
			acc.agg.Cell, acc.agg.Label = c, strings.Clone(b.Strings(dataset.ColLabel).Value(i))
		}
		row += b.Len()
		return nil
	})
	return err
}

// setParam sets parameter p of c from its column at row i.
func setParam(b dataset.Batch, p *grid.Param, c *grid.Cell, i int) {
	switch a := b.Column(p.Key).(type) {
	case dataset.Int64Column:
		p.Set(c, a.Value(i))
	case dataset.Float64Column:
		p.Set(c, a.Value(i))
	case dataset.StringColumn:
		p.Set(c, strings.Clone(a.Value(i)))
	case dataset.BoolColumn:
		p.Set(c, a.Value(i))
	}
}

// value reads a metric's column at row i: a null is no value.
func metricValue(a any, i int) (float64, bool) {
	switch a := a.(type) {
	case dataset.Float64Column:
		if a.IsNull(i) {
			return math.NaN(), false
		}
		return a.Value(i), true
	case dataset.Int64Column:
		return float64(a.Value(i)), true
	}
	panic(fmt.Sprintf("analysis: metric column of type %T", a))
}

// finish orders the cell's seeds and values and summarises each metric.
// Its per-seed values stay packed. xs is a buffer to reuse (Summarize keeps
// no reference to it); finish returns it.
func (acc *cellAcc) finish(metrics []Metric, xs []float64) (*Aggregate, []float64) {
	a := acc.agg
	var perm []int // nil: the seeds came in ascending order
	if acc.ascending {
		if cap(acc.seeds) > len(acc.seeds)+len(acc.seeds)/8 {
			acc.seeds = append([]uint32(nil), acc.seeds...)
		}
		a.Seeds = acc.seeds
	} else {
		perm = make([]int, len(acc.seeds))
		for i := range perm {
			perm[i] = i
		}
		sort.Slice(perm, func(i, j int) bool { return acc.seeds[perm[i]] < acc.seeds[perm[j]] })
		a.Seeds = make([]uint32, len(perm))
		for i, j := range perm {
			a.Seeds[i] = acc.seeds[j]
		}
	}
	a.summary = make(map[string]Summary, len(metrics))
	a.packed = make(map[string]*packed, len(metrics))
	for k, m := range metrics {
		if acc.absent&(1<<k) != 0 {
			continue
		}
		p := &acc.per[k]
		if perm != nil {
			sorted := &packed{}
			for _, j := range perm {
				sorted.Append(p.At(j))
			}
			p = sorted
		}
		p.clip()
		xs = xs[:0]
		unfinished := 0
		for i := range p.Len() {
			if v := p.At(i); math.IsNaN(v) {
				unfinished++
			} else {
				xs = append(xs, v)
			}
		}
		a.packed[m.Key] = p
		a.summary[m.Key] = m.summarize(xs, unfinished)
	}
	acc.per = nil
	a.Warnings = warnings(a)
	return a, xs
}

// keep reads again the parts that hold runs of kept cells and keeps those
// runs whole, each from the part its cell and seed were counted from.
func (out *Scanned) keep(d dataset.Folder, l *dataset.Listing, cells map[string]*cellAcc, parts map[int32]bool, keep func(string) bool) error {
	for pi, part := range l.Runs {
		if !parts[int32(pi)] {
			continue
		}
		p := part.Path()
		recs, _, err := readParquet(d.FS, p, formatOf(d).ReadRuns)
		if err != nil {
			return &FileError{Path: p, Err: err}
		}
		taken := map[string]bool{}
		for _, r := range recs {
			acc := cells[r.CellKey]
			if acc == nil || !keep(r.CellKey) || taken[r.RunKey] {
				continue
			}
			if j, ok := acc.find(r.Seed); !ok || acc.partOf(j) != int32(pi) {
				continue
			}
			taken[r.RunKey] = true
			out.Records = append(out.Records, Record{Record: r, Sweep: part.Sweep})
		}
	}
	return nil
}
