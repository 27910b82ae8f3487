package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// loadConfig reads and validates a sweeps file within the memory limits;
// every mistake is a usage error (exit 2).
func loadConfig(path string, lim experiments.Limits) (*experiments.Config, string, error) {
	src, err := readConfig(path)
	if err != nil {
		return nil, "", err
	}
	cfg, err := experiments.LoadWith(path, src, lim)
	if err != nil {
		return nil, "", usageError{err: err}
	}
	h := sha256.Sum256(src)
	return cfg, hex.EncodeToString(h[:]), nil
}

func selectSweeps(cfg *experiments.Config, names []string, path string) ([]*experiments.Sweep, error) {
	if len(names) == 0 {
		return cfg.Main(), nil
	}
	var out []*experiments.Sweep
	for _, n := range names {
		if err := experiments.CheckName(n); err != nil {
			return nil, usagef("--sweep %v", err)
		}
		s := cfg.Sweep(n)
		if s == nil {
			return nil, usagef("%s: no sweep %q%s: want one of %s", path, n, didYouMean(n, cfg.Names()), strings.Join(cfg.Names(), ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// created is the files' creation time: SOURCE_DATE_EPOCH when set, so that
// a rerun of the same config gives byte-identical files.
func created() string {
	if v := getenv("SOURCE_DATE_EPOCH"); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil {
			return time.Unix(s, 0).UTC().Format(time.RFC3339)
		}
	}
	return time.Now().UTC().Format(time.RFC3339)
}

type runOptions struct {
	out      string
	workers  int
	shard    shardSpec
	partRows int
	quiet    bool
	meta     dataset.Meta
	addSeeds int // rolling seeds: this many more per cell, past the config's (experiments.Sweep.RollingSeeds)
	lim      experiments.Limits
}

// partBudget is what a part of a sweep's runs may hold before it is
// committed: at most rows runs, and their rows at most lim.PartBytes()
// (grid.Cell.PartRows; no bound without a limit); reserve is the
// runs rows a new part makes room for.
type partBudget struct {
	rows, reserve int
	bytes         int64
}

func newPartBudget(rows int, lim experiments.Limits) partBudget {
	b := partBudget{rows: rows, reserve: rows}
	if lim.On() {
		b.bytes = lim.PartBytes()
		b.reserve = int(min(int64(rows), max(b.bytes/grid.RunRowBytes, 1)))
	}
	return b
}

type sweepStats struct {
	total, inShard, skipped, done, failed int
	added                                 int           // rolling seeds' runs to do
	parts                                 []string      // paths of the runs parts committed
	own                                   []string      // their names
	elapsed, writing                      time.Duration // writing: building Parquet parts, and waiting for their commits
	beside                                time.Duration // encoding and committing parts, beside the simulation
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "[--config sweeps.toml] [--sweep NAME…] [--out DIR] [--workers N] [--shard i/n]", stderr)
	config := fs.String("config", "sweeps.toml", "the sweeps file")
	var names listFlag
	fs.Var(&names, "sweep", "sweep to run; repeat or comma-separate (default: every sweep not marked on_demand)")
	out := fs.String("out", "out", "output folder: the dataset (runs/, timelines/), plots/ and report.md")
	workers := fs.Int("workers", 0, fmt.Sprintf("simulations in parallel (0 = one per CPU; at most %d)", maxWorkers))
	memory := fs.String("memory", "", "memory the simulations may take in all, e.g. 8GiB (default HERDSWEEP_MEMORY, else 4GiB); a run may take its worker's share")
	shardFlag := fs.String("shard", "", "run only shard i of n (0-based, e.g. 0/4); default from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID")
	shards := fs.Int("shards", 0, "number of shards, with JOB_COMPLETION_INDEX (or set HERDSWEEP_SHARDS)")
	partRows := fs.Int("part-rows", 5000, fmt.Sprintf("runs per part file (at most %d): a killed run loses at most the part in hand", maxPartRows))
	maxRuns := fs.Int("max-runs", 250_000, "refuse to start more runs than this without --yes")
	yes := fs.Bool("yes", false, "run even past --max-runs")
	noReport := fs.Bool("no-report", false, "write the dataset only, no plots or report")
	quiet := fs.Bool("quiet", false, "no progress output")
	addSeeds := fs.Int("add-seeds", 0, "rolling seeds: also run N more seeds per cell past the config's, the first block of N the dataset does not hold whole, so an unchanged nightly config adds precision (at most "+strconv.Itoa(maxAddSeeds)+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddSeeds("run", *addSeeds); err != nil {
		return err
	}
	if err := checkWorkers("run", *workers); err != nil {
		return err
	}
	if *partRows < 1 || *partRows > maxPartRows {
		return usagef("run: --part-rows %d: want 1 to %d", *partRows, maxPartRows)
	}
	lim, err := memoryLimits("run", *memory, workersOr(*workers))
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	shard, shardFrom, err := resolveShard(*shardFlag, *shards, getenv)
	if err != nil {
		return usageError{err: err}
	}
	defer goMemoryLimit(lim)()
	cfg, hash, err := loadConfig(*config, lim)
	if err != nil {
		return err
	}
	sweeps, err := selectSweeps(cfg, names, *config)
	if err != nil {
		return err
	}
	if err := checkRolling("run", sweeps, *addSeeds, lim); err != nil {
		return err
	}
	total := 0
	for _, s := range sweeps {
		total += s.Len() + len(s.Cells)**addSeeds
	}
	if total > *maxRuns && !*yes {
		return usagef("run: %d runs is more than --max-runs %d; `sweep plan` estimates the time; say --yes to run them", total, *maxRuns)
	}
	if shardFrom != "" && shard.n > 1 {
		fmt.Fprintf(stderr, "sweep: shard %s (from %s)\n", shard, shardFrom)
	}
	opts := runOptions{out: *out, workers: *workers, shard: shard, partRows: *partRows, quiet: *quiet, addSeeds: *addSeeds, lim: lim}
	opts.meta = dataset.Meta{Tool: toolVersion(), Sim: sim.Version, ConfigHash: hash, Created: created()}
	written := map[string][]string{} // sweep → names of the parts written
	for _, s := range sweeps {
		cmd := fmt.Sprintf("sweep run --config %s --sweep %s", *config, s.Name)
		if shard.n > 1 {
			cmd += " --shard " + shard.String()
		}
		if *addSeeds > 0 {
			cmd += fmt.Sprintf(" --add-seeds %d", *addSeeds)
		}
		opts.meta.Command, opts.meta.Sweep = cmd, s.Name
		st, err := runSweep(ctx, s, opts, stderr)
		if st != nil {
			share := 0.0
			if st.elapsed > 0 {
				share = 100 * st.writing.Seconds() / st.elapsed.Seconds()
			}
			fmt.Fprintf(stdout, "%s: %d runs done, %d skipped (already in the dataset), %d failed, in %v (Parquet %v, %.1f%%, and %v beside the simulation) → %s (%s)\n",
				s.Name, st.done, st.skipped, st.failed, st.elapsed.Round(time.Millisecond), st.writing.Round(time.Millisecond), share, st.beside.Round(time.Millisecond),
				(&store{root: *out, sweep: s.Name}).dir(dataset.RunsDir), num.Plural(len(st.parts), "new part"))
			if *addSeeds > 0 {
				fmt.Fprintf(stdout, "%s: %d of the runs to do were rolling seeds (--add-seeds %d: the next seeds past the config's, per cell)\n", s.Name, st.added, *addSeeds)
			}
			written[s.Name] = st.own
		}
		if err != nil {
			return err
		}
	}
	if err := checkWritten(*out, written, stderr); err != nil {
		return err
	}
	if *noReport {
		return nil
	}
	return writeReport(ctx, *out, *out, stdout, stderr)
}

// maxAddSeeds bounds --add-seeds on run and plan.
const maxAddSeeds = 10000

func checkAddSeeds(cmd string, n int) error {
	if n < 0 || n > maxAddSeeds {
		return usagef("%s: --add-seeds %d: want 0 to %d seeds per cell", cmd, n, maxAddSeeds)
	}
	return nil
}

// rollingRuns lists the runs of rolling seeds that `--add-seeds n` adds to
// s tonight, those of shard (every one when shard.n ≤ 1): for each cell,
// experiments.Sweep.RollingSeeds given the run keys the dataset stores
// (with the config's runs about to be run). run runs them; plan counts
// and times them.
func rollingRuns(s *experiments.Sweep, n int, stored func(runKey string) bool, shard shardSpec) []grid.Run {
	if n <= 0 {
		return nil
	}
	var extra []grid.Run
	for _, c := range s.Cells {
		for _, seed := range s.RollingSeeds(c, n, stored) {
			if r := (grid.Run{Cell: c, Seed: seed}); shard.n <= 1 || r.Shard(shard.n) == shard.i {
				extra = append(extra, r)
			}
		}
	}
	return extra
}

// checkWritten runs the same check as `sweep check` on the parts this run
// wrote (by sweep), while other writers may be at work beside it.
func checkWritten(out string, written map[string][]string, stderr io.Writer) error {
	n := 0
	for _, parts := range written {
		n += len(parts)
	}
	if n == 0 {
		return nil
	}
	rep, err := checkDataset(out, written)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		rep.writeText(stderr)
		return fmt.Errorf("%s: the %s this run wrote %s %s (see above)", out, num.Plural(n, "part"), num.Agree(n, "has", "have"), num.Plural(len(rep.Problems), "problem"))
	}
	return nil
}

// checkOutput refuses object storage: its objects cannot be renamed
// atomically, which the commit protocol needs.
func checkOutput(out string) error {
	if err := checkOutDir("run", out); err != nil {
		return err
	}
	if scheme, _, ok := strings.Cut(out, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		return usagef("run: --out %s: object storage (%s://) is not supported: the commit protocol needs atomic renames; write to a shared file system (a Kubernetes PVC, NFS) and copy the finished dataset", out, scheme)
	}
	return nil
}

// runSweep runs what the dataset lacks of one sweep (this shard's part of
// it) and commits it in parts. Runs already stored in another sweep's
// folder are not run again (when that copy has the timeline this sweep
// asks for).
func runSweep(ctx context.Context, s *experiments.Sweep, o runOptions, stderr io.Writer) (*sweepStats, error) {
	start := time.Now()
	st, err := openStore(o.out, s.Name, o.shard, stderr)
	if err != nil {
		return nil, err
	}
	defer st.close()
	have, err := st.done(stderr)
	if err != nil {
		return nil, err
	}
	wantsTimelines := false
	for i := range s.Len() {
		if s.WantsTimeline(i) {
			wantsTimelines = true
			break
		}
	}
	other, otherTL, err := elsewhere(o.out, s.Name, wantsTimelines, stderr)
	if err != nil {
		return nil, err
	}
	stats := &sweepStats{total: s.Len()}
	var todo []int32
	var cell grid.Cell // the cell of canonical: a sweep's runs are its cells' seeds in a row
	canonical := ""
	for i := range s.Len() {
		r := s.Run(i)
		if o.shard.n > 1 && r.Shard(o.shard.n) != o.shard.i {
			continue
		}
		stats.inShard++
		if canonical == "" || r.Cell != cell {
			cell, canonical = r.Cell, r.Cell.Canonical()
		}
		k := grid.RunKey(canonical, r.Seed)
		if have[k] || other[k] && (!s.WantsTimeline(i) || otherTL[k]) {
			stats.skipped++
			continue
		}
		have[k] = true // a run listed twice in a sweep is run once
		todo = append(todo, int32(i))
	}
	// rolling seeds, after the config's runs
	stored := func(k string) bool { return have[k] || other[k] }
	extra := rollingRuns(s, o.addSeeds, stored, o.shard)
	// What the sweep is meant to hold, every shard's runs (intent.go).
	if _, err := st.recordIntent(s, rollingRuns(s, o.addSeeds, stored, shardSpec{}), o.meta, o.shard); err != nil {
		return nil, err
	}
	stats.added = len(extra)
	have, other, otherTL = nil, nil, nil

	prog := newProgress(stderr, s.Name, len(todo)+len(extra), o.quiet)
	pb := newPartBudget(o.partRows, o.lim)
	cur := newPart(o.meta, pb.reserve)
	var curBytes int64  // the rows of the part in hand, as grid.Cell.RowBytes counts them
	var rowsOf struct { // the last cell's rows but its timeline's
		cell  grid.Cell
		bytes int64
		ok    bool
	}
	// A full part is encoded and committed by a goroutine of its own, in
	// order, while the next part fills: the simulation goes on meanwhile
	// (its window of results is small), and the parts' bytes and names are
	// what a synchronous commit gives. At most one part waits for it.
	var (
		mu        sync.Mutex
		commitErr error // the first failure to commit: reported, never retried
	)
	full := make(chan *part, 1)
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		for p := range full {
			mu.Lock()
			failed := commitErr != nil
			mu.Unlock()
			if failed {
				continue
			}
			t0 := time.Now()
			name, err := st.commit(p)
			mu.Lock()
			stats.beside += time.Since(t0)
			if err != nil {
				commitErr = err
			} else {
				stats.parts = append(stats.parts, name)
				stats.own = append(stats.own, filepath.Base(name))
			}
			mu.Unlock()
		}
	}()
	failure := func() error {
		mu.Lock()
		defer mu.Unlock()
		return commitErr
	}
	// commit hands the part in hand to the committer; the time it waits
	// for the committer to take it is time Parquet costs the sweep.
	commit := func() error {
		if err := failure(); err != nil || cur.runs.Len() == 0 {
			return err
		}
		t0 := time.Now()
		full <- cur
		stats.writing += time.Since(t0)
		cur, curBytes = newPart(o.meta, pb.reserve), 0
		return nil
	}
	// drain commits the part in hand and waits for every commit.
	drain := func() error {
		err := commit()
		t0 := time.Now()
		close(full)
		<-committed
		stats.writing += time.Since(t0)
		if err != nil {
			return err
		}
		return failure()
	}
	job := func(j int) runner.Job {
		if j >= len(todo) {
			return runner.Job{Run: extra[j-len(todo)]}
		}
		i := int(todo[j])
		return runner.Job{Run: s.Run(i), Timeline: s.WantsTimeline(i)}
	}
	wait := func(j int) int64 { // what job j's outcome holds until it is written
		if j >= len(todo) {
			return grid.OutcomeBytes
		}
		i := int(todo[j])
		return s.Cells[i/len(s.Seeds)].WaitBytes(s.WantsTimeline(i))
	}
	var failures []string
	emit := func(_ int, out runner.Outcome) error {
		prog.add(1)
		if out.Err != nil {
			stats.failed++
			if len(failures) < 5 {
				failures = append(failures, fmt.Sprintf("%s seed %d: %v", out.Job.Run.Cell.Label(), out.Job.Run.Seed, out.Err))
			}
			return nil
		}
		rows := int64(0)
		if pb.bytes > 0 {
			// A part is committed before the rows of the next run would
			// take it past its share of the memory limit.
			if c := out.Job.Run.Cell; !rowsOf.ok || c != rowsOf.cell { // a cell's seeds come in a row
				rowsOf.cell, rowsOf.bytes, rowsOf.ok = c, c.RowBytes(false), true
			}
			if rows = rowsOf.bytes + grid.TimelineRows(out.Timeline); cur.runs.Len() > 0 && curBytes+rows > pb.bytes {
				if err := commit(); err != nil {
					return err
				}
			}
		}
		curBytes += rows
		t0 := time.Now()
		cur.runs.Append(out.Job.Run, out.Result)
		if out.Timeline != nil {
			cur.side[dataset.TimelinesDir].(*parquetio.TimelineWriter).Append(out.Job.Run, out.Timeline)
		}
		if out.Result.NGroups > 0 {
			cur.side[dataset.GroupsDir].(*parquetio.GroupsWriter).Append(out.Job.Run, out.Result)
		}
		stats.writing += time.Since(t0)
		stats.done++
		if cur.runs.Len() >= o.partRows {
			return commit()
		}
		return nil
	}
	runErr := runner.ExecuteWithin(ctx, o.workers, len(todo)+len(extra), o.lim.WindowBytes(), wait, job, emit)
	prog.finish()
	if err := drain(); err != nil { // the part in hand, also when interrupted
		return stats, err
	}
	stats.elapsed = time.Since(start)
	for _, f := range failures {
		fmt.Fprintln(stderr, "sweep: failed:", f)
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return stats, fmt.Errorf("interrupted: %d of %d runs of %s written; run the same command again to finish the rest: %w",
				stats.done, len(todo)+len(extra), s.Name, runErr)
		}
		return stats, runErr
	}
	if stats.failed > 0 {
		return stats, fmt.Errorf("%s: %d runs failed", s.Name, stats.failed)
	}
	return stats, nil
}
