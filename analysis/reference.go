package analysis

import "github.com/herdsweep/herdsweep/sim"

// Scene is one scenario of a report as the choice of its reference sees
// it: its query, its family, and whether it has an answer (a
// recommendation with a best policy).
type Scene struct {
	Query    Query
	Family   Family
	Answered bool
}

// ReferenceFamily is the article's scenario as the sweeps run it: the
// article's clients and outage (sim.Article), no Retry-After, a counting
// server and the DefaultWindow after recovery; ReferenceCapacity its
// capacity.
var (
	ReferenceFamily   = Family{Clients: sim.Article().Clients, Outage: sim.Article().RecoverAt, Window: DefaultWindow}
	ReferenceCapacity = sim.Article().Capacity
)

// Reference is the rule that chooses the scenario a report quotes where
// one example stands for all (the avoid table's examples, the figures,
// the library tables' advice): among the scenes with an answer, the one
// closest to the article's (ReferenceFamily at ReferenceCapacity), that
// is with the fewest of capacity, clients, outage, Retry-After, server and
// window differing from it; the first of those on a tie. -1 when no scene
// has an answer.
func Reference(scenes []Scene) int {
	best, fewest := -1, 0
	for i, s := range scenes {
		if !s.Answered {
			continue
		}
		if d := distance(s); best < 0 || d < fewest {
			best, fewest = i, d
		}
	}
	return best
}

// distance counts the parameters in which s differs from the article's
// scenario.
func distance(s Scene) int {
	f, q, r := s.Family, s.Query, ReferenceFamily
	n := 0
	for _, differs := range []bool{q.Capacity != ReferenceCapacity, q.Clients != r.Clients, q.Outage != r.Outage,
		q.RetryAfter != r.RetryAfter, q.Server != r.Server, f.Window != r.Window} {
		if differs {
			n++
		}
	}
	return n
}
