package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
)

// --add-seeds adds the next seeds past the config's each night, the same
// ones whether a night runs whole or as shards started one after the
// other, in either order.
func TestRollingSeedsAddPrecisionDeterministically(t *testing.T) {
	dir := t.TempDir()
	whole, sharded := filepath.Join(dir, "whole"), filepath.Join(dir, "sharded")
	args := []string{"run", "--config", "testdata/small.toml", "--sweep", "a", "--quiet", "--no-report", "--add-seeds", "2"}
	for range 2 { // two nights
		mustRun(t, append(args, "--out", whole)...)
	}
	for _, order := range [][]string{{"0/2", "1/2"}, {"1/2", "0/2"}} {
		for _, sh := range order {
			mustRun(t, append(args, "--out", sharded, "--shard", sh)...)
		}
	}
	if out, stderr, code := sweep(t, "diff", whole, sharded); code != 0 {
		t.Errorf("two nights whole and as shards differ (exit %d):\n%s%s", code, out, stderr)
	}
	sc, err := analysis.Scan(folder(whole), analysis.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // seeds 1–6 from the config, 7–10 from two nights
	for _, a := range sc.Aggregates {
		if !slices.Equal(a.Seeds, want) {
			t.Errorf("%s: seeds %v, want %v", a.Label, a.Seeds, want)
		}
	}
	if len(sc.Aggregates) != 6 {
		t.Errorf("%d cells, want 6", len(sc.Aggregates))
	}
	if _, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--out", whole, "--add-seeds", "-1"); code != 2 {
		t.Errorf("--add-seeds -1: exit %d, want 2\n%s", code, stderr)
	}
}

// plan --add-seeds N counts the runs run --add-seeds N does: on a night
// not started, after a night of rolling seeds (where a plan without it
// counted 0), and after one shard of a night.
func TestPlanCountsRollingSeeds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "res")
	cfg := []string{"--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--add-seeds", "2"}
	planned := func() (toRun, rolling int) {
		t.Helper()
		stdout, stderr, code := sweep(t, append([]string{"plan", "--json", "--sample", "1"}, cfg...)...)
		var doc struct {
			Sweeps []struct {
				ToRun   int `json:"to_run"`
				Rolling int `json:"rolling"`
			} `json:"sweeps"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil || len(doc.Sweeps) != 1 {
			t.Fatalf("plan: exit %d, %v\n%s%s", code, err, stdout, stderr)
		}
		return doc.Sweeps[0].ToRun, doc.Sweeps[0].Rolling
	}
	ran := func(extra ...string) int {
		t.Helper()
		stdout := mustRun(t, append(append([]string{"run", "--quiet", "--no-report"}, cfg...), extra...)...)
		m := doneLine.FindStringSubmatch(stdout)
		if m == nil || m[1] != "a" {
			t.Fatalf("run: no count of runs done in\n%s", stdout)
		}
		n, _ := strconv.Atoi(m[2])
		return n
	}
	for night, want := range []struct{ toRun, rolling int }{
		{36 + 12, 12}, // the config's 6 cells × 6 seeds, and seeds 7–8 of each cell
		{12, 12},      // seeds 9–10
	} {
		toRun, rolling := planned()
		if toRun != want.toRun || rolling != want.rolling {
			t.Errorf("night %d: plan counts %d runs to do, %d of them rolling seeds; want %d, %d", night+1, toRun, rolling, want.toRun, want.rolling)
		}
		if n := ran(); n != toRun {
			t.Errorf("night %d: plan counted %d runs, run did %d", night+1, toRun, n)
		}
	}
	shard0 := ran("--shard", "0/2") // part of seeds 11–12
	toRun, _ := planned()
	if n := ran(); n != toRun || shard0+toRun != 12 || shard0 == 0 || toRun == 0 {
		t.Errorf("after shard 0/2 ran %d runs: plan counts %d, run did %d; want the 12 − %d", shard0, toRun, n, shard0)
	}
	if _, stderr, code := sweep(t, "plan", "--config", "testdata/small.toml", "--add-seeds", "10001"); code != 2 || !strings.Contains(stderr, "--add-seeds") {
		t.Errorf("plan --add-seeds 10001: exit %d, want 2\n%s", code, stderr)
	}
}
