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
	sc, err := analysis.Scan(folder(res), analysis.ScanOptions{})
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

// A share's interval in the cells table stays within [0, 1] (issue 22: it
// reached 1.024; on two seeds, one back to steady state and one not, the
// Student-t interval of the goodput share was [−3.39, 4.75]). Read back by
// an independent Parquet reader: every share's mean and bounds in [0, 1],
// the mean inside its interval, as the analysis summarised it.
func TestCellsSharesStayWithinZeroAndOne(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(`[sweep.q]
clients = 1
spread_s = 0
concurrency = 10
service = "exponential"
service_s = 0.02
timeout_s = 1
arrival_rps = [300, 350]
outage_start_s = 30
recover_s = 35
window_s = 60
policy = [{kind = "full-jitter", base_s = 0.1, cap_s = 30, multiplier = 2}, {kind = "fixed", base_s = 1}, "decorrelated"]
seeds = [1, 2]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", "--config", cfg, "--out", res, "--quiet", "--no-report")
	mustRun(t, "cells", "--results", res)
	b, err := os.ReadFile(filepath.Join(res, "cells.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Spec    string   `parquet:"policy_spec"`
		Arrival float64  `parquet:"arrival_rps"`
		GMean   *float64 `parquet:"goodput_share_mean,optional"`
		GLo     *float64 `parquet:"goodput_share_lo,optional"`
		GHi     *float64 `parquet:"goodput_share_hi,optional"`
		TMean   *float64 `parquet:"timed_out_share_mean,optional"`
		TLo     *float64 `parquet:"timed_out_share_lo,optional"`
		THi     *float64 `parquet:"timed_out_share_hi,optional"`
		WMean   *float64 `parquet:"wasted_share_mean,optional"`
		WLo     *float64 `parquet:"wasted_share_lo,optional"`
		WHi     *float64 `parquet:"wasted_share_hi,optional"`
	}
	rows, err := pq.Read[row](strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d cells, want 6", len(rows))
	}
	wide := 0
	for _, r := range rows {
		for _, s := range []struct {
			name         string
			mean, lo, hi *float64
		}{{"goodput_share", r.GMean, r.GLo, r.GHi}, {"timed_out_share", r.TMean, r.TLo, r.THi}, {"wasted_share", r.WMean, r.WLo, r.WHi}} {
			if s.mean == nil || s.lo == nil || s.hi == nil {
				t.Errorf("%s at %g/s: %s null", r.Spec, r.Arrival, s.name)
				continue
			}
			if !(0 <= *s.lo && *s.lo <= *s.mean && *s.mean <= *s.hi && *s.hi <= 1) {
				t.Errorf("%s at %g/s: %s %v [%v, %v]: want 0 ≤ lo ≤ mean ≤ hi ≤ 1", r.Spec, r.Arrival, s.name, *s.mean, *s.lo, *s.hi)
			}
			if *s.hi-*s.lo > 0.5 {
				wide++
			}
		}
	}
	if wide == 0 {
		t.Error("no share with a wide interval: the test no longer reaches the bounds")
	}
}
