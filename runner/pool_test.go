package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// sweep is a grid of cells, each run with every seed, cell-major (as
// experiments.Sweep lists its runs).
type sweep struct {
	cells         []grid.Cell
	seeds         []uint32
	timelineSeeds int
}

func (s *sweep) Len() int { return len(s.cells) * len(s.seeds) }

func (s *sweep) Run(i int) grid.Run {
	return grid.Run{Cell: s.cells[i/len(s.seeds)], Seed: s.seeds[i%len(s.seeds)]}
}

func (s *sweep) WantsTimeline(i int) bool { return i%len(s.seeds) < s.timelineSeeds }

func smallSweep() *sweep {
	sc := sim.Article()
	sc.Clients = 200
	var cells []grid.Cell
	for _, k := range []sim.Kind{sim.FullJitter, sim.Decorrelated, sim.Fixed} {
		cells = append(cells, grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(k)})
	}
	return &sweep{cells: cells, seeds: []uint32{1, 2, 3, 4, 5, 6, 7}, timelineSeeds: 1}
}

func collect(t *testing.T, workers int, s *sweep) []Outcome {
	t.Helper()
	var out []Outcome
	err := Execute(context.Background(), workers, s.Len(), func(i int) Job {
		return Job{Run: s.Run(i), Timeline: s.WantsTimeline(i)}
	}, func(i int, o *Outcome) error {
		if i != len(out) {
			t.Fatalf("emitted %d after %d outcomes", i, len(out))
		}
		out = append(out, *o)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The same jobs give the same outcomes in the same order on any number of
// workers.
func TestExecuteIsDeterministicAcrossWorkers(t *testing.T) {
	t.Parallel()
	s := smallSweep()
	one := collect(t, 1, s)
	for _, w := range []int{2, 5} {
		many := collect(t, w, s)
		for i := range one {
			if one[i].Result != many[i].Result || one[i].Job.Run != many[i].Job.Run {
				t.Fatalf("%d workers: outcome %d differs", w, i)
			}
			if (one[i].Timeline == nil) != (i%len(s.seeds) != 0) {
				t.Fatalf("outcome %d: timeline %v, want one for each cell's first seed only", i, one[i].Timeline != nil)
			}
		}
	}
	want, _ := sim.Run(s.cells[1].Scenario, s.cells[1].Policy, s.seeds[3])
	if got := one[len(s.seeds)+3].Result; got != want {
		t.Errorf("outcome of cell 1 seed 4 = %+v, want %+v", got, want)
	}
}

// When emit fails, Execute stops and reports the error; it has emitted an
// unbroken prefix.
func TestExecuteStopsOnEmitError(t *testing.T) {
	t.Parallel()
	s := smallSweep()
	boom := errors.New("disk full")
	emitted := 0
	err := Execute(context.Background(), 2, s.Len(), func(i int) Job { return Job{Run: s.Run(i)} },
		func(i int, o *Outcome) error {
			if i != emitted {
				t.Fatalf("emitted %d after %d", i, emitted)
			}
			emitted++
			if i == 4 {
				return boom
			}
			return nil
		})
	if !errors.Is(err, boom) || emitted != 5 {
		t.Errorf("Execute = %v after %d emits, want %v after 5", err, emitted, boom)
	}
}

func TestExecuteHonoursCancellation(t *testing.T) {
	t.Parallel()
	s := smallSweep()
	s.seeds = make([]uint32, 400) // more jobs than the window in flight
	for i := range s.seeds {
		s.seeds[i] = uint32(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	emitted := 0
	err := Execute(ctx, 2, s.Len(), func(i int) Job { return Job{Run: s.Run(i)} },
		func(i int, o *Outcome) error {
			emitted++
			if i == 2 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) || emitted >= s.Len() {
		t.Errorf("Execute = %v after %d of %d emits, want context.Canceled before the end", err, emitted, s.Len())
	}
}

// When the context is done, a run in progress stops (it would take minutes
// here) and is never emitted; Execute returns the context's error.
func TestExecuteStopsRunsInProgress(t *testing.T) {
	t.Parallel()
	slow := sim.Scenario{Clients: 2000, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Second, Capacity: 10,
		Spread: 2 * time.Second, Horizon: 100_000 * time.Second, RejectCost: 0.5} // 2,000 arrivals a tick for 10⁶ ticks: minutes
	jobs := []Job{
		{Run: grid.Run{Cell: grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Fixed)}, Seed: 1}},
		{Run: grid.Run{Cell: grid.Cell{Scenario: slow, Policy: sim.Policy{Kind: sim.Fixed, Base: 100 * time.Millisecond}}, Seed: 1}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var emitted []int
	err := Execute(ctx, 1, len(jobs), func(i int) Job { return jobs[i] }, func(i int, o *Outcome) error {
		emitted = append(emitted, i)
		cancel() // after the first outcome: the slow run is in progress or next
		return nil
	})
	if !errors.Is(err, context.Canceled) || len(emitted) != 1 {
		t.Errorf("Execute: %v, emitted %v; want context.Canceled and only the first outcome", err, emitted)
	}
}

// ExecuteWithin keeps the weight of the jobs in flight (handed out, not
// yet emitted) within its bound, or one job alone; the outcomes are
// Execute's, in order.
func TestExecuteWithinBoundsTheWeightInFlight(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	const n = 400
	weight := make([]int64, n)
	for i := range weight {
		weight[i] = 1 + r.Int64N(100)
		if i%50 == 0 {
			weight[i] = 1000 // heavier than the bound: alone
		}
	}
	const held = 250
	var flight, most atomic.Int64
	var mu sync.Mutex
	alone := true
	started := map[int]bool{}
	var seeds []uint32
	err := ExecuteWithin(context.Background(), 4, n, held, func(i int) int64 { return weight[i] }, func(i int) Job {
		f := flight.Add(weight[i])
		mu.Lock()
		started[i] = true
		if weight[i] > held && f != weight[i] {
			alone = false
		}
		mu.Unlock()
		for m := most.Load(); f > m && !most.CompareAndSwap(m, f); m = most.Load() {
		}
		return Job{Run: grid.Run{Cell: grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Fixed)}, Seed: uint32(i)}}
	}, func(i int, o *Outcome) error {
		seeds = append(seeds, o.Job.Run.Seed)
		flight.Add(-weight[i])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > held && m > 1000 {
		t.Errorf("%d in flight, want at most %d (or one heavier job alone)", m, held)
	}
	if !alone {
		t.Errorf("a job heavier than the bound ran beside others")
	}
	for i, s := range seeds {
		if s != uint32(i) {
			t.Fatalf("outcome %d is job %d: not in order", i, s)
		}
	}
	if len(seeds) != n {
		t.Errorf("%d outcomes, want %d", len(seeds), n)
	}
}

// A cancelled context starts no run: the workers refuse the jobs handed
// out after it (Execute's stop is then immediate, not a run's length).
func TestExecuteStartsNoRunAfterAStop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.FullJitter)}
	big.Scenario.Clients = 1_000_000
	emitted := 0
	err := Execute(ctx, 2, 10, func(i int) Job { return Job{Run: grid.Run{Cell: big, Seed: uint32(i)}} },
		func(int, *Outcome) error { emitted++; return nil })
	if !errors.Is(err, context.Canceled) || emitted != 0 {
		t.Errorf("Execute after a cancel: %v, %d emitted; want context.Canceled and none", err, emitted)
	}
}
