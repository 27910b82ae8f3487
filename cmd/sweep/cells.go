package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"

	"github.com/herdsweep/herdsweep/internal/num"
)

const cellsHelp = `The per-cell view of a dataset: one row per cell (every parameter but the
seed), each metric summarised over the cell's seeds as the report does —
runs with a value and unfinished runs counted, mean, sd, 95 %% interval
(Student-t; a share's, such as goodput_share, the Wilson score interval at
the effective sample size, which stays within [0, 1]), min, max — in one
Parquet file (its columns: sweep schema). A statistic of
a milestone that some run never reached is null, never a mean of the runs
that did: query it from DuckDB or Polars without the NULL trap, e.g.

  SELECT policy_spec, capacity_rps, runs, t99_after_s_unfinished, t99_after_s_mean
  FROM 'out/cells.parquet' ORDER BY t99_after_s_mean NULLS LAST;

A queueing server's cells also hold its metrics,
  %s:
in the counting server's cells their _n and _unfinished are 0 and their
statistics null, and recovered_after_s's in cells without open-loop
traffic.

Exit codes: 0 written, 2 bad input or an unreadable dataset.
`

func cmdCells(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var queue []string
	for _, m := range analysis.QueueMetrics {
		queue = append(queue, m.Key)
	}
	fs := newFlagsDoc("cells", "[--results out] [--out RESULTS/cells.parquet]", fmt.Sprintf(cellsHelp, strings.Join(queue, ", ")), stderr)
	results := fs.String("results", "out", "the dataset: a folder (or file://PATH), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
	out := fs.String("out", "", "the file to write (default: cells.parquet in the dataset's folder)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var err error
	if *results, err = location("cells", "--results", *results); err != nil {
		return err
	}
	if *out, err = location("cells", "--out", *out); err != nil {
		return err
	}
	if *out == "" {
		*out = store.Join(*results, "cells.parquet")
	}
	metrics := analysis.AllMetrics()
	sc, err := scanDataset(ctx, "cells", "--results "+*results, *results, analysis.ScanOptions{Metrics: metrics})
	if err != nil {
		return err
	}
	names := metricKeys()
	meta := dataset.Meta{Tool: toolVersion(), Command: "sweep cells", Created: created()}
	if len(sc.Metas) > 0 {
		meta.Sim = sc.Metas[0].Sim
	}
	buf := &partBuffer{}
	w := parquetio.NewCellsWriter(buf, meta, names)
	for _, a := range sc.Aggregates {
		stats := make([]dataset.Stat, len(metrics))
		for i, m := range metrics {
			s := a.Summary(m)
			if !a.Has(m) { // a queueing metric of a counting cell: no runs, null statistics
				s = analysis.Summarize(nil, 0)
			}
			stats[i] = dataset.Stat{N: s.N, Unfinished: s.Unfinished, Mean: s.Mean, SD: s.SD, Lo: s.Lo, Hi: s.Hi, Min: s.Min, Max: s.Max}
		}
		w.Append(a.CellKey, a.Label, a.Cell, a.Sweeps, len(a.Seeds), stats)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("cells: %s: %w", *out, err)
	}
	if err := writeAtomic(store.Dir(*out), path.Base(*out), buf); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cells: %s of %s → %s\n", num.Plural(len(sc.Aggregates), "cell"), num.Plural(sc.Runs, "run"), *out)
	return nil
}

// scanDataset streams the dataset in dir for a command (analysis.Scan).
// A folder that is not there, or a part that cannot be read, is bad input
// naming the path (exit 2); an interruption stops it. what names the
// folder in messages: "--results DIR" or the folder itself.
func scanDataset(ctx context.Context, cmd, what, dir string, opt analysis.ScanOptions) (*analysis.Scanned, error) {
	if err := store.Stat(dir); err != nil {
		return nil, usagef("%s: %s: %v", cmd, what, err)
	}
	sc, err := analysis.Scan(folder(dir), opt)
	if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
		return nil, usagef("%s: %s: %v", cmd, store.Join(dir, fe.Path), fe.Err)
	}
	if err != nil {
		return nil, usagef("%s: %s: %v", cmd, what, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s interrupted: %w", cmd, err)
	}
	return sc, nil
}
