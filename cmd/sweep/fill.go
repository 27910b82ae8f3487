package main

import (
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/runner"
)

// filler fills parts with the outcomes of a sweep's runs and hands each
// full one to a committer (store.Committer), which encodes and commits it
// on a goroutine of its own, in order, while the next part fills: the
// simulation goes on meanwhile (its window of results is small), and the
// parts' bytes and names are what a synchronous commit gives.
type filler struct {
	c        *store.Committer
	meta     dataset.Meta
	pb       partBudget
	partRows int
	stats    *sweepStats
	cur      *store.Part
	curBytes int64    // the rows of the part in hand, as grid.Cell.RowBytes counts them
	rowsOf   struct { // the last cell's rows but its timeline's
		last  grid.LastCell
		bytes int64
	}
}

func newFiller(st *store.Writer, o runOptions, stats *sweepStats) *filler {
	f := &filler{c: st.Committer(), meta: o.meta, pb: newPartBudget(o.partRows, o.lim), partRows: o.partRows, stats: stats}
	f.cur = store.NewPart(f.meta, f.pb.reserve)
	return f
}

// add adds a run's outcome to the part in hand, committing it when full.
func (f *filler) add(out *runner.Outcome) error {
	rows := int64(0)
	if f.pb.bytes > 0 {
		// A part is committed before the rows of the next run would
		// take it past its share of the memory limit.
		if f.rowsOf.last.Changed(&out.Job.Run.Cell, out.Job.Cell) { // a cell's seeds come in a row
			f.rowsOf.bytes = f.rowsOf.last.Cell().RowBytes(false)
		}
		if rows = f.rowsOf.bytes + grid.TimelineRows(out.Timeline); f.cur.Len() > 0 && f.curBytes+rows > f.pb.bytes {
			if err := f.commit(); err != nil {
				return err
			}
		}
	}
	f.curBytes += rows
	t0 := time.Now()
	f.cur.AddOf(out.Job.Cell, out.Job.Run, &out.Result, out.Timeline)
	f.stats.writing += time.Since(t0)
	f.stats.done++
	if f.cur.Len() >= f.partRows {
		return f.commit()
	}
	return nil
}

// commit hands the part in hand to the committer; the time it waits for
// the committer to take it is time Parquet costs the sweep. It returns
// the first failure to commit, reported and never retried.
func (f *filler) commit() error {
	if f.cur.Len() == 0 {
		return f.c.Err()
	}
	t0 := time.Now()
	if err := f.c.Send(f.cur); err != nil {
		return err
	}
	f.stats.writing += time.Since(t0)
	f.cur, f.curBytes = store.NewPart(f.meta, f.pb.reserve), 0
	return nil
}

// drain commits the part in hand and waits for every commit.
func (f *filler) drain() error {
	err := f.commit()
	t0 := time.Now()
	cerr := f.c.Close()
	f.stats.writing += time.Since(t0)
	f.stats.parts = f.c.Committed()
	f.stats.beside = f.c.Spent()
	if err != nil {
		return err
	}
	return cerr
}
