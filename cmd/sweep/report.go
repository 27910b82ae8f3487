package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports"
)

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "[--results DIR] [--out DIR]", stderr)
	results := fs.String("results", "out", "the dataset: a folder holding runs/ (and timelines/), file://PATH, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
	out := fs.String("out", "", "where report.md, scenarios/ and plots/ go: a folder, file://PATH, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX (default: the --results folder)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if *results, err = location("report", "--results", *results); err != nil {
		return err
	}
	if *out == "" {
		*out = *results
	}
	if *out, err = location("report", "--out", *out); err != nil {
		return err
	}
	return writeReport(ctx, *results, *out, stdout, stderr)
}

// writeReport builds the report of the dataset in results (reports.Build)
// and writes its files into out, without running anything. When ctx is
// done it stops between files and returns ctx's error (exit 130); what it
// wrote is whole (each file is written atomically) and report.md, written
// last, is never newer than the pages and figures it links to.
func writeReport(ctx context.Context, results, out string, stdout, stderr io.Writer) error {
	// Each phase that takes more than a second says so when it ends.
	phase := time.Now()
	done := func(what string) {
		if d := time.Since(phase); d >= time.Second {
			fmt.Fprintf(stderr, "report: %s in %v\n", what, d.Round(100*time.Millisecond))
		}
		phase = time.Now()
	}
	sc, err := scanForReport(ctx, results, stderr)
	if err != nil {
		return err
	}
	done(fmt.Sprintf("read %s runs from %d parts", num.Int(sc.Runs), sc.Files))
	for _, w := range sc.Warnings {
		fmt.Fprintf(stderr, "sweep: warning: %s: %s\n", results, w)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report interrupted: %w", err)
	}
	r, err := buildReport(ctx, results, sc)
	if err != nil {
		return err
	}
	done(fmt.Sprintf("decided %d scenarios and drew the figures", len(r.Scenarios)))
	defer func() { done("wrote the files") }()
	figs, err := writeReportFiles(ctx, r, out, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%s in %s, %s in %s)\n", store.Join(out, "report.md"),
		num.Plural(len(r.Scenarios), "scenario page"), store.Join(out, "scenarios"), num.Plural(figs, "figure"), store.Join(out, "plots"))
	return nil
}

// scanForReport streams the dataset in results for its report (memory
// grows with cells × seeds, not with rows; only the article's cells are
// kept whole, for its comparison) and warns of the runs it lacks.
func scanForReport(ctx context.Context, results string, stderr io.Writer) (*analysis.Scanned, error) {
	sc, err := scanDataset(ctx, "report", "--results "+results, results, analysis.ScanOptions{Keep: articleCells()})
	if err != nil {
		return nil, err
	}
	if err := sidePartsThere(results, stderr); err != nil {
		return nil, err
	}
	short, err := shortfalls("report", results, sc)
	if err != nil {
		return nil, err
	}
	if len(short) > 0 {
		fmt.Fprintf(stderr, "sweep: warning: %s lacks %s of %s it was meant to hold (`sweep check %s` names them): the report is of the runs that are there\n",
			results, num.Plural(analysis.MissingRuns(short), "run"), num.Plural(len(short), "cell"), results)
	}
	return sc, nil
}

// buildReport builds the report of the scanned dataset in results: one
// library call, with the readers of its side tables.
func buildReport(ctx context.Context, results string, sc *analysis.Scanned) (*reports.Report, error) {
	data := folder(results)
	// A part that cannot be read is bad input naming its path (exit 2), as
	// in every command that reads a dataset (scanDataset).
	named := func(err error) error {
		if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
			return usagef("report: %s: %v", store.Join(results, fe.Path), fe.Err)
		}
		return err
	}
	groups, err := analysis.GroupRows(data)
	if err != nil {
		return nil, named(err)
	}
	r, err := reports.Build(ctx, reports.Input{Dataset: &sc.Dataset, Scanned: sc, Groups: groups, Live: liveChecks(results),
		Timelines: func(keys map[string]bool) (map[string][]dataset.TimelineRow, error) {
			tl, err := analysis.Timelines(data, keys)
			return tl, named(err)
		},
		QueueRuns: func(sweeps []string, keys map[string]bool) ([]analysis.Record, error) {
			recs, err := analysis.LoadRunsOf(data, sweeps, keys)
			return recs, named(err)
		}})
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("report interrupted: %w", ctx.Err())
	}
	return r, err
}

// writeReportFiles writes r's files into out, report.md last, each
// atomically, and counts the figures written.
func writeReportFiles(ctx context.Context, r *reports.Report, out string, stderr io.Writer) (figs int, err error) {
	files := r.Files()
	files = append(files[1:], files[0]) // report.md last
	dirs := map[string]bool{}
	for _, f := range files {
		dir := store.Join(out, path.Dir(f.Name))
		if dirs[dir] {
			continue
		}
		dirs[dir] = true
		if err := store.Within(out, dir); err != nil {
			return 0, usagef("report: %v: report neither writes nor removes anything through it; make it a folder", err)
		}
		store.CleanReportTemps(dir, notes(stderr, "report"))
	}
	tmp := store.ReportTemp()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return figs, fmt.Errorf("report interrupted: %w", err)
		}
		buf := &partBuffer{}
		if err := f.Write(buf); err != nil {
			return figs, err
		}
		dir := store.Join(out, path.Dir(f.Name))
		if err := store.MkdirAll(dir); err != nil {
			return figs, fmt.Errorf("output folder: %w", err)
		}
		if err := store.WriteFileAs(dir, path.Base(f.Name), tmp, buf.b); err != nil {
			return figs, err
		}
		if path.Ext(f.Name) == ".png" {
			figs++
		}
	}
	return figs, nil
}

// liveChecks lists the pages `sweep live` wrote into results/live (its
// default --out beside the default dataset), in name order.
func liveChecks(results string) []reports.LiveCheck {
	es, err := os.ReadDir(filepath.Join(results, "live"))
	if err != nil {
		return nil
	}
	var out []reports.LiveCheck
	for _, e := range es {
		if !strings.HasSuffix(e.Name(), ".md") || !store.IsRegular(filepath.Join(results, "live"), e) {
			continue // a named pipe would hang the report
		}
		b, err := os.ReadFile(filepath.Join(results, "live", e.Name()))
		if err != nil {
			continue
		}
		title, _, _ := strings.Cut(string(b), "\n")
		if t, ok := strings.CutPrefix(title, "### "); ok {
			out = append(out, reports.LiveCheck{Title: t, Page: "live/" + e.Name()})
		}
	}
	return out
}

// articleCells says which cells the article's comparison reads whole.
func articleCells() func(cellKey string) bool {
	keys := map[string]bool{}
	for _, t := range article.Tables() {
		for _, row := range t.Rows {
			keys[row.Cell.Key()] = true
		}
	}
	return func(k string) bool { return keys[k] }
}

// sidePartsThere refuses a dataset whose runs part commits side-table rows
// (dataset.Meta.TimelineRows, GroupRows) whose part is not there: the
// report would draw its timelines and groups without them, in silence. When
// every run of that runs part is stored again in a part whose side part is
// there (a part copied), it only warns.
func sidePartsThere(results string, stderr io.Writer) error {
	l, err := dataset.List(store.FS(results))
	if err != nil {
		return usagef("report: %s: %v", results, err)
	}
	there := map[string]bool{}
	for _, t := range dataset.SideTables {
		for _, p := range l.Side[t] {
			there[p.Path()] = true
		}
	}
	keys := func(p dataset.Part) []string {
		ks, _, err := store.ReadKeys(store.Join(results, p.Path()), dataset.RunsDir)
		if err != nil {
			return nil
		}
		return ks
	}
	var covered map[string]map[string]bool // by side table: the runs of parts whose side part is there
	for _, p := range l.Runs {
		var lacks []string
		for _, t := range dataset.SideTables {
			if !there[path.Join(t, "sweep="+p.Sweep, p.Name)] {
				lacks = append(lacks, t)
			}
		}
		if len(lacks) == 0 {
			continue
		}
		f, err := store.OpenFile(store.Join(results, p.Path()))
		if err != nil {
			continue // the scan read it: set aside meanwhile
		}
		meta, err := parquetio.ReadMeta(f)
		f.Close()
		if err != nil {
			continue
		}
		for _, t := range lacks {
			rows := meta.TimelineRows
			if t == dataset.GroupsDir {
				rows = meta.GroupRows
			}
			if rows <= 0 {
				continue
			}
			if covered == nil {
				covered = map[string]map[string]bool{}
				for _, st := range dataset.SideTables {
					covered[st] = map[string]bool{}
					for _, q := range l.Runs {
						if there[path.Join(st, "sweep="+q.Sweep, q.Name)] {
							for _, k := range keys(q) {
								covered[st][k] = true
							}
						}
					}
				}
			}
			side := filepath.Join(results, t, "sweep="+p.Sweep, p.Name)
			runsPart := filepath.Join(results, filepath.FromSlash(p.Path()))
			all := true
			for _, k := range keys(p) {
				all = all && covered[t][k]
			}
			if all {
				fmt.Fprintf(stderr, "sweep: warning: %s: not there, though its runs part commits %d rows of it; its runs are stored again with their %s: `sweep check` names it\n", side, rows, t)
				continue
			}
			return usagef("report: %s: not there, though its runs part commits %d rows of it (deleted?): restore it, or move %s away and run `sweep run` again to redo its runs",
				side, rows, runsPart)
		}
	}
	return nil
}
