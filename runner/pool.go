package runner

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Job is one run to simulate, whether to record its timeline, and
// whether it may stop once provably stuck (sim.Sim.StopStuck: for a
// caller that needs only whether the run comes back).
type Job struct {
	Run grid.Run
	// Cell numbers the run's cell (grid.LastCell): jobs of one Cell > 0
	// have one cell; 0 = not numbered.
	Cell      int
	Timeline  bool
	StopStuck bool
	MaxBytes  int64 // sim.Sim.MaxBytes: the memory a queued chain run may take (0: sim's default)
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
// whatever order the workers finish in (the outcome is the pool's: valid
// during the call only; a run's result is some 900 bytes, which a call by
// value copied each time). At most a window of jobs is in
// flight ahead of the last emitted one, so memory does not grow with n.
//
// job(i) must be safe to call from several goroutines. When ctx is done or
// emit returns an error, Execute stops handing out jobs, starts no other
// run, stops the runs in progress (sim.Sim.Stop: a long run does not hold
// it up), emits the outcomes that complete an unbroken prefix, and returns
// the error. A stopped run is never emitted.
func Execute(ctx context.Context, workers, n int, job func(i int) Job, emit func(i int, o *Outcome) error) error {
	return ExecuteWithin(ctx, workers, n, 0, nil, job, emit)
}

// ExecuteWithin is Execute with the jobs in flight (handed out and not yet
// emitted) bounded by weight as well as by count: job i is handed out only
// while those in flight weigh at most held bytes with it, or none is in
// flight (a job heavier than held runs alone). weight(i) is what job i's
// outcome holds until it is emitted (Cell.WaitBytes); held ≤ 0: no bound.
func ExecuteWithin(ctx context.Context, workers, n int, held int64, weight func(i int) int64, job func(i int) Job, emit func(i int, o *Outcome) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := workers * 64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pool{ctx: ctx, cancel: cancel, n: n, window: window, job: job, emit: emit, w: newWeights(held, weight),
		indices: make(chan int), results: make(chan int, window), tokens: make(chan struct{}, window), slots: make([]Outcome, window)}
	defer context.AfterFunc(ctx, func() { p.stop.Store(true) })()
	defer context.AfterFunc(ctx, p.w.wake)()

	go p.handOut()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work()
		}()
	}
	go func() { wg.Wait(); close(p.results) }()
	return p.collect()
}

// pool is one ExecuteWithin: indices go out to the workers at most a
// window ahead of the last emitted, outcomes come back in any order and
// are emitted in index order.
type pool struct {
	ctx     context.Context
	cancel  context.CancelFunc
	stop    atomic.Bool // set when ctx is done: stops the runs in progress
	n       int
	window  int
	job     func(i int) Job
	emit    func(i int, o *Outcome) error
	w       *weights
	indices chan int
	results chan int      // the indices whose outcome is in their slot
	tokens  chan struct{} // one per index handed out and not yet emitted
	// slots hold the outcomes of the indices in flight, index i's in
	// slots[i % window]: the worker that runs i fills it, and the
	// collector empties it before it takes i's token back, so no two
	// indices in flight share one. (An outcome is 2,208 bytes, a result
	// 856 of them: sent by value, it was copied twice more per run.)
	slots []Outcome
}

// handOut hands out indices 0 … n-1, at most a window ahead of emit and
// within the weight bound, until ctx is done.
func (p *pool) handOut() {
	defer close(p.indices)
	for i := range p.n {
		select {
		case p.tokens <- struct{}{}:
		case <-p.ctx.Done():
			return
		}
		if !p.w.take(p.ctx, i) {
			return
		}
		select {
		case p.indices <- i:
		case <-p.ctx.Done():
			return
		}
	}
}

// A worker is what one worker writes run after run, padded so that no
// other goroutine's data shares its cache lines: two workers' random
// streams, four bytes each, were allocated side by side in one block, and
// each draw made the other core fetch the line again (at two workers the
// draws took ten times the CPU they took at one: pprof, the default
// sweep's shard 0/8).
type worker struct {
	_   [64]byte
	s   sim.Sim // at a cache line's start, as a Sim of its own is
	rng sim.Mulberry32
	_   [64]byte
}

// work runs the jobs of the indices it receives on one simulator, and
// starts no run once ctx is done.
func (p *pool) work() {
	w := &worker{s: sim.Sim{Stop: &p.stop}}
	s, rng := &w.s, &w.rng
	for i := range p.indices {
		o := &p.slots[i%p.window]
		*o = Outcome{Job: p.job(i)}
		j := &o.Job
		if p.ctx.Err() != nil { // no run starts after a stop
			o.Err = sim.ErrStopped
			p.results <- i
			continue
		}
		var tl *sim.Timeline
		if j.Timeline {
			tl = new(sim.Timeline)
		}
		rng.Seed(j.Run.Seed)
		s.StopStuck, s.MaxBytes = j.StopStuck, j.MaxBytes
		o.Result, o.Err = j.Run.Cell.Simulate(s, rng, tl)
		o.Timeline = tl
		p.results <- i
	}
}

// collect emits the outcomes in index order as they complete an unbroken
// prefix, and returns the first error: emit's, or why a run stopped.
func (p *pool) collect() error {
	pending := p.slots
	have := make([]bool, p.window)
	next := 0
	var err error
	for i := range p.results {
		have[i%p.window] = true
		for err == nil && next < p.n && have[next%p.window] {
			s := next % p.window
			if errors.Is(pending[s].Err, sim.ErrStopped) {
				err = context.Cause(p.ctx)
				if err == nil {
					err = pending[s].Err
				}
				break
			}
			if e := p.emit(next, &pending[s]); e != nil {
				err = e
				p.cancel()
			}
			pending[s], have[s] = Outcome{}, false
			p.w.give(next)
			next++
			<-p.tokens
		}
	}
	if err == nil && next < p.n {
		err = p.ctx.Err()
	}
	return err
}

// weights bounds the weight of the jobs in flight (ExecuteWithin).
type weights struct {
	held   int64
	weight func(int) int64
	mu     sync.Mutex
	cond   *sync.Cond
	flight int64 // the weight in flight
	count  int   // jobs in flight
}

func newWeights(held int64, weight func(int) int64) *weights {
	w := &weights{held: held, weight: weight}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// take waits until job i may be handed out and counts it in flight; false
// when ctx is done first.
func (w *weights) take(ctx context.Context, i int) bool {
	if w.held <= 0 || w.weight == nil {
		return ctx.Err() == nil
	}
	x := w.weight(i)
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.count > 0 && w.flight+x > w.held && ctx.Err() == nil {
		w.cond.Wait()
	}
	if ctx.Err() != nil {
		return false
	}
	w.flight += x
	w.count++
	return true
}

// give counts job i out of flight: emitted.
func (w *weights) give(i int) {
	if w.held <= 0 || w.weight == nil {
		return
	}
	x := w.weight(i)
	w.mu.Lock()
	w.flight -= x
	w.count--
	w.mu.Unlock()
	w.cond.Broadcast()
}

// wake wakes a take waiting for a context that is now done. It
// broadcasts under the lock, so that a take that has checked the context
// and is about to wait is waiting when it comes.
func (w *weights) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cond.Broadcast()
}
