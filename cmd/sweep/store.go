package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
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
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/sim"
)

// The dataset's folder layout is dataset's (see dataset.List); this file is
// the commit protocol of many writers into one folder on shared storage.
//
// What it relies on: rename within a folder is atomic and replaces nothing
// (names are unique); a file created with O_EXCL, or a hard link, exists
// once; a file's modification time is set by the file server's clock. NFS
// v3/v4 and Kubernetes PVCs (block volumes, NFS, CephFS) provide all
// three. Object storage (S3, GCS) and FUSE mounts of it do not rename
// atomically: they are refused or unsupported (see checkOutput).
//
//   - A part's name is unique to its writer: part-TAG-SEQ-HOST-PID-RAND.parquet,
//     TAG "all" or the shard "IofN", RAND 8 random hex digits drawn per writer,
//     the id its lock holds (lock.go).
//   - A writer records what the sweep is meant to hold, once, before it
//     runs anything: an intent (dataset.Intent), written create-only.
//   - A part is written to .NAME.….tmp, synced and renamed; it is sealed
//     with its checksum (parquetio.Verify). Its side-table parts (timelines,
//     groups) are renamed into place before the runs part of the same name,
//     which is the commit: readers ignore a side part whose runs part is not
//     there. The runs part records how many side rows it commits
//     (dataset.Meta.TimelineRows, GroupRows).
//   - A writer removes only files whose names are ours (leftover.go) and
//     whose writer is gone: a temporary file, or a side part never
//     committed. Nothing else, whatever its name or age.
//   - The first error is the one reported; a part that failed is not
//     committed again, and the side parts it placed are removed.

// writerID names one process writing one shard.
type writerID struct {
	tag   string // "all" or "IofN"
	host  string // the host name, letters and digits only
	space string // pidSpace
	pid   int
	rand  string
}

var (
	processRand = func() string {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic("sweep: no random source: " + err.Error())
		}
		return hex.EncodeToString(b[:])
	}
	hostName = func() string {
		h, _ := os.Hostname()
		h = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, h)
		if len(h) > 40 {
			h = h[:40]
		}
		if h == "" {
			h = "unknown"
		}
		return h
	}
)

func newWriterID(shard shardSpec) writerID {
	tag := "all"
	if shard.n > 1 {
		tag = fmt.Sprintf("%dof%d", shard.i, shard.n)
	}
	return writerID{tag: tag, host: hostName(), space: pidSpace(), pid: os.Getpid(), rand: processRand()}
}

// partName matches the part names of this protocol: tag, sequence, host,
// pid, random id.
var partName = regexp.MustCompile(`^part-(all|\d+of\d+)-(\d{5,})-([A-Za-z0-9_]+)-(\d+)-([0-9a-f]{8})\.parquet$`)

// tempName matches a temporary file of a part.
var tempName = regexp.MustCompile(`^\.(.+\.parquet)\.\d+\.tmp$`)

// owner parses the writer out of a part's or a temporary file's name; ok is
// false for names of older versions of herdsweep.
func owner(name string) (w writerID, seq int, ok bool) {
	if m := tempName.FindStringSubmatch(name); m != nil {
		name = m[1]
	}
	m := partName.FindStringSubmatch(name)
	if m == nil {
		return writerID{}, 0, false
	}
	seq, _ = strconv.Atoi(m[2])
	pid, _ := strconv.Atoi(m[4])
	return writerID{tag: m[1], host: m[3], pid: pid, rand: m[5]}, seq, true
}

// store is one writer's view of one sweep's folders in a dataset.
type store struct {
	root, sweep string
	id          writerID
	next        int // sequence number of the next part
	lock        *sweepLock
	own         []string // names of the parts this writer committed
}

func (s *store) dir(table string) string {
	return filepath.Join(s.root, table, "sweep="+s.sweep)
}

func (s *store) partFile(seq int) string {
	return fmt.Sprintf("part-%s-%05d-%s-%d-%s.parquet", s.id.tag, seq, s.id.host, s.id.pid, s.id.rand)
}

// serverNow writes a probe file into dir and returns its modification time:
// the file server's clock, to which other files' ages are compared. It
// also checks that dir can be written.
func serverNow(dir string) (time.Time, error) {
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return time.Time{}, fmt.Errorf("output folder %s is not writable: %w", dir, err)
	}
	fi, err := probe.Stat()
	probe.Close()
	os.Remove(probe.Name())
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// openStore prepares a sweep's folders for one writer: creates them, takes
// the lock of its shard, and removes the leftovers it can prove abandoned.
// The caller closes the store.
func openStore(root, sweep string, shard shardSpec, stderr io.Writer) (*store, error) {
	s := &store{root: root, sweep: sweep, id: newWriterID(shard)}
	for _, t := range dataset.Tables {
		if err := within(root, s.dir(t)); err != nil {
			return nil, usagef("run: %v: sweep run neither writes nor removes anything through it; make it a folder", err)
		}
		if err := os.MkdirAll(s.dir(t), 0o755); err != nil {
			return nil, fmt.Errorf("output folder: %w", err)
		}
	}
	var err error
	if s.lock, err = acquireLock(s.dir(dataset.RunsDir), s.id, stderr); err != nil {
		return nil, err
	}
	now, err := serverNow(s.dir(dataset.RunsDir))
	if err != nil {
		s.close()
		return nil, err
	}
	if err := s.clean(now, stderr); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close releases the lock.
func (s *store) close() {
	if s.lock != nil {
		s.lock.release()
	}
}

// clean removes the leftovers of writers known to be gone (leftover.go),
// naming each, and sets the next sequence number past this shard's parts.
func (s *store) clean(now time.Time, stderr io.Writer) error {
	// The files first, then the locks: a file listed was made after its
	// writer took its lock, which is there still if that writer is.
	entries := map[string][]os.DirEntry{}
	committed := map[string]bool{}
	for _, table := range dataset.Tables {
		es, err := os.ReadDir(s.dir(table))
		if err != nil {
			return err
		}
		entries[table] = es
		for _, e := range es {
			if w, seq, ours := owner(e.Name()); ours && w.tag == s.id.tag {
				s.next = max(s.next, seq+1)
			}
			if table == dataset.RunsDir && dataset.IsPart(e.Name()) {
				committed[e.Name()] = true
			}
		}
	}
	if cleanListedHook != nil {
		cleanListedHook()
	}
	ws := readWriters(s.dir(dataset.RunsDir), s.id, now)
	for _, table := range dataset.Tables {
		for _, e := range entries[table] {
			name := e.Name()
			what := leftoverKind(table, name, committed)
			if what == "" {
				continue
			}
			rand, _ := fileWriter(name)
			gone, why := ws.gone(rand)
			if !gone {
				continue
			}
			// A writer commits its runs part before it gives up its lock:
			// one gone now may have committed the side part listed as
			// uncommitted since the listing. Its runs part is there then.
			if table != dataset.RunsDir && dataset.IsPart(name) {
				if _, err := os.Lstat(filepath.Join(s.dir(dataset.RunsDir), name)); err == nil {
					continue
				}
			}
			path := filepath.Join(s.dir(table), name)
			fmt.Fprintf(stderr, "sweep: removing %s: %s of a writer that is gone (%s)\n", path, what, why)
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	// Locks of writers that are gone, of the shards this writer covers (its
	// own was taken over): no reader needs them, and they would confuse.
	for _, l := range ws.abandoned {
		if l.tag == s.id.tag || !conflicts(l.tag, s.id.tag) {
			continue
		}
		if cur, err := os.ReadFile(l.path); err == nil && bytes.Equal(cur, l.content) {
			fmt.Fprintf(stderr, "sweep: removing %s: the lock of a writer that is gone (%s)\n", l.path, l.holder.brief())
			os.Remove(l.path)
		}
	}
	return nil
}

// parts lists the committed part files of one of the sweep's tables, sorted.
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
		if dataset.IsPart(e.Name()) && regular(s.dir(table), e) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// done returns the keys of the runs the sweep's parts hold. Parts written
// by another simulator version are set aside as _NAME.stale-VERSION, which
// no reader takes for data: their rows would differ, and are run again
// rather than mixed in.
func (s *store) done(stderr io.Writer) (map[string]bool, error) {
	keys := map[string]bool{}
	parts, err := s.parts(dataset.RunsDir)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		path := filepath.Join(s.dir(dataset.RunsDir), p)
		ks, meta, bad, err := readRunsPart(path, false)
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				return nil, fmt.Errorf("%s: a symbolic link to a file that is not there (move it away to run without it)", path)
			}
			continue // set aside by another writer meanwhile
		}
		if err == nil && bad != nil {
			err = errors.New(bad.Message)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w (move it away to run without it)", path, err)
		}
		if meta.Sim != sim.Version {
			fmt.Fprintf(stderr, "sweep: %s holds simulator %s, this is %s: set aside, its runs will be redone\n", path, meta.Sim, sim.Version)
			for _, t := range dataset.Tables { // the runs part first: its side parts become invisible
				old := filepath.Join(s.dir(t), p)
				err := os.Rename(old, filepath.Join(s.dir(t), dataset.StaleName(p, meta.Sim)))
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
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

// readKeys reads the run_key column of a part file.
func readKeys(path, table string) ([]string, dataset.Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, dataset.Meta{}, err
	}
	defer f.Close()
	return parquetio.ReadKeys(f, table)
}

// elsewhere returns the runs stored in the other sweeps' folders of the
// dataset, and those of them with a timeline: a sweep does not run them
// again. A part that cannot be read is skipped with a warning (`sweep
// check` names it).
func elsewhere(root, sweep string, timelines bool, stderr io.Writer) (runs, withTimeline map[string]bool, err error) {
	runs, withTimeline = map[string]bool{}, map[string]bool{}
	l, err := dataset.List(os.DirFS(root))
	if err != nil {
		return nil, nil, err
	}
	add := func(parts []dataset.Part, table string, into map[string]bool) {
		for _, p := range parts {
			if p.Sweep == sweep {
				continue
			}
			path := filepath.Join(root, filepath.FromSlash(p.Path()))
			var ks []string
			var err error
			if table == dataset.RunsDir {
				var bad *problem
				if ks, _, bad, err = readRunsPart(path, false); err == nil && bad != nil {
					err = errors.New(bad.Message)
				}
			} else {
				ks, _, err = readKeys(path, table)
			}
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				fmt.Fprintf(stderr, "sweep: warning: %s: %v: its runs are not counted as done\n", path, err)
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

// tableWriter is a side table's writer and its bytes.
type tableWriter interface {
	Len() int
	Close() error
}

// part is what one commit writes: the runs and the side tables.
type part struct {
	runs    *parquetio.RunsWriter
	runsBuf *partBuffer
	side    map[string]tableWriter // by folder
	sideBuf map[string]*partBuffer
}

// newPart starts a part of at most rows runs (0: unknown).
func newPart(meta dataset.Meta, rows int) *part {
	p := &part{runsBuf: &partBuffer{}, side: map[string]tableWriter{}, sideBuf: map[string]*partBuffer{}}
	p.runs = parquetio.NewRunsWriter(p.runsBuf, meta)
	p.runs.Reserve(rows)
	p.sideBuf[dataset.TimelinesDir], p.sideBuf[dataset.GroupsDir] = &partBuffer{}, &partBuffer{}
	p.side[dataset.TimelinesDir] = parquetio.NewTimelineWriter(p.sideBuf[dataset.TimelinesDir], meta)
	p.side[dataset.GroupsDir] = parquetio.NewGroupsWriter(p.sideBuf[dataset.GroupsDir], meta)
	return p
}

// commit writes one part: the side tables that have rows, then the runs
// file that makes them visible, each atomically under a name no other
// writer uses. On failure the side parts it placed are removed and the
// error names the file.
func (s *store) commit(p *part) (string, error) {
	if commitHook != nil {
		commitHook(s)
	}
	name := s.partFile(s.next)
	s.next++ // a name is never used twice, even after a failure
	if s.lock != nil {
		if err := s.lock.held(); err != nil {
			return "", err
		}
	}
	var placed []string
	fail := func(err error) (string, error) {
		for _, f := range placed {
			os.Remove(f)
		}
		return "", err
	}
	for _, table := range dataset.SideTables {
		w := p.side[table]
		if w.Len() == 0 {
			continue
		}
		path := filepath.Join(s.dir(table), name)
		if err := w.Close(); err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
		if err := writeAtomic(s.dir(table), name, p.sideBuf[table]); err != nil {
			return fail(err)
		}
		placed = append(placed, path)
	}
	p.runs.Manifest(p.side[dataset.TimelinesDir].Len(), p.side[dataset.GroupsDir].Len())
	path := filepath.Join(s.dir(dataset.RunsDir), name)
	if err := p.runs.Close(); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if s.lock != nil {
		if err := s.lock.held(); err != nil {
			return fail(err)
		}
	}
	if err := writeAtomic(s.dir(dataset.RunsDir), name, p.runsBuf); err != nil {
		return fail(err)
	}
	s.own = append(s.own, name)
	return path, nil
}

// commitHook, when set by a test, runs before each commit.
var commitHook func(*store)

// cleanListedHook, when set by a test, runs when clean has listed the
// sweep's files and before it reads the locks.
var cleanListedHook func()

// partBuffer collects a part's bytes before they go to disk.
type partBuffer struct{ b []byte }

func (p *partBuffer) Write(b []byte) (int, error) { p.b = append(p.b, b...); return len(b), nil }

// writeAtomic writes data to dir/name through a hidden temporary file,
// synced before the rename and the folder synced after it.
func writeAtomic(dir, name string, data *partBuffer) error {
	return writeAtomicAs(dir, name, "*.tmp", data)
}

// writeAtomicAs is writeAtomic through a temporary file named
// "."+name+"."+tmp, tmp a pattern of os.CreateTemp.
func writeAtomicAs(dir, name, pattern string, data *partBuffer) error {
	f, err := os.CreateTemp(dir, "."+name+"."+pattern)
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
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
