package dataset

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// The dataset's folders: one per table, Hive-partitioned by sweep:
//
//	runs/sweep=NAME/PART.parquet        one row per run
//	timelines/sweep=NAME/PART.parquet   per-tick rows of the runs that asked
//	groups/sweep=NAME/PART.parquet      per-group rows of mixed fleets
//	runs/sweep=NAME/_intent.HASH.json   what a run meant the sweep to hold (intent.go)
//
// A commit is one part name: the side-table parts (timelines, groups) are
// renamed into place first, then the runs part of the same name, which
// makes them visible. A side part without its runs part is not data yet
// (a commit in progress, or one a killed writer left): readers ignore it.
// Names that start with "." or "_" are never data (temporary files, locks,
// parts set aside, intents), as pyarrow, Spark and DuckDB's *.parquet
// globs agree. A direct reader of a side table keeps only the rows of the
// parts whose runs part of the same name is there (a join on the file
// name, or on run_key with the runs table): an uncommitted side part is
// there while its writer commits, and after a writer was killed, until
// the next writer of the sweep removes it.
const (
	RunsDir      = "runs"
	TimelinesDir = "timelines"
	GroupsDir    = "groups"
)

// Tables lists the table folders, runs first.
var Tables = []string{RunsDir, TimelinesDir, GroupsDir}

// SideTables are the tables committed before their runs part.
var SideTables = []string{TimelinesDir, GroupsDir}

// Part is one committed part file of a table.
type Part struct {
	Table, Sweep, Name string
}

// Path is the part's path in the dataset, slash-separated.
func (p Part) Path() string { return path.Join(p.Table, "sweep="+p.Sweep, p.Name) }

// EntryKind says what a file in the dataset's folders is, if not data.
type EntryKind string

// Kinds of files that are not data.
const (
	Temporary EntryKind = "temporary" // .NAME.….tmp: a part being written, or left by a killed writer
	Lock      EntryKind = "lock"      // _lock.…: a writer at work, or one that died
	Stale     EntryKind = "stale"     // _NAME.stale-VERSION: a part of another simulator version, set aside
	Orphan    EntryKind = "orphan"    // a side-table part whose runs part is not there
	Special   EntryKind = "special"   // a part's or an intent's name on what is not a file: a named pipe, a device, a folder
	Unknown   EntryKind = "unknown"   // anything else
)

// Entry is a file of the dataset's folders that is not data.
type Entry struct {
	Path string // slash-separated, in the dataset
	Kind EntryKind
	Part Part // for an orphan
}

// Listing is what a dataset folder holds.
type Listing struct {
	Runs    []Part            // by sweep, then name
	Side    map[string][]Part // visible side-table parts by table, by sweep then name
	Intents []Part            // the intents of the runs table's sweep folders (intent.go), by sweep then name
	Other   []Entry           // everything that is not data, by path
}

// IsTemporary reports whether name is a part being written.
func IsTemporary(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp")
}

// IsLock reports whether name is a writer's lock.
func IsLock(name string) bool { return strings.HasPrefix(name, "_lock.") }

// IsPart reports whether name is a part file: a name ending in .parquet
// that is not hidden.
func IsPart(name string) bool {
	return strings.HasSuffix(name, ".parquet") && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// StaleName is the name a part of simulator version sim is set aside as:
// it starts with "_" and does not end in .parquet, so no reader takes it
// for data.
func StaleName(name, sim string) string { return "_" + name + ".stale-" + sim }

func classify(name string) EntryKind {
	switch {
	case IsTemporary(name):
		return Temporary
	case IsLock(name):
		return Lock
	case strings.HasPrefix(name, "_") && strings.Contains(name, ".stale-"),
		strings.Contains(name, ".parquet.stale-"): // set aside by herdsweep before 2026-11
		return Stale
	}
	return Unknown
}

// List reads the layout of the dataset in fsys (its root is the dataset's
// folder). Missing table folders are empty.
func List(fsys fs.FS) (*Listing, error) {
	l := &Listing{Side: map[string][]Part{}}
	parts := map[string][]Part{}
	for _, table := range Tables {
		sweeps, err := fs.ReadDir(fsys, table)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, sd := range sweeps {
			p := path.Join(table, sd.Name())
			name, ok := strings.CutPrefix(sd.Name(), "sweep=")
			if !sd.IsDir() || !ok || name == "" {
				l.Other = append(l.Other, Entry{Path: p, Kind: Unknown})
				continue
			}
			es, err := fs.ReadDir(fsys, p)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				ours := IsPart(e.Name()) || table == RunsDir && IsIntent(e.Name())
				switch {
				case ours && !fileEntry(fsys, path.Join(p, e.Name()), e):
					// Never opened: a named pipe would hang its reader.
					l.Other = append(l.Other, Entry{Path: path.Join(p, e.Name()), Kind: Special})
				case IsPart(e.Name()):
					parts[table] = append(parts[table], Part{Table: table, Sweep: name, Name: e.Name()})
				case ours:
					l.Intents = append(l.Intents, Part{Table: table, Sweep: name, Name: e.Name()})
				case e.Name() == ".probe" || strings.HasPrefix(e.Name(), ".probe-"):
					// a writer testing that it may write; it removes it at once
				default:
					l.Other = append(l.Other, Entry{Path: path.Join(p, e.Name()), Kind: classify(e.Name())})
				}
			}
		}
	}
	committed := map[string]bool{}
	for _, p := range parts[RunsDir] {
		committed[p.Sweep+"/"+p.Name] = true
	}
	l.Runs = parts[RunsDir]
	for _, table := range SideTables {
		for _, p := range parts[table] {
			if committed[p.Sweep+"/"+p.Name] {
				l.Side[table] = append(l.Side[table], p)
			} else {
				l.Other = append(l.Other, Entry{Path: p.Path(), Kind: Orphan, Part: p})
			}
		}
	}
	for _, ps := range append([][]Part{l.Runs, l.Intents}, l.Side[TimelinesDir], l.Side[GroupsDir]) {
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].Sweep != ps[j].Sweep {
				return ps[i].Sweep < ps[j].Sweep
			}
			return ps[i].Name < ps[j].Name
		})
	}
	sort.Slice(l.Other, func(i, j int) bool { return l.Other[i].Path < l.Other[j].Path })
	return l, nil
}

// fileEntry reports whether the entry e at p is a regular file, or a
// symbolic link to one or to nothing: a dangling link is listed as what
// its name says, and its reader says that it cannot open it.
func fileEntry(fsys fs.FS, p string, e fs.DirEntry) bool {
	switch t := e.Type(); {
	case t.IsRegular():
		return true
	case t&fs.ModeSymlink == 0:
		return false
	}
	fi, err := fs.Stat(fsys, p)
	return err != nil || fi.Mode().IsRegular()
}
