package store

import (
	"fmt"
	"sync"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Part is what one commit writes: the runs and the side tables.
type Part struct {
	runs      *parquetio.RunsWriter
	timelines *parquetio.TimelineWriter
	groups    *parquetio.GroupsWriter
	bufs      map[string]*buffer // by table folder
	sideRuns  map[string]int     // by side table: runs with rows there
}

// Written is a part as its writer committed it, kept in memory so that
// the end-of-run check (CheckWritten) need not read it back: its name, its
// runs' keys, and what each of its files holds and was sealed with.
type Written struct {
	Name  string
	keys  []uint64 // each run's key as hexKey reads it (grid.Keyer.Bits), in row order
	files map[string]writtenFile
}

// writtenFile is one file of a part as written.
type writtenFile struct {
	seal       string // the checksum it was sealed with
	size       int64
	rows, runs int // its rows, and the distinct runs they are of
}

// keep records what part p, committed as name, holds; call it once its
// files are sealed.
func (p *Part) keep(name string, keys []uint64) Written {
	wr := Written{Name: name, keys: keys, files: map[string]writtenFile{}}
	wr.files[dataset.RunsDir] = writtenFile{seal: p.runs.Checksum(), size: int64(len(p.bufs[dataset.RunsDir].b)), rows: p.runs.Len(), runs: p.runs.Len()}
	for _, table := range dataset.SideTables {
		if sw := p.side(table); sw.Len() > 0 {
			wr.files[table] = writtenFile{seal: sw.Checksum(), size: int64(len(p.bufs[table].b)), rows: sw.Len(), runs: p.sideRuns[table]}
		}
	}
	return wr
}

// NewPart starts a part of at most rows runs (0: unknown), with meta in
// every file's metadata.
func NewPart(meta dataset.Meta, rows int) *Part {
	p := &Part{bufs: map[string]*buffer{}, sideRuns: map[string]int{}}
	for _, t := range dataset.Tables {
		p.bufs[t] = &buffer{}
	}
	p.runs = parquetio.NewRunsWriter(p.bufs[dataset.RunsDir], meta)
	p.runs.Reserve(rows)
	p.timelines = parquetio.NewTimelineWriter(p.bufs[dataset.TimelinesDir], meta)
	p.groups = parquetio.NewGroupsWriter(p.bufs[dataset.GroupsDir], meta)
	return p
}

// Add adds run r: its row, its timeline when tl is not nil, and its
// groups' rows when it is a mixed fleet's.
func (p *Part) Add(r grid.Run, res sim.Result, tl *sim.Timeline) { p.AddOf(0, r, &res, tl) }

// AddOf is Add of a run whose cell is numbered cell (grid.LastCell; 0 =
// not numbered).
func (p *Part) AddOf(cell int, r grid.Run, res *sim.Result, tl *sim.Timeline) {
	key := p.runs.AppendOf(cell, r, res) // the side tables' rows have it: worked out once
	if tl != nil {
		n := p.timelines.Len()
		if p.timelines.AppendKeyed(r, key, tl); p.timelines.Len() > n {
			p.sideRuns[dataset.TimelinesDir]++
		}
	}
	if res.NGroups > 0 {
		p.groups.AppendKeyed(r, key, res)
		p.sideRuns[dataset.GroupsDir]++
	}
}

// Len is the number of runs added.
func (p *Part) Len() int { return p.runs.Len() }

// side is a side table's writer.
func (p *Part) side(table string) interface {
	Len() int
	Close() error
	Checksum() string
} {
	if table == dataset.TimelinesDir {
		return p.timelines
	}
	return p.groups
}

// Commit writes one part: the side tables that have rows, then the runs
// file that makes them visible, each atomically under a name no other
// writer uses. It returns the runs part's path. On failure the side parts
// it placed are removed and the error names the file.
func (w *Writer) Commit(p *Part) (string, error) {
	if w.before != nil {
		w.before(w)
	}
	name := w.partFile(w.next)
	w.next++ // a name is never used twice, even after a failure
	if err := w.held(); err != nil {
		return "", err
	}
	var placed []string
	fail := func(err error) (string, error) {
		for _, f := range placed {
			w.v.remove(f)
		}
		return "", err
	}
	for _, table := range dataset.SideTables {
		sw := p.side(table)
		if sw.Len() == 0 {
			continue
		}
		path := join(w.Dir(table), name)
		if err := sw.Close(); err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
		if err := w.v.commitFile(w.Dir(table), name, p.bufs[table].b); err != nil {
			return fail(err)
		}
		placed = append(placed, path)
	}
	p.runs.Manifest(p.timelines.Len(), p.groups.Len())
	path := join(w.Dir(dataset.RunsDir), name)
	if err := p.runs.Close(); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if err := w.held(); err != nil {
		return fail(err)
	}
	if err := w.v.commitFile(w.Dir(dataset.RunsDir), name, p.bufs[dataset.RunsDir].b); err != nil {
		return fail(err)
	}
	w.own = append(w.own, name)
	w.written = append(w.written, p.keep(name, p.runs.Keys()))
	return path, nil
}

// held checks that the writer still holds its lock.
func (w *Writer) held() error {
	if w.lock == nil {
		return nil
	}
	return w.lock.held()
}

// A Committer commits a writer's parts in order on a goroutine of its
// own, while the caller fills the next part: the parts' bytes and names
// are what Commit gives. At most one part waits for it. The first failure
// is the one reported; nothing is committed after it.
type Committer struct {
	w    *Writer
	full chan *Part
	done chan struct{}

	mu    sync.Mutex
	err   error
	paths []string
	spent time.Duration
}

// Committer starts a committer of w's parts; the caller closes it.
func (w *Writer) Committer() *Committer {
	c := &Committer{w: w, full: make(chan *Part, 1), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *Committer) loop() {
	defer close(c.done)
	for p := range c.full {
		if c.Err() != nil {
			continue
		}
		t0 := time.Now()
		path, err := c.w.Commit(p)
		c.mu.Lock()
		c.spent += time.Since(t0)
		if err != nil {
			c.err = err
		} else {
			c.paths = append(c.paths, path)
		}
		c.mu.Unlock()
	}
}

// Err is the first failure to commit so far.
func (c *Committer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Send hands p to the committer, waiting while a part waits for it; the
// caller starts a new part. It returns the first failure instead when
// there was one, and sends nothing when p holds no run.
func (c *Committer) Send(p *Part) error {
	if err := c.Err(); err != nil || p.Len() == 0 {
		return err
	}
	c.full <- p
	return nil
}

// Close waits for every commit and returns the first failure.
func (c *Committer) Close() error {
	close(c.full)
	<-c.done
	return c.Err()
}

// Committed returns the paths of the runs parts committed so far, in order.
func (c *Committer) Committed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

// Spent is the time spent committing so far: encoding and writing parts,
// beside the caller's work.
func (c *Committer) Spent() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}
