package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/sim"
)

// Options say which sweep of which dataset a Writer writes.
type Options struct {
	Root  string // the dataset's folder
	Sweep string
	Shard Shard
	// Note takes what the writer does beside writing, a line at a time
	// (leftovers it removes, a lock it waits for, parts it sets aside);
	// nil says nothing.
	Note func(msg string)
	// BeforeCommit, when set (by a test), runs before each commit.
	BeforeCommit func(*Writer)
}

// Writer is one writer's view of one sweep's folders in a dataset.
type Writer struct {
	v           volume
	root, sweep string
	id          writerID
	next        int // sequence number of the next part
	lock        *sweepLock
	own         []string  // names of the parts this writer committed
	written     []Written // what they hold, in the same order
	note        func(string)
	before      func(*Writer)
}

// Dir is the writer's sweep folder of a table.
func (w *Writer) Dir(table string) string { return SweepDir(w.root, table, w.sweep) }

// Own lists the names of the parts this writer committed, in order.
func (w *Writer) Own() []string { return w.own }

// Written lists what the parts this writer committed hold, in order, for
// CheckWritten. Not while a Committer of the writer is at work.
func (w *Writer) Written() []Written { return w.written }

func (w *Writer) partFile(seq int) string {
	return fmt.Sprintf("part-%s-%05d-%s-%d-%s.parquet", w.id.tag, seq, w.id.host, w.id.pid, w.id.rand)
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

// Open prepares a sweep's folders for one writer: creates them, takes the
// lock of its shard, and removes the leftovers it can prove abandoned. A
// sweep folder linked out of the root is a *LinkError. The caller closes
// the writer.
func Open(o Options) (*Writer, error) {
	w := &Writer{v: volumeOf(o.Root), root: o.Root, sweep: o.Sweep, id: newWriterID(o.Shard), note: o.Note, before: o.BeforeCommit}
	if w.note == nil {
		w.note = func(string) {}
	}
	for _, t := range dataset.Tables {
		if err := Within(o.Root, w.Dir(t)); err != nil {
			return nil, err
		}
		if err := w.v.mkdirs(w.Dir(t)); err != nil {
			return nil, fmt.Errorf("output folder: %w", err)
		}
	}
	if ob, ok := w.v.(*object); ok {
		if err := ob.check(w.Dir(dataset.RunsDir)); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Root, err)
		}
	}
	var err error
	if w.lock, err = acquireLock(w.Dir(dataset.RunsDir), w.id, w.note); err != nil {
		return nil, err
	}
	now, err := w.v.now(w.Dir(dataset.RunsDir))
	if err != nil {
		w.Close()
		return nil, err
	}
	if err := w.clean(now); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// cleanListedHook, when set by a test, runs when clean has listed the
// sweep's files and before it reads the locks.
var cleanListedHook func()

// Close releases the lock.
func (w *Writer) Close() {
	if w.lock != nil {
		w.lock.release()
	}
}

// clean removes the leftovers of writers known to be gone (leftover.go),
// naming each, and sets the next sequence number past this shard's parts.
func (w *Writer) clean(now time.Time) error {
	// The files first, then the locks: a file listed was made after its
	// writer took its lock, which is there still if that writer is.
	entries := map[string][]fs.DirEntry{}
	committed := map[string]bool{}
	for _, table := range dataset.Tables {
		es, err := w.v.list(w.Dir(table))
		if err != nil {
			return err
		}
		entries[table] = es
		for _, e := range es {
			if p, ours := ParsePartName(e.Name()); ours && p.Tag == w.id.tag {
				w.next = max(w.next, p.Seq+1)
			}
			if table == dataset.RunsDir && dataset.IsPart(e.Name()) {
				committed[e.Name()] = true
			}
		}
	}
	if cleanListedHook != nil {
		cleanListedHook()
	}
	ws := readWriters(w.Dir(dataset.RunsDir), w.id, now)
	for _, table := range dataset.Tables {
		for _, e := range entries[table] {
			if err := w.removeLeftover(table, e.Name(), committed, ws); err != nil {
				return err
			}
		}
	}
	// Locks of writers that are gone, of the shards this writer covers (its
	// own was taken over): no reader needs them, and they would confuse.
	for _, l := range ws.abandoned {
		if l.tag == w.id.tag || !conflicts(l.tag, w.id.tag) {
			continue
		}
		if cur, err := w.v.readFile(l.path); err == nil && bytes.Equal(cur, l.content) {
			w.note(fmt.Sprintf("removing %s: the lock of a writer that is gone (%s)", l.path, l.holder.brief()))
			w.v.remove(l.path)
		}
	}
	return nil
}

// removeLeftover removes file name of a table's sweep folder if it is a
// leftover of a writer that is gone, naming it.
func (w *Writer) removeLeftover(table, name string, committed map[string]bool, ws writers) error {
	what := leftoverKind(table, name, committed)
	if what == "" {
		return nil
	}
	rand, _ := fileWriter(name)
	gone, why := ws.gone(rand)
	if !gone {
		return nil
	}
	// A writer commits its runs part before it gives up its lock: one gone
	// now may have committed the side part listed as uncommitted since the
	// listing. Its runs part is there then.
	if table != dataset.RunsDir && dataset.IsPart(name) {
		if w.v.exists(join(w.Dir(dataset.RunsDir), name)) {
			return nil
		}
	}
	path := join(w.Dir(table), name)
	w.note(fmt.Sprintf("removing %s: %s of a writer that is gone (%s)", path, what, why))
	if err := w.v.remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// parts lists the committed part files of one of the sweep's tables, sorted.
func (w *Writer) parts(table string) ([]string, error) {
	entries, err := w.v.list(w.Dir(table))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if dataset.IsPart(e.Name()) && IsRegular(w.Dir(table), e) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Resume returns the keys of the runs the sweep's parts hold, each part
// read as strictly as `sweep check` reads it: a part that fails is an
// error naming it. Parts written by another simulator version are set
// aside as _NAME.stale-VERSION, which no reader takes for data: their rows
// would differ, and are run again rather than mixed in.
func (w *Writer) Resume() (map[string]bool, error) {
	keys := map[string]bool{}
	parts, err := w.parts(dataset.RunsDir)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		path := join(w.Dir(dataset.RunsDir), p)
		ks, meta, bad, err := readRunsPart(path, false)
		if errors.Is(err, fs.ErrNotExist) {
			if w.v.exists(path) {
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
			if err := w.setAside(p, meta.Sim); err != nil {
				return nil, err
			}
			continue
		}
		for _, k := range ks {
			keys[k] = true
		}
	}
	return keys, nil
}

// setAside renames part p of simulator version v, its runs part first
// (its side parts become invisible), saying so.
func (w *Writer) setAside(p, v string) error {
	w.note(fmt.Sprintf("%s holds simulator %s, this is %s: set aside, its runs will be redone", join(w.Dir(dataset.RunsDir), p), v, sim.Version))
	for _, t := range dataset.Tables {
		old := join(w.Dir(t), p)
		err := w.v.rename(old, join(w.Dir(t), dataset.StaleName(p, v)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
