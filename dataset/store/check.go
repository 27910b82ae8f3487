package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/sim"
)

// Problem is one thing wrong with a dataset, named by its file.
type Problem struct {
	Kind    string `json:"kind"` // corrupt, foreign, stale, duplicate, incomplete, missing, orphan, temporary, lock, special, unknown; of a note: leftover, intent
	Path    string `json:"path"` // slash-separated, in the dataset
	Message string `json:"message"`
}

// TableCount is what one table holds.
type TableCount struct {
	Table string `json:"table"`
	Parts int    `json:"parts"`
	Rows  int    `json:"rows"`
	Runs  int    `json:"runs"` // distinct run keys
}

// Report is the outcome of checking a dataset.
type Report struct {
	Dir      string       `json:"dir"`
	Tables   []TableCount `json:"tables"`
	Problems []Problem    `json:"problems"`
	// Notes are what is not wrong but worth knowing: leftovers no reader
	// sees, which the next `sweep run` of their sweep removes.
	Notes []Problem `json:"notes"`
}

func (r *Report) add(kind, path, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) note(kind, path, format string, args ...any) {
	r.Notes = append(r.Notes, Problem{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)})
}

// unreadable files a problem for a part that cannot be read: corrupt, or
// foreign (not herdsweep's, or of another schema version).
func (r *Report) unreadable(path string, err error) {
	kind := "corrupt"
	if msg := err.Error(); strings.Contains(msg, "schema ") || strings.Contains(msg, "column ") {
		kind = "foreign"
	}
	r.add(kind, path, "%v", err)
}

// Check verifies the dataset in dir: every part read as strictly as any
// reader reads it, runs stored twice, side rows missing, runs an intent
// asks for that are not there, and every file that is not data. With only
// nil it checks everything; otherwise only the parts only names (by
// sweep), as a writer does on what it wrote while other writers may be at
// work. An error is a dataset that cannot be listed or a part that cannot
// be opened; what is wrong with the dataset is in the report.
func Check(dir string, only map[string][]string) (*Report, error) {
	return check(dir, only, nil)
}

// CheckWritten is the check a writer makes at the end of its run of the
// parts it wrote (by sweep, Writer.Written), while other writers may be at
// work: Check of those parts, but against what it kept of them in memory
// rather than by decoding them again. Each part must be there under the
// name it was committed as, each of its files sealed with the checksum it
// was written with (so holding the bytes written: the keys kept, each the
// hash of its run's parameters as the writer computed it, and the side
// rows its manifest commits), and its runs stored nowhere else in the
// dataset, whose other parts' keys are read. `sweep check` (Check) decodes
// every row instead. Its side tables' runs are counted part by part: a
// run stored in two parts counts twice there (its runs table, and the
// duplicate problem, are Check's).
func CheckWritten(dir string, written map[string][]Written) (*Report, error) {
	only := map[string][]string{}
	kept := map[string]*Written{}
	for sweep, ws := range written {
		for i := range ws {
			only[sweep] = append(only[sweep], ws[i].Name)
			kept[sweep+"/"+ws[i].Name] = &ws[i]
		}
	}
	return check(dir, only, kept)
}

// keptKeys is how many run keys the writer kept: the least the check
// places, so that its map is made once at that size.
func keptKeys(kept map[string]*Written) int {
	n := 0
	for _, w := range kept {
		n += len(w.keys)
	}
	return n
}

func check(dir string, only map[string][]string, kept map[string]*Written) (*Report, error) {
	l, err := dataset.List(FS(dir))
	if err != nil {
		return nil, err
	}
	c := &checker{dir: dir, only: only, l: l, rep: &Report{Dir: dir, Problems: []Problem{}, Notes: []Problem{}},
		dups: map[[2]string]int{}, runsOf: map[string]keyList{}, manifest: map[string]dataset.Meta{},
		kept: kept, seen: map[string]bool{}}
	if only != nil {
		c.mineSet = map[string]bool{}
		for sweep, names := range only {
			for _, n := range names {
				c.mineSet[sweep+"/"+n] = true
			}
		}
	}
	if err := c.runs(); err != nil {
		return nil, err
	}
	c.lost()
	c.duplicates()
	for _, table := range dataset.SideTables {
		if err := c.side(table); err != nil {
			return nil, err
		}
	}
	if only == nil {
		c.intents()
	}
	c.other()
	return c.rep, nil
}

// place is where a run was read first.
type place struct{ path, sweep string }

// crossDup is a run stored again in another sweep's folder.
type crossDup struct{ key, first, again string }

// checker is one check of a dataset in progress.
type checker struct {
	dir      string
	only     map[string][]string // nil: everything
	l        *dataset.Listing
	rep      *Report
	places   []place                 // the runs parts read, indexed by first's values
	first    keyMap[int32]           // run key → the part it was read in first
	dups     map[[2]string]int       // (first path, this path) → runs
	cross    []crossDup              // candidates, see duplicates
	runsOf   map[string]keyList      // sweep/name → its run keys
	manifest map[string]dataset.Meta // sweep/name → its runs part's metadata
	mineSet  map[string]bool         // sweep/name of the parts only names
	kept     map[string]*Written     // sweep/name → the part as its writer kept it (CheckWritten)
	seen     map[string]bool         // sweep/name of the kept parts found
}

// mine reports whether the check covers part p.
func (c *checker) mine(p dataset.Part) bool {
	return c.only == nil || c.mineSet[p.Sweep+"/"+p.Name]
}

func (c *checker) open(p string) (file, error) {
	return volumeOf(c.dir).open(join(c.dir, filepath.FromSlash(p)))
}

// runs checks the runs parts: every row readable, its key its parameters'
// hash, every run stored once.
func (c *checker) runs() error {
	runs := TableCount{Table: dataset.RunsDir}
	// When every runs part is one this process wrote (a sweep into a
	// fresh folder), their keys are placed at the end, at once if no two
	// are alike (distinctKeys): a map of every key costs more than the
	// rest of the check. Otherwise they are placed in order as below.
	later := c.keptOnly()
	c.first = newKeyMap[int32](0)
	if !later {
		c.first = newKeyMap[int32](keptKeys(c.kept))
	}
	var placed []keptPart
	for _, p := range c.l.Runs {
		if w := c.kept[p.Sweep+"/"+p.Name]; w != nil {
			if c.keptRuns(p, w, &runs) {
				placed = append(placed, keptPart{p, w})
				if !later {
					c.placeKept(p, w)
				}
			}
			continue
		}
		path := p.Path()
		f, err := c.open(path)
		if c.gone(p, err) {
			continue // set aside meanwhile
		}
		if err != nil {
			return err
		}
		keys, meta, err := c.runKeys(f, p)
		f.Close()
		if err != nil {
			if c.mine(p) {
				c.rep.unreadable(path, err)
			}
			continue
		}
		if meta.Sim != sim.Version && c.mine(p) {
			c.rep.add("stale", path, "holds simulator %s, this is %s: `sweep run` sets it aside and runs its runs again", meta.Sim, sim.Version)
		}
		runs.Parts++
		runs.Rows += len(keys)
		c.place(p, keys)
		c.runsOf[p.Sweep+"/"+p.Name] = newKeyList(keys)
		c.manifest[p.Sweep+"/"+p.Name] = meta
	}
	runs.Runs = c.first.len()
	if later {
		if n, ok := distinctKeys(placed); ok {
			runs.Runs = n
		} else {
			c.first = newKeyMap[int32](keptKeys(c.kept))
			for _, k := range placed {
				c.placeKept(k.p, k.w)
			}
			runs.Runs = c.first.len()
		}
	}
	c.rep.Tables = append(c.rep.Tables, runs)
	return nil
}

// keptPart is a runs part this process wrote, as its writer kept it.
type keptPart struct {
	p dataset.Part
	w *Written
}

// keptOnly reports whether every runs part listed is one this process
// wrote (never for a whole dataset's check, whose intents look up the
// keys placed: c.first).
func (c *checker) keptOnly() bool {
	if c.only == nil {
		return false
	}
	for _, p := range c.l.Runs {
		if c.kept[p.Sweep+"/"+p.Name] == nil {
			return false
		}
	}
	return true
}

// distinctKeys reports whether the parts' run keys are all different,
// and how many there are. The keys are hashes, spread evenly: they are
// bucketed by their top bits, a few to a bucket, and each bucket sorted,
// in which no key may be its neighbour (a sort of all of them took
// twice as long on a million).
func distinctKeys(parts []keptPart) (int, bool) {
	n := 0
	for _, k := range parts {
		n += len(k.w.keys)
	}
	if n < 2 {
		return n, true
	}
	width := bits.Len(uint(n / 4)) // 2^width buckets
	shift := 64 - width
	start := make([]int32, 1<<width+1) // bucket b is all[start[b]:start[b+1]]
	for _, k := range parts {
		for _, h := range k.w.keys {
			start[h>>shift+1]++ // (shift 64 puts every key in bucket 0)
		}
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	all, next := make([]uint64, n), slices.Clone(start[:len(start)-1])
	for _, k := range parts {
		for _, h := range k.w.keys {
			b := h >> shift
			all[next[b]] = h
			next[b]++
		}
	}
	for b := 0; b+1 < len(start); b++ {
		bucket := all[start[b]:start[b+1]]
		slices.Sort(bucket)
		for i := 1; i < len(bucket); i++ {
			if bucket[i] == bucket[i-1] {
				return 0, false
			}
		}
	}
	return n, true
}

// place records where the runs of part p were read first, and files those
// read before as duplicates (or, across sweeps, candidates).
func (c *checker) place(p dataset.Part, keys []string) {
	here := c.newPlace(p)
	for _, k := range keys {
		if j, ok := c.first.get(k); ok {
			c.again(p, j, k)
		} else {
			c.first.put(k, here)
		}
	}
}

func (c *checker) newPlace(p dataset.Part) int32 {
	c.places = append(c.places, place{p.Path(), p.Sweep})
	return int32(len(c.places) - 1)
}

// again files run key k of part p, read first in place j, as a duplicate
// (or, across sweeps, a candidate) when the check covers either part.
func (c *checker) again(p dataset.Part, j int32, k string) {
	at := c.places[j]
	if !c.mine(p) && (c.only == nil || !c.mine(dataset.Part{Sweep: at.sweep, Name: filepath.Base(at.path)})) {
		return
	}
	if at.sweep != p.Sweep {
		c.cross = append(c.cross, crossDup{k, at.path, p.Path()})
		return
	}
	c.dups[[2]string{at.path, p.Path()}]++
}

// gone reports whether part p, which c.open could not open (err), was
// set aside meanwhile; a symbolic link to nothing is a problem, as every
// reader refuses it.
func (c *checker) gone(p dataset.Part, err error) bool {
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	full := filepath.Join(c.dir, filepath.FromSlash(p.Path()))
	if target, lerr := os.Readlink(full); lerr == nil {
		if c.mine(p) {
			c.rep.add("corrupt", p.Path(), "a symbolic link to %s, which is not there: every reader refuses it", target)
		}
		return true
	}
	return true
}

// runKeys reads a runs part's keys: every row, checked, when the check
// covers it; only the keys otherwise.
func (c *checker) runKeys(f file, p dataset.Part) ([]string, dataset.Meta, error) {
	if !c.mine(p) {
		return parquetio.ReadKeys(f, dataset.RunsDir)
	}
	keys, meta, bad, err := checkRunsPart(f, true)
	if bad != nil {
		c.rep.add(bad.Kind, p.Path(), "%s", bad.Message)
	}
	return keys, meta, err
}

// duplicates files the runs stored twice. A run stored in two sweeps is a
// duplicate unless exactly one copy has a timeline: the later sweep asked
// for one the first did not keep.
func (c *checker) duplicates() {
	tl := map[string]map[string]bool{} // runs part path → run keys of its timelines part
	withTimeline := func(runsPath string) map[string]bool {
		if m, ok := tl[runsPath]; ok {
			return m
		}
		m := map[string]bool{}
		rel := strings.TrimPrefix(runsPath, dataset.RunsDir+"/")
		if ks, _, err := ReadKeys(join(c.dir, dataset.TimelinesDir, filepath.FromSlash(rel)), dataset.TimelinesDir); err == nil {
			for _, k := range ks {
				m[k] = true
			}
		}
		tl[runsPath] = m
		return m
	}
	for _, d := range c.cross {
		if withTimeline(d.first)[d.key] == withTimeline(d.again)[d.key] {
			c.dups[[2]string{d.first, d.again}]++
		}
	}
	var pairs [][2]string
	for k := range c.dups {
		pairs = append(pairs, k)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][1] != pairs[j][1] {
			return pairs[i][1] < pairs[j][1]
		}
		return pairs[i][0] < pairs[j][0]
	})
	for _, pr := range pairs {
		c.rep.add("duplicate", pr[1], "%d runs already stored in %s: readers count each once", c.dups[pr], pr[0])
	}
}

// side checks a side table's visible parts: readable, rows of the runs
// their part commits, as many as the runs part's manifest says.
func (c *checker) side(table string) error {
	tc := TableCount{Table: table}
	distinct := map[string]bool{}
	rowsOf := map[string]int{}
	for _, p := range c.l.Side[table] {
		if !c.mine(p) {
			continue
		}
		if w := c.kept[p.Sweep+"/"+p.Name]; w != nil {
			if f, ok, _ := c.keptFile(p, w); ok {
				tc.Parts++
				tc.Rows += f.rows
				tc.Runs += f.runs // a run's side rows are in its runs part's side part
				rowsOf[p.Sweep+"/"+p.Name] = f.rows
			}
			continue
		}
		path := p.Path()
		f, err := c.open(path)
		if c.gone(p, err) {
			continue
		}
		if err != nil {
			return err
		}
		keys, err := sideKeys(f, table)
		f.Close()
		if err != nil {
			c.rep.unreadable(path, err)
			continue
		}
		tc.Parts++
		tc.Rows += len(keys)
		rowsOf[p.Sweep+"/"+p.Name] = len(keys)
		stray := 0
		for _, k := range keys {
			distinct[k] = true
			if runs, ok := c.runsOf[p.Sweep+"/"+p.Name]; ok && !runs.holds(k) {
				stray++
			}
		}
		if stray > 0 {
			c.rep.add("orphan", path, "%d rows of runs its runs part does not hold: readers may show them for a run stored elsewhere", stray)
		}
	}
	tc.Runs += len(distinct)
	c.rep.Tables = append(c.rep.Tables, tc)
	c.manifests(table, rowsOf)
	return nil
}

// manifests files the runs parts whose side part of table holds another
// number of rows (rowsOf, by sweep/name) than their manifest commits.
func (c *checker) manifests(table string, rowsOf map[string]int) {
	for _, p := range c.l.Runs {
		m, ok := c.manifest[p.Sweep+"/"+p.Name]
		if !ok || !c.mine(p) {
			continue
		}
		want := m.TimelineRows
		if table == dataset.GroupsDir {
			want = m.GroupRows
		}
		if got := rowsOf[p.Sweep+"/"+p.Name]; want >= 0 && got != want {
			c.rep.add("incomplete", p.Path(), "commits %d %s rows, its %s part holds %d", want, table, table, got)
		}
	}
}

// keptRuns checks runs part p, written by this process, against what its
// writer kept of it (w), and reports whether it is the part written
// (then placeKept places its runs).
func (c *checker) keptRuns(p dataset.Part, w *Written, runs *TableCount) bool {
	id := p.Sweep + "/" + p.Name
	f, ok, gone := c.keptFile(p, w)
	c.seen[id] = !gone // lost() looks again
	if !ok {
		return false
	}
	runs.Parts++
	runs.Rows += f.rows
	c.manifest[id] = dataset.Meta{Sim: sim.Version, TimelineRows: w.files[dataset.TimelinesDir].rows, GroupRows: w.files[dataset.GroupsDir].rows}
	return true
}

// placeKept places the runs of part p from the keys its writer kept (w),
// as place does those read.
func (c *checker) placeKept(p dataset.Part, w *Written) {
	here := c.newPlace(p)
	for _, h := range w.keys {
		if j, ok := c.first.hex[h]; ok {
			c.again(p, j, fmt.Sprintf("%016x", h))
		} else {
			c.first.hex[h] = here
		}
	}
}

// keptFile checks that the file of part p is the one its writer wrote (w):
// its size, and the checksum it is sealed with, verified. A file that is
// not is a problem; one gone since it was listed is not (gone), as in
// Check.
func (c *checker) keptFile(p dataset.Part, w *Written) (want writtenFile, ok, gone bool) {
	want, ok = w.files[p.Table]
	if !ok {
		c.rep.add("corrupt", p.Path(), "this run committed no %s part of this name: another program wrote it", p.Table)
		return want, false, false
	}
	f, err := c.open(p.Path())
	if c.gone(p, err) {
		return want, false, true
	}
	if err != nil {
		c.rep.unreadable(p.Path(), err)
		return want, false, false
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil && size != want.size {
		err = fmt.Errorf("holds %d bytes, this run wrote %d", size, want.size)
	}
	var sum string
	if err == nil {
		sum, err = parquetio.Seal(f, size)
	}
	if err == nil && sum != want.seal {
		err = fmt.Errorf("not the part this run wrote: sealed as %.12s…, written as %.12s…", sum, want.seal)
	}
	if err != nil {
		c.rep.unreadable(p.Path(), err)
		return want, false, false
	}
	return want, true, false
}

// lost files the runs parts this process committed (CheckWritten) that
// are not there, unless another writer set them aside, of another
// simulator version (Writer.Resume).
func (c *checker) lost() {
	var ids []string
	for id := range c.kept {
		if !c.seen[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		sweep, name, _ := strings.Cut(id, "/")
		p := dataset.Part{Table: dataset.RunsDir, Sweep: sweep, Name: name}
		if c.setAside(p) {
			continue
		}
		c.rep.add("missing", p.Path(), "committed by this run, not there: readers count none of its %d runs", c.kept[id].files[dataset.RunsDir].rows)
	}
}

// setAside reports whether runs part p was set aside as stale
// (dataset.StaleName).
func (c *checker) setAside(p dataset.Part) bool {
	es, _ := fs.ReadDir(FS(c.dir), dataset.RunsDir+"/sweep="+p.Sweep) // a folder or a bucket
	for _, e := range es {
		if strings.HasPrefix(e.Name(), dataset.StaleName(p.Name, "")) {
			return true
		}
	}
	return false
}
