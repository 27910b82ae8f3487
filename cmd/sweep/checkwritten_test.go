package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
)

// sweep run's end-of-run check compares the parts it wrote with what it
// kept of them: a part removed and another changed after their commits
// are found, named (the removed part's timelines are an orphan), and the run fails.
func TestRunFindsItsPartsChangedSinceTheirCommit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	commits := 0
	commitHook = func(s *store.Writer) {
		if commits++; commits == 3 {
			dir := s.Dir(dataset.RunsDir)
			os.Remove(filepath.Join(dir, s.Own()[0]))
			b, err := os.ReadFile(filepath.Join(dir, s.Own()[1]))
			if err != nil {
				t.Error(err)
			}
			b[len(b)/2] ^= 1
			os.WriteFile(filepath.Join(dir, s.Own()[1]), b, 0o644)
		}
	}
	defer func() { commitHook = nil }()
	_, stderr, code := sweep(t, "run", "--config", "testdata/small.toml", "--sweep", "a", "--out", out, "--part-rows", "10", "--no-report", "--quiet")
	if code != 1 || !strings.Contains(stderr, "missing: ") || !strings.Contains(stderr, "committed by this run, not there: readers count none of its 10 runs") ||
		!strings.Contains(stderr, "corrupt: ") || !strings.Contains(stderr, "its bytes changed since it was written") ||
		!strings.Contains(stderr, "the 4 parts this run wrote have 3 problems (see above)") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
