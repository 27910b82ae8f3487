package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
)

// planted is a file a test put in a dataset: what it must still hold.
type planted struct {
	path string
	data []byte
	mod  time.Time
}

// plant writes a file with the given content, dated age ago.
func plant(t *testing.T, path string, data []byte, age time.Duration) planted {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mod := time.Now().Add(-age).Truncate(time.Second)
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return planted{path, data, mod}
}

// untouched fails unless every planted file is there as planted.
func untouched(t *testing.T, when string, files ...planted) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Errorf("%s: %s: %v", when, f.path, err)
			continue
		}
		fi, _ := os.Stat(f.path)
		if !bytes.Equal(b, f.data) || !fi.ModTime().Equal(f.mod) {
			t.Errorf("%s: %s was changed", when, f.path)
		}
	}
}

// userFiles plants, in every folder of sweep sw of dataset dir, files a
// user or another program left there, two hours old: sweep must never
// remove or change them, whatever their names.
func userFiles(t *testing.T, dir, sw string) []planted {
	t.Helper()
	var out []planted
	for _, table := range dataset.Tables {
		f := filepath.Join(dir, table, "sweep="+sw)
		out = append(out,
			plant(t, filepath.Join(f, ".hidden.tmp"), []byte("a user's hidden file"), 2*time.Hour),
			plant(t, filepath.Join(f, ".part-x.parquet.123.tmp"), []byte("another program's temporary file"), 2*time.Hour),
			plant(t, filepath.Join(f, "notes.md"), []byte("# notes"), 2*time.Hour))
		if table != dataset.RunsDir { // a runs folder's *.parquet are its parts
			out = append(out, plant(t, filepath.Join(f, "my-analysis.parquet"), []byte("PAR1 a user's analysis PAR1"), 2*time.Hour))
		}
		out = append(out,
			plant(t, filepath.Join(f, "notes.txt"), []byte("notes"), 2*time.Hour))
	}
	return out
}

// deadPid is the id of a process of this host that is gone.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// A writer removes the leftovers of writers known to be gone, at once and
// naming each, and nothing else: not a user's *.parquet in a timelines
// folder, not another program's hidden *.tmp, whatever their age (both
// were removed: the hidden file at once by an unsharded writer, the
// *.parquet once older than an hour). A killed writer's uncommitted side
// part is removed by the next run at once (it stayed for 2 minutes, and
// check failed meanwhile), so that check and a direct reader of
// timelines/ agree with herdsweep's readers right after the resume.
func TestRunRemovesOnlyLeftoversOfGoneWriters(t *testing.T) {
	dir := smallDataset(t)
	user := userFiles(t, dir, "a")
	tl, _ := os.ReadFile(firstPart(t, dir, dataset.TimelinesDir))
	runsA, tlA := filepath.Join(dir, "runs", "sweep=a"), filepath.Join(dir, "timelines", "sweep=a")

	// A writer killed mid-commit: its lock, an uncommitted side part and a
	// temporary file, all just written; its process is gone.
	pid := deadPid(t)
	killed := fmt.Sprintf("part-all-00007-%s-%d-0badc0de.parquet", store.HostName(), pid)
	plant(t, filepath.Join(runsA, "_lock.all"), fmt.Appendf(nil, "host=%s\nspace=%s\npid=%d\nid=0badc0de\nshard=all\n", store.HostName(), store.PIDSpace(), pid), 0)
	plant(t, filepath.Join(tlA, killed), tl, 0)
	plant(t, filepath.Join(runsA, "."+killed+".4242.tmp"), []byte("half a part"), 0)
	// A writer at work on another host: its lock is fresh.
	live := "part-1of2-00003-elsewhere-77-1ivec0de.parquet"
	live = strings.Replace(live, "1ivec0de", "11ecc0de", 1)
	livePart := plant(t, filepath.Join(tlA, live), tl, 0)
	liveLock := plant(t, filepath.Join(runsA, "_lock.1of2"), []byte("host=elsewhere\nspace=x/1\npid=77\nid=11ecc0de\nshard=1of2\n"), 0)

	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--shard", "0/2", "--no-report", "--quiet")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"sweep: removing " + filepath.Join(tlA, killed) + ": a side-table part never committed of a writer that is gone (host " + store.HostName(),
		"sweep: removing " + filepath.Join(runsA, "."+killed+".4242.tmp") + ": a temporary file of a writer that is gone",
		"sweep: removing " + filepath.Join(runsA, "_lock.all") + ": the lock of a writer that is gone (host " + store.HostName(),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("run's messages lack %q:\n%s", want, stderr)
		}
	}
	if strings.Count(stderr, "sweep: removing") != 3 {
		t.Errorf("run removed more than the killed writer's three files:\n%s", stderr)
	}
	untouched(t, "after a run", append(user, livePart, liveLock)...)
	// The writer at work on another host: its commit in progress is a
	// problem of check (the dataset is not finished), never removed.
	stdout, _, code := sweep(t, "check", dir)
	if code != 1 || !strings.Contains(stdout, "orphan: "+filepath.Join(tlA, live)+": a side-table part being committed (host elsewhere, pid 77, at work)") {
		t.Errorf("check beside a writer at work: exit %d\n%s", code, stdout)
	}
	// Once that writer has been silent for longer than store.LockStale, it is
	// gone: the next writer removes its part, and check passes (but for the
	// user's files, which it names).
	old := time.Now().Add(-store.LockStale - time.Minute)
	os.Chtimes(liveLock.path, old, old)
	_, stderr, code = sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--no-report", "--quiet")
	if code != 0 || !strings.Contains(stderr, "sweep: removing "+filepath.Join(tlA, live)) || !strings.Contains(stderr, "sweep: removing "+liveLock.path+": the lock of a writer that is gone (host elsewhere, pid 77)") {
		t.Errorf("run after the other writer went silent: exit %d\n%s", code, stderr)
	}
	untouched(t, "after a second run", user...)
	stdout, _, _ = sweep(t, "check", dir)
	for _, u := range user {
		if !strings.Contains(stdout, u.path) {
			t.Errorf("check does not name %s:\n%s", u.path, stdout)
		}
		os.Remove(u.path)
	}
	if stdout, _, code := sweep(t, "check", dir); code != 0 {
		t.Errorf("check once the leftovers are gone: exit %d\n%s", code, stdout)
	}
}

// A writer never writes or removes anything through a sweep folder linked
// outside --out (it removed a hidden *.tmp there at once), nor a report
// through plots/ linked outside its --out.
func TestWritersStayInsideOut(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere")
	files := []planted{
		plant(t, filepath.Join(elsewhere, ".x.tmp"), []byte("not the dataset's"), 2*time.Hour),
		plant(t, filepath.Join(elsewhere, "x.parquet"), []byte("PAR1 not the dataset's PAR1"), 2*time.Hour),
	}
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Join(out, "timelines"), 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(out, "timelines", "sweep=a")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--quiet")
	if code != 2 || !strings.Contains(stderr, filepath.Join(out, "timelines", "sweep=a")+" is a symbolic link to "+elsewhere+", outside "+out) {
		t.Errorf("run through a linked sweep folder: exit %d\n%s", code, stderr)
	}
	untouched(t, "after run", files...)
	if es := mustReadDir(t, elsewhere); len(es) != 2 {
		t.Errorf("run wrote into the linked folder: %v", es)
	}

	res := smallDataset(t)
	rep := filepath.Join(dir, "rep")
	os.MkdirAll(rep, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(rep, "plots")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = sweep(t, "report", "--results", res, "--out", rep)
	if code != 2 || !strings.Contains(stderr, filepath.Join(rep, "plots")+" is a symbolic link to "+elsewhere+", outside "+rep) {
		t.Errorf("report through a linked plots/: exit %d\n%s", code, stderr)
	}
	if es := mustReadDir(t, elsewhere); len(es) != 2 {
		t.Errorf("report wrote into the linked folder: %d files", len(es))
	}
	if _, err := os.Stat(filepath.Join(rep, "report.md")); err == nil {
		t.Error("report wrote report.md after refusing")
	}
}

// The smaller things check got wrong: a dangling link with a part's name
// passed (every reader exits 2 on it); the lock of a writer that is gone
// failed it (it is a note now, and the next writer of those shards
// removes it).
func TestCheckAgreesWithReaders(t *testing.T) {
	dir := smallDataset(t)
	runsA := filepath.Join(dir, "runs", "sweep=a")
	link := filepath.Join(runsA, "part-all-00099-h-1-0123abcd.parquet")
	os.Symlink(filepath.Join(dir, "gone.parquet"), link)
	stdout, _, code := sweep(t, "check", dir)
	if code != 1 || !strings.Contains(stdout, "corrupt: "+link+": a symbolic link to "+filepath.Join(dir, "gone.parquet")+", which is not there") {
		t.Errorf("check of a dangling link: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := sweep(t, "report", "--results", dir, "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, link) {
		t.Errorf("report of a dangling link: exit %d\n%s", code, stderr)
	}
	os.Remove(link)

	lock := filepath.Join(runsA, "_lock.0of2")
	os.WriteFile(lock, fmt.Appendf(nil, "host=%s\nspace=%s\npid=%d\nid=0badc0de\nshard=0of2\n", store.HostName(), store.PIDSpace(), deadPid(t)), 0o644)
	stdout, _, code = sweep(t, "check", dir)
	if code != 0 || !strings.Contains(stdout, "note: leftover: "+lock+": the lock of a writer that is gone") || !strings.Contains(stdout, "no problems (1 note)") {
		t.Errorf("check with the lock of a writer that is gone: exit %d\n%s", code, stdout)
	}
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--no-report", "--quiet")
	if _, err := os.Stat(lock); code != 0 || err == nil || !strings.Contains(stderr, "sweep: removing "+lock) {
		t.Errorf("an unsharded run beside the lock of a gone shard: exit %d, %v\n%s", code, err, stderr)
	}

}

// A timelines part deleted from a dataset: report refuses it naming the
// part (it exited 0 without a word, drawing the figures without it).
func TestReportRefusesAMissingSidePart(t *testing.T) {
	dir := smallDataset(t)
	tl := firstPart(t, dir, dataset.TimelinesDir)
	os.Remove(tl)
	_, stderr, code := sweep(t, "report", "--results", dir, "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "report: "+tl+": not there, though its runs part commits ") {
		t.Errorf("report without a timelines part: exit %d\n%s", code, stderr)
	}
}

// A sweep folder removed while a run writes into it is named as such (it
// was "another writer took it over").
func TestRemovedSweepFolderIsNamed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	commits := 0
	commitHook = func(s *store.Writer) {
		if commits++; commits == 2 {
			os.RemoveAll(s.Dir(dataset.RunsDir))
		}
	}
	defer func() { commitHook = nil }()
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--part-rows", "10", "--no-report", "--quiet", "--workers", "1")
	if code != 1 || !strings.Contains(stderr, filepath.Join(out, "runs", "sweep=a")+" was removed while this run wrote into it") || strings.Contains(stderr, "took it over") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// A report killed while it wrote leaves a temporary file: the next report
// into the same folder removes it, naming it; a temporary file of a
// report at work (a process alive), or not named as a report names its
// own, stays.
func TestReportRemovesTheTempFilesOfAKilledReport(t *testing.T) {
	res := smallDataset(t)
	out := t.TempDir()
	// This process's temporary files are ".NAME."+store.ReportTemp(),
	// whose pid is this process's: another's differ in it.
	ours := fmt.Sprintf("-%d-*.tmp", os.Getpid())
	if !strings.HasSuffix(store.ReportTemp(), ours) || strings.HasSuffix(store.ReportTemp(), "-none"+ours) {
		t.Skip("no pid space here: a report cannot tell whether another is alive")
	}
	tempOf := func(pid, n int) string {
		return ".t99.png." + strings.Replace(store.ReportTemp(), ours, fmt.Sprintf("-%d-%d.tmp", pid, n), 1)
	}
	killed := plant(t, filepath.Join(out, "plots", tempOf(deadPid(t), 123)), []byte("half a figure"), 0)
	alive := plant(t, filepath.Join(out, "plots", tempOf(os.Getppid(), 124)), []byte("a figure being written"), 0)
	other := plant(t, filepath.Join(out, ".report.md.5678.tmp"), []byte("not named as ours"), 2*time.Hour)
	_, stderr, code := sweep(t, "report", "--results", res, "--out", out)
	if code != 0 || !strings.Contains(stderr, "report: removing "+killed.path+": a temporary file of a report that is gone") {
		t.Errorf("report: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(killed.path); err == nil {
		t.Error("the killed report's temporary file is still there")
	}
	untouched(t, "after report", alive, other)
	// What a report leaves while it writes is named so.
	for _, e := range mustReadDir(t, filepath.Join(out, "plots")) {
		if strings.HasSuffix(e.Name(), ".tmp") && filepath.Join(out, "plots", e.Name()) != alive.path {
			t.Errorf("report left %s", e.Name())
		}
	}
}
