package experiments

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/herdsweep/herdsweep/sim"
)

// Job is one run to simulate, and whether to record its timeline.
type Job struct {
	Run      Run
	Timeline bool
}

// Outcome is what a job gave.
type Outcome struct {
	Job      Job
	Result   sim.Result
	Timeline *sim.Timeline // nil unless the job asked for it
	Err      error
}

// Execute runs jobs 0 … n-1 on workers goroutines (≤ 0: one per CPU) and
// calls emit for each outcome in index order, from the calling goroutine,
// whatever order the workers finish in. At most a window of jobs is in
// flight ahead of the last emitted one, so memory does not grow with n.
//
// job(i) must be safe to call from several goroutines. When ctx is done or
// emit returns an error, Execute stops handing out jobs, stops the runs in
// progress (sim.Sim.Stop: a long run does not hold it up), emits the
// outcomes that complete an unbroken prefix, and returns the error. A
// stopped run is never emitted.
func Execute(ctx context.Context, workers, n int, job func(i int) Job, emit func(i int, o Outcome) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := workers * 64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()

	type done struct {
		i int
		o Outcome
	}
	indices := make(chan int)
	results := make(chan done, window)
	tokens := make(chan struct{}, window)

	go func() { // hand out indices, at most window ahead of emit
		defer close(indices)
		for i := range n {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case indices <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sim.Sim{Stop: &stop}
			var rng sim.Mulberry32
			for i := range indices {
				j := job(i)
				o := Outcome{Job: j}
				var tl *sim.Timeline
				if j.Timeline {
					tl = new(sim.Timeline)
				}
				rng.Seed(j.Run.Seed)
				o.Result, o.Err = j.Run.Cell.Simulate(&s, &rng, tl)
				o.Timeline = tl
				results <- done{i, o}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	pending := make([]*Outcome, window)
	have := make([]bool, window)
	next := 0
	var err error
	for d := range results {
		slot := d.i % window
		o := d.o
		pending[slot], have[slot] = &o, true
		for err == nil && next < n && have[next%window] {
			s := next % window
			if errors.Is(pending[s].Err, sim.ErrStopped) {
				err = context.Cause(ctx)
				if err == nil {
					err = pending[s].Err
				}
				break
			}
			if e := emit(next, *pending[s]); e != nil {
				err = e
				cancel()
			}
			pending[s], have[s] = nil, false
			next++
			<-tokens
		}
	}
	if err == nil && next < n {
		err = ctx.Err()
	}
	return err
}
