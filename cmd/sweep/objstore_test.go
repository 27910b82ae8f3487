package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store/objstore"
	"github.com/herdsweep/herdsweep/internal/s3test"
)

// bucketKeys lists every key of the test server's bucket under prefix.
func bucketKeys(t *testing.T, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	b, _, err := objstore.Open(ctx, "s3://"+s3test.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var walk func(p string)
	walk = func(p string) {
		objs, dirs, err := b.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			keys = append(keys, o.Key)
		}
		for _, d := range dirs {
			walk(d)
		}
	}
	walk(prefix)
	return keys
}

// putObject writes an object of the test server's bucket.
func putObject(t *testing.T, key string, data []byte) {
	t.Helper()
	b, _, err := objstore.Open(context.Background(), "s3://"+s3test.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
}

// A dataset on an S3-compatible server: run writes it and its report,
// every reader reads it as it reads the same dataset in a folder (diff
// finds no row apart, compare no change), a rerun skips what is
// committed, check passes, then names a corrupt part.
func TestObjectStorageRunReportCheck(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	s3test.Start(t, s3test.Options{})
	dir := t.TempDir()
	local, remote := filepath.Join(dir, "local"), "s3://"+s3test.Bucket+"/nightly/ds"
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", local, "--part-rows", "10", "--no-report", "--quiet")
	out := mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", remote, "--part-rows", "10", "--quiet")
	if m := doneLine.FindStringSubmatch(out); m == nil || m[2] != "36" {
		t.Fatalf("run into %s: %q, want 36 runs done", remote, out)
	}
	if !strings.Contains(out, "report: "+remote+"/report.md") {
		t.Errorf("run output %q does not name the report at %s/report.md", out, remote)
	}
	keys := strings.Join(bucketKeys(t, "nightly/ds/"), "\n")
	for _, want := range []string{"nightly/ds/report.md", "nightly/ds/runs/sweep=a/part-all-00000-", "nightly/ds/timelines/sweep=a/part-all-00000-", "nightly/ds/runs/sweep=a/_intent."} {
		if !strings.Contains(keys, want) {
			t.Errorf("the bucket lacks %s…; it holds:\n%s", want, keys)
		}
	}
	if strings.Contains(keys, "_lock.") || strings.Contains(keys, ".probe") || strings.Contains(keys, ".tmp") {
		t.Errorf("a finished run left a lock, a probe or a temporary object:\n%s", keys)
	}
	if stdout, stderr, code := sweep(t, "diff", local, remote); code != 0 {
		t.Errorf("diff of the folder and the bucket: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, stderr, code := sweep(t, "compare", local, "file://"+remote[len("s3://"):]); code != 2 || !strings.Contains(stderr, "nightly/ds") {
		t.Errorf("compare with a file:// path that is not there: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, stderr, code := sweep(t, "compare", "file://"+local, remote); code != 0 {
		t.Errorf("compare of the folder and the bucket: exit %d\n%s%s", code, stdout, stderr)
	}
	mustRun(t, "cells", "--results", remote, "--out", filepath.Join(dir, "cells.parquet"))
	mustRun(t, "cells", "--results", remote) // beside the dataset, as in a folder
	if keys := strings.Join(bucketKeys(t, "nightly/ds/"), "\n"); !strings.Contains(keys, "nightly/ds/cells.parquet") {
		t.Errorf("cells --results %s wrote no cells.parquet beside the dataset:\n%s", remote, keys)
	}
	assertions := filepath.Join(dir, "gate.txt")
	os.WriteFile(assertions, []byte("t99_after_s max <= 100000\n"), 0o644)
	mustRun(t, "assert", "--results", remote, assertions)
	rep := filepath.Join(dir, "report")
	mustRun(t, "report", "--results", remote, "--out", rep)
	if fi, err := os.Stat(filepath.Join(rep, "report.md")); err != nil || fi.Size() == 0 {
		t.Errorf("report --results %s --out %s: %v", remote, rep, err)
	}
	mustRun(t, "check", remote)
	// plan's row: sweep, cells, seeds, runs, in the dataset, to run, …
	if out := mustRun(t, "plan", "--config", "testdata/small.toml", "--sweep", "a", "--out", remote); !strings.Contains(out, "in "+remote) ||
		!regexp.MustCompile(`(?m)^\s+a\s+6\s+6\s+36\s+36\s+0\s`).MatchString(out) {
		t.Errorf("plan --out %s of a finished sweep: %q, want its 36 runs there and 0 to run", remote, out)
	}
	out = mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", remote, "--no-report", "--quiet")
	if m := doneLine.FindStringSubmatch(out); m == nil || m[2] != "0" || m[3] != "36" {
		t.Errorf("rerun: %q, want 0 runs done and 36 skipped", out)
	}
	corrupt, err := os.ReadFile("../../dataset/parquetio/testdata/corrupt-runs.parquet")
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, k := range bucketKeys(t, "nightly/ds/runs/sweep=a/") {
		if dataset.IsPart(filepath.Base(k)) {
			first = k
			break
		}
	}
	putObject(t, first, corrupt)
	stdout, _, code := sweep(t, "check", remote)
	if code != 1 || !strings.Contains(stdout, "corrupt") || !strings.Contains(stdout, strings.TrimPrefix(first, "nightly/ds/")) {
		t.Errorf("check of a bucket with a corrupt part %s: exit %d\n%s", first, code, stdout)
	}
}

// A store that does not honour conditional writes is refused before
// anything is written, saying why; so is a scheme no store speaks.
func TestObjectStorageWithoutConditionalWritesIsRefused(t *testing.T) {
	s3test.Start(t, s3test.Options{Unconditional: true})
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", "s3://"+s3test.Bucket+"/ds", "--quiet")
	if code != 2 || !strings.Contains(stderr, "does not honour conditional writes") || !strings.Contains(stderr, "If-None-Match") {
		t.Errorf("exit %d, %s; want 2 and the reason", code, stderr)
	}
	if keys := bucketKeys(t, ""); len(keys) != 0 {
		t.Errorf("a refused run left %q", keys)
	}
	_, stderr, code = sweep(t, "run", "--config", "testdata/small.toml", "--out", "ftp://host/ds", "--quiet")
	if code != 2 || !strings.Contains(stderr, "want a folder, file://PATH, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX") {
		t.Errorf("ftp://: exit %d, %s", code, stderr)
	}
	// Commands that write pages into a folder only refuse a bucket.
	for _, args := range [][]string{{"reproduce", "--out", "s3://" + s3test.Bucket + "/r"}, {"live", "--library", "grpc-go", "--out", "s3://" + s3test.Bucket + "/l"}} {
		_, stderr, code = sweep(t, args...)
		if code != 2 || !strings.Contains(stderr, "want a folder") {
			t.Errorf("%s --out s3://…: exit %d, %s", args[0], code, stderr)
		}
	}
}

// runAll runs each of args as a sweep process at once (sweepProcess), and
// returns their exit codes and standard errors.
func runAll(t *testing.T, args ...[]string) ([]int, []string) {
	var wg sync.WaitGroup
	codes, stderrs := make([]int, len(args)), make([]string, len(args))
	for i, a := range args {
		wg.Go(func() { _, stderrs[i], codes[i] = sweepProcess(t, a...) })
	}
	wg.Wait()
	return codes, stderrs
}

// Four shards written at once into one bucket lose and double nothing; two
// unsharded writers at once do not both write: one waits or is refused,
// and a rerun completes what one process writes.
func TestObjectStorageConcurrentWriters(t *testing.T) {
	s3test.Start(t, s3test.Options{})
	single := filepath.Join(t.TempDir(), "single")
	mustRun(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", single, "--no-report", "--quiet")
	want := readTables(t, single)
	same := func(what, out string) {
		t.Helper()
		got := readTables(t, out)
		for _, table := range []string{"runs", "timelines", "groups"} {
			if n := len(distinct(got[table])); n != len(got[table]) {
				t.Errorf("%s: %s: %d rows stored twice", what, table, len(got[table])-n)
			}
			if strings.Join(got[table], "\n") != strings.Join(want[table], "\n") {
				t.Errorf("%s: %s: %d rows, want the %d one process writes", what, table, len(got[table]), len(want[table]))
			}
		}
		if stdout, _, code := sweep(t, "check", out); code != 0 {
			t.Errorf("%s: check: exit %d\n%s", what, code, stdout)
		}
	}
	shards := "s3://" + s3test.Bucket + "/shards"
	var args [][]string
	for i := range 4 {
		args = append(args, []string{"run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", shards,
			"--shard", fmt.Sprintf("%d/4", i), "--part-rows", "5", "--workers", "1", "--no-report", "--quiet"})
	}
	codes, stderrs := runAll(t, args...)
	for i := range codes {
		if codes[i] != 0 {
			t.Errorf("shard %d/4: exit %d\n%s", i, codes[i], stderrs[i])
		}
	}
	same("four shards at once", shards)

	two := "s3://" + s3test.Bucket + "/two"
	codes, stderrs = runAll(t,
		[]string{"run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", two, "--part-rows", "5", "--workers", "1", "--no-report", "--quiet"},
		[]string{"run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", two, "--part-rows", "7", "--workers", "1", "--no-report", "--quiet"})
	for i := range codes {
		if codes[i] != 0 && (codes[i] != 1 || !strings.Contains(stderrs[i], "is being written by another sweep run")) {
			t.Errorf("writer %d: exit %d, want 0, or 1 with the lock's message:\n%s", i, codes[i], stderrs[i])
		}
	}
	for table, rows := range readTables(t, two) {
		if n := len(distinct(rows)); n != len(rows) {
			t.Errorf("two writers at once: %s: %d rows stored twice", table, len(rows)-n)
		}
	}
	mustRun(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", two, "--no-report", "--quiet")
	same("two writers, then a rerun", two)
}

// A writer killed with SIGKILL while it commits into a bucket leaves
// nothing a reader counts: a rerun completes the dataset with no run
// missing or twice, and removes what the killed writer left.
func TestObjectStorageKilledRunResumes(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	s3test.Start(t, s3test.Options{})
	dir := t.TempDir()
	killed, whole := "s3://"+s3test.Bucket+"/killed", filepath.Join(dir, "whole")
	cfg, fast := signalConfigs(t, dir)
	cmd := exec.Command(os.Args[0], "run", "--config", cfg, "--out", killed, "--part-rows", "10", "--workers", "2", "--no-report", "--quiet")
	cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		parts := 0
		for _, k := range bucketKeys(t, "killed/runs/sweep=a/") {
			if dataset.IsPart(filepath.Base(k)) {
				parts++
			}
		}
		if parts >= 3 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no 3 parts in %s after three minutes", killed)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the run finished before it was killed: its slow cell should take hours")
	}
	// The killed writer's lock is fresh: the rerun, a process of this
	// host whose pid is gone, takes it over at once.
	out := mustRun(t, "run", "--config", fast, "--out", killed, "--no-report", "--quiet")
	if m := doneLine.FindStringSubmatch(out); m == nil || m[3] == "0" {
		t.Errorf("rerun after kill: %q, want some runs skipped", out)
	}
	mustRun(t, "run", "--config", fast, "--out", whole, "--no-report", "--quiet")
	if stdout, stderr, code := sweep(t, "diff", killed, whole); code != 0 {
		t.Errorf("killed and resumed vs whole: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, _ := sweep(t, "check", killed)
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.Contains(line, ": ") && !strings.HasPrefix(line, "missing: ") && !strings.HasPrefix(line, "runs: ") && !strings.HasPrefix(line, "timelines: ") && !strings.HasPrefix(line, "groups: ") && !strings.HasPrefix(line, killed+": ") {
			t.Errorf("check after kill and resume: %s", line)
		}
	}
	keys := bucketKeys(t, "killed/")
	runs := map[string]bool{}
	for _, k := range keys {
		if strings.HasPrefix(k, "killed/runs/") {
			runs[filepath.Base(k)] = true
		}
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "killed/runs/") && !runs[filepath.Base(k)] {
			t.Errorf("after the resume, %s has no runs part: a direct reader would read it", k)
		}
	}
}
