package experiments

import (
	"os"
	"sync"
	"testing"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Tests of the repository's own sweeps.toml: what its cells do and how
// they travel.

// repoSweeps is the repository's sweeps.toml, loaded once for the tests
// that read it: a load of its 11,676 cells takes about a second, five
// under the race detector. The tests only read it.
var repoSweeps = sync.OnceValues(func() (*Config, error) {
	src, err := os.ReadFile("../sweeps.toml")
	if err != nil {
		return nil, err
	}
	return Load("sweeps.toml", src)
})

func repoConfig(t *testing.T) *Config {
	t.Helper()
	cfg, err := repoSweeps()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The queue-recovery sweep (sweeps.toml, on demand) keeps the servers that
// were back at once back at once under the time back's new definition
// (sim.QueueVersion queue-4): measured with queue-3, every scenario of it
// (70 and 90 % load, 5, 15 and 30 s outages, an unbounded queue or a 0.5 s
// wait bound) had the three policies that bound retries (full jitter with
// at most 3 attempts, full jitter under a 10 % retry budget, aws-sdk-go-v2's
// defaults) back at 0 in each of its 5 seeds: 180 runs, all still at 0.
// Under -short (.ci/run's race and cross-CPU steps) each cell runs its
// first seed: 36 runs.
func TestQueueRecoverySweepZerosStay(t *testing.T) {
	t.Parallel()
	cfg := repoConfig(t)
	sw := cfg.Sweep("queue-recovery")
	if sw == nil {
		t.Fatal("no queue-recovery sweep")
	}
	seeds := sw.Seeds
	if testing.Short() {
		seeds = seeds[:1]
	}
	var s sim.Sim
	runs := 0
	for _, c := range sw.Cells {
		if p := c.Policy; !(p.MaxAttempts > 0 && p.MaxAttempts <= 3 || p.RetryBudget > 0) {
			continue
		}
		for _, seed := range seeds {
			r, err := c.Simulate(&s, sim.NewMulberry32(seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			runs++
			if after, ok := r.BackAfter(c.Scenario); !ok || after != 0 {
				t.Errorf("%s, seed %d: back %v (%v), want 0 as before", c.Label(), seed, after, ok)
			}
		}
	}
	if runs != 36*len(seeds) || len(sw.Seeds) != 5 {
		t.Errorf("%d runs of policies that bound retries (%d seeds of %d), want 180 (12 scenarios × 3 policies × 5 seeds)", runs, len(seeds), len(sw.Seeds))
	}
}

// Every cell of the repository's sweeps (every sweep, on demand or not)
// comes back from its intent's parameters as the same cell: its
// canonical form, key and label.
func TestIntentCellsComeBack(t *testing.T) {
	cfg := repoConfig(t)
	n := 0
	for _, name := range cfg.Names() {
		for _, c := range cfg.Sweep(name).Cells {
			ic := dataset.IntentCell{Key: c.Key(), Label: c.Label(), Params: c.Canonical()}
			got, err := ic.Cell()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, c.Label(), err)
			}
			if got.Canonical() != c.Canonical() || got.Key() != c.Key() || got.Label() != c.Label() {
				t.Fatalf("%s: %s came back as %s", name, c.Canonical(), got.Canonical())
			}
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d cells tried", n)
	}
	for _, bad := range []string{"clients=", "nope=1", `policy="fixed`, "clients=1 clients=x"} {
		if _, err := (dataset.IntentCell{Params: bad}).Cell(); err == nil {
			t.Errorf("params %q read as a cell", bad)
		}
	}
}

// Every policy of the repository's sweeps (components, retry_on, token
// buckets and budgets included) and of recommend's candidate space reads
// back from its policy_spec as itself: the text of any stored row is a
// policy wherever one is written (grid.ParsePolicy).
func TestRepositoryPoliciesReadFromTheirSpecs(t *testing.T) {
	cfg := repoConfig(t)
	cells := grid.CandidateSpace(sim.Article())
	for _, s := range cfg.Sweeps {
		cells = append(cells, s.Cells...)
	}
	components := 0
	for _, c := range cells {
		spec := c.PolicySpec()
		p, err := grid.ParsePolicy(spec)
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		if p != c.Policy {
			t.Fatalf("%q reads as\n%+v\nwant\n%+v", spec, p, c.Policy)
		}
		if c.Policy.ComponentsShort() != "" {
			components++
		}
	}
	if components == 0 {
		t.Fatal("no policy with a client component among the sweeps: the test checks nothing of them")
	}
}
