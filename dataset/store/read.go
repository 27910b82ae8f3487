package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// ReadKeys reads the run_key column of a part file of a table.
func ReadKeys(path, table string) ([]string, dataset.Meta, error) {
	f, err := volumeOf(path).open(path)
	if err != nil {
		return nil, dataset.Meta{}, err
	}
	defer f.Close()
	return parquetio.ReadKeys(f, table)
}

// readRunsPart is checkRunsPart of the file at path.
func readRunsPart(path string, full bool) ([]string, dataset.Meta, *Problem, error) {
	v := volumeOf(path)
	if _, ok := v.(posix); ok {
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, dataset.Meta{}, nil, fmt.Errorf("not a regular file (%s)", fileType(path))
		}
	}
	f, err := v.open(path)
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
// kind of problem it is (no Path).
func checkRunsPart(r file, full bool) (keys []string, meta dataset.Meta, bad *Problem, err error) {
	sealed, err := parquetio.VerifySeeker(r)
	if err != nil {
		return nil, meta, nil, err
	}
	if sealed && !full {
		keys, meta, err = parquetio.ReadKeys(r, dataset.RunsDir)
		return keys, meta, nil, err
	}
	read := parquetio.ReadRunsStrict
	if sealed {
		read = parquetio.ReadRuns
	}
	recs, meta, err := read(r)
	if err != nil {
		return nil, meta, nil, err
	}
	keys = make([]string, len(recs))
	for i, rec := range recs {
		keys[i] = rec.RunKey
	}
	if meta.Sim == sim.Version {
		bad = wrongKey(recs)
	}
	return keys, meta, bad, nil
}

// wrongKey is the first record whose run_key is not the hash of its
// parameters and seed, as a problem of the kind it is; nil when there is
// none.
func wrongKey(recs []dataset.Record) *Problem {
	var cell grid.Cell // the cell of keyer: a part holds a cell's seeds in a row
	var keyer *grid.Keyer
	for i, rec := range recs {
		if keyer == nil || rec.Cell != cell {
			cell, keyer = rec.Cell, grid.NewKeyer(rec.Cell.Canonical())
		}
		if keyer.Key(rec.Seed) == rec.RunKey {
			continue
		}
		switch {
		case revised(rec.Cell):
			return &Problem{Kind: "stale", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed under %s, which changed this policy: written before it; remove its sweep's parts and run it again", i, rec.RunKey, sim.PolicyVersion)}
		case rec.Cell.Scenario.Server() == sim.QueueingServer:
			return &Problem{Kind: "stale", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed under the queueing server's %s: written by an older one; remove its sweep's parts and run it again", i, rec.RunKey, sim.QueueVersion)}
		default:
			return &Problem{Kind: "corrupt", Message: fmt.Sprintf("row %d: run_key %s is not the hash of its parameters and seed (edited, or written by another tool)", i, rec.RunKey)}
		}
	}
	return nil
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

// sideKeys reads every row of a side-table part, after its seal when it
// has one, and returns their run keys.
func sideKeys(f file, table string) ([]string, error) {
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

// Elsewhere returns the runs stored in the other sweeps' folders of the
// dataset in root, and those of them with a timeline (when timelines): a
// sweep does not run them again. A part that cannot be read is skipped
// with a warning to note (Check names it).
func Elsewhere(root, sweep string, timelines bool, note func(string)) (runs, withTimeline map[string]bool, err error) {
	runs, withTimeline = map[string]bool{}, map[string]bool{}
	l, err := dataset.List(FS(root))
	if err != nil {
		return nil, nil, err
	}
	add := func(parts []dataset.Part, table string, into map[string]bool) {
		for _, p := range parts {
			if p.Sweep == sweep {
				continue
			}
			path := join(root, filepath.FromSlash(p.Path()))
			ks, err := partKeys(path, table)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				if note != nil {
					note(fmt.Sprintf("warning: %s: %v: its runs are not counted as done", path, err))
				}
				continue
			}
			for _, k := range ks {
				into[k] = true
			}
		}
	}
	add(l.Runs, dataset.RunsDir, runs)
	if timelines {
		add(l.Side[dataset.TimelinesDir], dataset.TimelinesDir, withTimeline)
	}
	return runs, withTimeline, nil
}

// partKeys reads the run keys of a part of a table, a runs part as
// strictly as Resume reads the sweep's own.
func partKeys(path, table string) ([]string, error) {
	if table != dataset.RunsDir {
		ks, _, err := ReadKeys(path, table)
		return ks, err
	}
	ks, _, bad, err := readRunsPart(path, false)
	if err == nil && bad != nil {
		err = errors.New(bad.Message)
	}
	return ks, err
}
