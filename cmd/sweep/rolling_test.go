package main

import (
	"os"
	"path/filepath"
	"slices"
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
	sc, err := analysis.Scan(os.DirFS(whole), analysis.ScanOptions{})
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
