package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
)

// sweep cells writes one row per cell with the report's statistics, read
// back by an independent Parquet reader: a cell with an unfinished run has
// no mean (null), its unfinished runs counted.
func TestCellsView(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	// windows short enough that in some cells some runs (not all) leave clients waiting
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(`[sweep.c]
policy = ["full-jitter", "decorrelated", {kind = "fixed", base_s = 5}]
clients = 150
recover_s = 10
capacity_rps = [15, 30]
window_s = [15, 20, 30]
seeds = {from = 1, to = 6}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", "--config", cfg, "--out", res, "--quiet", "--no-report")
	out := mustRun(t, "cells", "--results", res)
	path := filepath.Join(res, "cells.parquet")
	if !strings.Contains(out, "→ "+path) {
		t.Errorf("cells said %q", out)
	}
	sc, err := analysis.Scan(os.DirFS(res), analysis.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Lookup(dataset.KeySchema); v != dataset.CellsSchema {
		t.Errorf("schema %q", v)
	}
	type row struct {
		CellKey    string   `parquet:"cell_key"`
		Spec       string   `parquet:"policy_spec"`
		Capacity   float64  `parquet:"capacity_rps"`
		Runs       int64    `parquet:"runs"`
		N          int64    `parquet:"t99_after_s_n"`
		Unfinished int64    `parquet:"t99_after_s_unfinished"`
		Mean       *float64 `parquet:"t99_after_s_mean,optional"`
		Hi         *float64 `parquet:"t99_after_s_hi,optional"`
		Peak       *float64 `parquet:"peak_rps_mean,optional"`
	}
	rows, err := pq.Read[row](strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(sc.Aggregates) || len(rows) == 0 {
		t.Fatalf("%d rows, want one per cell (%d)", len(rows), len(sc.Aggregates))
	}
	unfinished := 0
	for i, r := range rows {
		a := sc.Aggregates[i]
		s := a.Summary(analysis.T99)
		if r.CellKey != a.CellKey || r.Spec != a.Cell.PolicySpec() || r.Capacity != a.Cell.Scenario.Capacity || r.Runs != int64(len(a.Seeds)) ||
			r.N != int64(s.N) || r.Unfinished != int64(s.Unfinished) || r.Peak == nil || *r.Peak != a.Summary(analysis.Peak).Mean {
			t.Errorf("row %d: %+v, want the aggregate %s (%+v)", i, r, a.Label, s)
		}
		switch {
		case s.Unfinished > 0:
			if s.N > 0 {
				unfinished++ // a mean of the finished runs exists, and must not be written
			}
			if r.Mean != nil || r.Hi != nil {
				t.Errorf("row %d: %d runs unfinished, yet a mean %v", i, s.Unfinished, *r.Mean)
			}
		case r.Mean == nil || *r.Mean != s.Mean || r.Hi == nil || *r.Hi != s.Hi || math.IsNaN(*r.Mean):
			t.Errorf("row %d: mean %v hi %v, want %v %v", i, r.Mean, r.Hi, s.Mean, s.Hi)
		}
	}
	if unfinished == 0 {
		t.Error("no cell with some runs unfinished: the test checks no null")
	}
	if _, stderr, code := sweep(t, "cells", "--results", filepath.Join(dir, "nope")); code != 2 {
		t.Errorf("cells of a missing dataset: exit %d\n%s", code, stderr)
	}
}
