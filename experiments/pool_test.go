package experiments

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

func smallSweep() *Sweep {
	sc := sim.Article()
	sc.Clients = 200
	var cells []grid.Cell
	for _, k := range []sim.Kind{sim.FullJitter, sim.Decorrelated, sim.Fixed} {
		cells = append(cells, grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(k)})
	}
	return &Sweep{Cells: cells, Seeds: []uint32{1, 2, 3, 4, 5, 6, 7}, TimelineSeeds: 1}
}

func collect(t *testing.T, workers int, s *Sweep) []Outcome {
	t.Helper()
	var out []Outcome
	err := Execute(context.Background(), workers, s.Len(), func(i int) Job {
		return Job{Run: s.Run(i), Timeline: s.WantsTimeline(i)}
	}, func(i int, o Outcome) error {
		if i != len(out) {
			t.Fatalf("emitted %d after %d outcomes", i, len(out))
		}
		out = append(out, o)
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
			if (one[i].Timeline == nil) != (i%len(s.Seeds) != 0) {
				t.Fatalf("outcome %d: timeline %v, want one for each cell's first seed only", i, one[i].Timeline != nil)
			}
		}
	}
	want, _ := sim.Run(s.Cells[1].Scenario, s.Cells[1].Policy, s.Seeds[3])
	if got := one[len(s.Seeds)+3].Result; got != want {
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
		func(i int, o Outcome) error {
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
	s.Seeds = make([]uint32, 400) // more jobs than the window in flight
	for i := range s.Seeds {
		s.Seeds[i] = uint32(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	emitted := 0
	err := Execute(ctx, 2, s.Len(), func(i int) Job { return Job{Run: s.Run(i)} },
		func(i int, o Outcome) error {
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
	err := Execute(ctx, 1, len(jobs), func(i int) Job { return jobs[i] }, func(i int, o Outcome) error {
		emitted = append(emitted, i)
		cancel() // after the first outcome: the slow run is in progress or next
		return nil
	})
	if !errors.Is(err, context.Canceled) || len(emitted) != 1 {
		t.Errorf("Execute: %v, emitted %v; want context.Canceled and only the first outcome", err, emitted)
	}
}
