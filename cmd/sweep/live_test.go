package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdsweep/herdsweep/live"
	"github.com/herdsweep/herdsweep/sim"
)

func TestLiveBadInput(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "never")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"live"}, "--library is required"},
		{[]string{"live", "--library", "polly"}, `--library "polly": want one of cenkalti-backoff`},
		{[]string{"live", "--library", "grpc-go", "--clients", "6000"}, "--clients 6000: want a whole number in [1, 5000]"},
		{[]string{"live", "--library", "grpc-go", "--down", "closed"}, `--down "closed": want 503 or refused`},
		{[]string{"live", "--library", "grpc-go", "--tick", "5ms"}, "--tick 5ms: want at least 10ms"},
		{[]string{"live", "--library", "grpc-go", "--capacity", "0"}, "--capacity 0: want a finite number"},
		{[]string{"live", "--library", "grpc-go", "--policy", "grcp"}, `--policy "grcp": "grcp" (did you mean "grpc"?): want a family`},
		{[]string{"live", "--library", "grpc-go", "--retry-after", "1500ms"}, "--retry-after 1.5s: want whole seconds"},
		{[]string{"live", "--library", "sim:go-retryablehttp", "--horizon", "3s", "--outage", "5s"}, "--horizon 3s: the time after recovery (--horizon − --outage 5s) is -2s"},
	}
	for _, tt := range tests {
		_, stderr, code := sweep(t, append(tt.args, "--out", out)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input wrote %s", out)
	}
	stdout, _, code := sweep(t, "live", "--library", "list")
	if code != 0 || !strings.Contains(stdout, "go-retryablehttp — model go-retryablehttp") || !strings.Contains(stdout, "Polly") {
		t.Errorf("--library list: exit %d\n%s", code, stdout)
	}
}

// SIGINT during a live run stops the server and every client and exits
// 130, having written nothing.
func TestLiveInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "live")
	cmd := exec.Command(os.Args[0], "live", "--library", "grpc-go", "--clients", "50", "--outage", "60s", "--horizon", "2m",
		"--tick", "2s", "--out", out) // a long tick: the clock check passes on a loaded machine (it refuses p90 lateness > 200 ms)
	cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	r, w, _ := os.Pipe()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	started := make(chan bool, 1)
	done := make(chan struct{}) // the reader owns stderr until it closes done
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		seen := false
		for {
			n, err := r.Read(buf)
			stderr.Write(buf[:n])
			if !seen && strings.Contains(stderr.String(), "running in real time") {
				seen = true
				started <- true
			}
			if err != nil {
				if !seen {
					started <- false
				}
				return
			}
		}
	}()
	if !<-started {
		cmd.Wait()
		<-done
		t.Fatalf("the live run did not start: %s", stderr.String())
	}
	time.Sleep(500 * time.Millisecond) // clients retrying against the down server
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	<-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %v, stderr %q; want 130 and a message", err, stderr.String())
	}
	if es, _ := os.ReadDir(out); len(es) != 0 {
		t.Errorf("an interrupted run wrote %v", es)
	}
}

// A live run writes a page per comparison, and the report of the dataset
// beside it lists them.
func TestLivePagesInTheReport(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	mustRun(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", res, "--quiet", "--no-report")
	// The pages are written whatever the verdict: agrees (0), or
	// inconclusive (3) on a machine that stalled the run.
	args := []string{"live", "--library", "sim:cenkalti-backoff", "--clients", "20", "--outage", "1s", "--capacity", "40",
		"--tick", "200ms", "--spread", "500ms", "--horizon", "20s", "--seeds", "20", "--out", filepath.Join(res, "live")}
	if stdout, stderr, code := sweep(t, args...); code != 0 && code != 3 {
		t.Fatalf("sweep %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	pages, _ := filepath.Glob(filepath.Join(res, "live", "*.md"))
	if len(pages) != 1 {
		t.Fatalf("live pages: %v", pages)
	}
	b, _ := os.ReadFile(pages[0])
	if !strings.HasPrefix(string(b), "### live sim:cenkalti-backoff against simulated cenkalti-backoff") || !strings.Contains(string(b), ".png)") {
		t.Errorf("live page:\n%s", b)
	}
	mustRun(t, "report", "--results", res)
	md, _ := os.ReadFile(filepath.Join(res, "report.md"))
	if !strings.Contains(string(md), "## Live checks") || !strings.Contains(string(md), "](live/"+filepath.Base(pages[0])+")") {
		t.Errorf("report.md lacks the live check:\n%s", md)
	}
}

// Every error of a bad flag names the flag, with its -- (the scenario's
// "Window: -2s" named a Go field), and no Go field of the scenario, the
// policy or the live run; nothing is written.
func TestLiveErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	fields := map[string]bool{"Window": true}
	for _, v := range []any{sim.Scenario{}, sim.Policy{}, live.Config{}} {
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			if f := ty.Field(i); f.IsExported() {
				fields[f.Name] = true
			}
		}
	}
	out := filepath.Join(t.TempDir(), "never")
	for _, args := range [][]string{
		{"--clients", "0"}, {"--clients", "6000"},
		{"--tick", "5ms"}, {"--tick", "10500us"},
		{"--outage", "-1s"}, {"--outage", "1500us"},
		{"--capacity", "0"}, {"--capacity", "5"}, {"--capacity", "NaN"},
		{"--spread", "-1s"}, {"--spread", "1500us"},
		{"--horizon", "3s", "--outage", "5s"}, {"--horizon", "5s", "--outage", "5s"}, {"--horizon", "3h"}, {"--horizon", "100000h"},
		{"--retry-after", "1500ms"}, {"--retry-after", "-1s"},
		{"--down", "closed"}, {"--grace", "60ms"}, {"--grace", "-1ms"},
		{"--scale", "0.5"}, {"--scale", "2", "--library", "grpc-go"}, {"--scale", "2", "--library", "go-retryablehttp", "--retry-after", "1s"},
		{"--max-attempts", "0"}, {"--policy", "family:nope"}, {"--policy", "grcp"},
		{"--seeds", "1"}, {"--seed", "5000000000"}, {"--library", "nope"},
	} {
		full := append([]string{"live", "--library", "sim:go-retryablehttp", "--out", out}, args...)
		_, stderr, code := sweep(t, full...)
		if code != 2 || !strings.Contains(stderr, "--") {
			t.Errorf("%v: exit %d, %q: want 2 and the flag named", args, code, stderr)
		}
		for _, w := range regexp.MustCompile(`[A-Za-z]+`).FindAllString(stderr, -1) {
			if fields[w] {
				t.Errorf("%v: %q names the Go field %s", args, stderr, w)
			}
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input wrote %s", out)
	}
}

// The exit status is the verdict: 0 agrees, 1 disagrees, 3 inconclusive;
// several comparisons agree only when each does, and one inconclusive
// makes the run so.
func TestLiveVerdictIsTheExitStatus(t *testing.T) {
	t.Parallel()
	c := func(v live.Verdict) *live.Comparison {
		return &live.Comparison{Driver: "x", Name: "y", Verdict: v, Degraded: []string{"why"}}
	}
	for _, tt := range []struct {
		vs   []live.Verdict
		want int
	}{
		{[]live.Verdict{live.Agrees}, 0},
		{[]live.Verdict{live.Disagrees}, 1},
		{[]live.Verdict{live.Inconclusive}, 3},
		{[]live.Verdict{live.Agrees, live.Disagrees}, 1},
		{[]live.Verdict{live.Disagrees, live.Inconclusive}, 3},
		{[]live.Verdict{live.Agrees, live.Agrees}, 0},
	} {
		var cs []*live.Comparison
		for _, v := range tt.vs {
			cs = append(cs, c(v))
		}
		if got := exitCode(liveVerdict(cs)); got != tt.want {
			t.Errorf("%v: exit %d, want %d", tt.vs, got, tt.want)
		}
	}
}

// lateClock's waits end lag late, as on a machine too busy to keep time:
// the server's tick closes, the first sends, a sim: client's requests.
type lateClock struct{ lag time.Duration }

func (lateClock) Now() time.Time { return time.Now() }

func (c lateClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(max(d, 0) + c.lag)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// A live check with a planted wrong model, or with its ticks forced late
// (an injected clock, not a loaded machine), never exits 0: the wrong
// model disagrees (1), or the run is inconclusive (3) where the machine
// stalled it; on late ticks it is inconclusive against the right model as
// against the wrong one. Against the right model, on time, it agrees.
func TestLiveWrongModelOrLateTicksNeverExit0(t *testing.T) {
	scenario := []string{"--clients", "20", "--outage", "1s", "--capacity", "40", "--tick", "200ms", "--spread", "500ms", "--horizon", "10s", "--seeds", "30"}
	check := func(t *testing.T, late bool, args ...string) (int, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append(append([]string{"--out", filepath.Join(t.TempDir(), "live")}, scenario...), args...)
		o, err := parseLive(args, &stdout, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		if late {
			o.cfg.Clock = lateClock{lag: 150 * time.Millisecond} // three quarters of a tick
		}
		err = runLive(context.Background(), o, &stdout, &stderr)
		return exitCode(err), stdout.String()
	}
	for _, library := range []string{"sim:go-retryablehttp", "go-retryablehttp"} {
		t.Run(library, func(t *testing.T) {
			if code, out := check(t, false, "--library", library, "--policy", "failsafe-go"); code != 1 && code != 3 {
				t.Errorf("a planted wrong model: exit %d, want 1 (or 3 on a stalled machine)\n%s", code, out)
			} else if code == 1 && !strings.Contains(out, "verdict: DISAGREES") {
				t.Errorf("exit 1 without saying it disagrees:\n%s", out)
			}
			for _, model := range []string{"go-retryablehttp", "failsafe-go"} {
				if code, out := check(t, true, "--library", library, "--policy", model); code != 3 || !strings.Contains(out, "verdict: INCONCLUSIVE") {
					t.Errorf("late ticks against %s: exit %d, want 3\n%s", model, code, out)
				}
			}
		})
	}
	// The right model on time agrees; a run the machine stalled is run
	// again, three times at most.
	for try := 1; ; try++ {
		code, out := check(t, false, "--library", "sim:go-retryablehttp")
		if code == 0 {
			break
		}
		if code != 3 || try == 3 {
			t.Fatalf("the right model: exit %d (try %d)\n%s", code, try, out)
		}
	}
}

// --policy takes what sweeps.toml and --mine take: the policy_spec of any
// stored row (here one without a cap, which the family's defaults would
// give), a preset, and family:NAME for a family's defaults; a bad one is
// named with its flag.
func TestLivePolicyReadsSpecs(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	o, err := parseLive([]string{"--library", "sim:go-retryablehttp", "--out", t.TempDir(),
		"--policy", "exponential base_s=1 multiplier=2,grpc", "--policy", "family:grpc"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	grpc, _ := sim.PresetByName("grpc")
	want := []sim.Policy{{Kind: sim.Exponential, Base: time.Second, Multiplier: 2}, grpc.Policy, sim.DefaultPolicy(sim.GRPC)}
	if diff := cmp.Diff(want, o.pols); diff != "" {
		t.Errorf("--policy (-want +got):\n%s", diff)
	}
	_, err = parseLive([]string{"--library", "sim:go-retryablehttp", "--policy", "decorrelated bse_s=1"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `--policy "decorrelated bse_s=1": unknown key "bse_s" (did you mean "base_s"?)`) {
		t.Errorf("a bad spec: %v", err)
	}
}
