package analysis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A server behind a service that retries changes the answer. 1,000
// clients come back from a 30 s outage of a 200 requests/s counting
// server. On the server alone the quickest client of the space (gRPC's
// curve from 200 ms, capped at 1 s) is the answer: 99 % back about 5 s
// after recovery. Behind A, which retries its call 3 times at 1, 2 and
// 4 s without jitter (a common "retry 3 times with backoff"), every
// client request waits out A's 7 s of retries before the client sees
// a failure, and A's retries, never jittered, keep the herd together:
// only the client's own jitter spreads it, and a client that retries
// within a second has less than a second of it. The quick client is
// then about twice as slow as one that waits seconds between its
// (fewer) attempts, and the answer is one of those. A candidate with a
// client component (a retry budget per process) cannot run behind A
// (sim.ValidateChain): it is judged there without a run, and says why.
func TestChainChangesTheAnswer(t *testing.T) {
	t.Parallel()
	base := envelopeBase(200, 1000, 30*time.Second)
	quick := sim.Policy{Kind: sim.GRPC, Base: 200 * time.Millisecond, Multiplier: 2, Cap: time.Second, Width: 0.2}.Normalize()
	perProcess := sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 5 * time.Second, RetryBudget: 0.1, BudgetMinRPS: 10, ClientsPerProcess: 100}.Normalize()
	space := []sim.Policy{quick, perProcess,
		sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 5 * time.Second}.Normalize(),
		sim.Policy{Kind: sim.FullJitter, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 5 * time.Second}.Normalize(),
		sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute}.Normalize()}
	chained, err := ParseServer(`layers=policy="exponential base_s=1 max_attempts=4"`, base)
	if err != nil {
		t.Fatal(err)
	}
	q, seeding := Query{Capacity: base.Capacity, Objective: ByT99}, EnvelopeSeeding{Screen: 2, Final: 3}
	// measure refuses a run of a candidate the chain cannot run: the
	// search must judge it without one.
	measure := func(ctx context.Context, runs []grid.Run) ([]Record, error) {
		for _, r := range runs {
			if r.Cell.Chained() && r.Cell.Policy == perProcess {
				t.Errorf("ran %s behind services", perProcess.Short())
			}
		}
		return simulateStuck(ctx, runs)
	}
	alone, err := SearchEnvelope(context.Background(), base, []Server{{}}, space, q, seeding, measure)
	if err != nil {
		t.Fatal(err)
	}
	behind, err := SearchEnvelope(context.Background(), base, []Server{chained}, space, q, seeding, measure)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*Envelope{alone, behind} {
		for _, c := range e.Candidates {
			if r := c.On[0]; r != nil {
				t.Logf("%s: %s: %.1f s %s", e.Servers[0].Label(), c.Policy.Short(), r.Time, r.Why)
			}
		}
	}
	if alone.Winner == nil || alone.Winner.Policy != quick {
		t.Fatalf("on the server alone: answer %+v; want %s: the test no longer tests anything", alone.Winner, quick.Short())
	}
	if behind.Winner == nil || behind.Winner.Policy == quick {
		t.Fatalf("behind %s: answer %+v; want another than %s", chained.Label(), behind.Winner, quick.Short())
	}
	var q0 *Candidate
	for _, c := range behind.Candidates {
		if c.Policy == quick {
			q0 = c
		}
	}
	if r := q0.On[0]; r == nil || r.Recovers() && r.Time < 1.5*behind.Winner.On[0].Time {
		t.Errorf("behind services %s: %+v; want it at least 1.5× the answer's %.1f s", quick.Short(), r, behind.Winner.On[0].Time)
	}
	skipped := behind.NotModelledOn(0)
	if len(skipped) != 1 || skipped[0].Policy != perProcess || !strings.Contains(skipped[0].On[0].Why, "budget 0.1/100") || !strings.Contains(skipped[0].Out, "not modelled") {
		t.Errorf("not modelled behind services: %v; want %s, saying why", skipped, perProcess.Short())
	}
	if len(alone.NotModelledOn(0)) != 0 {
		t.Errorf("the server alone skips %v", alone.NotModelledOn(0))
	}
}
