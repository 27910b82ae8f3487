package reports

import (
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
)

// writeNotModelled says, for each server behind services, which
// candidates its chain cannot run (analysis.NotModelled) and that the
// answer there is the best of the others: never a silent skip.
func writeNotModelled(ew *errWriter, e *analysis.Envelope) {
	for i, s := range e.Servers {
		cs := e.NotModelledOn(i)
		if len(cs) == 0 {
			continue
		}
		var comps []string
		for _, c := range cs {
			w := strings.TrimPrefix(strings.TrimSpace(c.Policy.ComponentsShort()), "+ ")
			if !slices.Contains(comps, w) {
				comps = append(comps, w)
			}
		}
		ew.printf("skipped on %s: %d of the %d candidates, whose client components a chain of services does not model (%s); the answer there is the best of the other %d\n",
			s.Label(), len(cs), e.Space, strings.Join(comps, "; "), e.Space-len(cs))
	}
}

// jsonNotModelled is a server behind services and the candidates its
// chain cannot run, each with why.
type jsonNotModelled struct {
	Server     string     `json:"server"`
	Candidates []jsonLeft `json:"candidates"`
}

// notModelledJSON is writeNotModelled's list as --json writes it; nil
// when no server skips a candidate.
func notModelledJSON(e *analysis.Envelope) []jsonNotModelled {
	var out []jsonNotModelled
	for i, s := range e.Servers {
		cs := e.NotModelledOn(i)
		if len(cs) == 0 {
			continue
		}
		j := jsonNotModelled{Server: s.Label()}
		for _, c := range cs {
			j.Candidates = append(j.Candidates, jsonLeft{Policy: policyJSON(c.Policy, false), Why: c.On[i].Why})
		}
		out = append(out, j)
	}
	return out
}
