package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/dataset"
)

// nightConfig is a nightly job's config: 8 cells × 3 seeds.
const nightConfig = `[defaults]
clients = 60
capacity_rps = 15
recover_s = 5
window_s = 300
seeds = [1, 2, 3]
[sweep.n]
policy = ["full-jitter", "decorrelated", {kind = "fixed", base_s = 5}, {kind = "exponential", base_s = 1, cap_s = 30, multiplier = 2}]
capacity_rps = [15, 30]
`

// night runs the nightly job in 4 shards into a new dataset.
func night(t *testing.T, cfg, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	for i := range 4 {
		mustRun(t, "run", "--config", cfg, "--out", out, "--shard", fmt.Sprintf("%d/4", i), "--no-report", "--quiet")
	}
	return out
}

// The nightly gates notice missing data: with a shard's parts deleted,
// check, compare and assert exit 1 naming what is missing (they exited 0:
// only `plan --out` showed the gap); after a policy parameter changed,
// compare exits 1 on the cells only in one night (it listed them and
// exited 0), unless --allow-missing.
func TestNightlyGatesNoticeMissingData(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "night.toml")
	os.WriteFile(cfg, []byte(nightConfig), 0o644)
	assertFile := filepath.Join(dir, "gate.assert")
	os.WriteFile(assertFile, []byte("t99_after_s max <= 100000\n"), 0o644)

	old := night(t, cfg, "old")
	if stdout, stderr, code := sweep(t, "check", old); code != 0 {
		t.Fatalf("check of a whole night: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, stderr, code := sweep(t, "assert", "--results", old, assertFile); code != 0 {
		t.Fatalf("assert of a whole night: exit %d\n%s%s", code, stdout, stderr)
	}

	// A night whose shard 2 was lost: its parts deleted.
	lost := night(t, cfg, "lost")
	deleted := 0
	for _, table := range dataset.Tables {
		folder := filepath.Join(lost, table, "sweep=n")
		for _, e := range mustReadDir(t, folder) {
			if strings.HasPrefix(e.Name(), "part-2of4-") {
				os.Remove(filepath.Join(folder, e.Name()))
				deleted++
			}
		}
	}
	if deleted == 0 {
		t.Fatal("shard 2 wrote no part")
	}
	stdout, _, code := sweep(t, "check", lost)
	if code != 1 || !strings.Contains(stdout, "missing: "+filepath.Join(lost, "runs", "sweep=n", "_intent.")) ||
		!strings.Contains(stdout, "shard 2/4 lacks") || !strings.Contains(stdout, "to finish: `sweep run --config "+cfg+" --sweep n --shard 2/4`") {
		t.Errorf("check with a shard lost: exit %d\n%s", code, stdout)
	}
	for _, s := range []string{"0/4", "1/4", "3/4"} {
		if strings.Contains(stdout, "shard "+s) {
			t.Errorf("check names shard %s, which is whole:\n%s", s, stdout)
		}
	}
	stdout, _, code = sweep(t, "compare", old, lost)
	if code != 1 || !strings.Contains(stdout, "new lacks ") || !strings.Contains(stdout, "it was meant to hold: fails (--allow-missing to allow)") {
		t.Errorf("compare with a shard lost: exit %d\n%s", code, stdout)
	}
	if stdout, _, code := sweep(t, "compare", "--allow-missing", old, lost); code != 0 || !strings.Contains(stdout, "(allowed by --allow-missing)") {
		t.Errorf("compare --allow-missing with a shard lost: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := sweep(t, "report", "--results", lost, "--out", t.TempDir()); code != 0 || !strings.Contains(stderr, "sweep: warning: "+lost+" lacks ") {
		t.Errorf("report with a shard lost: exit %d, want 0 and a warning\n%s", code, stderr)
	}
	stdout, _, code = sweep(t, "assert", "--results", lost, assertFile)
	if code != 1 || !strings.Contains(stdout, "lacks ") || !strings.Contains(stdout, "of the 3 seeds it was meant to hold (seed") {
		t.Errorf("assert with a shard lost: exit %d\n%s", code, stdout)
	}
	stdout, _, code = sweep(t, "assert", "--json", "--results", lost, assertFile)
	var doc struct {
		Missing int `json:"missing_runs"`
		Results []struct {
			Violations []struct {
				Missing []uint32 `json:"missing_seeds"`
			} `json:"violations"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != 1 || doc.Missing == 0 || len(doc.Results[0].Violations) == 0 {
		t.Errorf("assert --json with a shard lost: exit %d, %v, %+v", code, err, doc)
	}
	// Finishing the night with the command check gave makes every gate pass.
	mustRun(t, "run", "--config", cfg, "--out", lost, "--shard", "2/4", "--no-report", "--quiet")
	for _, args := range [][]string{{"check", lost}, {"compare", old, lost}, {"assert", "--results", lost, assertFile}} {
		if stdout, stderr, code := sweep(t, args...); code != 0 {
			t.Errorf("%v after the shard ran again: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}

	// A night whose config changed a policy's parameter: its cells and
	// the old night's are on one side only.
	changed := filepath.Join(dir, "changed.toml")
	os.WriteFile(changed, bytes.Replace([]byte(nightConfig), []byte("cap_s = 30"), []byte("cap_s = 60"), 1), 0o644)
	moved := night(t, changed, "moved")
	stdout, _, code = sweep(t, "compare", old, moved)
	if code != 1 || !strings.Contains(stdout, "2 cells only in old, 2 cells only in new: fails (--allow-missing to allow)") ||
		!strings.Contains(stdout, "only in old: exponential") || !strings.Contains(stdout, "only in new: exponential") {
		t.Errorf("compare after a parameter changed: exit %d\n%s", code, stdout)
	}
	stdout, _, code = sweep(t, "compare", "--json", old, moved)
	var cdoc struct {
		OnlyOld []string `json:"only_old"`
		OnlyNew []string `json:"only_new"`
	}
	if err := json.Unmarshal([]byte(stdout), &cdoc); err != nil || code != 1 || len(cdoc.OnlyOld) != 2 || len(cdoc.OnlyNew) != 2 {
		t.Errorf("compare --json after a parameter changed: exit %d, %v, %+v", code, err, cdoc)
	}
	if _, _, code := sweep(t, "compare", "--allow-missing", old, moved); code != 0 {
		t.Errorf("compare --allow-missing after a parameter changed: exit %d", code)
	}
	if stdout, stderr, code := sweep(t, "check", moved); code != 0 {
		t.Errorf("check of the changed night: exit %d\n%s%s", code, stdout, stderr)
	}
}

// The shards of one job write one intent (it is named by its content);
// a rerun of the same config adds none, a changed config adds one; an
// intent edited by hand is named by check and refused by the gates (exit
// 2, naming it).
func TestIntentsAreWrittenOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "night.toml")
	os.WriteFile(cfg, []byte(nightConfig), 0o644)
	out := night(t, cfg, "out")
	intents := func() []string {
		var out2 []string
		for _, e := range mustReadDir(t, filepath.Join(out, "runs", "sweep=n")) {
			if strings.HasPrefix(e.Name(), "_intent.") {
				out2 = append(out2, e.Name())
			}
		}
		return out2
	}
	if got := intents(); len(got) != 1 {
		t.Fatalf("4 shards wrote %d intents, want 1: %v", len(got), got)
	}
	mustRun(t, "run", "--config", cfg, "--out", out, "--no-report", "--quiet")
	if got := intents(); len(got) != 2 {
		t.Fatalf("an unsharded rerun: %d intents, want 2 (it runs in 1 shard, not 4): %v", len(got), got)
	}
	mustRun(t, "run", "--config", cfg, "--out", out, "--no-report", "--quiet")
	if got := intents(); len(got) != 2 {
		t.Fatalf("the same rerun again: %d intents, want 2: %v", len(got), got)
	}
	var p, unsharded string // the intents of the 4 shards and of the unsharded rerun
	for _, name := range intents() {
		b, _ := os.ReadFile(filepath.Join(out, "runs", "sweep=n", name))
		if bytes.Contains(b, []byte(`"shards":4`)) {
			p = filepath.Join(out, "runs", "sweep=n", name)
		} else {
			unsharded = filepath.Join(out, "runs", "sweep=n", name)
		}
	}
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(b, []byte(`"seeds":"1-3"`), []byte(`"seeds":"1-2"`), 1), 0o644)
	if stdout, _, code := sweep(t, "check", out); code != 1 || !strings.Contains(stdout, "corrupt: "+p+": not an intent herdsweep wrote: its content is not what its name was written for") {
		t.Errorf("check of an edited intent: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := sweep(t, "compare", out, out); code != 2 || !strings.Contains(stderr, p) {
		t.Errorf("compare of an edited intent: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := sweep(t, "run", "--config", cfg, "--out", out, "--no-report", "--quiet"); code != 0 {
		t.Errorf("a rerun beside an edited intent of another plan: exit %d\n%s", code, stderr)
	}
	b, _ = os.ReadFile(unsharded)
	os.WriteFile(unsharded, append(b, ' '), 0o644)
	if _, stderr, code := sweep(t, "run", "--config", cfg, "--out", out, "--no-report", "--quiet"); code != 1 || !strings.Contains(stderr, unsharded+" is there and holds something else: damaged; move it away") {
		t.Errorf("a rerun whose own intent was edited: exit %d\n%s", code, stderr)
	}
}
