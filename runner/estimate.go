package runner

import (
	"context"
	"math"
	"time"

	"github.com/herdsweep/herdsweep/grid"
)

// What the estimate adds to the simulation's own time, measured on 2 cores
// (docs/performance.md, "Plan against run"): the Parquet of a run (building its row, then
// encoding and committing its part on the committer goroutine, beside the
// simulation: CPU the cores share with the workers), the end-of-run check of
// the parts written (after the sweep, alone: their seals against what the
// writer kept, 0.2 µs a run in scripts/bench.sh's million-run sweep), and
// the workers' parallel efficiency (the default sweep ran at 95 % of twice
// the one-core calibration).
const (
	ParquetCPUPerRun   = 6 * time.Microsecond
	CheckPerRun        = 250 * time.Nanosecond
	ParallelEfficiency = 0.95
)

// Estimate is the wall time of n runs of per CPU time each on w workers
// with free cores (est), and at the load the calibration met (now: wall,
// the sample's wall time per run times the workers, in place of per, and
// the rest slowed down as much).
func Estimate(per, wall time.Duration, n, w int) (est, now time.Duration) {
	if n == 0 {
		return 0, 0
	}
	shared := (float64(per) + float64(ParquetCPUPerRun)) * float64(n) / (float64(w) * ParallelEfficiency)
	after := float64(CheckPerRun) * float64(n)
	est = time.Duration(shared + after)
	slow := 1.0
	if per > 0 {
		slow = max(1, float64(wall)/float64(per))
	}
	now = time.Duration(float64(wall)*float64(n)/float64(w) + slow*(float64(ParquetCPUPerRun)*float64(n)/float64(w)+after))
	return est, now
}

// sampleIndex is the j-th of n indices in [0, size) spread over the whole
// range without following its period: a grid's innermost axes repeat every
// few cells, and an evenly spaced sample whose stride is a multiple of
// their period sees one value of them only. The golden-ratio sequence
// frac(j·φ) fills [0, 1) evenly and never aligns with a period.
func sampleIndex(j, n, size int) int {
	if n >= size {
		return j
	}
	const phi = 0.6180339887498949
	_, f := math.Modf(0.5 + float64(j)*phi)
	return min(int(f*float64(size)), size-1)
}

// Calibrate simulates an evenly spread sample of the runs to do, at(0) …
// at(total-1), on the workers the sweep will have and returns the mean time per run:
// per, the CPU time the process used (user + system) where the system says
// it, so that other jobs on a shared machine do not inflate it (else the
// wall time), and wall, the wall time times the workers, which they do.
// A sample of tiny runs that takes less than minSampleCPU is taken again,
// four times larger (up to 100,000 runs): the system counts CPU time in
// ticks of a few milliseconds, and 1,500 runs of million.toml's take 15.
//
// budget bounds the calibration's wall time: when it is done, the runs in
// progress are stopped (within sim.StopEvery units of work) and the sample
// is what finished; cut is then set, and per is a lower bound: the CPU
// time spent over the runs finished and those that may have been stopped
// (at most one a worker), each of which would have taken more.
func Calibrate(ctx, budget context.Context, at func(int) grid.Run, total, n, workers int) (per, wall time.Duration, cut bool, err error) {
	const minSampleCPU = 250 * time.Millisecond
	for {
		var cpu time.Duration
		per, wall, cpu, cut, err = calibrateOnce(ctx, budget, at, total, n, workers)
		if err != nil || cut || cpu >= minSampleCPU || n >= total || n >= 100_000 {
			return per, wall, cut, err
		}
		n = min(4*n, 100_000)
	}
}

// calibrateOnce times one sample of n runs; cpu is its CPU time in all.
func calibrateOnce(ctx, budget context.Context, at func(int) grid.Run, total, n, workers int) (per, wall, cpu time.Duration, cut bool, err error) {
	n = max(1, min(n, total))
	// Runs in blocks of consecutive ones, as a sweep hands them out (a
	// cell's seeds in a row): the simulator's buffers sized for a cell
	// are reused by its next seed, and a sample of lone runs would time
	// their allocation every run.
	const block = 30
	var sample []int
	blocks := max(1, n/block)
	for j := range blocks {
		from := sampleIndex(j, blocks, total)
		for k := from; k < min(from+block, total) && len(sample) < n; k++ {
			sample = append(sample, k)
		}
	}
	n = len(sample)
	bctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(budget, stop)()
	start := time.Now()
	cpu0, haveCPU := cpuTime()
	finished := 0
	err = Execute(bctx, workers, n, func(j int) Job {
		return Job{Run: at(sample[j])}
	}, func(int, *Outcome) error { finished++; return nil })
	elapsed := time.Since(start)
	if err != nil && ctx.Err() == nil && budget.Err() != nil { // the budget is spent: what finished is the sample
		err, cut = nil, finished < n
	}
	runs := n
	if cut {
		runs = max(1, finished+min(workers, n-finished))
	}
	wall = elapsed * time.Duration(workers) / time.Duration(runs)
	if cpu1, ok := cpuTime(); ok && haveCPU {
		return (cpu1 - cpu0) / time.Duration(runs), wall, cpu1 - cpu0, cut, err
	}
	return wall, wall, elapsed * time.Duration(workers), cut, err
}
