package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
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
	fsys := os.DirFS(dir)
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	rep := &checkReport{Dir: dir, Problems: []problem{}}
	mine := func(p dataset.Part) bool {
		if only == nil {
			return true
		}
		for _, n := range only[p.Sweep] {
			if n == p.Name {
				return true
			}
		}
		return false
	}
	open := func(p string) (*os.File, error) { return os.Open(filepath.Join(dir, filepath.FromSlash(p))) }

	// Runs: every row readable, its key its parameters' hash, stored once.
	type place struct{ path, sweep string }
	first := map[string]place{}            // run key → where it was read first
	dups := map[[2]string]int{}            // (first path, this path) → runs
	runsOf := map[string]map[string]bool{} // sweep/name → its run keys
	manifest := map[string]dataset.Meta{}  // sweep/name → its runs part's metadata
	runs := tableCount{Table: dataset.RunsDir}
	type crossDup struct{ key, first, again string }
	var cross []crossDup // a run stored again in another sweep
	for _, p := range l.Runs {
		path := p.Path()
		f, err := open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // set aside meanwhile
		}
		if err != nil {
			return nil, err
		}
		var keys []string
		var meta dataset.Meta
		if mine(p) {
			var recs []dataset.Record
			recs, meta, err = dataset.ReadRuns(f)
			for i, rec := range recs {
				if meta.Sim == sim.Version && (experiments.Run{Cell: rec.Cell, Seed: rec.Seed}).Key() != rec.RunKey {
					rep.add("corrupt", path, "row %d: run_key %s is not the hash of its parameters and seed (edited, or written by another tool)", i, rec.RunKey)
					break
				}
			}
			for _, rec := range recs {
				keys = append(keys, rec.RunKey)
			}
		} else {
			keys, meta, err = dataset.ReadKeys(f, dataset.RunsDir)
		}
		f.Close()
		if err != nil {
			if mine(p) {
				rep.unreadable(path, err)
			}
			continue
		}
		if meta.Sim != sim.Version && mine(p) {
			rep.add("stale", path, "holds simulator %s, this is %s: `sweep run` sets it aside and runs its runs again", meta.Sim, sim.Version)
		}
		runs.Parts++
		runs.Rows += len(keys)
		set := map[string]bool{}
		for _, k := range keys {
			set[k] = true
			at, ok := first[k]
			if !ok {
				first[k] = place{path, p.Sweep}
				continue
			}
			if !mine(p) && (only == nil || !mine(dataset.Part{Sweep: at.sweep, Name: filepath.Base(at.path)})) {
				continue
			}
			if at.sweep != p.Sweep {
				cross = append(cross, crossDup{k, at.path, path})
				continue
			}
			dups[[2]string{at.path, path}]++
		}
		runsOf[p.Sweep+"/"+p.Name] = set
		manifest[p.Sweep+"/"+p.Name] = meta
	}
	runs.Runs = len(first)
	rep.Tables = append(rep.Tables, runs)
	// A run stored in two sweeps is a duplicate unless exactly one copy has
	// a timeline: the later sweep asked for one the first did not keep.
	tl := map[string]map[string]bool{} // runs part path → run keys of its timelines part
	withTimeline := func(runsPath string) map[string]bool {
		if m, ok := tl[runsPath]; ok {
			return m
		}
		m := map[string]bool{}
		ks, _, err := readKeys(filepath.Join(dir, dataset.TimelinesDir, strings.TrimPrefix(filepath.FromSlash(runsPath), dataset.RunsDir+string(filepath.Separator))), dataset.TimelinesDir)
		if err == nil {
			for _, k := range ks {
				m[k] = true
			}
		}
		tl[runsPath] = m
		return m
	}
	for _, c := range cross {
		if withTimeline(c.first)[c.key] == withTimeline(c.again)[c.key] {
			dups[[2]string{c.first, c.again}]++
		}
	}
	var pairs [][2]string
	for k := range dups {
		pairs = append(pairs, k)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][1] != pairs[j][1] {
			return pairs[i][1] < pairs[j][1]
		}
		return pairs[i][0] < pairs[j][0]
	})
	for _, pr := range pairs {
		rep.add("duplicate", pr[1], "%d runs already stored in %s: readers count each once", dups[pr], pr[0])
	}

	// Side tables: readable, rows of the runs their part commits, as many
	// as the runs part's manifest says.
	for _, table := range dataset.SideTables {
		tc := tableCount{Table: table}
		distinct := map[string]bool{}
		rowsOf := map[string]int{}
		for _, p := range l.Side[table] {
			if !mine(p) {
				continue
			}
			path := p.Path()
			f, err := open(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			var keys []string
			switch table {
			case dataset.TimelinesDir:
				var rows []dataset.TimelineRow
				rows, _, err = dataset.ReadTimelines(f)
				for _, r := range rows {
					keys = append(keys, r.RunKey)
				}
			default:
				var rows []dataset.GroupRow
				rows, _, err = dataset.ReadGroups(f)
				for _, r := range rows {
					keys = append(keys, r.RunKey)
				}
			}
			f.Close()
			if err != nil {
				rep.unreadable(path, err)
				continue
			}
			tc.Parts++
			tc.Rows += len(keys)
			rowsOf[p.Sweep+"/"+p.Name] = len(keys)
			stray := 0
			for _, k := range keys {
				distinct[k] = true
				if runs := runsOf[p.Sweep+"/"+p.Name]; runs != nil && !runs[k] {
					stray++
				}
			}
			if stray > 0 {
				rep.add("orphan", path, "%d rows of runs its runs part does not hold: readers may show them for a run stored elsewhere", stray)
			}
		}
		tc.Runs = len(distinct)
		rep.Tables = append(rep.Tables, tc)
		for _, p := range l.Runs {
			m, ok := manifest[p.Sweep+"/"+p.Name]
			if !ok || !mine(p) {
				continue
			}
			want := m.TimelineRows
			if table == dataset.GroupsDir {
				want = m.GroupRows
			}
			if got := rowsOf[p.Sweep+"/"+p.Name]; want >= 0 && got != want {
				rep.add("incomplete", p.Path(), "commits %d %s rows, its %s part holds %d", want, table, table, got)
			}
		}
	}

	// Files that are not data.
	ownEntry := func(e dataset.Entry) bool {
		if only == nil {
			return true
		}
		name := filepath.Base(e.Path)
		if m := tempName.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
		sweep := strings.TrimPrefix(filepath.Base(filepath.Dir(e.Path)), "sweep=")
		return mine(dataset.Part{Sweep: sweep, Name: name})
	}
	for _, e := range l.Other {
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
	return rep, nil
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
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return usagef("check: want one dataset folder, got %d arguments", flags.NArg())
	}
	dir := flags.Arg(0)
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
			fmt.Fprintf(stdout, "%s: %d problems\n", dir, len(rep.Problems))
		}
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%s: %d problems", dir, len(rep.Problems))
	}
	return nil
}
