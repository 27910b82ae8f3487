package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
)

// The main job's advice sweep holds every run `sweep recommend --capacity C`
// (defaults otherwise) may ask for at each of its capacities: the candidate
// space of recommend's own scenario, on seeds 1 … --max-seeds' default. So
// recommend over the main job's dataset simulates nothing there.
func TestAdviceSweepHoldsRecommendsRuns(t *testing.T) {
	s := repoConfig(t).Sweep("advice")
	if s == nil || !s.Candidates || s.OnDemand {
		t.Fatalf("sweeps.toml: no advice sweep with candidates = true in the main job: %+v", s)
	}
	for seed := uint32(1); seed <= uint32(analysis.DefaultSeeding.Max); seed++ {
		if !slices.Contains(s.Seeds, seed) {
			t.Fatalf("advice sweep lacks seed %d, which recommend may ask for", seed)
		}
	}
	var caps []float64
	for _, c := range s.Cells {
		if !slices.Contains(caps, c.Scenario.Capacity) {
			caps = append(caps, c.Scenario.Capacity)
		}
	}
	if len(caps) == 0 {
		t.Fatal("advice sweep has no cells")
	}
	for _, c := range caps {
		sc := analysis.Request{Outage: 30 * time.Second, Window: grid.RecommendWindow}.Scenario(c, 2000)
		for _, cell := range grid.CandidateCells(sc) {
			if !slices.Contains(s.Cells, cell) {
				t.Fatalf("capacity %g: advice sweep lacks recommend's candidate %s", c, cell.Policy.Short())
			}
		}
	}
}

// A dataset written by a candidates sweep answers recommend at its scenario
// without simulating a run, and the answer is the one recommend gives with
// no dataset.
func TestCandidatesSweepAnswersRecommend(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("[sweep.c]\ncandidates = true\nclients = 300\nrecover_s = 10\ncapacity_rps = 40\nseeds = {from = 1, to = 4}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	mustRun(t, "run", "--config", cfg, "--out", out, "--no-report", "--quiet")
	args := []string{"recommend", "--server", "free", "--capacity", "40", "--clients", "300", "--outage", "10s", "--seeds", "2", "--max-seeds", "4", "--json"}
	from := mustRun(t, append(args, "--results", out)...)
	if !regexp.MustCompile(`"0 runs simulated, \d+ reused`).MatchString(from) {
		t.Fatalf("recommend over the candidates sweep's dataset simulated runs:\n%s", from)
	}
	note := regexp.MustCompile(`"notes": \[[^\]]*\]`)
	plain := mustRun(t, args...)
	if a, b := note.ReplaceAllString(from, ""), note.ReplaceAllString(plain, ""); a != b {
		t.Fatalf("answer from the dataset differs from the simulated one:\n%s\n---\n%s", a, b)
	}
}

// repoConfig loads the repository's own sweeps.toml.
func repoConfig(t *testing.T) *experiments.Config {
	t.Helper()
	src, err := os.ReadFile("../../sweeps.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := experiments.Load("sweeps.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A bare sweep plan plans what a bare sweep run runs: the on-demand
// sweeps are named as not planned, and planned when asked for.
func TestBarePlanIsBareRun(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(cfg, []byte("[defaults]\nclients = 50\ncapacity_rps = 20\nseeds = [1, 2]\n[sweep.main]\npolicy = \"decorrelated\"\n[sweep.later]\non_demand = true\npolicy = \"fixed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "plan", "--config", cfg, "--sample", "2")
	if !regexp.MustCompile(`(?m)^\s+main\s+1\s+2\s+2\s`).MatchString(out) || regexp.MustCompile(`(?m)^\s+later\s`).MatchString(out) ||
		!strings.Contains(out, "Not planned: later, on demand") {
		t.Fatalf("bare plan:\n%s", out)
	}
	out = mustRun(t, "plan", "--config", cfg, "--sample", "2", "--sweep", "later")
	if !regexp.MustCompile(`(?m)^\s+later\s+1\s+2\s+2\s`).MatchString(out) || strings.Contains(out, "Not planned") {
		t.Fatalf("plan --sweep later:\n%s", out)
	}
}
