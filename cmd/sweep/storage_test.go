package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
)

// Two unsharded writers of the same sweeps into one folder at once never
// store a run twice: one waits its turn or is refused with a message, and
// a rerun of the refused one completes the dataset one process writes;
// neither touches a file that is not its own. Three trials, one under
// -short (.ci/run's race step, where the writers run under the race
// detector).
func TestTwoUnshardedWritersNeverDouble(t *testing.T) {
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	mustRun(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", single, "--no-report", "--quiet")
	want := readTables(t, single)
	trials := 3
	if testing.Short() {
		trials = 1
	}
	for trial := range trials {
		out := filepath.Join(dir, fmt.Sprintf("two-%d", trial))
		user := append(userFiles(t, out, "k"), userFiles(t, out, "km")...)
		var wg sync.WaitGroup
		codes, stderrs := make([]int, 2), make([]string, 2)
		for i, rows := range []string{"5", "7"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, stderrs[i], codes[i] = sweepProcess(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", out,
					"--part-rows", rows, "--workers", "1", "--no-report", "--quiet")
			}()
		}
		wg.Wait()
		for i := range 2 {
			if codes[i] != 0 && (codes[i] != 1 || !strings.Contains(stderrs[i], "is being written by another sweep run")) {
				t.Errorf("trial %d: writer %d: exit %d, want 0, or 1 with the lock's message:\n%s", trial, i, codes[i], stderrs[i])
			}
		}
		for table, rows := range readTables(t, out) {
			if n := len(distinct(rows)); n != len(rows) {
				t.Errorf("trial %d: %s: %d rows stored twice", trial, table, len(rows)-n)
			}
		}
		mustRun(t, "run", "--config", "testdata/stress.toml", "--sweep", "k,km", "--out", out, "--no-report", "--quiet")
		onlyOurs(t, fmt.Sprintf("trial %d", trial), out, user)
		for _, u := range user {
			os.Remove(u.path)
		}
		got := readTables(t, out)
		for _, table := range []string{"runs", "timelines", "groups"} {
			if strings.Join(got[table], "\n") != strings.Join(want[table], "\n") {
				t.Errorf("trial %d: after a rerun, %s: %d rows, want the %d one process writes", trial, table, len(got[table]), len(want[table]))
			}
		}
		if stdout, _, code := sweep(t, "check", out); code != 0 {
			t.Errorf("trial %d: check: exit %d\n%s", trial, code, stdout)
		}
	}
}

// smallDataset runs testdata/small.toml's sweep a into a fresh folder.
func smallDataset(t *testing.T) string {
	t.Helper()
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	out := filepath.Join(t.TempDir(), "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--part-rows", "10", "--no-report", "--quiet")
	return out
}

// firstPart returns the path of the first part of a table's sweep a.
func firstPart(t *testing.T, dir, table string) string {
	t.Helper()
	l, err := dataset.List(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	parts := l.Runs
	if table != dataset.RunsDir {
		parts = l.Side[table]
	}
	if len(parts) == 0 {
		t.Fatalf("no %s parts in %s", table, dir)
	}
	return filepath.Join(dir, filepath.FromSlash(parts[0].Path()))
}

// corruptRuns replaces a runs part with one whose footer has two bytes
// changed, which makes the Parquet library panic.
func corruptRuns(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile("../../dataset/parquetio/testdata/corrupt-runs.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// foreignRuns writes a file with the runs schema's metadata whose run_key
// is a BIGINT.
func foreignRuns(t *testing.T, path string) {
	t.Helper()
	md := arrow.NewMetadata([]string{dataset.KeySchema}, []string{dataset.RunsSchema})
	sc := arrow.NewSchema([]arrow.Field{{Name: dataset.ColRunKey, Type: arrow.PrimitiveTypes.Int64}}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	b.Field(0).(*array.Int64Builder).Append(7)
	rec := b.NewRecordBatch()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Corrupt and foreign parts are named with what is wrong, never a panic:
// report, recommend and diff exit 2 (bad input, as cells, assert and
// compare do), check 1 (it found a problem).
func TestCorruptAndForeignParts(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, path string)
		want  string
		kind  string
	}{
		{"two corrupted bytes", corruptRuns, "corrupt Parquet file: ", "corrupt"},
		{"run_key as BIGINT", foreignRuns, `column "run_key" is int64: want utf8`, "foreign"},
		{"not Parquet", func(t *testing.T, path string) { os.WriteFile(path, []byte("PAR1 no footer PAR1"), 0o644) }, "not a Parquet file", "corrupt"},
	}
	good := smallDataset(t)
	for _, tt := range tests {
		dir := smallDataset(t)
		path := firstPart(t, dir, dataset.RunsDir)
		tt.spoil(t, path)
		_, stderr, code := sweep(t, "report", "--results", dir)
		if code != 2 || !strings.Contains(stderr, path+": "+tt.want) {
			t.Errorf("%s: report: exit %d, %s; want 2 and %q", tt.name, code, stderr, path+": "+tt.want)
		}
		_, stderr, code = sweep(t, "recommend", "--results", dir, "--capacity", "120", "--clients", "50")
		if code != 2 || !strings.Contains(stderr, path+": "+tt.want) {
			t.Errorf("%s: recommend: exit %d, %s; want 2 and %q", tt.name, code, stderr, path+": "+tt.want)
		}
		_, stderr, code = sweep(t, "diff", good, dir)
		if code != 2 || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, path) {
			t.Errorf("%s: diff: exit %d, %s; want 2 and %q", tt.name, code, stderr, tt.want)
		}
		stdout, _, code := sweep(t, "check", dir)
		if code != 1 || !strings.Contains(stdout, tt.kind+": "+path+": ") || !strings.Contains(stdout, tt.want) {
			t.Errorf("%s: check: exit %d\n%s; want 1 and %s: %s", tt.name, code, stdout, tt.kind, path)
		}
	}
}

// sweep check names every kind of problem, in text and JSON; exit 0 on a
// clean dataset, 1 with problems, 2 when the folder is not a dataset.
func TestCheck(t *testing.T) {
	dir := smallDataset(t)
	if stdout, stderr, code := sweep(t, "check", dir); code != 0 || !strings.Contains(stdout, "no problems") {
		t.Fatalf("check of a fresh dataset: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"check", filepath.Join(dir, "nope")}, {"check", filepath.Join(dir, "runs")}, {"check"},
		{"diff", dir, filepath.Join(dir, "nope")}, {"diff", filepath.Join(dir, "runs"), dir}, {"diff", dir}} {
		if _, stderr, code := sweep(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
	runs := filepath.Join(dir, "runs", "sweep=a")
	part := firstPart(t, dir, dataset.RunsDir)
	b, _ := os.ReadFile(part)
	twin := strings.Replace(filepath.Base(part), "-00000-", "-00099-", 1)
	os.WriteFile(filepath.Join(runs, twin), b, 0o644)                                   // every run of a part again
	os.WriteFile(filepath.Join(runs, ".part-x.parquet.123.tmp"), []byte("half"), 0o644) // a temporary file
	os.WriteFile(filepath.Join(runs, "_lock.3of4"), []byte("host=elsewhere\npid=1\n"), 0o644)
	os.WriteFile(filepath.Join(runs, "_part-00000.parquet.stale-herd-0"), b, 0o644)
	os.WriteFile(filepath.Join(runs, "notes.txt"), []byte("x"), 0o644)
	tl, _ := os.ReadFile(firstPart(t, dir, dataset.TimelinesDir))
	orphan := filepath.Join(dir, "timelines", "sweep=a", "part-0of4-00000-h-1-0123abcd.parquet")
	os.WriteFile(orphan, tl, 0o644)
	stdout, _, code := sweep(t, "check", dir)
	if code != 1 {
		t.Errorf("check: exit %d, want 1\n%s", code, stdout)
	}
	for _, want := range []string{
		"duplicate: " + filepath.Join(runs, twin) + ": 10 runs already stored in runs/sweep=a/" + filepath.Base(part),
		"temporary: " + filepath.Join(runs, ".part-x.parquet.123.tmp"),
		"lock: " + filepath.Join(runs, "_lock.3of4") + ": held by host elsewhere, pid 1",
		"stale: " + filepath.Join(runs, "_part-00000.parquet.stale-herd-0"),
		"unknown: " + filepath.Join(runs, "notes.txt"),
		"orphan: " + orphan + ": a side-table part whose runs part was never committed",
		"incomplete: " + filepath.Join(runs, twin) + ": commits ",
		"7 problems",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, code = sweep(t, "check", "--json", dir)
	var rep store.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 || len(rep.Problems) != 7 || rep.Tables[0].Rows != 46 || rep.Tables[0].Runs != 36 {
		t.Errorf("check --json: exit %d, %v, %+v", code, err, rep)
	}
	// Readers count the doubled runs once, and say so.
	_, stderr, code := sweep(t, "report", "--results", dir, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stderr, "10 rows repeat a run already stored in the same sweep") {
		t.Errorf("report of a doubled part: exit %d, %s", code, stderr)
	}
	stdout, _, code = sweep(t, "diff", smallDataset(t), dir)
	if code != 1 || !strings.Contains(stdout, "runs: 36 rows identical, 0 differ, 0 only in") || !strings.Contains(stdout, "rows stored more than once: 0 in") {
		t.Errorf("diff with a doubled part: exit %d\n%s", code, stdout)
	}
}

// A part the commit left incomplete (its side rows gone) is found by the
// runs part's manifest.
func TestCheckFindsMissingSideRows(t *testing.T) {
	dir := smallDataset(t)
	tl := firstPart(t, dir, dataset.TimelinesDir)
	os.Remove(tl)
	stdout, _, code := sweep(t, "check", dir)
	runsPart := filepath.Join(dir, "runs", "sweep=a", filepath.Base(tl))
	if code != 1 || !strings.Contains(stdout, "incomplete: "+runsPart+": commits ") || !strings.Contains(stdout, "its timelines part holds 0") {
		t.Errorf("check after a timelines part was lost: exit %d\n%s", code, stdout)
	}
}

// The first error is the one reported, with its path: a commit that failed
// is not tried again (which used to print "only 0 out of 8 columns are
// initialized" instead).
func TestFirstCommitErrorIsReported(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	commits := 0
	commitHook = func(s *store.Writer) {
		if commits++; commits == 2 {
			os.RemoveAll(s.Dir(dataset.TimelinesDir))
		}
	}
	defer func() { commitHook = nil }()
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--part-rows", "10", "--no-report", "--quiet", "--workers", "1")
	want := "sweep: writing " + filepath.Join(out, "timelines", "sweep=a", "part-all-00001-")
	if code != 1 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "no such file or directory") || strings.Contains(stderr, "columns are initialized") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1 and %q… no such file or directory", code, stderr, want)
	}
}

// A run stored in one sweep's folder is not run again for another, unless
// that sweep wants its timeline and the stored copy has none; check takes
// that second copy for what it is, not a duplicate.
func TestRunsSharedBetweenSweeps(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "shared.toml")
	os.WriteFile(cfg, []byte(`[defaults]
clients = 60
capacity_rps = 15
recover_s = 5
window_s = 300
seeds = {from = 1, to = 4}
[sweep.plain]
policy = ["decorrelated", "full-jitter"]
[sweep.tl]
policy = ["decorrelated", "fixed"]
timeline_seeds = 1
`), 0o644)
	for _, order := range [][]string{{"plain", "tl"}, {"tl", "plain"}} {
		out := filepath.Join(t.TempDir(), "out")
		var done []string
		for _, s := range order {
			stdout := mustRun(t, "run", "--config", cfg, "--sweep", s, "--out", out, "--no-report", "--quiet")
			m := doneLine.FindStringSubmatch(stdout)
			done = append(done, m[1]+" "+m[2]+" done "+m[3]+" skipped")
		}
		want := []string{"plain 8 done 0 skipped", "tl 5 done 3 skipped"} // tl reruns decorrelated seed 1 for its timeline
		if order[0] == "tl" {
			want = []string{"tl 8 done 0 skipped", "plain 4 done 4 skipped"}
		}
		if strings.Join(done, ", ") != strings.Join(want, ", ") {
			t.Errorf("%v: %v, want %v", order, done, want)
		}
		if stdout, _, code := sweep(t, "check", out); code != 0 {
			t.Errorf("%v: check: exit %d\n%s", order, code, stdout)
		}
		// The same part copied into a third sweep's folder is a duplicate.
		part := firstPart(t, out, dataset.RunsDir)
		b, _ := os.ReadFile(part)
		os.MkdirAll(filepath.Join(out, "runs", "sweep=zz"), 0o755)
		os.WriteFile(filepath.Join(out, "runs", "sweep=zz", filepath.Base(part)), b, 0o644)
		if stdout, _, code := sweep(t, "check", out); code != 1 || !strings.Contains(stdout, "duplicate: "+filepath.Join(out, "runs", "sweep=zz")) {
			t.Errorf("%v: check of a part copied to another sweep: exit %d\n%s", order, code, stdout)
		}
	}
}

// sweep run ends with the same check on what it wrote, and fails naming
// the problem: here a copy of its first part appears beside it mid-run.
func TestRunChecksWhatItWrote(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	commits := 0
	commitHook = func(s *store.Writer) {
		if commits++; commits == 2 {
			dir := s.Dir(dataset.RunsDir)
			b, err := os.ReadFile(filepath.Join(dir, s.Own()[0]))
			if err != nil {
				t.Error(err)
			}
			os.WriteFile(filepath.Join(dir, "part-copy.parquet"), b, 0o644)
		}
	}
	defer func() { commitHook = nil }()
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--part-rows", "10", "--no-report", "--quiet")
	if code != 1 || !strings.Contains(stderr, "duplicate: ") || !strings.Contains(stderr, "10 runs already stored in") || !strings.Contains(stderr, "the 4 parts this run wrote have 1 problem (see above)") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
