package plots

import (
	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// policyNames names each policy of a figure in its legend (or panel
// title), a name per policy: name(p) (analysis.ShortName), and where two
// different policies share it, the family or preset after it ("full
// jitter U(0, 2s) ×2 ≤1m0s (api-core)"), then, should they still share
// it, the policy as it ran (sim.Policy.String). The legend draws one
// entry per name: two lines under one name would leave the second
// unnamed. The same policy twice keeps one name.
func policyNames(ps []sim.Policy, name func(sim.Policy) string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = name(p)
	}
	for _, more := range []func(sim.Policy) string{family, sim.Policy.String} {
		shared := map[string]sim.Policy{}
		clash := map[string]bool{}
		for i, p := range ps {
			if q, ok := shared[out[i]]; ok && q != p {
				clash[out[i]] = true
			}
			shared[out[i]] = p
		}
		for i, p := range ps {
			if clash[out[i]] {
				out[i] = name(p) + " (" + more(p) + ")"
			}
		}
	}
	return out
}

// family is what tells apart two policies of one short name: the preset,
// else the family.
func family(p sim.Policy) string {
	if p.Preset != "" {
		return p.Preset
	}
	return string(p.Kind)
}

// shortNames is policyNames by analysis.ShortName.
func shortNames(ps []sim.Policy) []string { return policyNames(ps, analysis.ShortName) }
