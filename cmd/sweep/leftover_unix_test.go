//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe with a part's name hung every command that reads the
// dataset, and the first SIGTERM did not stop it: it is never opened, and
// check names it.
func TestNamedPipesHangNothing(t *testing.T) {
	dir := smallDataset(t)
	runsA := filepath.Join(dir, "runs", "sweep=a")
	fifo := filepath.Join(runsA, "part-all-00098-h-1-0123abcd.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	// Were one opened for reading, it would hang until a writer opens it:
	// a guard opens it, again and again, after a minute, so that a hang
	// fails the test instead of hanging it.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
			return
		case <-time.After(time.Minute):
		}
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
		}
	}()
	start := time.Now()
	stdout, _, code := sweep(t, "check", dir)
	if code != 1 || !strings.Contains(stdout, "special: "+fifo+": not a regular file (a named pipe)") {
		t.Errorf("check beside a named pipe: exit %d\n%s", code, stdout)
	}
	assertFile := filepath.Join(t.TempDir(), "a.assert")
	os.WriteFile(assertFile, []byte("gave_up max <= 1000000\n"), 0o644)
	for _, args := range [][]string{
		{"report", "--results", dir, "--out", t.TempDir()},
		{"cells", "--results", dir, "--out", filepath.Join(t.TempDir(), "cells.parquet")},
		{"compare", dir, dir},
		{"assert", "--results", dir, assertFile},
		{"run", "--config", "testdata/small.toml", "--sweep", "a", "--out", dir, "--no-report", "--quiet"},
	} {
		if stdout, stderr, code := sweep(t, args...); code != 0 {
			t.Errorf("%s beside a named pipe: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
	}
	if time.Since(start) > time.Minute {
		t.Error("a command opened the named pipe: it hung until the guard opened it")
	}
}
