package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdPolicies(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policies", "[--json]", stderr)
	asJSON := fs.Bool("json", false, "print the families and presets as one JSON document")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return policiesJSON(stdout)
	}
	fmt.Fprintf(stdout, "Policy families (simulator %s). n is the rejection count, 1 on the first; U a fresh\n", sim.Version)
	fmt.Fprintf(stdout, "uniform draw in [0, 1) from the run's Mulberry32 stream; RA the server's Retry-After.\n\n")
	for _, f := range sim.Families() {
		d := sim.DefaultPolicy(f.Kind)
		seq, _ := d.Delays(1, 6, 0, true)
		var s []string
		for _, v := range seq {
			s = append(s, (time.Duration(v*1e6) * time.Nanosecond).Round(time.Millisecond).String())
		}
		fmt.Fprintf(stdout, "%s — %s\n", f.Kind, f.Title)
		fmt.Fprintf(stdout, "  delay:    %s\n", f.Formula)
		fmt.Fprintf(stdout, "  params:   %s\n", strings.Join(f.Params, ", "))
		fmt.Fprintf(stdout, "  defaults: %s\n", d)
		fmt.Fprintf(stdout, "  example:  %s … (defaults, seed 1, no Retry-After)\n", strings.Join(s, ", "))
		fmt.Fprintf(stdout, "  source:   %s\n", f.Source)
		if f.Note != "" {
			fmt.Fprintf(stdout, "  note:     %s\n", f.Note)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "Which rejections a client retries (retry_on; any other ends its tries). A rejection while the\n")
	fmt.Fprintf(stdout, "server is down is a 503, one after recovery a 429; a queueing server's timeout is retried under every\n")
	fmt.Fprintf(stdout, "value but retry-after-only; a request the client's own components refused carries no Retry-After.\n\n")
	for _, v := range sim.RetryOnValues() {
		name := string(v.Value)
		if name == "" {
			name = `"" or "any" (default)`
		}
		fmt.Fprintf(stdout, "%s — %s\n  like: %s\n", name, v.Means, v.Like)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "Client components: each composes with any family above; set its keys beside the policy's.\n\n")
	for _, c := range sim.Components() {
		fmt.Fprintf(stdout, "%s — %s\n", c.Name, strings.Join(c.Params, ", "))
		fmt.Fprintf(stdout, "  does:     %s\n", c.What)
		fmt.Fprintf(stdout, "  source:   %s\n", c.Source)
		if c.Note != "" {
			fmt.Fprintf(stdout, "  note:     %s\n", c.Note)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "Library presets: `policy = \"NAME\"` in sweeps.toml keeps every parameter as the library ships it.\n\n")
	for _, pr := range sim.Presets() {
		fmt.Fprintf(stdout, "%s — %s\n  source: %s\n", pr.Name, pr.Policy.Describe(), pr.Source)
		if pr.Note != "" {
			fmt.Fprintf(stdout, "  note:   %s\n", pr.Note)
		}
	}
	return nil
}

func cmdSchema(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("schema", "[--markdown | --json]", stderr)
	markdown := fs.Bool("markdown", false, "print markdown tables (as in docs/dataset.md)")
	asJSON := fs.Bool("json", false, "print the tables and their columns as one JSON document")
	if err := parse(fs, args); err != nil {
		return err
	}
	tables := []struct {
		name string
		cols []dataset.Column
	}{{"runs/sweep=NAME/*.parquet (" + dataset.RunsSchema + ")", dataset.RunsColumns()},
		{"timelines/sweep=NAME/*.parquet (" + dataset.TimelineSchema + ")", dataset.TimelineColumns()},
		{"groups/sweep=NAME/*.parquet (" + dataset.GroupsSchema + ")", dataset.GroupsColumns()},
		{"cells.parquet, written by sweep cells (" + dataset.CellsSchema + ")", dataset.CellsColumns(metricKeys())}}
	if *asJSON {
		type col struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Doc  string `json:"doc"`
		}
		type table struct {
			Files   string `json:"files"`
			Columns []col  `json:"columns"`
		}
		var doc struct {
			Tables []table `json:"tables"`
		}
		for _, t := range tables {
			tb := table{Files: t.name}
			for _, c := range t.cols {
				tb.Columns = append(tb.Columns, col{c.Name, c.Type, c.Doc})
			}
			doc.Tables = append(doc.Tables, tb)
		}
		return writeJSON(stdout, doc)
	}
	for _, t := range tables {
		if *markdown {
			fmt.Fprintf(stdout, "`%s`\n\n| column | type | meaning |\n|---|---|---|\n", t.name)
			for _, c := range t.cols {
				fmt.Fprintf(stdout, "| `%s` | %s | %s |\n", c.Name, c.Type, c.Doc)
			}
			fmt.Fprintln(stdout)
			continue
		}
		fmt.Fprintln(stdout, t.name)
		tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		for _, c := range t.cols {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Name, c.Type, c.Doc)
		}
		tw.Flush()
		fmt.Fprintln(stdout)
	}
	return nil
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", "[--config sweeps.toml] [--sweep NAME…] [--workers N] [--out DIR] [--add-seeds N]", stderr)
	out := fs.String("out", "", "a dataset: count and time only the runs it still lacks, as sweep run would run them into it (read only)")
	config := fs.String("config", "sweeps.toml", "the sweeps file")
	var names listFlag
	fs.Var(&names, "sweep", "sweep to plan; repeat or comma-separate (default: those a bare sweep run runs, every sweep not marked on_demand)")
	workers := fs.Int("workers", 0, fmt.Sprintf("workers the estimate assumes (0 = one per CPU; at most %d)", maxWorkers))
	memory := fs.String("memory", "", "memory the simulations may take in all, as for run")
	sample := fs.Int("sample", 1500, "runs simulated to calibrate the estimate (at most 100000; 4× more, and again, while they take under 0.25 s of CPU)")
	calibration := fs.Duration("calibration", 10*time.Second, "most wall time the calibration takes: runs still going then are stopped, and the times are lower bounds (at least)")
	asJSON := fs.Bool("json", false, "print the plan as one JSON document")
	addSeeds := fs.Int("add-seeds", 0, "rolling seeds: also count the N more seeds per cell that sweep run --add-seeds N would run (with --out, those past the seeds the dataset holds)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkAddSeeds("plan", *addSeeds); err != nil {
		return err
	}
	if err := checkWorkers("plan", *workers); err != nil {
		return err
	}
	if *sample < 1 || *sample > 100_000 {
		return usagef("plan: --sample %d: want 1 to 100000", *sample)
	}
	if *calibration <= 0 {
		return usagef("plan: --calibration %v: want a positive duration, e.g. 10s", *calibration)
	}
	lim, err := memoryLimits("plan", *memory, workersOr(*workers))
	if err != nil {
		return err
	}
	defer goMemoryLimit(lim)()
	cfg, _, err := loadConfig(*config, lim)
	if err != nil {
		return err
	}
	bare := len(names) == 0 // the sweeps a bare sweep run runs
	sweeps, err := selectSweeps(cfg, names, *config)
	if err != nil {
		return err
	}
	if err := checkRolling("plan", sweeps, *addSeeds, lim); err != nil {
		return err
	}
	w := *workers
	if w <= 0 {
		w = defaultWorkers()
	}
	type planned struct {
		Sweep     string  `json:"sweep"`
		Cells     int     `json:"cells"`
		Seeds     int     `json:"seeds"`
		Runs      int     `json:"runs"`
		Stored    *int    `json:"stored,omitempty"` // with --out: runs the dataset holds already
		ToRun     int     `json:"to_run"`
		Rolling   int     `json:"rolling,omitempty"` // with --add-seeds: of to_run, runs of rolling seeds
		MSPerRun  float64 `json:"ms_per_run"`
		EstimateS float64 `json:"estimate_s"`     // on free cores
		NowS      float64 `json:"estimate_now_s"` // at the load the calibration met
		Workers   int     `json:"workers"`
		AtLeast   bool    `json:"at_least,omitempty"` // the calibration was cut short (--calibration): the times are lower bounds
	}
	var plan []planned
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', tabwriter.AlignRight)
	if *out != "" {
		fmt.Fprintf(tw, "sweep\tcells\tseeds\truns\tin %s\tto run\tms/run\test. time (%d workers)\tat this load\t\n", *out, w)
	} else {
		fmt.Fprintf(tw, "sweep\tcells\tseeds\truns\tms/run\test. time (%d workers)\tat this load\t\n", w)
	}
	for _, s := range sweeps {
		var todo []int       // the config's runs to do, by index
		var extra []grid.Run // rolling seeds, after them
		var stored *int
		if *out != "" {
			missing, rolling, err := lacking(*out, s, *addSeeds, stderr)
			if err != nil {
				return err
			}
			todo, extra = missing, rolling
			n := s.Len() - len(todo)
			stored = &n
		} else {
			todo = make([]int, 0, s.Len())
			for i := range s.Len() {
				todo = append(todo, i)
			}
			extra = rollingRuns(s, *addSeeds, func(string) bool { return false }, shardSpec{})
		}
		n := len(todo) + len(extra)
		at := func(k int) grid.Run {
			if k < len(todo) {
				return s.Run(todo[k])
			}
			return extra[k-len(todo)]
		}
		var per, wall time.Duration
		cut := false
		if n > 0 {
			budget, stop := context.WithTimeout(ctx, *calibration)
			per, wall, cut, err = calibrate(ctx, budget, at, n, *sample, w)
			stop()
			if err != nil {
				return err
			}
		}
		// The sample ran on the sweep's workers: its wall time already holds
		// their efficiency and what other jobs left of the cores.
		est, now := estimate(per, wall, n, w)
		plan = append(plan, planned{s.Name, len(s.Cells), len(s.Seeds), s.Len(), stored, n, len(extra), float64(per) / 1e6, est.Seconds(), now.Seconds(), w, cut})
		ge := "" // a lower bound
		if cut {
			ge = "≥ "
		}
		if stored != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s%.2f\t%s%v\t%s%v\t\n", s.Name, len(s.Cells), len(s.Seeds), s.Len(), *stored, n, ge, float64(per)/1e6, ge, est.Round(100*time.Millisecond), ge, now.Round(100*time.Millisecond))
		} else {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s%.2f\t%s%v\t%s%v\t\n", s.Name, len(s.Cells), len(s.Seeds), s.Len(), ge, float64(per)/1e6, ge, est.Round(100*time.Millisecond), ge, now.Round(100*time.Millisecond))
		}
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"sweeps": plan})
	}
	tw.Flush()
	for _, p := range plan {
		if p.AtLeast {
			fmt.Fprintf(stdout, "%s: the calibration was stopped after --calibration %v, before its sample of runs finished: its times are lower bounds (≥); give it longer to time them.\n", p.Sweep, *calibration)
		}
	}
	if *addSeeds > 0 {
		for _, p := range plan {
			fmt.Fprintf(stdout, "%s: %d of the runs to do are rolling seeds (--add-seeds %d: the next seeds past the config's, per cell)\n", p.Sweep, p.Rolling, *addSeeds)
		}
	}
	if bare {
		var demand []string
		for _, n := range cfg.Names() {
			if cfg.Sweep(n).OnDemand {
				demand = append(demand, n)
			}
		}
		if len(demand) > 0 {
			fmt.Fprintf(stdout, "Not planned: %s, on demand (sweep run runs them only when named: sweep plan --sweep NAME).\n", strings.Join(demand, ", "))
		}
	}
	fmt.Fprintf(stdout, "The estimate is the CPU time of a sample of the runs to do (spread over all of them) plus what building and committing Parquet costs per run beside it (%v), divided by the workers at %.0f %% efficiency, plus the end-of-run check (%v per run): the wall time on free cores. At this load scales the sample's wall time instead: what other jobs on the machine made of it.\n",
		parquetCPUPerRun, 100*parallelEfficiency, checkPerRun)
	return nil
}

// What the estimate adds to the simulation's own time, measured on 2 cores
// (docs/performance.md, "Plan against run"): the Parquet of a run (building its row, then
// encoding and committing its part on the committer goroutine, beside the
// simulation: CPU the cores share with the workers), the end-of-run check of
// the parts written (after the sweep, alone), and the workers' parallel
// efficiency (the default sweep ran at 95 % of twice the one-core
// calibration).
const (
	parquetCPUPerRun   = 6 * time.Microsecond
	checkPerRun        = 8 * time.Microsecond
	parallelEfficiency = 0.95
)

// estimate is the wall time of n runs of per CPU time each on w workers
// with free cores (est), and at the load the calibration met (now: wall,
// the sample's wall time per run times the workers, in place of per, and
// the rest slowed down as much).
func estimate(per, wall time.Duration, n, w int) (est, now time.Duration) {
	if n == 0 {
		return 0, 0
	}
	shared := (float64(per) + float64(parquetCPUPerRun)) * float64(n) / (float64(w) * parallelEfficiency)
	after := float64(checkPerRun) * float64(n)
	est = time.Duration(shared + after)
	slow := 1.0
	if per > 0 {
		slow = max(1, float64(wall)/float64(per))
	}
	now = time.Duration(float64(wall)*float64(n)/float64(w) + slow*(float64(parquetCPUPerRun)*float64(n)/float64(w)+after))
	return est, now
}

// lacking returns the indices of s's runs that `sweep run --out dir`
// would run: those not stored in the sweep's own folder by this simulator
// version, nor in another sweep's folder (with a timeline, when s wants
// the run's); and the runs of rolling seeds `--add-seeds addSeeds` would
// add (rollingRuns). It reads the dataset and changes nothing in it.
func lacking(dir string, s *experiments.Sweep, addSeeds int, stderr io.Writer) ([]int, []grid.Run, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if errors.Is(err, fs.ErrNotExist) {
			all := make([]int, s.Len())
			for i := range all {
				all[i] = i
			}
			// a dataset not started yet lacks every run
			return all, rollingRuns(s, addSeeds, func(string) bool { return false }, shardSpec{}), nil
		}
		if err == nil {
			err = errors.New("not a folder")
		}
		return nil, nil, usagef("plan: --out %s: %v", dir, err)
	}
	l, err := dataset.List(os.DirFS(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	own := map[string]bool{}
	for _, p := range l.Runs {
		if p.Sweep != s.Name {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(p.Path()))
		ks, meta, err := store.ReadKeys(path, dataset.RunsDir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if meta.Sim != sim.Version {
			continue // set aside by the next run: its runs are redone
		}
		for _, k := range ks {
			own[k] = true
		}
	}
	wants := false
	for i := range s.Len() {
		if s.WantsTimeline(i) {
			wants = true
			break
		}
	}
	other, otherTL, err := store.Elsewhere(dir, s.Name, wants, notes(stderr, "sweep"))
	if err != nil {
		return nil, nil, err
	}
	var todo []int
	var cell grid.Cell
	canonical := ""
	for i := range s.Len() {
		r := s.Run(i)
		if canonical == "" || r.Cell != cell {
			cell, canonical = r.Cell, r.Cell.Canonical()
		}
		k := grid.RunKey(canonical, r.Seed)
		if own[k] || other[k] && (!s.WantsTimeline(i) || otherTL[k]) {
			continue
		}
		own[k] = true // a run listed twice in a sweep is run once
		todo = append(todo, i)
	}
	return todo, rollingRuns(s, addSeeds, func(k string) bool { return own[k] || other[k] }, shardSpec{}), nil
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

// calibrate simulates an evenly spread sample of the runs to do, at(0) …
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
func calibrate(ctx, budget context.Context, at func(int) grid.Run, total, n, workers int) (per, wall time.Duration, cut bool, err error) {
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
	err = runner.Execute(bctx, workers, n, func(j int) runner.Job {
		return runner.Job{Run: at(sample[j])}
	}, func(int, runner.Outcome) error { finished++; return nil })
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// policiesJSON is `sweep policies --json`: every family with its formula,
// parameters, defaults and first delays, and every library preset.
func policiesJSON(w io.Writer) error {
	type family struct {
		Kind     string    `json:"kind"`
		Title    string    `json:"title"`
		Formula  string    `json:"formula"`
		Params   []string  `json:"params"`
		Defaults string    `json:"defaults"`
		ExampleS []float64 `json:"example_delays_s"`
		Source   string    `json:"source"`
		Note     string    `json:"note,omitempty"`
	}
	type preset struct {
		Name   string `json:"name"`
		Policy string `json:"policy"`
		Plain  string `json:"plain"`
		Source string `json:"source"`
		Note   string `json:"note,omitempty"`
	}
	type retryOn struct {
		Value string `json:"value"`
		Means string `json:"means"`
		Like  string `json:"like"`
	}
	var doc struct {
		Simulator  string          `json:"simulator"`
		Families   []family        `json:"families"`
		RetryOn    []retryOn       `json:"retry_on"`
		Components []sim.Component `json:"components"`
		Presets    []preset        `json:"presets"`
	}
	doc.Components = sim.Components()
	doc.Simulator = sim.Version
	for _, f := range sim.Families() {
		d := sim.DefaultPolicy(f.Kind)
		seq, _ := d.Delays(1, 6, 0, true)
		for i := range seq {
			seq[i] /= 1000
		}
		doc.Families = append(doc.Families, family{string(f.Kind), f.Title, f.Formula, f.Params, d.String(), seq, f.Source, f.Note})
	}
	for _, v := range sim.RetryOnValues() {
		doc.RetryOn = append(doc.RetryOn, retryOn{string(v.Value), v.Means, v.Like})
	}
	for _, pr := range sim.Presets() {
		doc.Presets = append(doc.Presets, preset{pr.Name, pr.Policy.String(), pr.Policy.Plain(), pr.Source, pr.Note})
	}
	return writeJSON(w, doc)
}

// metricKeys are the columns of the metrics the cells table summarises.
func metricKeys() []string {
	var out []string
	for _, m := range analysis.AllMetrics() {
		out = append(out, m.Key)
	}
	return out
}
