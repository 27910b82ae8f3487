package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/sim"
)

// The dataset's folder layout, under --out:
//
//	runs/sweep=NAME/part-00000.parquet        one row per run
//	timelines/sweep=NAME/part-00000.parquet   per-tick rows of the runs that asked
//	groups/sweep=NAME/part-00000.parquet      per-group rows of mixed fleets
//
// A part is written to a hidden temporary name, synced and renamed: a name
// ending in .parquet is always a whole file. The timelines part is renamed
// first and the runs part last, so the runs part is the commit: a timelines
// part without its runs part is an orphan of a killed run and is removed.
const (
	runsDir      = "runs"
	timelinesDir = "timelines"
	groupsDir    = "groups"
)

// sideTables are written before the runs part, under the same name.
var sideTables = []string{timelinesDir, groupsDir}

var partName = regexp.MustCompile(`^part-(?:(\d+)of(\d+)-)?(\d{5,})\.parquet$`)

// store is one sweep's folders in a dataset.
type store struct {
	root, sweep string
	shard       shardSpec
	next        int // sequence number of the next part this shard writes
}

func (s *store) dir(table string) string {
	return filepath.Join(s.root, table, "sweep="+s.sweep)
}

func (s *store) partFile(seq int) string {
	if s.shard.n > 1 {
		return fmt.Sprintf("part-%dof%d-%05d.parquet", s.shard.i, s.shard.n, seq)
	}
	return fmt.Sprintf("part-%05d.parquet", seq)
}

// openStore prepares a sweep's folders: creates them, checks they can be
// written, removes temporary files and orphans left by a killed run, and
// sets aside parts written by another simulator version.
func openStore(root, sweep string, shard shardSpec, stderr io.Writer) (*store, error) {
	s := &store{root: root, sweep: sweep, shard: shard}
	for _, t := range append([]string{runsDir}, sideTables...) {
		d := s.dir(t)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("output folder: %w", err)
		}
		probe, err := os.CreateTemp(d, ".probe-*")
		if err != nil {
			return nil, fmt.Errorf("output folder %s is not writable: %w", d, err)
		}
		probe.Close()
		os.Remove(probe.Name())
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".tmp") {
				os.Remove(filepath.Join(d, e.Name())) // a part in the making when a run was killed
			}
		}
	}
	parts, err := s.parts(runsDir)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, p := range parts {
		have[p] = true
		if m := partName.FindStringSubmatch(p); m != nil && s.ownsPart(m) {
			seq, _ := strconv.Atoi(m[3])
			s.next = max(s.next, seq+1)
		}
	}
	for _, table := range sideTables {
		tparts, err := s.parts(table)
		if err != nil {
			return nil, err
		}
		for _, p := range tparts {
			if !have[p] {
				fmt.Fprintf(stderr, "sweep: removing %s: its runs part was never committed\n", filepath.Join(s.dir(table), p))
				if err := os.Remove(filepath.Join(s.dir(table), p)); err != nil {
					return nil, err
				}
			}
		}
	}
	return s, nil
}

func (s *store) ownsPart(m []string) bool {
	if s.shard.n <= 1 {
		return m[1] == ""
	}
	return m[1] == strconv.Itoa(s.shard.i) && m[2] == strconv.Itoa(s.shard.n)
}

// parts lists the committed part files of a table, sorted.
func (s *store) parts(table string) ([]string, error) {
	entries, err := os.ReadDir(s.dir(table))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && partName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// done returns the keys of the runs the sweep's parts hold. Parts written
// by another simulator version are renamed *.stale-VERSION: their rows
// would differ, and are run again rather than mixed in.
func (s *store) done(stderr io.Writer) (map[string]bool, error) {
	keys := map[string]bool{}
	parts, err := s.parts(runsDir)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		path := filepath.Join(s.dir(runsDir), p)
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		ks, meta, err := dataset.ReadRunKeys(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w (move it away to run without it)", path, err)
		}
		if meta.Sim != sim.Version {
			fmt.Fprintf(stderr, "sweep: %s holds simulator %s, this is %s: set aside, its runs will be redone\n", path, meta.Sim, sim.Version)
			for _, t := range append([]string{runsDir}, sideTables...) {
				old := filepath.Join(s.dir(t), p)
				if _, err := os.Stat(old); err == nil {
					if err := os.Rename(old, old+".stale-"+meta.Sim); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		for _, k := range ks {
			keys[k] = true
		}
	}
	return keys, nil
}

// tableWriter is a side table's writer and its bytes.
type tableWriter interface {
	Len() int
	Close() error
}

// part is what one commit writes: the runs and the side tables.
type part struct {
	runs    *dataset.RunsWriter
	runsBuf *partBuffer
	side    map[string]tableWriter // by folder
	sideBuf map[string]*partBuffer
}

func newPart(meta dataset.Meta) *part {
	p := &part{runsBuf: &partBuffer{}, side: map[string]tableWriter{}, sideBuf: map[string]*partBuffer{}}
	p.runs = dataset.NewRunsWriter(p.runsBuf, meta)
	p.sideBuf[timelinesDir], p.sideBuf[groupsDir] = &partBuffer{}, &partBuffer{}
	p.side[timelinesDir] = dataset.NewTimelineWriter(p.sideBuf[timelinesDir], meta)
	p.side[groupsDir] = dataset.NewGroupsWriter(p.sideBuf[groupsDir], meta)
	return p
}

// commit writes one part: the side tables that have rows, then the runs
// file, each atomically.
func (s *store) commit(p *part) (string, error) {
	name := s.partFile(s.next)
	for _, table := range sideTables {
		w := p.side[table]
		if w.Len() == 0 {
			continue
		}
		if err := w.Close(); err != nil {
			return "", err
		}
		if err := writeAtomic(s.dir(table), name, p.sideBuf[table]); err != nil {
			return "", err
		}
	}
	runs, runsBuf := p.runs, p.runsBuf
	if err := runs.Close(); err != nil {
		return "", err
	}
	if err := writeAtomic(s.dir(runsDir), name, runsBuf); err != nil {
		return "", err
	}
	s.next++
	return filepath.Join(s.dir(runsDir), name), nil
}

// partBuffer collects a part's bytes before they go to disk.
type partBuffer struct{ b []byte }

func (p *partBuffer) Write(b []byte) (int, error) { p.b = append(p.b, b...); return len(b), nil }

// writeAtomic writes data to dir/name through a hidden temporary file,
// synced before the rename and the folder synced after it.
func writeAtomic(dir, name string, data *partBuffer) error {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 1<<20)
	_, err = bw.Write(data.b)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
