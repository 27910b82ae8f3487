package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// problem is one thing wrong with a dataset, named by its file.
type problem struct {
	Kind    string `json:"kind"` // corrupt, foreign, stale, duplicate, incomplete, missing, orphan, temporary, lock, special, unknown; of a note: leftover, intent
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
	// Notes are what is not wrong but worth knowing: leftovers no reader
	// sees, which the next `sweep run` of their sweep removes.
	Notes []problem `json:"notes"`
}

func (r *checkReport) add(kind, path, format string, args ...any) {
	r.Problems = append(r.Problems, problem{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *checkReport) note(kind, path, format string, args ...any) {
	r.Notes = append(r.Notes, problem{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *checkReport) writeText(w io.Writer) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: %s: %s\n", p.Kind, filepath.Join(r.Dir, filepath.FromSlash(p.Path)), p.Message)
	}
	for _, p := range r.Notes {
		fmt.Fprintf(w, "note: %s: %s: %s\n", p.Kind, filepath.Join(r.Dir, filepath.FromSlash(p.Path)), p.Message)
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
	c := &checker{dir: dir, only: only, l: l, rep: &checkReport{Dir: dir, Problems: []problem{}, Notes: []problem{}},
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
func (c *checker) runKeys(f *os.File, p dataset.Part) ([]string, dataset.Meta, error) {
	if !c.mine(p) {
		return parquetio.ReadKeys(f, dataset.RunsDir)
	}
	keys, meta, bad, err := checkRunsPart(f, true)
	if bad != nil {
		c.rep.add(bad.Kind, p.Path(), "%s", bad.Message)
	}
	return keys, meta, err
}

// readRunsPart is checkRunsPart of the file at path.
func readRunsPart(path string, full bool) ([]string, dataset.Meta, *problem, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, dataset.Meta{}, nil, fmt.Errorf("not a regular file (%s)", fileType(path))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, dataset.Meta{}, nil, err
	}
	defer f.Close()
	return checkRunsPart(f, full)
}

// checkRunsPart reads a runs part as strictly as any reader, and returns
// its run keys. A sealed part must hold its seal (parquetio.Verify): it is
// then the file its writer wrote, and unless full only its keys are read.
// An unsealed one (written before sealing, or by another tool) is read
// every way a reader reads it (parquetio.ReadRunsStrict), as is every part
// when full. Of this simulator's parts, each row's run_key must be the hash
// of its parameters and seed: a row with an edited parameter is not taken
// for the run it claims to be. bad is the first row that is not, with the
// kind of problem it is.
func checkRunsPart(f *os.File, full bool) (keys []string, meta dataset.Meta, bad *problem, err error) {
	sealed, err := parquetio.VerifySeeker(f)
	if err != nil {
		return nil, meta, nil, err
	}
	if sealed && !full {
		keys, meta, err = parquetio.ReadKeys(f, dataset.RunsDir)
		return keys, meta, nil, err
	}
	read := parquetio.ReadRunsStrict
	if sealed {
		read = parquetio.ReadRuns
	}
	recs, meta, err := read(f)
	if err != nil {
		return nil, meta, nil, err
	}
	keys = make([]string, len(recs))
	var cell grid.Cell // the cell of canonical: a part holds a cell's seeds in a row
	canonical := ""
	for i, rec := range recs {
		keys[i] = rec.RunKey
		if bad != nil || meta.Sim != sim.Version {
			continue
		}
		if canonical == "" || rec.Cell != cell {
			cell, canonical = rec.Cell, rec.Cell.Canonical()
		}
		if grid.RunKey(canonical, rec.Seed) != rec.RunKey {
			if revised(rec.Cell) {
				bad = &problem{Kind: "stale", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed under %s, which changed this policy: written before it; remove its sweep's parts and run it again", i, rec.RunKey, sim.PolicyVersion)}
			} else if rec.Cell.Scenario.Server() == sim.QueueingServer {
				bad = &problem{Kind: "stale", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed under the queueing server's %s: written by an older one; remove its sweep's parts and run it again", i, rec.RunKey, sim.QueueVersion)}
			} else {
				bad = &problem{Kind: "corrupt", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed (edited, or written by another tool)", i, rec.RunKey)}
			}
		}
	}
	return keys, meta, bad, nil
}

// revised reports whether a policy of c (a group's, in a mixed fleet)
// changed with sim.PolicyVersion.
func revised(c grid.Cell) bool {
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

// sideKeys reads every row of a side-table part, after its seal when it
// has one, and returns their run keys.
func sideKeys(f *os.File, table string) ([]string, error) {
	if _, err := parquetio.VerifySeeker(f); err != nil {
		return nil, err
	}
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

// other files what is not data: leftovers and the files of writers at
// work (leftover.go), parts set aside, anything else.
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
	now := fileNow(dir)
	self := writerID{host: hostName(), space: pidSpace(), pid: os.Getpid()}
	ws := map[string]writers{} // by sweep
	writersOf := func(sweep string) writers {
		w, ok := ws[sweep]
		if !ok {
			w = readWriters(filepath.Join(dir, dataset.RunsDir, "sweep="+sweep), self, now)
			ws[sweep] = w
		}
		return w
	}
	for _, e := range c.l.Other {
		if !ownEntry(e) {
			continue
		}
		sweep := strings.TrimPrefix(path.Base(path.Dir(e.Path)), "sweep=")
		name := path.Base(e.Path)
		rand, ours := fileWriter(name)
		var gone bool
		var why string
		if ours {
			gone, why = writersOf(sweep).gone(rand)
		}
		switch e.Kind {
		case dataset.Temporary:
			switch {
			case !ours:
				rep.add("temporary", e.Path, "a hidden temporary file not named as herdsweep names its own: `sweep run` never removes it; remove it if no program is writing it")
			case gone:
				rep.note("leftover", e.Path, "a temporary file of a writer that is gone (%s): no reader sees it; the next `sweep run` of this sweep removes it", why)
			default:
				rep.add("temporary", e.Path, "a part being written (%s): the dataset is not finished", why)
			}
		case dataset.Lock:
			p := filepath.Join(dir, filepath.FromSlash(e.Path))
			h, _, err := readLock(p, now)
			switch {
			case err != nil:
				rep.add("lock", e.Path, "a writer at work, or one that died: %v", err)
			case h.abandoned(self):
				rep.note("leftover", e.Path, "the lock of a writer that is gone (%s): no reader needs it; the next `sweep run` of these shards removes it", h)
			default:
				rep.add("lock", e.Path, "held by %s: a writer at work (the dataset is not finished), or one that died and has not yet gone silent for %v", h, lockStale)
			}
		case dataset.Stale:
			rep.add("stale", e.Path, "a part of another simulator version, set aside: not data; delete it when no longer needed")
		case dataset.Orphan:
			switch {
			case !ours:
				rep.add("orphan", e.Path, "a side-table part whose runs part is not there, not named as herdsweep names its parts: invisible to herdsweep's readers, read by a direct reader of the table; `sweep run` never removes it: remove it if it is not data")
			case gone:
				rep.add("orphan", e.Path, "a side-table part whose runs part was never committed, of a writer that is gone (%s): invisible to herdsweep's readers, read by a direct reader of the table (keep a side part's rows only where its runs part is there); the next `sweep run` of this sweep removes it", why)
			default:
				rep.add("orphan", e.Path, "a side-table part being committed (%s): the dataset is not finished", why)
			}
		case dataset.Special:
			rep.add("special", e.Path, "not a regular file (%s): never read (a named pipe would hang its reader); remove it", fileType(filepath.Join(dir, filepath.FromSlash(e.Path))))
		default:
			rep.add("unknown", e.Path, "not part of a herdsweep dataset")
		}
	}
}

// fileType says what a file that is not a regular one is.
func fileType(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "a symbolic link to nothing"
	}
	switch m := fi.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return fi.Mode().Type().String()
}

// fileNow is the file server's time, from a probe file in dir; this
// machine's clock when dir cannot be written.
func fileNow(dir string) time.Time {
	if t, err := serverNow(dir); err == nil {
		return t
	}
	return time.Now()
}

const checkHelp = `Is the dataset whole and readable? check reads every part as strictly as
any reader does (and against the checksum it was sealed with when
written), and reports:
  corrupt, foreign   a part a reader refuses, or one changed since it was written
  stale              a part of another simulator version
  duplicate          runs stored twice (readers count each once)
  incomplete         side-table rows a runs part commits that are not there
  missing            runs that a run recorded it would write (its intent) and
                     that are not there: a shard that never ran or died, with
                     the command that finishes it
  orphan             a side-table part whose runs part is not there: herdsweep's
                     readers skip it, a direct reader (DuckDB) would not
  temporary, lock    a writer at work: the dataset is not finished
  special, unknown   files that are not a dataset's
Notes, which do not fail it, name leftovers no reader sees (the temporary
files and locks of writers that are gone): the next "sweep run" of their
sweep removes them, and nothing else.

Exit codes: 0 no problem, 1 problems, 2 not a dataset.
`

func cmdCheck(_ context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagsDoc("check", "[--json] DIR   (a dataset folder)", checkHelp, stderr)
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
			fmt.Fprintf(stdout, "%s: %s, %s, %s\n", t.Table, num.Plural(t.Parts, "part"), num.Plural(t.Rows, "row"), num.Plural(t.Runs, "run"))
		}
		rep.writeText(stdout)
		if len(rep.Problems) == 0 && len(rep.Notes) > 0 {
			fmt.Fprintf(stdout, "%s: no problems (%s)\n", dir, num.Plural(len(rep.Notes), "note"))
		} else if len(rep.Problems) == 0 {
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
