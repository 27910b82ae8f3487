package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// queueRuns is a queueing dataset's runs grouped by cell, in seed order
// as `sweep run` writes them.
type queueRuns struct {
	order []string
	cells map[string][]dataset.Record
}

func loadQueueRuns(t *testing.T, dir string) queueRuns {
	t.Helper()
	ds, err := analysis.Load(folder(dir))
	if err != nil {
		t.Fatal(err)
	}
	q := queueRuns{cells: map[string][]dataset.Record{}}
	for _, r := range ds.Records {
		if q.cells[r.CellKey] == nil {
			q.order = append(q.order, r.CellKey)
		}
		q.cells[r.CellKey] = append(q.cells[r.CellKey], r.Record)
	}
	return q
}

// The metrics by hand, from a record's fields (not by analysis's code).
func recoveredAfter(r dataset.Record) (float64, bool) {
	return (r.Result.Recovered.At - r.Cell.Scenario.RecoverAt).Seconds(), r.Result.Recovered.Reached
}

func goodputOf(r dataset.Record) float64 {
	return float64(r.Result.Goodput) / float64(r.Result.Offered+int64(r.Cell.Scenario.Clients))
}

func timedOutOf(r dataset.Record) float64 { return float64(r.Result.TimedOut) / float64(r.Result.Sent) }

// where names one cell of the queueing config exactly.
func where(c grid.Cell) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	sc := c.Scenario
	return fmt.Sprintf(`where policy_spec="%s" arrival_rps=%s recover_s=%s queue_wait_s=%s`,
		c.PolicySpec(), f(sc.ArrivalRate), f(sc.RecoverAt.Seconds()), f(sc.QueueWait.Seconds()))
}

// A nightly gate on the queueing server's metrics: back to steady state
// within a bound in every seed (a seed never back fails any bound), and
// goodput at least a share of demand, checked against the statistics
// computed here from the records.
func TestAssertQueueingMetrics(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/queueing.toml", "--out", res, "--quiet", "--no-report")
	q := loadQueueRuns(t, res)
	var back, never grid.Cell
	var backMax, goodMin float64
	foundBack, foundNever := false, false
	for _, k := range q.order {
		runs := q.cells[k]
		max, all, some := math.Inf(-1), true, false
		for _, r := range runs {
			v, ok := recoveredAfter(r)
			all, some = all && ok, some || ok
			max = math.Max(max, v)
		}
		switch {
		case all && !foundBack:
			back, backMax, foundBack = runs[0].Cell, max, true
			goodMin = math.Inf(1)
			for _, r := range runs {
				goodMin = math.Min(goodMin, goodputOf(r))
			}
		case !all && some && !foundNever: // back in some seeds, not all: the others count as +∞
			never, foundNever = runs[0].Cell, true
		}
	}
	if !foundBack || !foundNever {
		t.Fatalf("the queueing test dataset should have a cell back in every seed (%v) and one back in some seeds only (%v)", foundBack, foundNever)
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	lines := []string{
		"recovered_after_s max <= " + g(backMax) + " " + where(back),       // holds, exactly at the worst seed
		"goodput_share min >= " + g(goodMin) + " " + where(back),           // holds, exactly
		"recovered_after_s max <= " + g(backMax-0.001) + " " + where(back), // fails by a millisecond
		"goodput_share min > " + g(goodMin) + " " + where(back),            // fails
		"recovered_after_s max <= 1000000 " + where(never),                 // fails: a seed never back
		"recovered_after_s min <= 1000000 where concurrency=0",             // matches no cell: fails
	}
	file := filepath.Join(dir, "q.assert")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := sweep(t, "assert", "--results", res, "--json", file)
	var doc struct {
		Violated int `json:"violated"`
		Results  []struct {
			OK    bool `json:"ok"`
			Cells int  `json:"cells"`
			Worst *struct {
				Value      *float64 `json:"value"`
				Unfinished int      `json:"unfinished"`
			} `json:"worst"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 1 || len(doc.Results) != len(lines) {
		t.Fatalf("assert --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	wantOK := []bool{true, true, false, false, false, false}
	wantValue := []float64{backMax, goodMin, backMax, goodMin, math.Inf(1), math.NaN()}
	for i, r := range doc.Results {
		if r.OK != wantOK[i] {
			t.Errorf("line %d %q: ok %v, want %v", i+1, lines[i], r.OK, wantOK[i])
		}
		switch w := wantValue[i]; {
		case math.IsNaN(w):
			if r.Cells != 0 || r.Worst != nil {
				t.Errorf("line %d: %d cells matched, want none", i+1, r.Cells)
			}
		case math.IsInf(w, 1):
			if r.Cells != 1 || r.Worst == nil || r.Worst.Value != nil || r.Worst.Unfinished == 0 {
				t.Errorf("line %d: %+v, want one cell with runs never back", i+1, r)
			}
		default:
			if r.Cells != 1 || r.Worst == nil || r.Worst.Value == nil || *r.Worst.Value != w {
				t.Errorf("line %d: %+v, want one cell at %v", i+1, r, w)
			}
		}
	}
	// The text names the violation; a typo in a metric is bad input.
	stdout, _, code = sweep(t, "assert", "--results", res, file)
	if code != 1 || !strings.Contains(stdout, "FAIL "+file+":5: recovered_after_s max <= 1000000") || !strings.Contains(stdout, "2 of 6 assertions hold") {
		t.Errorf("assert: exit %d\n%s", code, stdout)
	}
	typo := filepath.Join(dir, "typo.assert")
	if err := os.WriteFile(typo, []byte("recovered_after max <= 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := sweep(t, "assert", "--results", res, typo); code != 2 || !strings.Contains(stderr, typo+`:1: metric "recovered_after" (did you mean "recovered_after_s"?)`) {
		t.Errorf("typo: exit %d\n%s", code, stderr)
	}
}

// compare shows the queueing metrics' changes, paired by seed: none of a
// dataset against itself; against a night when the fixed policy's base
// delay went from 1 s to 50 ms (its runs stored under the old parameters,
// as a change in a library's defaults would), significant changes in
// that policy's cells only, their means those computed from the records.
func TestCompareQueueingMetrics(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	mustRun(t, "run", "--config", "testdata/queueing.toml", "--out", old, "--quiet", "--no-report", "--add-seeds", "3")
	b, err := os.ReadFile("testdata/queueing.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "faster.toml")
	changed := strings.Replace(string(b), `{kind = "fixed", base_s = 1}`, `{kind = "fixed", base_s = 0.05}`, 1)
	if changed == string(b) {
		t.Fatal("testdata/queueing.toml has no fixed policy of base_s = 1")
	}
	if err := os.WriteFile(cfg, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	faster := filepath.Join(dir, "faster")
	mustRun(t, "run", "--config", cfg, "--out", faster, "--quiet", "--no-report", "--add-seeds", "3")
	moved := rewriteRuns(t, faster, "moved", func(r *dataset.Record) {
		if r.Cell.Policy.Kind == sim.Fixed {
			r.Cell.Policy.Base = time.Second
		}
	})

	type change struct {
		Cell        string   `json:"cell"`
		Metric      string   `json:"metric"`
		Test        string   `json:"test"`
		N           int      `json:"n"`
		Old         *float64 `json:"old_mean"`
		New         *float64 `json:"new_mean"`
		Diff        *float64 `json:"diff"`
		Significant bool     `json:"significant"`
	}
	var doc struct {
		Matched int      `json:"matched_cells"`
		Changed int      `json:"changed"`
		Changes []change `json:"changes"`
	}
	compare := func(a, b string, wantCode int) {
		t.Helper()
		stdout, stderr, code := sweep(t, "compare", "--json", a, b)
		doc.Changes = nil
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != wantCode {
			t.Fatalf("compare --json %s %s: exit %d (want %d), %v\n%s", a, b, code, wantCode, err, stderr)
		}
	}
	perMetric := func() map[string]int {
		n := map[string]int{}
		for _, ch := range doc.Changes {
			n[ch.Metric]++
		}
		return n
	}

	compare(old, old, 0)
	for _, m := range analysis.QueueMetrics {
		if n := perMetric()[m.Key]; n != 24 || doc.Matched != 24 {
			t.Errorf("against itself: %s compared in %d of %d cells, want 24", m.Key, n, doc.Matched)
		}
	}
	for _, ch := range doc.Changes {
		if ch.Significant || ch.Diff != nil && *ch.Diff != 0 || ch.Test != "paired" {
			t.Errorf("against itself: %+v", ch)
		}
	}

	compare(old, moved, 1)
	if doc.Matched != 24 {
		t.Fatalf("%d cells matched, want 24", doc.Matched)
	}
	oldRuns, newRuns := loadQueueRuns(t, old), loadQueueRuns(t, moved)
	byCanon := func(q queueRuns) map[string][]dataset.Record {
		out := map[string][]dataset.Record{}
		for _, k := range q.order {
			out[q.cells[k][0].Cell.Canonical()] = q.cells[k]
		}
		return out
	}
	oc, nc := byCanon(oldRuns), byCanon(newRuns)
	byHand := map[string]func(dataset.Record) (float64, bool){
		analysis.Recovered.Key:     recoveredAfter,
		analysis.GoodputShare.Key:  func(r dataset.Record) (float64, bool) { return goodputOf(r), true },
		analysis.TimedOutShare.Key: func(r dataset.Record) (float64, bool) { return timedOutOf(r), true },
	}
	significant := map[string]int{}
	checked := 0
	for _, ch := range doc.Changes {
		fixed := strings.Contains(ch.Cell, "fixed")
		if ch.Significant {
			if !fixed {
				t.Errorf("a change in a cell whose policy did not change: %+v", ch)
			}
			significant[ch.Metric]++
		}
		f := byHand[ch.Metric]
		if f == nil {
			continue
		}
		o, n := oc[ch.Cell], nc[ch.Cell]
		if len(o) != 6 || len(n) != 6 {
			t.Fatalf("cell %s: %d and %d runs, want 6 seeds each", ch.Cell, len(o), len(n))
		}
		var so, sn float64
		pairs := 0
		for i := range o {
			x, okx := f(o[i])
			y, oky := f(n[i])
			if o[i].Seed != n[i].Seed {
				t.Fatalf("seeds %d and %d", o[i].Seed, n[i].Seed)
			}
			if okx && oky {
				so, sn, pairs = so+x, sn+y, pairs+1
			}
		}
		if ch.N != pairs {
			t.Errorf("%s %s: %d seeds paired, want %d", ch.Metric, ch.Cell, ch.N, pairs)
		}
		if pairs == 0 {
			continue
		}
		wo, wn := so/float64(pairs), sn/float64(pairs)
		if ch.Old == nil || ch.New == nil || math.Abs(*ch.Old-wo) > 1e-12*math.Max(1, wo) || math.Abs(*ch.New-wn) > 1e-12*math.Max(1, wn) {
			t.Errorf("%s %s: means %v → %v, want %v → %v", ch.Metric, ch.Cell, ch.Old, ch.New, wo, wn)
		}
		checked++
	}
	t.Logf("significant changes by metric: %v; %d changes checked by hand", significant, checked)
	if significant[analysis.GoodputShare.Key]+significant[analysis.TimedOutShare.Key]+significant[analysis.WastedShare.Key] == 0 || checked < 48 {
		t.Errorf("a policy 20× more eager should change some queueing metric significantly: %v (%d checked)", significant, checked)
	}
}

// sweep cells writes the queueing metrics: the time back to steady state
// counted as the runs back and never back (no mean when a seed never came
// back), goodput's mean as computed from the records; a counting cell's
// are empty.
func TestCellsWriteQueueingMetrics(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/queueing.toml", "--out", res, "--quiet", "--no-report")
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", res, "--quiet", "--no-report")
	mustRun(t, "cells", "--results", res)
	b, err := os.ReadFile(filepath.Join(res, "cells.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		CellKey     string   `parquet:"cell_key"`
		Concurrency int64    `parquet:"concurrency"`
		BackN       int64    `parquet:"recovered_after_s_n"`
		Never       int64    `parquet:"recovered_after_s_unfinished"`
		BackMean    *float64 `parquet:"recovered_after_s_mean,optional"`
		BackMax     *float64 `parquet:"recovered_after_s_max,optional"`
		GoodN       int64    `parquet:"goodput_share_n"`
		GoodMean    *float64 `parquet:"goodput_share_mean,optional"`
	}
	rows, err := pq.Read[row](strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	q := loadQueueRuns(t, res)
	if len(rows) != len(q.order) {
		t.Fatalf("%d rows, %d cells", len(rows), len(q.order))
	}
	counting, someNever := 0, 0
	for _, r := range rows {
		runs := q.cells[r.CellKey]
		if r.Concurrency == 0 {
			counting++
			if r.BackN != 0 || r.Never != 0 || r.GoodN != 0 || r.BackMean != nil || r.GoodMean != nil {
				t.Errorf("counting cell %s: %+v, want no queueing metric", r.CellKey, r)
			}
			continue
		}
		var back, never int64
		var sum, max, good float64
		for _, x := range runs {
			v, ok := recoveredAfter(x)
			if ok {
				back, sum, max = back+1, sum+v, math.Max(max, v)
			} else {
				never++
			}
			good += goodputOf(x)
		}
		if r.BackN != back || r.Never != never || r.GoodN != int64(len(runs)) {
			t.Errorf("%s: %+v, want %d back, %d never", r.CellKey, r, back, never)
		}
		if never > 0 {
			someNever++
			if r.BackMean != nil || r.BackMax != nil {
				t.Errorf("%s: %d seeds never back, yet a mean %v", r.CellKey, never, *r.BackMean)
			}
		} else if r.BackMean == nil || math.Abs(*r.BackMean-sum/float64(back)) > 1e-9 || *r.BackMax != max {
			t.Errorf("%s: back in %v s (max %v), want %v (%v)", r.CellKey, r.BackMean, r.BackMax, sum/float64(back), max)
		}
		if want := good / float64(len(runs)); r.GoodMean == nil || math.Abs(*r.GoodMean-want) > 1e-12 {
			t.Errorf("%s: goodput %v, want %v", r.CellKey, r.GoodMean, want)
		}
	}
	if counting == 0 || someNever == 0 || someNever == len(rows)-counting {
		t.Errorf("%d counting cells, %d queueing cells with seeds never back of %d: the test checks too little", counting, someNever, len(rows)-counting)
	}
}
