package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "[--results DIR] [--out DIR]", stderr)
	results := fs.String("results", "out", "the dataset: a folder holding runs/ (and timelines/)")
	out := fs.String("out", "", "where report.md and plots/ go (default: the --results folder)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		*out = *results
	}
	return writeReport(ctx, *results, *out, stdout, stderr)
}

// writeReport renders plots and report.md from the dataset in results into
// out, without running anything. When ctx is done it stops between steps
// and returns ctx's error (exit 130); what it wrote is whole (each file is
// written atomically) but the report may be missing or older than the plots.
func writeReport(ctx context.Context, results, out string, stdout, stderr io.Writer) error {
	fsys := os.DirFS(results)
	sc, err := analysis.Scan(fsys, analysis.ScanOptions{Keep: articleCells()})
	if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
		return fmt.Errorf("%s: %w", filepath.Join(results, filepath.FromSlash(fe.Path)), fe.Err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", results, err)
	}
	ds := &sc.Dataset
	for _, w := range ds.Warnings {
		fmt.Fprintf(stderr, "sweep: warning: %s: %s\n", results, w)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report interrupted: %w", err)
	}
	aggs := sc.Aggregates
	r := &reports.Report{Provenance: provenance(sc)}
	r.Warnings = append(datasetWarnings(sc, aggs), ds.Warnings...)
	r.Article = articleFromDataset(ds)
	single := make([]*analysis.Aggregate, 0, len(aggs)) // the recommendation compares fleets of one policy
	for _, a := range aggs {
		if !a.Cell.Mixed() {
			single = append(single, a)
		}
	}
	for _, q := range analysis.Groups(single) {
		ct := reports.CapacityTable{Query: q}
		if q.RetryAfter == 0 { // table 5 has its own Retry-After row
			ct.Situations = analysis.Table5(single, q)
		}
		if rk, err := analysis.Recommend(single, q); err == nil {
			ct.Ranking = rk
		}
		r.Capacities = append(r.Capacities, ct)
		if v := analysis.LibraryVerdicts(single, q); len(v) > 0 {
			r.Library = append(r.Library, reports.LibraryTable{Query: q, Verdicts: v})
		}
	}
	groups, err := analysis.GroupRows(fsys)
	if err != nil {
		return err
	}
	r.Mixed = analysis.MixedFleets(aggs, groups)
	r.Recovery = analysis.RecoveryGrids(single)

	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report interrupted: %w", err)
	}
	figs, err := figures(fsys, aggs)
	if err != nil {
		return err
	}
	plotDir := filepath.Join(out, "plots")
	if err := os.MkdirAll(plotDir, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	var all []uint32
	for _, sw := range sc.Sweeps {
		all = append(all, sw.Seeds...)
	}
	slices.Sort(all)
	footer := fmt.Sprintf("herdsweep %s · simulator %s · config %s · seeds %s", r.Provenance.Tool, r.Provenance.Sim, short(r.Provenance.ConfigHash), ranges(slices.Compact(all)))
	for _, f := range figs {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("report interrupted: %w", err)
		}
		buf := &partBuffer{}
		if err := plots.Render(buf, f, footer); err != nil {
			return err
		}
		if err := writeAtomic(plotDir, f.File, buf); err != nil {
			return err
		}
		r.Plots = append(r.Plots, reports.Plot{File: "plots/" + f.File, Title: f.Title, Caption: f.Caption})
	}
	buf := &partBuffer{}
	if err := reports.Write(buf, r); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report interrupted: %w", err)
	}
	if err := writeAtomic(out, "report.md", buf); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%d plots in %s)\n", filepath.Join(out, "report.md"), len(figs), plotDir)
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// provenance sums up the metadata of every part.
func provenance(ds *analysis.Scanned) reports.Provenance {
	p := reports.Provenance{Runs: ds.Runs, Files: ds.Files}
	var tools, sims, hashes []string
	for _, m := range ds.Metas {
		tools, sims, hashes = addUniq(tools, m.Tool), addUniq(sims, m.Sim), addUniq(hashes, m.ConfigHash)
		p.Commands = addUniq(p.Commands, m.Command)
		if m.Created > p.Created {
			p.Created = m.Created
		}
	}
	p.Tool, p.Sim, p.ConfigHash = strings.Join(tools, ", "), strings.Join(sims, ", "), strings.Join(hashes, ", ")
	var parts []string
	for _, s := range ds.Sweeps {
		p.Sweeps = append(p.Sweeps, s.Sweep)
		parts = append(parts, fmt.Sprintf("%s (%s)", ranges(s.Seeds), s.Sweep))
	}
	p.Seeds = strings.Join(parts, "; ")
	return p
}

func addUniq(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// ranges writes seeds as "1–10, 206–210".
func ranges(seeds []uint32) string {
	s := slices.Clone(seeds)
	slices.Sort(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.FormatUint(uint64(s[i]), 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func datasetWarnings(ds *analysis.Scanned, aggs []*analysis.Aggregate) []string {
	var w []string
	p := provenance(ds)
	if strings.Contains(p.ConfigHash, ",") {
		w = append(w, "the dataset mixes parts written from different configs: "+p.ConfigHash)
	}
	few, unfinished := 0, 0
	for _, a := range aggs {
		if len(a.Seeds) < analysis.MinSeedsForInterval {
			few++
		}
		if a.Summary(analysis.T99).Unfinished > 0 {
			unfinished++
		}
	}
	if few > 0 {
		w = append(w, fmt.Sprintf("%d of %d cells have fewer than %d seeds: too few for a 95 %% interval", few, len(aggs), analysis.MinSeedsForInterval))
	}
	if unfinished > 0 {
		w = append(w, fmt.Sprintf("%d of %d cells have runs that did not bring 99 %% of clients back within the horizon; their t99 is \"not finished\", never a number", unfinished, len(aggs)))
	}
	return w
}

// articleCells says which cells the article's comparison reads whole.
func articleCells() func(cellKey string) bool {
	keys := map[string]bool{}
	for _, t := range experiments.ArticleTables() {
		for _, row := range t.Rows {
			keys[row.Cell.Key()] = true
		}
	}
	return func(k string) bool { return keys[k] }
}

// articleFromDataset compares the article's tables with the dataset's runs
// of the same cells on the article's seeds; none when the dataset lacks them.
func articleFromDataset(ds *analysis.Dataset) []analysis.ArticleTable {
	byCell := map[string]map[uint32]sim.Result{}
	for _, r := range ds.Records {
		if byCell[r.CellKey] == nil {
			byCell[r.CellKey] = map[uint32]sim.Result{}
		}
		byCell[r.CellKey][r.Seed] = r.Result
	}
	complete := true
	results := func(c experiments.Cell) ([]sim.Result, []sim.Result) {
		runs := byCell[c.Key()]
		var five, many []sim.Result
		for _, s := range experiments.ArticleSeeds {
			res, ok := runs[s]
			if !ok {
				complete = false
				return nil, nil
			}
			five = append(five, res)
		}
		if len(runs) >= 20 {
			var seeds []uint32
			for s := range runs {
				seeds = append(seeds, s)
			}
			slices.Sort(seeds)
			for _, s := range seeds {
				many = append(many, runs[s])
			}
		}
		return five, many
	}
	for _, t := range experiments.ArticleTables() {
		for _, row := range t.Rows {
			results(row.Cell)
		}
	}
	if !complete {
		return nil
	}
	return analysis.CompareArticle(experiments.ArticleTables(), results)
}

// figures builds the six figures from the aggregates and the timelines,
// in one world: the article's fleet size and outage where the data has
// them (else the most common), a server that only counts, one policy.
func figures(fsys iofs.FS, all []*analysis.Aggregate) ([]plots.Figure, error) {
	refClients, refOutage := reference(all)
	var aggs []*analysis.Aggregate
	for _, a := range all {
		sc := a.Cell.Scenario
		if sc.Clients == refClients && sc.RecoverAt == refOutage && sc.RejectCost == 0 && sc.RampUp == 0 &&
			!sc.RetryAfterBacklog && sc.RetryAfterMax == 0 && !a.Cell.Mixed() {
			aggs = append(aggs, a)
		}
	}
	caps := analysis.Capacities(aggs)
	if len(caps) == 0 {
		return nil, nil
	}
	ref := caps[0]
	for _, c := range caps {
		if c == 120 {
			ref = c
		}
	}
	reps := analysis.Representatives(aggs, func(a *analysis.Aggregate) bool { return a.Cell.Scenario.Capacity == ref })
	want := map[string]bool{}
	until := 0.0
	for _, a := range reps {
		if len(a.Seeds) > 0 {
			want[experiments.Run{Cell: a.Cell, Seed: a.Seeds[0]}.Key()] = true
		}
		if s := a.Summary(analysis.T99); s.Finished() {
			until = math.Max(until, s.Max)
		}
	}
	until = math.Min(math.Max(until*1.15, 60), 900)
	tls, err := analysis.Timelines(fsys, want)
	if err != nil {
		return nil, err
	}
	heatCap := time.Minute
	var figs []plots.Figure
	figs = append(figs,
		plots.Herd(reps, tls, ref, until),
		plots.Recovery(reps, tls, until),
		plots.WidthT99(aggs, ref),
		plots.Heatmap(aggs, heatCap),
		plots.ParetoScatter(reps, ref),
		plots.CapacityT99(aggs, reps),
	)
	return figs, nil
}

// reference picks the fleet size and outage the figures show: 2,000 clients
// and 30 s if any cell has them, else the most common.
func reference(aggs []*analysis.Aggregate) (int, time.Duration) {
	clients, outages := map[int]int{}, map[time.Duration]int{}
	for _, a := range aggs {
		clients[a.Cell.Scenario.Clients]++
		outages[a.Cell.Scenario.RecoverAt]++
	}
	c, o := mostCommon(clients, 2000), mostCommon(outages, 30*time.Second)
	return c, o
}

func mostCommon[K int | time.Duration](m map[K]int, prefer K) K {
	if m[prefer] > 0 {
		return prefer
	}
	var best K
	n := -1
	for k, v := range m {
		if v > n || (v == n && k < best) {
			best, n = k, v
		}
	}
	return best
}
