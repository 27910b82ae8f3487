package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/dataset/store/objstore"
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
	added                                 int             // rolling seeds' runs to do
	parts                                 []string        // paths of the runs parts committed
	written                               []store.Written // what they hold (store.CheckWritten)
	start                                 time.Time
	elapsed, writing                      time.Duration // writing: building Parquet parts, and waiting for their commits
	beside                                time.Duration // encoding and committing parts, beside the simulation
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "[--config sweeps.toml] [--sweep NAME…] [--out DIR] [--workers N] [--shard i/n]", stderr)
	config := fs.String("config", "sweeps.toml", "the sweeps file")
	var names listFlag
	fs.Var(&names, "sweep", "sweep to run; repeat or comma-separate (default: every sweep not marked on_demand)")
	out := fs.String("out", "out", "output folder (or file://PATH), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX: the dataset (runs/, timelines/), plots/ and report.md")
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
	if *out, err = checkOutput(*out); err != nil {
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
	written, err := runSweeps(ctx, sweeps, *config, opts, stdout, stderr)
	if err != nil {
		return err
	}
	if err := checkWritten(*out, written, stderr); err != nil {
		return err
	}
	if *noReport {
		return nil
	}
	return writeReport(ctx, *out, *out, stdout, stderr)
}

// runSweeps runs each sweep in turn (runSweep), saying what each did, and
// returns the names of the parts written, by sweep.
func runSweeps(ctx context.Context, sweeps []*experiments.Sweep, config string, opts runOptions, stdout, stderr io.Writer) (map[string][]store.Written, error) {
	written := map[string][]store.Written{} // sweep → the parts written
	for _, s := range sweeps {
		cmd := fmt.Sprintf("sweep run --config %s --sweep %s", config, s.Name)
		if opts.shard.n > 1 {
			cmd += " --shard " + opts.shard.String()
		}
		if opts.addSeeds > 0 {
			cmd += fmt.Sprintf(" --add-seeds %d", opts.addSeeds)
		}
		opts.meta.Command, opts.meta.Sweep = cmd, s.Name
		st, err := runSweep(ctx, s, opts, stderr)
		if st != nil {
			writeSweepDone(stdout, s.Name, st, opts)
			written[s.Name] = st.written
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeSweepDone says what a sweep's run did.
func writeSweepDone(w io.Writer, name string, st *sweepStats, opts runOptions) {
	share := 0.0
	if st.elapsed > 0 {
		share = 100 * st.writing.Seconds() / st.elapsed.Seconds()
	}
	fmt.Fprintf(w, "%s: %d runs done, %d skipped (already in the dataset), %d failed, in %v (Parquet %v, %.1f%%, and %v beside the simulation) → %s (%s)\n",
		name, st.done, st.skipped, st.failed, st.elapsed.Round(time.Millisecond), st.writing.Round(time.Millisecond), share, st.beside.Round(time.Millisecond),
		store.SweepDir(opts.out, dataset.RunsDir, name), num.Plural(len(st.parts), "new part"))
	if opts.addSeeds > 0 {
		fmt.Fprintf(w, "%s: %d of the runs to do were rolling seeds (--add-seeds %d: the next seeds past the config's, per cell)\n", name, st.added, opts.addSeeds)
	}
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

// checkWritten checks the parts this run wrote (by sweep) against what it
// kept of them in memory (store.CheckWritten), while other writers may be
// at work beside it.
func checkWritten(out string, written map[string][]store.Written, stderr io.Writer) error {
	n := 0
	for _, parts := range written {
		n += len(parts)
	}
	if n == 0 {
		return nil
	}
	rep, err := store.CheckWritten(out, written)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		writeCheckText(stderr, rep)
		return fmt.Errorf("%s: the %s this run wrote %s %s (see above)", out, num.Plural(n, "part"), num.Agree(n, "has", "have"), num.Plural(len(rep.Problems), "problem"))
	}
	return nil
}

// checkOutput accepts a folder, file://PATH, and object storage
// (s3://BUCKET/PREFIX, gs://BUCKET/PREFIX: dataset/store/objstore), and
// returns the output as the store names it; another scheme is refused.
func checkOutput(out string) (string, error) {
	if err := checkOutDir("run", out); err != nil {
		return "", err
	}
	return location("run", "--out", out)
}

// urlScheme is what may stand before "://" in a URL (RFC 3986).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// location is a dataset's location given to flag: a folder, file://PATH
// (the folder PATH), or object storage; another URL scheme is bad input.
func location(cmd, flag, v string) (string, error) {
	scheme, rest, ok := strings.Cut(v, "://")
	if s, r, one := strings.Cut(v, ":/"); !ok && one && urlScheme.MatchString(s) {
		return "", usagef("%s: %s %s: a URL needs two slashes: want %s://%s (or ./%s for a folder of that name)", cmd, flag, v, s, r, v)
	}
	switch {
	case !ok || strings.ContainsAny(scheme, `/\`):
		return v, nil
	case scheme == "file":
		if rest == "" {
			return "", usagef("%s: %s %s: want file://PATH", cmd, flag, v)
		}
		return rest, nil
	case store.IsObject(v):
		if bucket, _, _ := strings.Cut(rest, "/"); bucket == "" {
			return "", usagef("%s: %s %s: want %s://BUCKET/PREFIX", cmd, flag, v, scheme)
		}
		return v, nil
	}
	return "", usagef("%s: %s %s: %s:// is not a storage this command writes to or reads: want a folder, file://PATH, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX", cmd, flag, v, scheme)
}

// runSweep runs what the dataset lacks of one sweep (this shard's part of
// it) and commits it in parts. Runs already stored in another sweep's
// folder are not run again (when that copy has the timeline this sweep
// asks for).
func runSweep(ctx context.Context, s *experiments.Sweep, o runOptions, stderr io.Writer) (*sweepStats, error) {
	stats := &sweepStats{total: s.Len(), start: time.Now()}
	st, err := store.Open(store.Options{Root: o.out, Sweep: s.Name, Shard: o.shard.store(), Note: notes(stderr, "sweep"), BeforeCommit: commitHook})
	if le := (*store.LinkError)(nil); errors.As(err, &le) {
		return nil, usagef("run: %v: sweep run neither writes nor removes anything through it; make it a folder", err)
	}
	if ue := (*objstore.UnconditionalError)(nil); errors.As(err, &ue) {
		return nil, usagef("run: --out %v", err)
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	todo, extra, err := toRun(st, s, o, stats, stderr)
	if err != nil {
		return nil, err
	}
	err = execute(ctx, st, s, o, todo, extra, stats, stderr)
	stats.written = st.Written()
	return stats, err
}

// wantsTimelines reports whether a run of s asks for its timeline.
func wantsTimelines(s *experiments.Sweep) bool {
	for i := range s.Len() {
		if s.WantsTimeline(i) {
			return true
		}
	}
	return false
}

// toRun lists what the dataset lacks of s, this shard's part of it: the
// indices of the sweep's runs to run, and the runs of rolling seeds. It
// records first what the sweep is meant to hold, every shard's runs
// (store.IntentOf).
func toRun(st *store.Writer, s *experiments.Sweep, o runOptions, stats *sweepStats, stderr io.Writer) ([]int32, []grid.Run, error) {
	have, err := st.Resume()
	if err != nil {
		return nil, nil, err
	}
	other, otherTL, err := store.Elsewhere(o.out, s.Name, wantsTimelines(s), notes(stderr, "sweep"))
	if err != nil {
		return nil, nil, err
	}
	var todo []int32
	if o.shard.n <= 1 && len(have) == 0 && len(other) == 0 && s.Distinct() {
		// every run, and no run key needed: none is stored, none is
		// another shard's, none is listed twice (a million tiny runs
		// spent a tenth of their CPU keying and looking them up here)
		todo = make([]int32, s.Len())
		for i := range todo {
			todo[i] = int32(i)
		}
		stats.inShard = len(todo)
	} else {
		todo = keyedRuns(s, o.shard, have, other, otherTL, stats)
	}
	// rolling seeds, after the config's runs
	stored := func(k string) bool { return have[k] || other[k] }
	extra := rollingRuns(s, o.addSeeds, stored, o.shard)
	in := store.IntentOf(s.Name, sweepRuns(s, rollingRuns(s, o.addSeeds, stored, shardSpec{})), o.meta, o.shard.store())
	if _, err := st.RecordIntent(in); err != nil {
		return nil, nil, err
	}
	stats.added = len(extra)
	return todo, extra, nil
}

// keyedRuns returns the indices of the runs of s to run: those of the
// shard that neither this sweep's dataset (have) nor another sweep's
// (other, which holds the timeline of those in otherTL) holds, each once.
// have gains their keys.
func keyedRuns(s *experiments.Sweep, shard shardSpec, have, other, otherTL map[string]bool, stats *sweepStats) []int32 {
	var todo []int32
	var keyer *grid.Keyer // of the cell of run i: a sweep's runs are its cells' seeds in a row (Sweep.Run)
	for i := range s.Len() {
		if i%len(s.Seeds) == 0 {
			keyer = grid.NewKeyer(s.Cells[i/len(s.Seeds)].Canonical())
		}
		k := keyer.Key(s.Seeds[i%len(s.Seeds)])
		if shard.n > 1 && grid.KeyShard(k, shard.n) != shard.i {
			continue
		}
		stats.inShard++
		if have[k] || other[k] && (!s.WantsTimeline(i) || otherTL[k]) {
			stats.skipped++
			continue
		}
		have[k] = true // a run listed twice in a sweep is run once
		todo = append(todo, int32(i))
	}
	return todo
}

// sweepRuns yields every run of s, then the runs of rolling seeds.
func sweepRuns(s *experiments.Sweep, rolling []grid.Run) iter.Seq[grid.Run] {
	return func(yield func(grid.Run) bool) {
		for i := range s.Len() {
			if !yield(s.Run(i)) {
				return
			}
		}
		for _, r := range rolling {
			if !yield(r) {
				return
			}
		}
	}
}

// execute runs the sweep's runs todo (indices) and extra on o.workers and
// commits their outcomes in parts; stats.elapsed stays 0 when a commit
// failed.
func execute(ctx context.Context, st *store.Writer, s *experiments.Sweep, o runOptions, todo []int32, extra []grid.Run, stats *sweepStats, stderr io.Writer) error {
	prog := newProgress(stderr, s.Name, len(todo)+len(extra), o.quiet)
	f := newFiller(st, o, stats)
	var maxBytes int64 // what a queued chain's attempts in flight may take: the run's share
	if o.lim.On() {
		maxBytes = o.lim.RunBytes()
	}
	job := func(j int) runner.Job {
		if j >= len(todo) {
			return runner.Job{Run: extra[j-len(todo)], MaxBytes: maxBytes}
		}
		i := int(todo[j])
		return runner.Job{Run: s.Run(i), Cell: 1 + i/len(s.Seeds), Timeline: s.WantsTimeline(i), MaxBytes: maxBytes}
	}
	wait := func(j int) int64 { // what job j's outcome holds until it is written
		if j >= len(todo) {
			return grid.OutcomeBytes
		}
		i := int(todo[j])
		return s.Cells[i/len(s.Seeds)].WaitBytes(s.WantsTimeline(i))
	}
	var failures []string
	emit := func(_ int, out *runner.Outcome) error {
		prog.add(1)
		if out.Err != nil {
			stats.failed++
			if len(failures) < 5 {
				failures = append(failures, fmt.Sprintf("%s seed %d: %v", out.Job.Run.Cell.Label(), out.Job.Run.Seed, out.Err))
			}
			return nil
		}
		return f.add(out)
	}
	runErr := runner.ExecuteWithin(ctx, o.workers, len(todo)+len(extra), o.lim.WindowBytes(), wait, job, emit)
	prog.finish()
	if err := f.drain(); err != nil { // the part in hand, also when interrupted
		return err
	}
	stats.elapsed = time.Since(stats.start)
	for _, fl := range failures {
		fmt.Fprintln(stderr, "sweep: failed:", fl)
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return fmt.Errorf("interrupted: %d of %d runs of %s written; run the same command again to finish the rest: %w",
				stats.done, len(todo)+len(extra), s.Name, runErr)
		}
		return runErr
	}
	if stats.failed > 0 {
		return fmt.Errorf("%s: %d runs failed", s.Name, stats.failed)
	}
	return nil
}
