package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/reports/table"
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
			// Written by hand, not by table.Markdown, which would escape
			// the '|' of the mix column's doc (a cell of its own today, in
			// docs/dataset.md too): that fix changes the bytes, so it waits
			// for a change of its own.
			fmt.Fprintf(stdout, "`%s`\n\n| column | type | meaning |\n|---|---|---|\n", t.name)
			for _, c := range t.cols {
				fmt.Fprintf(stdout, "| `%s` | %s | %s |\n", c.Name, c.Type, c.Doc)
			}
			fmt.Fprintln(stdout)
			continue
		}
		tb := table.New("", table.L("column"), table.L("type"), table.L("meaning"))
		for _, c := range t.cols {
			tb.Add(c.Name, c.Type, c.Doc)
		}
		fmt.Fprintln(stdout, t.name)
		if err := tb.Text(stdout, table.TextStyle{Indent: "  ", NoHeader: true}); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// planOptions are `sweep plan`'s flags.
type planOptions struct {
	out, config, memory string
	names               listFlag
	workers, sample     int
	addSeeds            int
	calibration         time.Duration
	asJSON              bool
}

// parsePlan reads `sweep plan`'s flags and refuses bad values.
func parsePlan(args []string, stderr io.Writer) (*planOptions, error) {
	o := &planOptions{}
	fs := newFlags("plan", "[--config sweeps.toml] [--sweep NAME…] [--workers N] [--out DIR] [--add-seeds N]", stderr)
	fs.StringVar(&o.out, "out", "", "a dataset: count and time only the runs it still lacks, as sweep run would run them into it (read only)")
	fs.StringVar(&o.config, "config", "sweeps.toml", "the sweeps file")
	fs.Var(&o.names, "sweep", "sweep to plan; repeat or comma-separate (default: those a bare sweep run runs, every sweep not marked on_demand)")
	fs.IntVar(&o.workers, "workers", 0, fmt.Sprintf("workers the estimate assumes (0 = one per CPU; at most %d)", maxWorkers))
	fs.StringVar(&o.memory, "memory", "", "memory the simulations may take in all, as for run")
	fs.IntVar(&o.sample, "sample", 1500, "runs simulated to calibrate the estimate (at most 100000; 4× more, and again, while they take under 0.25 s of CPU)")
	fs.DurationVar(&o.calibration, "calibration", 10*time.Second, "most wall time the calibration takes: runs still going then are stopped, and the times are lower bounds (at least)")
	fs.BoolVar(&o.asJSON, "json", false, "print the plan as one JSON document")
	fs.IntVar(&o.addSeeds, "add-seeds", 0, "rolling seeds: also count the N more seeds per cell that sweep run --add-seeds N would run (with --out, those past the seeds the dataset holds)")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	if err := checkAddSeeds("plan", o.addSeeds); err != nil {
		return nil, err
	}
	if err := checkWorkers("plan", o.workers); err != nil {
		return nil, err
	}
	if o.sample < 1 || o.sample > 100_000 {
		return nil, usagef("plan: --sample %d: want 1 to 100000", o.sample)
	}
	if o.calibration <= 0 {
		return nil, usagef("plan: --calibration %v: want a positive duration, e.g. 10s", o.calibration)
	}
	if o.out != "" {
		out, err := location("plan", "--out", o.out)
		if err != nil {
			return nil, err
		}
		o.out = out
	}
	return o, nil
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parsePlan(args, stderr)
	if err != nil {
		return err
	}
	lim, err := memoryLimits("plan", o.memory, workersOr(o.workers))
	if err != nil {
		return err
	}
	defer goMemoryLimit(lim)()
	cfg, _, err := loadConfig(o.config, lim)
	if err != nil {
		return err
	}
	sweeps, err := selectSweeps(cfg, o.names, o.config)
	if err != nil {
		return err
	}
	if err := checkRolling("plan", sweeps, o.addSeeds, lim); err != nil {
		return err
	}
	p := &reports.Plan{Out: o.out, Workers: o.workers, Calibration: o.calibration, AddSeeds: o.addSeeds}
	if p.Workers <= 0 {
		p.Workers = defaultWorkers()
	}
	for _, s := range sweeps {
		row, err := planSweep(ctx, s, o, p.Workers, stderr)
		if err != nil {
			return err
		}
		p.Sweeps = append(p.Sweeps, row)
	}
	if o.asJSON {
		return writeJSON(stdout, map[string]any{"sweeps": p.Sweeps})
	}
	if len(o.names) == 0 { // the sweeps a bare sweep run runs
		for _, n := range cfg.Names() {
			if cfg.Sweep(n).OnDemand {
				p.OnDemand = append(p.OnDemand, n)
			}
		}
	}
	return reports.WritePlanText(stdout, p)
}

// planSweep counts the runs of s to do (with --out, those the dataset
// lacks) and times a sample of them on w workers.
func planSweep(ctx context.Context, s *experiments.Sweep, o *planOptions, w int, stderr io.Writer) (reports.PlannedSweep, error) {
	var todo []int       // the config's runs to do, by index
	var extra []grid.Run // rolling seeds, after them
	var stored *int
	if o.out != "" {
		missing, rolling, err := lacking(o.out, s, o.addSeeds, stderr)
		if err != nil {
			return reports.PlannedSweep{}, err
		}
		todo, extra = missing, rolling
		n := s.Len() - len(todo)
		stored = &n
	} else {
		todo = make([]int, 0, s.Len())
		for i := range s.Len() {
			todo = append(todo, i)
		}
		extra = rollingRuns(s, o.addSeeds, func(string) bool { return false }, shardSpec{})
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
		budget, stop := context.WithTimeout(ctx, o.calibration)
		var err error
		per, wall, cut, err = calibrate(ctx, budget, at, n, o.sample, w)
		stop()
		if err != nil {
			return reports.PlannedSweep{}, err
		}
	}
	// The sample ran on the sweep's workers: its wall time already holds
	// their efficiency and what other jobs left of the cores.
	est, now := runner.Estimate(per, wall, n, w)
	return reports.PlannedSweep{Sweep: s.Name, Cells: len(s.Cells), Seeds: len(s.Seeds), Runs: s.Len(), Stored: stored, ToRun: n, Rolling: len(extra),
		MSPerRun: float64(per) / 1e6, EstimateS: est.Seconds(), NowS: now.Seconds(), Workers: w, AtLeast: cut, Estimate: est, Now: now}, nil
}

// calibrate is runner.Calibrate: the plan's sample of runs, timed.
func calibrate(ctx, budget context.Context, at func(int) grid.Run, total, n, workers int) (per, wall time.Duration, cut bool, err error) {
	return runner.Calibrate(ctx, budget, at, total, n, workers)
}

// lacking returns the indices of s's runs that `sweep run --out dir`
// would run: those not stored in the sweep's own folder by this simulator
// version, nor in another sweep's folder (with a timeline, when s wants
// the run's); and the runs of rolling seeds `--add-seeds addSeeds` would
// add (rollingRuns). It reads the dataset and changes nothing in it.
func lacking(dir string, s *experiments.Sweep, addSeeds int, stderr io.Writer) ([]int, []grid.Run, error) {
	if err := store.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			all := make([]int, s.Len())
			for i := range all {
				all[i] = i
			}
			// a dataset not started yet lacks every run
			return all, rollingRuns(s, addSeeds, func(string) bool { return false }, shardSpec{}), nil
		}
		return nil, nil, usagef("plan: --out %s: %v", dir, err)
	}
	l, err := dataset.List(store.FS(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	own := map[string]bool{}
	for _, p := range l.Runs {
		if p.Sweep != s.Name {
			continue
		}
		path := store.Join(dir, p.Path())
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
