package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/golden"
	"github.com/herdsweep/herdsweep/sim"
)

// TestMain lets the test binary stand in for the sweep command, so that a
// test can run (and kill) it as a real process without building it.
func TestMain(m *testing.M) {
	if os.Getenv("HERDSWEEP_BE_SWEEP") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sweep runs the command in-process and returns its output and exit code.
func sweep(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	err := run(context.Background(), args, &o, &e)
	if err != nil && !alreadyPrinted(err) {
		e.WriteString("sweep: " + err.Error() + "\n")
	}
	return o.String(), e.String(), exitCode(err)
}

func TestCLIGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"help"}, 0},
		{"policies", []string{"policies"}, 0},
		{"schema", []string{"schema", "--markdown"}, 0},
		{"no-command", nil, 2},
		{"unknown-command", []string{"sweeep"}, 2},
		{"bad-flag", []string{"run", "--workers", "many"}, 2},
		{"typo-flag", []string{"recommend", "--capcity", "300"}, 2},
		{"typo-command", []string{"reccomend"}, 2},
		{"bad-duration", []string{"recommend", "--capacity", "300", "--outage", "30"}, 2},
		{"missing-capacity", []string{"recommend"}, 2},
		{"bad-config", []string{"run", "--config", "testdata/bad.toml", "--out", "testdata/never-written"}, 2},
		{"missing-config", []string{"plan", "--config", "testdata/nope.toml"}, 2},
		{"unknown-sweep", []string{"run", "--config", "testdata/small.toml", "--sweep", "c", "--out", "testdata/never-written"}, 2},
		{"bad-shard", []string{"run", "--config", "testdata/small.toml", "--shard", "3/3", "--out", "testdata/never-written"}, 2},
	}
	for _, tt := range tests {
		stdout, stderr, code := sweep(t, tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s", tt.name, code, tt.code, stderr)
		}
		golden.CheckString(t, "testdata/"+tt.name+".golden", "$ sweep "+strings.Join(tt.args, " ")+"\n"+stdout+"-- stderr --\n"+stderr)
	}
	if _, err := os.Stat("testdata/never-written"); err == nil {
		t.Error("a refused run created its output folder")
	}
}

// Every command's -h goes to stdout, lists its options and stays true as
// flags change (the goldens are the help as users see it).
func TestHelpOfEveryCommand(t *testing.T) {
	for _, c := range commands() {
		for _, h := range []string{"-h", "--help"} {
			stdout, stderr, code := sweep(t, c.name, h)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: sweep "+c.name) && !strings.Contains(stdout, "\nUsage: sweep "+c.name) {
				t.Errorf("sweep %s %s: exit %d, stderr %q, stdout %q", c.name, h, code, stderr, stdout)
			}
			if strings.Contains(stdout, "%%") || strings.Contains(stdout, "%!") {
				t.Errorf("sweep %s %s: a format verb printed as text (%%%% or %%!): %q", c.name, h, stdout)
			}
			if h == "-h" {
				golden.CheckString(t, "testdata/help-"+c.name+".golden", "$ sweep "+c.name+" -h\n"+stdout)
			}
		}
	}
}

// Flags may come after the arguments.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--out", res, "--quiet", "--no-report")
	stdout, stderr, code := sweep(t, "diff", res, res, "-n", "2")
	if code != 0 {
		t.Errorf("diff A B -n 2: exit %d\n%s%s", code, stdout, stderr)
	}
	js := mustRun(t, "diff", "--json", res, res)
	var doc struct {
		Same   bool `json:"same"`
		Tables []struct {
			Table     string `json:"table"`
			Identical int    `json:"identical"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || !doc.Same || len(doc.Tables) != 3 || doc.Tables[0].Identical == 0 {
		t.Errorf("diff --json: %v\n%s", err, js)
	}
	if _, stderr, code := sweep(t, "diff", res); code != 2 || !strings.Contains(stderr, "got 1 argument\n") {
		t.Errorf("diff with one folder: exit %d, %q", code, stderr)
	}
}

// files returns every file under dir with its bytes, by relative path.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bySequence renames each part file of files to its folder and sequence
// number: what stays the same between two writers of the same runs.
func bySequence(t *testing.T, files map[string][]byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name, b := range files {
		if p, ok := store.ParsePartName(filepath.Base(name)); ok {
			name = filepath.Join(filepath.Dir(name), fmt.Sprintf("#%05d", p.Seq))
		}
		if _, dup := out[name]; dup {
			t.Fatalf("two parts of one sequence number: %s", name)
		}
		out[name] = b
	}
	return out
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := sweep(t, args...)
	if code != 0 {
		t.Fatalf("sweep %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

var doneLine = regexp.MustCompile(`(?m)^(\w+): (\d+) runs done, (\d+) skipped`)

func TestRunIsDeterministicIncrementalAndShardable(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	out := mustRun(t, "run", "--config", "testdata/small.toml", "--out", one, "--workers", "1", "--part-rows", "40", "--no-report", "--quiet")
	mustRun(t, "run", "--config", "testdata/small.toml", "--out", two, "--workers", "2", "--part-rows", "40", "--no-report", "--quiet")
	m := doneLine.FindAllStringSubmatch(out, -1)
	if len(m) != 2 || m[0][2] != "36" || m[1][2] != "60" {
		t.Fatalf("first run: %q, want 36 runs of a and 60 of b", out)
	}
	// Byte-identical datasets, whatever the worker count (part names hold
	// the writer's host, pid and a random id: compare them by sequence).
	f1, f2 := bySequence(t, files(t, one)), bySequence(t, files(t, two))
	if len(f1) != len(f2) || len(f1) < 6 {
		t.Fatalf("%d files with 1 worker, %d with 2", len(f1), len(f2))
	}
	for name, b := range f1 {
		if !bytes.Equal(b, f2[name]) {
			t.Errorf("%s differs between 1 and 2 workers", name)
		}
	}

	// A rerun runs nothing; a new seed runs only the new runs.
	out = mustRun(t, "run", "--config", "testdata/small.toml", "--out", one, "--no-report", "--quiet")
	if m := doneLine.FindAllStringSubmatch(out, -1); m[0][2] != "0" || m[0][3] != "36" || m[1][2] != "0" {
		t.Errorf("rerun: %q, want everything skipped", out)
	}
	more := filepath.Join(dir, "more.toml")
	src, _ := os.ReadFile("testdata/small.toml")
	os.WriteFile(more, bytes.Replace(src, []byte("to = 6}"), []byte("to = 7}"), 1), 0o644)
	out = mustRun(t, "run", "--config", more, "--sweep", "a", "--out", one, "--no-report", "--quiet")
	if m := doneLine.FindStringSubmatch(out); m == nil || m[2] != "6" || m[3] != "36" {
		t.Errorf("one more seed: %q, want 6 runs done and 36 skipped", out)
	}

	// Three shards into one folder make the same dataset as one process.
	sharded := filepath.Join(dir, "sharded")
	total := 0
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		out := mustRun(t, "run", "--config", "testdata/small.toml", "--out", sharded, "--shard", s, "--no-report", "--quiet")
		for _, m := range doneLine.FindAllStringSubmatch(out, -1) {
			n := 0
			for _, c := range m[2] {
				n = n*10 + int(c-'0')
			}
			if n == 0 {
				t.Errorf("shard %s of %s ran nothing", s, m[1])
			}
			total += n
		}
	}
	if total != 96 {
		t.Errorf("shards ran %d runs in all, want 96", total)
	}
	if stdout, stderr, code := sweep(t, "diff", two, sharded); code != 0 {
		t.Errorf("diff of one process and three shards: exit %d\n%s%s", code, stdout, stderr)
	}
	if stdout, _, code := sweep(t, "diff", one, two); code != 1 || !strings.Contains(stdout, "6 only in") {
		t.Errorf("diff of datasets that differ by a seed: exit %d\n%s", code, stdout)
	}
}

// A sweep killed with SIGKILL at any moment is completed by a rerun, with
// no run missing and none twice; the rerun leaves nothing of the killed
// writer's (check passes at once, and a direct reader of a side table
// sees only committed parts), and touches no file that is not ours.
func TestKilledRunResumes(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1780000000")
	dir := t.TempDir()
	killed, whole := filepath.Join(dir, "killed"), filepath.Join(dir, "whole")
	cfg, fast := signalConfigs(t, dir)
	user := userFiles(t, killed, "a")
	cmd := exec.Command(os.Args[0], "run", "--config", cfg, "--out", killed, "--part-rows", "10", "--workers", "2", "--no-report", "--quiet")
	cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForParts(t, cmd, filepath.Join(killed, "runs", "sweep=a"), 3)
	cmd.Process.Signal(syscall.SIGKILL)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the run finished before it was killed: its slow cell should take hours")
	}
	before := len(files(t, killed))
	out := mustRun(t, "run", "--config", fast, "--out", killed, "--no-report", "--quiet")
	if m := doneLine.FindStringSubmatch(out); m == nil || m[3] == "0" {
		t.Errorf("rerun after kill (%d files were there): %q, want some runs skipped", before, out)
	}
	mustRun(t, "run", "--config", fast, "--out", whole, "--no-report", "--quiet")
	if stdout, stderr, code := sweep(t, "diff", killed, whole); code != 0 {
		t.Errorf("killed and resumed vs whole: exit %d\n%s%s", code, stdout, stderr)
	}
	onlyOurs(t, "after the resume", killed, user)
	for _, u := range user {
		os.Remove(u.path)
	}
	// The slow config's intent asks for the slow cell, which the fast
	// rerun does not run: check names those runs missing, and nothing else.
	stdout, _, _ := sweep(t, "check", killed)
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.Contains(line, ": ") && !strings.HasPrefix(line, "missing: ") && !strings.HasPrefix(line, "runs: ") && !strings.HasPrefix(line, "timelines: ") && !strings.HasPrefix(line, "groups: ") && !strings.HasPrefix(line, killed+": ") {
			t.Errorf("check after kill and resume: %s", line)
		}
	}
	for _, table := range dataset.SideTables {
		for _, e := range mustReadDir(t, filepath.Join(killed, table, "sweep=a")) {
			if _, err := os.Stat(filepath.Join(killed, "runs", "sweep=a", e.Name())); err != nil {
				t.Errorf("after the resume, %s/%s has no runs part: a direct reader would read it", table, e.Name())
			}
		}
	}
}

// signalSeeds is how many seeds each fast cell of signalConfigs runs: 40,
// or 10 under -short (.ci/run's race step, where the processes run under
// the race detector): 240 fast runs in 24 parts of 10, or 60 in 6.
func signalSeeds() int {
	if testing.Short() {
		return 10
	}
	return 40
}

// signalConfigs writes two configs of sweep a: cfg, whose fast cells (6 ×
// signalSeeds runs) are followed by a slow one that takes hours (a
// metastable server over a 10⁶ s horizon), so that a process signalled
// while it writes parts cannot have finished; and fast, the same fast
// cells alone, for reruns.
func signalConfigs(t *testing.T, dir string) (cfg, fast string) {
	t.Helper()
	head := `[defaults]
clients = 300
capacity_rps = 15
recover_s = 10
window_s = 590
seeds = {from = 1, to = ` + strconv.Itoa(signalSeeds()) + `}

[sweep.a]
[[sweep.a.cell]]
policy = ["full-jitter", "decorrelated", {kind = "fixed", base_s = 5}]
capacity_rps = [15, 30]
`
	const slow = `[[sweep.a.cell]]
policy = {kind = "fixed", base_s = 0.1}
clients = 1500
capacity_rps = 10
reject_cost = 0.5
window_s = 999990
`
	cfg, fast = filepath.Join(dir, "slow.toml"), filepath.Join(dir, "fast.toml")
	if err := os.WriteFile(cfg, []byte(head+slow), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fast, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, fast
}

// waitForParts waits until dir holds n committed parts (not counting the
// writer's lock and temporary files, which come first); the test fails if
// the process exits first or nothing comes within a minute.
func waitForParts(t *testing.T, cmd *exec.Cmd, dir string, n int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(5 * time.Millisecond) { // a hang guard: seconds, a minute under -race on a busy machine
		es, _ := os.ReadDir(dir)
		parts := 0
		for _, e := range es {
			if dataset.IsPart(e.Name()) {
				parts++
			}
		}
		if parts >= n {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no %d parts in %s after three minutes", n, dir)
		}
	}
}

// waitExit waits for cmd, killing it (and failing) if a signal did not
// stop it within a minute: a hang guard, not a speed check.
func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the process did not stop within a minute of the signal")
		return nil
	}
}

func TestReportRecommendAndErrors(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	out := mustRun(t, "run", "--config", "testdata/small.toml", "--out", res, "--quiet")
	if !strings.Contains(out, "report: "+filepath.Join(res, "report.md")) {
		t.Errorf("run output %q does not end with the report's path", out)
	}
	if fi, err := os.Stat(filepath.Join(res, "report.md")); err != nil || fi.Size() == 0 {
		t.Errorf("report.md: %v", err)
	}
	// A folder without a dataset, and an output path that is a file.
	if _, stderr, code := sweep(t, "report", "--results", dir+"/nothing"); code != 2 || !strings.Contains(stderr, "--results "+dir+"/nothing: stat") {
		t.Errorf("report of a missing folder: exit %d, %s", code, stderr)
	}
	os.Mkdir(dir+"/empty", 0o755)
	for _, cmd := range [][]string{{"report"}, {"recommend", "--capacity", "120", "--clients", "50"}} {
		if _, stderr, code := sweep(t, append(cmd, "--results", dir+"/empty")...); code != 2 || !strings.Contains(stderr, "no Parquet files under runs/") {
			t.Errorf("%s of an empty folder: exit %d, want 2 (bad input); %s", cmd[0], code, stderr)
		}
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--out", file, "--quiet"); code != 1 || !strings.Contains(stderr, "output folder") {
		t.Errorf("run into a file: exit %d, %s", code, stderr)
	}
	// A corrupt part is named, not skipped.
	os.WriteFile(filepath.Join(res, "runs", "sweep=a", "part-00099.parquet"), []byte("PAR1 broken"), 0o644)
	if _, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--out", res, "--quiet"); code != 1 || !strings.Contains(stderr, "part-00099.parquet") {
		t.Errorf("run over a corrupt part: exit %d, %s", code, stderr)
	}
}

func TestResolveShard(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		flag   string
		shards int
		env    func(string) string
		want   shardSpec
		err    string
	}{
		{"", 0, env(), shardSpec{}, ""},
		{"1/4", 0, env("JOB_COMPLETION_INDEX", "3"), shardSpec{1, 4}, ""},
		{"", 5, env("JOB_COMPLETION_INDEX", "3"), shardSpec{3, 5}, ""},
		{"", 0, env("JOB_COMPLETION_INDEX", "3", "HERDSWEEP_SHARDS", "4"), shardSpec{3, 4}, ""},
		{"", 0, env("JOB_COMPLETION_INDEX", "3"), shardSpec{}, "--shards N or HERDSWEEP_SHARDS"},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_MIN", "5", "SLURM_ARRAY_TASK_COUNT", "4"), shardSpec{2, 4}, ""},
		{"", 0, env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4"), shardSpec{}, "want i/n with 0 ≤ i < n"},
		{"", 3, env(), shardSpec{}, "which shard is this?"},
		{"2/2", 0, env(), shardSpec{}, `shard "2/2"`},
	}
	for _, tt := range tests {
		got, _, err := resolveShard(tt.flag, tt.shards, tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: error %v, want %q", tt, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%+v: %v, %v; want %v", tt, got, err, tt.want)
		}
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "4/4", "-1/2", "1/0", " 2/3 ", "9999999999999999999/1", "1/2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := parseShard(s)
		if err == nil && (sh.n < 1 || sh.i < 0 || sh.i >= sh.n || sh.n > maxShards) {
			t.Fatalf("parseShard(%q) = %+v without error", s, sh)
		}
	})
}

// SIGINT and SIGTERM finish the part in hand, say so and exit 130, also
// in the middle of a run that would take hours; a rerun completes the
// sweep.
func TestInterruptFinishesThePartInHand(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sig   os.Signal
		parts int // signal once this many parts are written
	}{
		{"SIGINT among the fast runs", os.Interrupt, 2},
		// 6 × signalSeeds() / 10 parts are the fast runs (24 parts, or 6
		// under -short): the workers are in the slow cell, whose runs take
		// hours unless the stop reaches them.
		{"SIGTERM in a run of 10⁷ ticks", syscall.SIGTERM, 6 * signalSeeds() / 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			cfg, fast := signalConfigs(t, dir)
			cmd := exec.Command(os.Args[0], "run", "--config", cfg, "--out", out, "--part-rows", "10", "--no-report", "--quiet")
			cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			parts := filepath.Join(out, "runs", "sweep=a")
			waitForParts(t, cmd, parts, tt.parts)
			cmd.Process.Signal(tt.sig)
			err := waitExit(t, cmd)
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("the run finished (%v) before the signal: its slow cell should take hours", err)
			}
			if ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted:") || !strings.Contains(stderr.String(), "run the same command again") {
				t.Errorf("exit %d, stderr %q; want 130 and a message", ee.ExitCode(), stderr.String())
			}
			for _, e := range mustReadDir(t, parts) {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("a temporary file was left: %s", e.Name())
				}
			}
			stdout := mustRun(t, "run", "--config", fast, "--out", out, "--no-report", "--quiet")
			if m := doneLine.FindStringSubmatch(stdout); m == nil || m[3] == "0" {
				t.Errorf("rerun: %q, want the interrupted part's runs skipped", stdout)
			}
		})
	}
}

// plan's calibration and the report stop when the context is done, and
// the command exits 130.
func TestPlanAndReportStopWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "slow.toml") // each run of it takes minutes
	src := "[sweep.s]\nseeds = [1, 2]\npolicy = {kind = \"fixed\", base_s = 0.1}\nclients = 1500\ncapacity_rps = 10\nreject_cost = 0.5\nwindow_s = 99990\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	var o, e bytes.Buffer
	if code := exitCode(run(ctx, []string{"plan", "--config", cfg}, &o, &e)); code != 130 {
		t.Errorf("plan interrupted: exit %d, want 130\n%s", code, e.String())
	}
	out := filepath.Join(dir, "out")
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--no-report", "--quiet")
	done, stop := context.WithCancel(context.Background())
	stop()
	err := run(done, []string{"report", "--results", out}, &o, &e)
	if code := exitCode(err); code != 130 {
		t.Errorf("report interrupted: exit %d (%v), want 130", code, err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err == nil {
		t.Error("an interrupted report wrote report.md")
	}
}

// The first signal cancels the command; the second exits at once.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	sigs := make(chan os.Signal, 2)
	cancelled := make(chan bool, 1)
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	go onSignals(sigs, func() { cancelled <- true }, &stderr, func(code int) { exited <- code })
	sigs <- syscall.SIGTERM
	<-cancelled
	select {
	case code := <-exited:
		t.Fatalf("exit %d after one signal", code)
	default:
	}
	sigs <- os.Interrupt
	if code := <-exited; code != 130 {
		t.Errorf("exit %d after the second signal, want 130", code)
	}
	if !strings.Contains(stderr.String(), "signal again to stop at once") {
		t.Errorf("stderr %q: want the first signal explained", stderr.String())
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// Parts written by another simulator version are set aside, not mixed in.
func TestStaleSimulatorVersionIsSetAside(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "runs", "sweep=a")
	os.MkdirAll(parts, 0o755)
	var buf bytes.Buffer
	w := parquetio.NewRunsWriter(&buf, dataset.Meta{Sim: "herd-0"})
	w.Append(grid.Run{Cell: grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Fixed)}, Seed: 1}, sim.Result{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(parts, "part-00000.parquet"), buf.Bytes(), 0o644)
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--no-report", "--quiet")
	if code != 0 || !strings.Contains(stderr, "holds simulator herd-0") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(parts, "_part-00000.parquet.stale-herd-0")); err != nil {
		t.Errorf("the stale part was not set aside: %v", err)
	}
}

// timing hides the durations of a note, for goldens.
var timing = regexp.MustCompile(`in [0-9.]+(ms|s|µs)|"in [^"]*"`)

// recommend's answer is the same with and without a dataset, whatever
// --library asks, and its output is pinned as users see it.
func TestRecommend(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--out", res, "--quiet", "--no-report")
	args := []string{"recommend", "--server", "free", "--capacity", "40", "--clients", "300", "--outage", "10s", "--seeds", "4", "--max-seeds", "8", "--top", "5"}
	withDS := mustRun(t, append(args, "--results", res)...)
	use := func(s string) string {
		i := strings.Index(s, "use: ")
		if i < 0 {
			t.Fatalf("no use: line in\n%s", s)
		}
		return s[i : i+strings.Index(s[i:], "\n")]
	}
	plain := mustRun(t, args...) // no dataset: the default out/ does not exist here
	if use(plain) != use(withDS) {
		t.Errorf("use: with a dataset %q, without %q", use(withDS), use(plain))
	}
	for _, lib := range []string{"cenkalti-backoff", "go-retryablehttp", "sgc-watchdog"} {
		out := mustRun(t, append(args, "--library", lib)...)
		if use(out) != use(plain) || !strings.Contains(out, "\n"+lib+": ") || !strings.Contains(out, "verdict: ") {
			t.Errorf("--library %s changed the answer or gave no verdict:\n%s", lib, out)
		}
	}
	golden.CheckString(t, "testdata/recommend.golden", "$ sweep "+strings.Join(args, " ")+"\n"+timing.ReplaceAllString(plain, "in …"))
	jsonArgs := append(append([]string{}, args...), "--json", "--library", "grpc")
	jsonOut := timing.ReplaceAllString(mustRun(t, jsonArgs...), "in …")
	if i := strings.Index(jsonOut, `  "against_best": [`); i > 0 { // the head and the tail; the lists are checked below
		if j := strings.Index(jsonOut, `  "library": {`); j > i {
			jsonOut = jsonOut[:i] + "  \"against_best\": [ … ],\n  \"candidates\": [ … ],\n" + jsonOut[j:]
		}
	}
	golden.CheckString(t, "testdata/recommend-json.golden", "$ sweep "+strings.Join(jsonArgs, " ")+"\n"+jsonOut)

	var doc struct {
		Answered bool `json:"answered"`
		Use      struct {
			Policy struct {
				Plain    string `json:"plain"`
				Settings []struct {
					Library string `json:"library"`
				} `json:"settings"`
			} `json:"policy"`
			T99 struct {
				Mean float64 `json:"mean"`
			} `json:"t99_after_s"`
		} `json:"use"`
		Candidates []struct {
			Feasible bool   `json:"feasible"`
			Why      string `json:"why_not"`
		} `json:"candidates"`
		Mine *struct {
			Verdict string `json:"verdict"`
		} `json:"mine"`
	}
	js := mustRun(t, append(args, "--json", "--mine", "fixed base=5s")...)
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, js)
	}
	if !doc.Answered || "use: "+doc.Use.Policy.Plain != use(plain) || doc.Use.T99.Mean <= 0 || len(doc.Use.Policy.Settings) == 0 || len(doc.Candidates) < 50 || doc.Mine == nil || doc.Mine.Verdict == "" {
		t.Errorf("--json document: %+v", doc)
	}

	// Errors: a dataset that is not there, a missing capacity, a scenario
	// no policy can serve, a bad --mine.
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--capacity", "40", "--results", dir + "/typo"}, 2, "--results " + dir + "/typo"},
		{[]string{"--clients", "300"}, 2, "--capacity is required"},
		{[]string{"--capacity", "0"}, 2, "--capacity \"0\": want a positive number"},
		{[]string{"--capacity", "50", "--clients", "100000", "--outage", "10s"}, 1, "100,000 clients need at least 1,980 s"},
		{[]string{"--capacity", "40", "--mine", "fixd base=5s"}, 2, "\"fixd\" (did you mean \"fixed\"?): want a family"},
		{[]string{"--capacity", "40", "--mine", "full-jitter jitter=wide"}, 2, "jitter=wide: want full, equal"},
		{[]string{"--capacity", "40..20"}, 2, "LO ≤ HI"},
		{[]string{"--capacity", "100000", "--clients", "1073741824"}, 2, "needs an estimated 40.0 GiB of memory"},
		{[]string{"--capacity", "300", "--workers", "100000"}, 2, "--workers 100000: want 0 (one per CPU) to 1024"},
	} {
		stdout, stderr, code := sweep(t, append([]string{"recommend"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
			t.Errorf("recommend %v: exit %d, want %d and %q\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
		}
	}
}

// The completion scripts list every command and its options, read from
// the commands' own help.
func TestCompletion(t *testing.T) {
	bash := mustRun(t, "completion", "bash")
	fish := mustRun(t, "completion", "fish")
	for _, c := range commands() {
		if !strings.Contains(bash, " "+c.name) || !strings.Contains(fish, "-a "+c.name+" ") {
			t.Errorf("completion lacks the command %s", c.name)
		}
	}
	if !strings.Contains(bash, "recommend) COMPREPLY=($(compgen -W \"--allow-give-up --budget --capacity") || !strings.Contains(fish, "__fish_seen_subcommand_from run' -l shard") {
		t.Errorf("completion lacks recommend's or run's options:\n%s", bash)
	}
	if _, _, code := sweep(t, "completion", "tcsh"); code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", code)
	}
}

// Progress shows no rate before it can be measured, then labels rate,
// elapsed and remaining time.
func TestProgressIsHonestFromTheFirstSecond(t *testing.T) {
	var b bytes.Buffer
	clock := time.Unix(1_000_000, 0)
	p := newProgress(&b, "default", 51600, false)
	p.now = func() time.Time { return clock }
	p.start, p.last = clock, clock
	clock = clock.Add(100 * time.Millisecond)
	if l := p.line(clock); strings.Contains(l, "runs/s") || !strings.Contains(l, "0 of 51,600 runs") {
		t.Errorf("before the warm-up: %q", l)
	}
	p.done = 1
	if l := p.line(clock); strings.Contains(l, "runs/s") {
		t.Errorf("one run after 100 ms promises a rate: %q", l)
	}
	clock = clock.Add(4900 * time.Millisecond)
	p.add(4999)
	want := "default: 5,000 of 51,600 runs (10 %), elapsed 5s, 1,000 runs/s, about 47s left\n"
	if b.String() != want {
		t.Errorf("after 5 s: %q, want %q", b.String(), want)
	}
}

// reproduce --json: the article's exact rows say so, every table is there.
func TestReproduceJSON(t *testing.T) {
	out := mustRun(t, "reproduce", "--seeds", "2", "--json", "--quiet", "--out", t.TempDir())
	var doc struct {
		Tables []struct {
			ID   string `json:"id"`
			Rows []struct {
				Label   string `json:"label"`
				Exact   bool   `json:"exact"`
				Metrics []struct {
					Metric    string   `json:"metric"`
					Published *float64 `json:"published"`
					Ours      *float64 `json:"ours"`
				} `json:"metrics"`
			} `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Tables) != 4 {
		t.Fatalf("%d tables, want 4", len(doc.Tables))
	}
	r := doc.Tables[0].Rows[0]
	if r.Label != "fixed 5 s" || !r.Exact || *r.Metrics[0].Published != 9423 || *r.Metrics[0].Ours != 9423 {
		t.Errorf("table 1, fixed 5 s: %+v", r)
	}
}

func TestInterruptedWords(t *testing.T) {
	if got := interrupted(fmt.Errorf("interrupted: 5 of 9 runs of a written; run the same command again to finish the rest: %w", context.Canceled)); got != "interrupted: 5 of 9 runs of a written; run the same command again to finish the rest" {
		t.Errorf("interrupted(run) = %q", got)
	}
	if got := interrupted(context.Canceled); !strings.HasPrefix(got, "interrupted: what was finished is kept") {
		t.Errorf("interrupted(canceled) = %q", got)
	}
}

// Without --server the answer is judged over the default envelope of
// servers: its first lines name the envelope and what it assumes, it
// states its margins and the owner's view, and it is the same with and
// without a dataset that holds some of its runs (the advice sweep stores
// the free-rejection candidates of this scenario).
func TestRecommendOverServers(t *testing.T) {
	t.Parallel()
	args := []string{"recommend", "--capacity", "40", "--clients", "300", "--outage", "10s", "--top", "3"}
	plain := mustRun(t, args...)
	lines := strings.Split(plain, "\n")
	if !strings.HasPrefix(lines[1], "judged over 28 servers: the counting server with 429s costing 0 %, 10 %, 25 % or 50 %") ||
		!strings.Contains(lines[2], "The answer assumes only that your server serves the capacity you give") {
		t.Errorf("the first lines do not name the envelope and what it assumes:\n%s", strings.Join(lines[:3], "\n"))
	}
	for _, want := range []string{"\nuse: ", "\nmargins (bisection on the simulator", "rejection cost: ", "client timeout: ", "background load: ", "\nhow to set it:\n"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the answer lacks %q:\n%s", want, plain)
		}
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("[defaults]\nclients = 300\nrecover_s = 10\ncapacity_rps = 40\nseeds = {from = 1, to = 4}\n[sweep.c]\ncandidates = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", "--config", cfg, "--out", res, "--quiet", "--no-report")
	cached := mustRun(t, append(args, "--results", res)...)
	strip := func(s string) string { return s[:strings.LastIndex(s, "note: ")] }
	if strip(cached) != strip(plain) {
		t.Errorf("the answer moved with a dataset holding some of its runs:\n--- without\n%s\n--- with\n%s", strip(plain), strip(cached))
	}
	if !strings.Contains(cached, "reused from the dataset") {
		t.Errorf("the dataset's runs were not reused:\n%s", cached)
	}
	golden.CheckString(t, "testdata/recommend-servers.golden", "$ sweep "+strings.Join(args, " ")+"\n"+timing.ReplaceAllString(plain, "in …"))
}
