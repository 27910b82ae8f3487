package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
)

// slower copies the runs of dataset dir into a new dataset whose t99
// after recovery is longer by factor f in every run, as a simulator change
// could make it.
func slower(t *testing.T, dir string, f float64) string {
	t.Helper()
	return rewriteRuns(t, dir, "slower", func(r *dataset.Record) {
		if r.Result.T99.Reached {
			rec := r.Cell.Scenario.RecoverAt
			r.Result.T99.At = rec + time.Duration(float64(r.Result.T99.At-rec)*f)
		}
	})
}

// rewriteRuns copies the runs of dataset dir into a new dataset named
// name, each record changed by fn first.
func rewriteRuns(t *testing.T, dir, name string, fn func(r *dataset.Record)) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	l, err := dataset.List(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Runs {
		in, err := os.Open(filepath.Join(dir, filepath.FromSlash(p.Path())))
		if err != nil {
			t.Fatal(err)
		}
		recs, meta, err := parquetio.ReadRuns(in)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(out, filepath.FromSlash(p.Path()))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		rw := parquetio.NewRunsWriter(w, meta)
		for _, r := range recs {
			fn(&r)
			rw.Append(grid.Run{Cell: r.Cell, Seed: r.Seed}, r.Result)
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	return out
}

// compare answers "did anything move?" with its exit code: 0 for two runs
// of one config, 1 for a change beyond the threshold, 2 for bad input.
func TestCompare(t *testing.T) {
	a, b := smallDataset(t), smallDataset(t)
	stdout, stderr, code := sweep(t, "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "6 matched by their parameters (6 paired by seed") ||
		!strings.Contains(stdout, "verdict: no significant change beyond 0 %") {
		t.Errorf("compare of two runs of one config: exit %d\n%s%s", code, stdout, stderr)
	}
	// A night of rolling seeds later, b holds seeds 1–8 of each cell where
	// a holds 1–6: the six shared seeds are paired, the two new ones counted.
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", b, "--add-seeds", "2", "--no-report", "--quiet")
	stdout, stderr, code = sweep(t, "compare", "--all", a, b)
	if code != 0 || !strings.Contains(stdout, "(6 paired by seed over 36 seeds both hold, 12 seeds of one side only left out;") ||
		!strings.Contains(stdout, "paired over 6 seeds, 2 seeds of one side only left out") {
		t.Errorf("compare after a night of --add-seeds 2: exit %d\n%s%s", code, stdout, stderr)
	}
	c := slower(t, a, 1.5)
	stdout, stderr, code = sweep(t, "compare", a, c)
	if code != 1 || !strings.Contains(stdout, "verdict: ") || !strings.Contains(stdout, "* t99") || !strings.Contains(stdout, "+50.0 %") {
		t.Errorf("compare with t99 +50 %%: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if _, _, code = sweep(t, "compare", "--threshold", "60%", a, c); code != 0 {
		t.Errorf("compare with t99 +50 %% and --threshold 60%%: exit %d, want 0", code)
	}
	stdout, _, code = sweep(t, "compare", "--json", a, c)
	var doc struct {
		Matched int `json:"matched_cells"`
		Changed int `json:"changed"`
		Changes []struct {
			Metric string   `json:"metric"`
			Rel    *float64 `json:"rel"`
			Beyond bool     `json:"beyond_threshold"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 1 || doc.Matched != 6 || doc.Changed == 0 || len(doc.Changes) != 6*7 {
		t.Fatalf("compare --json: exit %d, %v, %+v", code, err, doc)
	}
	for _, ch := range doc.Changes {
		if ch.Beyond != (ch.Metric == dataset.ColT99After) && ch.Rel != nil && *ch.Rel != 0 {
			t.Errorf("change %+v: only t99 moved", ch)
		}
	}
	for _, args := range [][]string{
		{"compare", a},
		{"compare", a, filepath.Join(a, "nothing")},
		{"compare", "--threshold", "five", a, b},
		{"compare", "--alpha", "2", a, b},
		{"compare", a, filepath.Join(a, "runs")},
	} {
		if _, stderr, code := sweep(t, args...); code != 2 || !strings.Contains(stderr, "compare") {
			t.Errorf("sweep %s: exit %d, %s; want 2", strings.Join(args, " "), code, stderr)
		}
	}
}

// plan --out counts the runs a dataset still lacks, as run would do them,
// and writes nothing.
func TestPlanOut(t *testing.T) {
	dir := smallDataset(t) // sweep a of small.toml: 6 cells × 6 seeds
	before := files(t, dir)
	for _, tt := range []struct {
		sweep, out    string
		stored, toRun int
	}{
		{"a", dir, 36, 0},
		{"b", dir, 0, 60},
		{"a", filepath.Join(t.TempDir(), "not-yet"), 0, 36},
	} {
		stdout := mustRun(t, "plan", "--config", "testdata/small.toml", "--sweep", tt.sweep, "--out", tt.out, "--sample", "3", "--json")
		var doc struct {
			Sweeps []struct {
				Runs      int     `json:"runs"`
				Stored    *int    `json:"stored"`
				ToRun     int     `json:"to_run"`
				EstimateS float64 `json:"estimate_s"`
			} `json:"sweeps"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Sweeps) != 1 {
			t.Fatalf("plan --json: %v\n%s", err, stdout)
		}
		s := doc.Sweeps[0]
		if s.Stored == nil || *s.Stored != tt.stored || s.ToRun != tt.toRun || (s.ToRun == 0) != (s.EstimateS == 0) {
			t.Errorf("plan --sweep %s --out %s: %+v, want %d stored, %d to run", tt.sweep, tt.out, s, tt.stored, tt.toRun)
		}
	}
	if after := files(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("plan --out changed the dataset: %d files before, %d after", len(before), len(after))
	}
	if _, stderr, code := sweep(t, "plan", "--config", "testdata/small.toml", "--out", "testdata/small.toml"); code != 2 || !strings.Contains(stderr, "not a folder") {
		t.Errorf("plan --out FILE: exit %d, %s", code, stderr)
	}
}
