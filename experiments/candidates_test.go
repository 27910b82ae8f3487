package experiments

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A sweep with candidates = true holds recommend's candidate space (and the
// closest built-in settings it judges beside an answer) at every
// scenario of its axes, and nothing else: the cells of CandidateCells,
// scenario by scenario, with recommend's window when it sets none.
func TestCandidatesSweepIsTheCandidateSpace(t *testing.T) {
	cfg, err := Load("c.toml", []byte(`
[defaults]
clients = 300
recover_s = 10
seeds = {from = 1, to = 3}
base_s = 1
[sweep.c]
candidates = true
capacity_rps = [40, 80]
retry_after_s = [0, 5]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sweep("c")
	var want []grid.Cell
	for _, c := range []float64{40, 80} {
		for _, ra := range []time.Duration{0, 5 * time.Second} {
			sc := sim.Article()
			sc.Clients, sc.RecoverAt, sc.Capacity, sc.RetryAfter = 300, 10*time.Second, c, ra
			sc.Horizon = sc.RecoverAt + grid.RecommendWindow // recommend's, not the article's 20 minutes from the start
			want = append(want, grid.CandidateCells(sc)...)
		}
	}
	if len(s.Cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(s.Cells), len(want))
	}
	for _, c := range want {
		if !slices.Contains(s.Cells, c) {
			t.Fatalf("missing candidate %s at %+v", c.Policy.Short(), c.Scenario)
		}
	}
	if !s.Candidates || !slices.Equal(s.Seeds, []uint32{1, 2, 3}) {
		t.Fatalf("candidates %v, seeds %v", s.Candidates, s.Seeds)
	}
}

// The candidates are the policies: a candidates sweep that names its own
// (or cells, or an experiment) is refused at the key, with the reason.
func TestCandidatesSweepRefusesItsOwnPolicies(t *testing.T) {
	for _, tc := range []struct{ body, key string }{
		{`policy = "decorrelated"`, "sweep.c.policy"},
		{`cap_s = 30`, "sweep.c.cap_s"},
		{`experiment = "article"`, "sweep.c.experiment"},
		{"[[sweep.c.cell]]\nclients = 10", "sweep.c.cell"},
		{`candidates = "yes"`, "sweep.c.candidates"},
	} {
		src := "[sweep.c]\nseeds = [1]\ncapacity_rps = 50\n"
		if !strings.HasPrefix(tc.body, "candidates") {
			src = "[sweep.c]\nseeds = [1]\ncapacity_rps = 50\ncandidates = true\n"
		}
		if strings.HasPrefix(tc.body, "[[") {
			src += tc.body + "\n"
		} else {
			src = strings.Replace(src, "[sweep.c]\n", "[sweep.c]\n"+tc.body+"\n", 1)
		}
		_, err := Load("c.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v, want one naming %s", tc.body, err, tc.key)
		}
	}
}
