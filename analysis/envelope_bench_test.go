package analysis

import (
	"context"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
)

// The CPU of recommend's answers at 5,000 clients, 800 requests/s, a
// 2-minute outage: on one counting server (the single-server search over
// its 153 candidates) and over the default envelope with its margins
// (issue 21 asks at most 4× the first). Run with -benchtime 1x and read
// CPU from /usr/bin/time or -cpuprofile: each iteration is seconds.
func benchScenario() Request {
	return Request{CapacityLo: 800, CapacityHi: 800, ClientsLo: 5000, ClientsHi: 5000, Outage: 2 * time.Minute,
		Window: grid.RecommendWindow, Query: Query{Objective: ByT99}, Seeding: DefaultSeeding}
}

func BenchmarkRecommendOneServer5000(b *testing.B) {
	req := benchScenario()
	req.Servers = []Server{{}}
	for b.Loop() {
		if _, err := Answer(context.Background(), req, simulateStuck); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecommendEnvelopeWithMargins5000(b *testing.B) {
	req := benchScenario()
	base := req.Points()[0]
	for b.Loop() {
		env, err := SearchEnvelope(context.Background(), base, DefaultEnvelope(), EnvelopeSpace(base), req.Query, DefaultEnvelopeSeeding, simulateStuck)
		if err != nil {
			b.Fatal(err)
		}
		w := env.Winner
		axes := MarginAxes(env.Servers, func(i int) bool { return w.On[i] != nil && w.On[i].Recovers() })
		if _, _, err := Margins(context.Background(), base, w.Policy, axes, EnvelopeSpace(base), req.Query, DefaultMarginSeeds, simulateStuck); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecommendOwner5000(b *testing.B) {
	req := benchScenario()
	base := req.Points()[0]
	s := DefaultEnvelope()[5] // queue 20 ms exponential, 1 s timeout, 50 % load
	for b.Loop() {
		if _, _, err := Owner(context.Background(), base, s, grid.CandidateSpace(base)[0].Policy, req.Query, DefaultOwnerSeeds, simulateStuck); err != nil {
			b.Fatal(err)
		}
	}
}
