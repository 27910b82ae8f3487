package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// problem is one thing wrong with a dataset, named by its file.
type problem struct {
	Kind    string `json:"kind"` // corrupt, foreign, stale, duplicate, incomplete, orphan, temporary, lock, unknown
	Path    string `json:"path"` // slash-separated, in the dataset
	Message string `json:"message"`
}

// tableCount is what one table holds.
type tableCount struct {
	Table string `json:"table"`
	Parts int    `json:"parts"`
	Rows  int    `json:"rows"`
	Runs  int    `json:"runs"` // distinct run keys
}

// checkReport is the outcome of checking a dataset.
type checkReport struct {
	Dir      string       `json:"dir"`
	Tables   []tableCount `json:"tables"`
	Problems []problem    `json:"problems"`
}

func (r *checkReport) add(kind, path, format string, args ...any) {
	r.Problems = append(r.Problems, problem{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *checkReport) writeText(w io.Writer) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: %s: %s\n", p.Kind, filepath.Join(r.Dir, filepath.FromSlash(p.Path)), p.Message)
	}
}

// unreadable files a problem for a part that cannot be read: corrupt, or
// foreign (not herdsweep's, or of another schema version).
func (r *checkReport) unreadable(path string, err error) {
	kind := "corrupt"
	if msg := err.Error(); strings.Contains(msg, "schema ") || strings.Contains(msg, "column ") {
		kind = "foreign"
	}
	r.add(kind, path, "%v", err)
}

// checkDataset verifies the dataset in dir. With only nil it checks
// everything; otherwise only the parts only names (by sweep), as `sweep
// run` does on what it wrote while other writers may be at work.
func checkDataset(dir string, only map[string][]string) (*checkReport, error) {
	l, err := dataset.List(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	c := &checker{dir: dir, only: only, l: l, rep: &checkReport{Dir: dir, Problems: []problem{}},
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
	rep      *checkReport
	places   []place                 // the runs parts read, indexed by first's values
	first    keyMap[int32]           // run key → the part it was read in first
	dups     map[[2]string]int       // (first path, this path) → runs
	cross    []crossDup              // candidates, see duplicates
	runsOf   map[string]keyList      // sweep/name → its run keys
	manifest map[string]dataset.Meta // sweep/name → its runs part's metadata
}

// A run key as the check holds it: the 8 bytes of its 16 hex digits
// (hexKey), or, for a key that is not one (a part written by another
// tool), the key itself. A dataset of 10,000,000 runs kept its keys as
// strings in two maps, 3.45 GB; as 8-byte numbers, a fraction of it.
func hexKey(k string) (uint64, bool) {
	if len(k) != 16 || strings.ToLower(k) != k {
		return 0, false
	}
	h, err := strconv.ParseUint(k, 16, 64)
	return h, err == nil
}

// keyMap maps run keys to values.
type keyMap[V any] struct {
	hex map[uint64]V
	odd map[string]V
}

func newKeyMap[V any]() keyMap[V] { return keyMap[V]{hex: map[uint64]V{}, odd: map[string]V{}} }

func (m keyMap[V]) get(k string) (V, bool) {
	if h, ok := hexKey(k); ok {
		v, ok := m.hex[h]
		return v, ok
	}
	v, ok := m.odd[k]
	return v, ok
}

func (m keyMap[V]) put(k string, v V) {
	if h, ok := hexKey(k); ok {
		m.hex[h] = v
	} else {
		m.odd[k] = v
	}
}

func (m keyMap[V]) len() int { return len(m.hex) + len(m.odd) }

// keyList is a runs part's keys, to ask whether it holds one.
type keyList struct {
	hex []uint64 // sorted
	odd map[string]bool
}

func newKeyList(keys []string) keyList {
	var l keyList
	l.hex = make([]uint64, 0, len(keys))
	for _, k := range keys {
		if h, ok := hexKey(k); ok {
			l.hex = append(l.hex, h)
		} else {
			if l.odd == nil {
				l.odd = map[string]bool{}
			}
			l.odd[k] = true
		}
	}
	slices.Sort(l.hex)
	return l
}

func (l keyList) holds(k string) bool {
	if h, ok := hexKey(k); ok {
		_, found := slices.BinarySearch(l.hex, h)
		return found
	}
	return l.odd[k]
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

func (c *checker) open(p string) (*os.File, error) {
	return os.Open(filepath.Join(c.dir, filepath.FromSlash(p)))
}

// runs checks the runs parts: every row readable, its key its parameters'
// hash, every run stored once.
func (c *checker) runs() error {
	runs := tableCount{Table: dataset.RunsDir}
	for _, p := range c.l.Runs {
		path := p.Path()
		f, err := c.open(path)
		if errors.Is(err, fs.ErrNotExist) {
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
		c.runsOf[p.Sweep+"/"+p.Name] = newKeyList(keys)
		c.manifest[p.Sweep+"/"+p.Name] = meta
	}
	runs.Runs = c.first.len()
	c.rep.Tables = append(c.rep.Tables, runs)
	return nil
}

// runKeys reads a runs part's keys: every row, checked, when the check
// covers it; only the keys otherwise.
func (c *checker) runKeys(f *os.File, p dataset.Part) ([]string, dataset.Meta, error) {
	if !c.mine(p) {
		return parquetio.ReadKeys(f, dataset.RunsDir)
	}
	recs, meta, err := parquetio.ReadRuns(f)
	if err != nil {
		return nil, meta, err
	}
	keys := make([]string, len(recs))
	bad := false
	var cell experiments.Cell // the cell of canonical: a part holds a cell's seeds in a row
	canonical := ""
	for i, rec := range recs {
		keys[i] = rec.RunKey
		if bad || meta.Sim != sim.Version {
			continue
		}
		if canonical == "" || rec.Cell != cell {
			cell, canonical = rec.Cell, rec.Cell.Canonical()
		}
		if experiments.RunKey(canonical, rec.Seed) != rec.RunKey {
			if revised(rec.Cell) {
				c.rep.add("stale", p.Path(), "row %d: run_key %s is not the hash of its parameters and seed under %s, which changed this policy: written before it; remove its sweep's parts and run it again", i, rec.RunKey, sim.PolicyVersion)
			} else if rec.Cell.Scenario.Concurrency > 0 {
				c.rep.add("stale", p.Path(), "row %d: run_key %s is not the hash of its parameters and seed under the queueing server's %s: written by an older one; remove its sweep's parts and run it again", i, rec.RunKey, sim.QueueVersion)
			} else {
				c.rep.add("corrupt", p.Path(), "row %d: run_key %s is not the hash of its parameters and seed (edited, or written by another tool)", i, rec.RunKey)
			}
			bad = true
		}
	}
	return keys, meta, nil
}

// revised reports whether a policy of c (a group's, in a mixed fleet)
// changed with sim.PolicyVersion.
func revised(c experiments.Cell) bool {
	for _, g := range c.Groups() {
		if g.Policy.Revised() {
			return true
		}
	}
	return false
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
		if ks, _, err := readKeys(filepath.Join(c.dir, dataset.TimelinesDir, filepath.FromSlash(rel)), dataset.TimelinesDir); err == nil {
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
	tc := tableCount{Table: table}
	distinct := map[string]bool{}
	rowsOf := map[string]int{}
	for _, p := range c.l.Side[table] {
		if !c.mine(p) {
			continue
		}
		path := p.Path()
		f, err := c.open(path)
		if errors.Is(err, fs.ErrNotExist) {
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
	return nil
}

// sideKeys reads every row of a side-table part and returns their run keys.
func sideKeys(f *os.File, table string) ([]string, error) {
	var keys []string
	if table == dataset.TimelinesDir {
		rows, _, err := parquetio.ReadTimelines(f)
		for _, r := range rows {
			keys = append(keys, r.RunKey)
		}
		return keys, err
	}
	rows, _, err := parquetio.ReadGroups(f)
	for _, r := range rows {
		keys = append(keys, r.RunKey)
	}
	return keys, err
}

// other files what is not data: temporary files, locks, parts set aside,
// orphans, anything else.
func (c *checker) other() {
	rep, dir := c.rep, c.dir
	ownEntry := func(e dataset.Entry) bool {
		if c.only == nil {
			return true
		}
		name := filepath.Base(e.Path)
		if m := tempName.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
		sweep := strings.TrimPrefix(filepath.Base(filepath.Dir(e.Path)), "sweep=")
		return c.mine(dataset.Part{Sweep: sweep, Name: name})
	}
	for _, e := range c.l.Other {
		if !ownEntry(e) {
			continue
		}
		switch e.Kind {
		case dataset.Temporary:
			rep.add("temporary", e.Path, "a part being written, or left by a killed writer: `sweep run` removes it once it is abandoned")
		case dataset.Lock:
			msg := "a writer at work, or one that died"
			if h, _, err := readLock(filepath.Join(dir, filepath.FromSlash(e.Path)), fileNow(dir)); err == nil {
				msg = fmt.Sprintf("held by %s", h)
			}
			rep.add("lock", e.Path, "%s", msg)
		case dataset.Stale:
			rep.add("stale", e.Path, "a part of another simulator version, set aside: not data; delete it when no longer needed")
		case dataset.Orphan:
			rep.add("orphan", e.Path, "a side-table part whose runs part was never committed: invisible to readers; `sweep run` removes it once it is abandoned")
		default:
			rep.add("unknown", e.Path, "not part of a herdsweep dataset")
		}
	}
}

// fileNow is the file server's time, from a probe file in dir; this
// machine's clock when dir cannot be written.
func fileNow(dir string) time.Time {
	if t, err := serverNow(dir); err == nil {
		return t
	}
	return time.Now()
}

func cmdCheck(_ context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlags("check", "[--json] DIR   (a dataset folder)", stderr)
	asJSON := flags.Bool("json", false, "print the report as JSON")
	pos, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("check: want one dataset folder, got %s", num.Plural(len(pos), "argument"))
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a folder")
		}
		return usagef("check: %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, dataset.RunsDir)); err != nil {
		return usagef("check: %s: no runs/ folder: not a dataset (want the --out of `sweep run`)", dir)
	}
	rep, err := checkDataset(dir, nil)
	if err != nil {
		return usagef("check: %s: %v", dir, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		for _, t := range rep.Tables {
			fmt.Fprintf(stdout, "%s: %d parts, %d rows, %d runs\n", t.Table, t.Parts, t.Rows, t.Runs)
		}
		rep.writeText(stdout)
		if len(rep.Problems) == 0 {
			fmt.Fprintf(stdout, "%s: no problems\n", dir)
		} else {
			fmt.Fprintf(stdout, "%s: %s\n", dir, num.Plural(len(rep.Problems), "problem"))
		}
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%s: %s", dir, num.Plural(len(rep.Problems), "problem"))
	}
	return nil
}
