package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// sim.PolicyVersion moves the keys of the cells whose policies it revised
// (sim.Policy.Revised, in any group of a mixed fleet) and no other: every
// other cell, counting or queueing, keeps the key it had under sim.Version
// (+ sim.QueueVersion). Cells here: every family, every preset, with
// honor_retry_after both ways, widths, budgets and mixes, on both servers.
func TestPolicyVersionMovesRevisedKeysOnly(t *testing.T) {
	t.Parallel()
	var ps []sim.Policy
	for _, k := range sim.Kinds() {
		p := sim.DefaultPolicy(k)
		ps = append(ps, p)
		if k.Reads("honor_retry_after") {
			p.HonorRetryAfter = !p.HonorRetryAfter
			ps = append(ps, p)
		}
		if k.Reads("width") {
			p.Width = 0
			ps = append(ps, p)
		}
	}
	for _, pr := range sim.Presets() {
		ps = append(ps, pr.Policy)
	}
	ps = append(ps, sim.Policy{Kind: sim.Fixed, Base: time.Second, RetryBudget: 0.2, BudgetMinRPS: 10},
		sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: time.Minute, RetryBudget: 0.2, ClientsPerProcess: 10},
		sim.Policy{Kind: sim.FullJitter, Base: time.Second, Multiplier: 2, BreakerRatio: 0.1, ClientsPerProcess: 5})
	counting := sim.Article()
	queueing := counting
	queueing.Concurrency, queueing.Service, queueing.ServiceTime = 4, "exponential", 20*time.Millisecond
	var cells []Cell
	for _, sc := range []sim.Scenario{counting, queueing} {
		for _, p := range ps {
			cells = append(cells, Cell{Scenario: sc, Policy: p.Normalize()})
		}
		// A mixed fleet is revised when any group is.
		for _, other := range []sim.Policy{sim.DefaultPolicy(sim.Fixed), {Kind: sim.PollyV2, Base: time.Second, HonorRetryAfter: true}} {
			c := Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
			c.Mix[0] = sim.Group{Share: 0.3, Policy: other.Normalize()}
			cells = append(cells, c)
		}
	}
	revised, kept := 0, 0
	for _, c := range cells {
		rev := false
		for _, g := range c.Groups() {
			rev = rev || g.Policy.Revised()
		}
		old := sim.Version
		if c.Scenario.Concurrency > 0 {
			old += "+" + sim.QueueVersion
		}
		want := old
		if rev {
			want += "+" + sim.PolicyVersion
			revised++
		} else {
			kept++
		}
		can := c.Canonical()
		h := sha256.Sum256([]byte(want + "\x00" + can))
		if got := c.Key(); got != hex.EncodeToString(h[:8]) {
			t.Errorf("%s: key %s, want the hash under %s", can, got, want)
		}
		if r := (Run{Cell: c, Seed: 7}); r.Key() != RunKey(can, 7) {
			t.Errorf("%s: run key %s, RunKey %s", can, r.Key(), RunKey(can, 7))
		}
	}
	if revised < 8 || kept < 50 {
		t.Errorf("%d cells revised, %d kept: the test does not separate them", revised, kept)
	}
	// The revised ones are the policies issue 22 named.
	for _, name := range []string{"ms-resilience-standard", "resilience4j-exponential-random", "client-go-rest"} {
		pr, _ := sim.PresetByName(name)
		if !pr.Policy.Normalize().Revised() {
			t.Errorf("%s: not revised", name)
		}
	}
	for _, name := range []string{"polly-v2", "polly-v8", "resilience4j", "grpc", "aws-sdk-go-v2", "urllib3-backoff"} {
		pr, _ := sim.PresetByName(name)
		if pr.Policy.Normalize().Revised() {
			t.Errorf("%s: revised, though nothing it does changed", name)
		}
	}
}

// A retired preset name is refused with where it went, not taken for
// another library setting.
func TestRetiredPresetName(t *testing.T) {
	t.Parallel()
	_, err := Load("t.toml", []byte(base+"[sweep.s]\npolicy = [\"urllib3\", \"decorrelated\"]\n"))
	if err == nil || !strings.Contains(err.Error(), `t.toml:`) || !strings.Contains(err.Error(), `"urllib3": a retired preset:`) ||
		!strings.Contains(err.Error(), "urllib3-default") {
		t.Errorf("policy urllib3: %v", err)
	}
}
