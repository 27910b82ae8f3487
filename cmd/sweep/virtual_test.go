package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/live"
)

// sweepProcess runs the command as a process of its own (the test binary
// standing in for it), as a user does; safe on several goroutines at once.
func sweepProcess(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "HERDSWEEP_BE_SWEEP=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Error(err) // not Fatal: it may run off the test's goroutine
		return o.String(), e.String(), -1
	}
	return o.String(), e.String(), 0
}

// `sweep live --virtual` from the binary: a library without jitter agrees
// seed for seed and exits 0, with its figure; against a policy it is not,
// it disagrees and exits 1; --json says the same; progress goes to
// standard error.
func TestLiveVirtualCommand(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	small := []string{"live", "--virtual", "--library", "go-retryablehttp", "--clients", "200", "--capacity", "20", "--outage", "5s", "--runs", "2", "--seeds", "200", "--out", out}
	stdout, stderr, code := sweepProcess(t, small...)
	if code != 0 || !strings.Contains(stdout, "seed for seed") || !strings.Contains(stdout, "verdict: agrees — every run is sim's run of its seed") || !strings.Contains(stderr, "run 2 of 2 (seed 2)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "virtual-go-retryablehttp--go-retryablehttp.png")); err != nil {
		t.Errorf("no figure: %v", err)
	}
	stdout, stderr, code = sweepProcess(t, append(small, "--policy", "fixed base_s=1", "--json")...)
	var rep live.VirtualReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 || len(rep.Comparisons) != 1 || rep.Comparisons[0].Verdict != live.Disagrees || rep.Comparisons[0].Method != live.SameSeed {
		t.Fatalf("against fixed 1 s: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
}

// Bad input to `sweep live --virtual` exits 2 naming the flag, and writes
// nothing.
func TestLiveVirtualBadInput(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "never")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--virtual", "--grace", "5ms"}, "--grace: not with --virtual"},
		{[]string{"--virtual", "--scale", "10"}, "--scale: not with --virtual"},
		{[]string{"--virtual", "--runs", "0"}, "--runs 0: want 1 to 1000"},
		{[]string{"--runs", "3"}, "--runs: only with --virtual"},
		{[]string{"--virtual", "--alpha", "0"}, "--alpha 0: want a false-alarm rate"},
		{[]string{"--virtual", "--clients", "60000"}, "--clients 60000: want a whole number in [1, 50000] for a virtual run"},
		{[]string{"--virtual", "--seed", "999999"}, "--seed 999999: want at most 999991 with --runs 10"},
		{[]string{"--virtual", "--seed", "18446744073709551615", "--runs", "3"}, "want at most 999998 with --runs 3"},
		{[]string{"--virtual", "--library", "cenkalti-backoff", "--runs", "1"}, "--runs 1 against --seeds 2000: a jittered library's runs are judged as a distribution"},
		{[]string{"--virtual", "--grid", "--runs", "1", "--library", "failsafe-go"}, "want --runs 2 or more"},
		{[]string{"--virtual", "--grid", "--outage", "5s"}, "--outage: not with --grid"},
		{[]string{"--virtual", "--down", "refused", "--retry-after", "3s"}, "a refused connection carries no Retry-After"},
		{[]string{"--virtual", "--library", "grpc-go", "--seeds", "20", "--runs", "5"}, "want --runs 7 or more"},
		{[]string{"--virtual", "--band", "50"}, "--band 50: want a percentile in [0, 50)"},
		{[]string{"--out", "gs:/x"}, "a URL needs two slashes: want gs://x"},
	} {
		args := append([]string{"live", "--library", "go-retryablehttp", "--out", out}, tt.args...)
		_, stderr, code := sweep(t, args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if _, stderr, code := sweep(t, "live", "--library", "all", "--virtual", "--out", out); code != 2 || !strings.Contains(stderr, "--library all: only with --grid") {
		t.Errorf("--library all without --grid: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input wrote %s", out)
	}
}
