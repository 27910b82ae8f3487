package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"
)

// tables is a dataset's rows as a reader sees them, one string per row,
// sorted: runs, timelines and groups.
type tables map[string][]string

// readTables reads every visible part of every table of dir: the runs
// parts, and the side-table parts their commit made visible.
func readTables(t *testing.T, dir string) tables {
	t.Helper()
	out := tables{}
	fsys := store.FS(dir) // a folder, or object storage
	l, err := dataset.List(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"runs", "timelines", "groups"} {
		var files []string
		parts := l.Runs
		if table != "runs" {
			parts = l.Side[table]
		}
		for _, p := range parts {
			files = append(files, p.Path())
		}
		var rows []string
		for _, p := range files {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				t.Fatal(err)
			}
			r := bytes.NewReader(b)
			switch table {
			case "runs":
				recs, _, err := parquetio.ReadRuns(r)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				for _, x := range recs {
					rows = append(rows, fmt.Sprintf("%+v", x))
				}
			case "timelines":
				tl, _, err := parquetio.ReadTimelines(r)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				for _, x := range tl {
					rows = append(rows, fmt.Sprintf("%+v", x))
				}
			case "groups":
				gr, _, err := parquetio.ReadGroups(r)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				for _, x := range gr {
					rows = append(rows, fmt.Sprintf("%+v", x))
				}
			}
		}
		sort.Strings(rows)
		out[table] = rows
	}
	return out
}

// distinct returns the sorted rows without repeats.
func distinct(rows []string) []string {
	var out []string
	for i, r := range rows {
		if i == 0 || r != rows[i-1] {
			out = append(out, r)
		}
	}
	return out
}

// onlyOurs fails unless every file of dir's table folders is one a test
// planted (and left as planted) or one named as a writer names its own: a
// part, an intent, a lock, a temporary file of a part.
func onlyOurs(t *testing.T, when, dir string, user []planted) {
	t.Helper()
	untouched(t, when, user...)
	mine := map[string]bool{}
	for _, u := range user {
		mine[u.path] = true
	}
	for _, table := range dataset.Tables {
		filepath.WalkDir(filepath.Join(dir, table), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || mine[p] {
				return nil
			}
			name := d.Name()
			if _, ok := store.ParsePartName(name); !ok && !dataset.IsIntent(name) && !strings.HasPrefix(name, "_lock.") {
				t.Errorf("%s: %s is neither a file of ours nor one planted", when, p)
			}
			return nil
		})
	}
}

// Four shards running at once into one folder, several times over, make
// exactly the dataset one process makes: on every table the same rows,
// none missing, none twice, and no file but their own touched (a user's
// files in every folder stay as they were). Before the commit protocol
// (65e442f) every trial failed: shards deleted each other's side parts in
// mid-commit, exited 1, and rows went missing or were stored twice; so
// under -short (.ci/run's race step, where the shards run under the race
// detector) one trial is run.
func TestStressConcurrentShards(t *testing.T) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	mustRun(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", single, "--part-rows", "5", "--no-report", "--quiet")
	want := readTables(t, single)
	for table, rows := range want {
		if len(rows) == 0 {
			t.Fatalf("the single-process dataset has no %s rows", table)
		}
	}
	trials := 3
	if testing.Short() {
		trials = 1
	}
	for trial := range trials {
		out := filepath.Join(dir, fmt.Sprintf("shards-%d", trial))
		user := append(userFiles(t, out, "k"), userFiles(t, out, "km")...)
		var wg sync.WaitGroup
		errs := make([]string, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", out,
					"--part-rows", "5", "--workers", "1", "--no-report", "--quiet", "--shard", fmt.Sprintf("%d/4", i))
				cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
				if b, err := cmd.CombinedOutput(); err != nil {
					errs[i] = fmt.Sprintf("shard %d/4: %v\n%s", i, err, b)
				}
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != "" {
				t.Errorf("trial %d: %s", trial, e)
			}
		}
		got := readTables(t, out)
		for _, table := range []string{"runs", "timelines", "groups"} {
			g, w := got[table], want[table]
			if len(g) != len(w) || len(distinct(g)) != len(g) {
				t.Errorf("trial %d: %s: %d rows (%d distinct), want %d as one process wrote", trial, table, len(g), len(distinct(g)), len(w))
			}
			if diff := cmp.Diff(distinct(w), distinct(g)); diff != "" {
				t.Errorf("trial %d: %s rows differ from one process's (-want +got): %d lines of diff", trial, table, strings.Count(diff, "\n"))
			}
		}
		if stdout, stderr, code := sweep(t, "diff", single, out); code != 0 {
			t.Errorf("trial %d: diff of one process and four shards: exit %d\n%s%s", trial, code, stdout, stderr)
		}
		onlyOurs(t, fmt.Sprintf("trial %d", trial), out, user)
		for _, u := range user {
			os.Remove(u.path)
		}
		if stdout, stderr, code := sweep(t, "check", out); code != 0 {
			t.Errorf("trial %d: check: exit %d\n%s%s", trial, code, stdout, stderr)
		}
	}
}
