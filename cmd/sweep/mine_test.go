package main

import (
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// --mine reads what the dataset's policy_spec column writes: every policy
// of the repository's sweeps (components, retry_on, token buckets and
// budgets included) and the candidate space round-trips through it.
func TestMineReadsPolicySpec(t *testing.T) {
	cfg := repoConfig(t)
	var cells []grid.Cell
	for _, name := range []string{"client-controls", "presets", "retry-after", "metastable"} {
		cells = append(cells, cfg.Sweep(name).Cells...)
	}
	cells = append(cells, grid.CandidateSpace(sim.Article())...)
	components := 0
	for _, c := range cells {
		spec := c.PolicySpec()
		p, err := parsePolicySpec(spec)
		if err != nil {
			t.Fatalf("--mine %q: %v", spec, err)
		}
		if got := p.Normalize(); got != c.Policy {
			t.Fatalf("--mine %q reads as\n%+v\nwant\n%+v", spec, got, c.Policy)
		}
		if c.Policy.ComponentsShort() != "" {
			components++
		}
	}
	if components == 0 {
		t.Fatal("no policy with a client component among the sweeps: the test checks nothing of them")
	}
	for spec, want := range map[string]string{
		"decorrelated breaker_raito=0.1": `"breaker_raito" (did you mean "breaker_ratio"?)`,
		"decorrelated retry_on=foo":      `retry_on=foo: want one of`,
		"decorrelated breaker_ratio=2":   `breaker_ratio=2: want 0 (no circuit breaker) or a failure ratio`,
		"decorrelated retry_tokens=x":    `retry_tokens=x: want a number`,
		"decorrelated concurrency=3":     `concurrency=3: a parameter of the scenario, not of the policy: recommend's scenario is --capacity`,
		"decorrelated mix=grpc:1":        `unknown key "mix": want base, cap`,
	} {
		if _, err := parsePolicySpec(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--mine %q: error %v, want one containing %s", spec, err, want)
		}
	}
}

// An empty --mine is an error, not "no --mine".
func TestEmptyMineIsRefused(t *testing.T) {
	_, stderr, code := sweep(t, "recommend", "--capacity", "40", "--clients", "100", "--mine", " ")
	if code != 2 || !strings.Contains(stderr, "--mine \" \": empty") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
