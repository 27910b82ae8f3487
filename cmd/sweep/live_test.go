package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{[]string{"live", "--library", "grpc-go", "--clients", "6000"}, "clients 6000: want at most 5000"},
		{[]string{"live", "--library", "grpc-go", "--down", "closed"}, `down "closed": want 503 or refused`},
		{[]string{"live", "--library", "grpc-go", "--tick", "5ms"}, "tick 5ms: want at least 10ms"},
		{[]string{"live", "--library", "grpc-go", "--capacity", "0"}, "--capacity 0: want a finite number"},
		{[]string{"live", "--library", "grpc-go", "--policy", "grcp"}, `--policy "grcp": want a preset`},
		{[]string{"live", "--library", "grpc-go", "--retry-after", "1500ms"}, "whole seconds"},
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
	mustRun(t, "live", "--library", "sim:cenkalti-backoff", "--clients", "20", "--outage", "1s", "--capacity", "40",
		"--tick", "200ms", "--spread", "500ms", "--horizon", "20s", "--seeds", "20", "--out", filepath.Join(res, "live"))
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
