package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	l, err := dataset.List(FS(dir))
	if err != nil {
		return nil, err
	}
	c := &checker{dir: dir, only: only, l: l, rep: &Report{Dir: dir, Problems: []Problem{}, Notes: []Problem{}},
		first: newKeyMap[int32](), dups: map[[2]string]int{}, runsOf: map[string]keyList{}, manifest: map[string]dataset.Meta{}}
	if err := c.runs(); err != nil {
		return nil, err
	}
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
}

// mine reports whether the check covers part p.
func (c *checker) mine(p dataset.Part) bool {
	if c.only == nil {
		return true
	}
	for _, n := range c.only[p.Sweep] {
		if n == p.Name {
			return true
		}
	}
	return false
}

func (c *checker) open(p string) (file, error) {
	return volumeOf(c.dir).open(join(c.dir, filepath.FromSlash(p)))
}

// runs checks the runs parts: every row readable, its key its parameters'
// hash, every run stored once.
func (c *checker) runs() error {
	runs := TableCount{Table: dataset.RunsDir}
	for _, p := range c.l.Runs {
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
	c.rep.Tables = append(c.rep.Tables, runs)
	return nil
}

// place records where the runs of part p were read first, and files those
// read before as duplicates (or, across sweeps, candidates).
func (c *checker) place(p dataset.Part, keys []string) {
	path := p.Path()
	here := int32(len(c.places))
	c.places = append(c.places, place{path, p.Sweep})
	for _, k := range keys {
		j, ok := c.first.get(k)
		if !ok {
			c.first.put(k, here)
			continue
		}
		at := c.places[j]
		if !c.mine(p) && (c.only == nil || !c.mine(dataset.Part{Sweep: at.sweep, Name: filepath.Base(at.path)})) {
			continue
		}
		if at.sweep != p.Sweep {
			c.cross = append(c.cross, crossDup{k, at.path, path})
			continue
		}
		c.dups[[2]string{at.path, path}]++
	}
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
	tc.Runs = len(distinct)
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
