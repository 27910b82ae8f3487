package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report's library table and the scenario page are one decision: a
// library's defaults the page cannot tell apart from the recommended
// policy at the seeds measured are not told to switch in the table (at
// 3 seeds grpc's defaults were "1.30× slower | switch to A" in report.md
// and "cannot be told apart from it" on the page).
func TestLibraryTableAgreesWithThePage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("[sweep.tiny]\npolicy = [\"decorrelated\", \"grpc\", \"urllib3-default\"]\nclients = 800\ncapacity_rps = 50\nrecover_s = 30\nseeds = {from = 1, to = 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	mustRun(t, "run", "--config", cfg, "--out", out, "--quiet")
	page, err := os.ReadFile(filepath.Join(out, "scenarios", "c50-n800-o30s-w1170s.md"))
	if err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, ties, ok := strings.Cut(string(page), "cannot be told apart from it")
	if !ok {
		t.Fatalf("the page ties nothing: the test's data no longer has a tie\n%s", page)
	}
	ties, _, _ = strings.Cut(ties, "\n")
	for _, line := range strings.Split(string(report), "\n") {
		if !strings.HasPrefix(line, "| grpc ") {
			continue
		}
		if strings.Contains(ties, "grpc") && strings.Contains(line, "switch to") {
			t.Errorf("report.md tells grpc's defaults to switch, the page cannot tell them apart:\n%s\npage: %s", line, ties)
		}
		return
	}
	t.Fatalf("report.md has no grpc row:\n%s", report)
}
