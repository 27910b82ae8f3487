package grid

import (
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// A policy spec names exactly what ran: two cells have the same spec
// exactly when their policy parameters (but the mix) are the same, a
// preset is its name, and a family never reads as a preset of the same
// name.
func TestPolicySpecNamesExactlyWhatRan(t *testing.T) {
	t.Parallel()
	cells := CandidateSpace(sim.Article())
	for _, k := range sim.Kinds() {
		cells = append(cells, Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(k).Normalize()})
	}
	for _, p := range sim.Presets() {
		cells = append(cells, Cell{Scenario: sim.Article(), Policy: p.Policy.Normalize()})
	}
	bucket := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated).Normalize()}
	bucket.Policy.BucketTokens, bucket.Policy.BucketCost = 10, 5
	cells = append(cells, bucket)
	policyOf := func(c Cell) string { // the policy parameters, as the keys hash them
		s := ""
		for i := range Params {
			if p := &Params[i]; p.Policy && p.Key != "mix" {
				s += p.Key + "=" + formatValue(p.Get(c)) + " "
			}
		}
		return s
	}
	bySpec := map[string]string{}
	for _, c := range cells {
		spec, params := c.PolicySpec(), policyOf(c)
		if prev, ok := bySpec[spec]; ok && prev != params {
			t.Errorf("spec %q names two policies:\n%s\n%s", spec, prev, params)
		}
		bySpec[spec] = params
	}
	specs := map[string]string{}
	for s, p := range bySpec {
		if prev, ok := specs[p]; ok {
			t.Errorf("one policy, two specs %q and %q", prev, s)
		}
		specs[p] = s
	}
	grpc, _ := sim.PresetByName("grpc")
	cenkalti, _ := sim.PresetByName("cenkalti-backoff")
	for _, tt := range []struct {
		cell Cell
		want string
	}{
		{Cell{Policy: grpc.Policy.Normalize()}, "grpc"},
		{Cell{Policy: cenkalti.Policy.Normalize()}, "cenkalti-backoff"},
		{Cell{Policy: sim.Policy{Kind: sim.GRPC, Base: 1e9, Cap: 30e9, Multiplier: 2, Width: 0.2}.Normalize()}, "grpc base_s=1 cap_s=30 multiplier=2 width=0.2"},
		{bucket, "decorrelated base_s=1 cap_s=60 bucket_tokens=10 bucket_cost=5"},
	} {
		if got := tt.cell.PolicySpec(); got != tt.want {
			t.Errorf("%v: spec %q, want %q", tt.cell.Policy, got, tt.want)
		}
	}
}
