package analysis

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A server with an adaptive limiter in the envelope changes the answer.
// On TestBudgetRecoversWhereBackoffAloneFails' buried server (an unbounded
// queue at 70 % load, 2 s timeouts) no backoff that never gives up comes
// back: with the counting server beside it, it is left out of the answer
// as defeating, and the answer is the best on the counting server alone.
// Behind a Gradient2 limit (Netflix's defaults, ceiling 1000) the same
// server turns the excess away at once and those backoffs come back: it
// stays in the answer, which must hold there too. The limited server's
// spec reads back as the same server.
func TestLimiterChangesTheAnswer(t *testing.T) {
	t.Parallel()
	base := envelopeBase(200, 500, time.Minute)
	srv := Server{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: 2 * time.Second, Load: 0.7}
	limited := srv
	limited.Limiter, limited.LimitMax = "gradient2", 1000
	space := []sim.Policy{sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}.Normalize(),
		sim.Policy{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute}.Normalize(),
		sim.Policy{Kind: sim.GRPC, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 10 * time.Second, Width: 0.2}.Normalize()}
	q, seeding := Query{Capacity: base.Capacity, Objective: ByT99}, EnvelopeSeeding{Screen: 2, Final: 3}
	plain, err := SearchEnvelope(context.Background(), base, []Server{{}, srv}, space, q, seeding, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SearchEnvelope(context.Background(), base, []Server{{}, limited}, space, q, seeding, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*Envelope{plain, got} {
		for _, c := range e.Candidates {
			if r := c.On[1]; r != nil {
				t.Logf("%s: %v: %.0f s %s", e.Servers[1].Label(), c.Policy, r.Time, r.Why)
			}
		}
	}
	if plain.Winner == nil || !slices.Equal(plain.Defeating, []int{1}) {
		t.Fatalf("on %s: answer %+v, defeating %v; want the server defeating: the test no longer tests anything", srv.Label(), plain.Winner, plain.Defeating)
	}
	if got.Winner == nil || len(got.Defeating) != 0 || got.Winner.On[1] == nil || !got.Winner.On[1].Recovers() {
		t.Fatalf("on %s: answer %+v, defeating %v; want an answer that comes back there", limited.Label(), got.Winner, got.Defeating)
	}
	t.Logf("%s: %v; %s: %v", srv.Label(), plain.Winner.Policy, limited.Label(), got.Winner.Policy)
	if got.Winner.Policy == plain.Winner.Policy {
		t.Errorf("the same answer, %v, with and without the limiter", got.Winner.Policy)
	}
	back, err := ParseServer(limited.Spec(base), base)
	if err != nil || back.Scenario(base) != limited.Scenario(base) {
		t.Errorf("spec %q reads back as %+v, %v", limited.Spec(base), back, err)
	}
}

// A limiter's settings are a server's: --server reads every one
// sweeps.toml takes, and two servers differing only in one of them are
// labelled apart (the limits table and recommend's envelope name them).
func TestLimiterSettingsNameTheServer(t *testing.T) {
	t.Parallel()
	base := sim.Article()
	spec := "concurrency=5 service=exponential service_s=0.02 timeout_s=1 arrival_rps=100 limiter=aimd limit_max=1000 limit_initial=50 limit_backoff=0.5 limit_timeout_s=2"
	s, err := ParseServer(spec, base)
	if err != nil {
		t.Fatal(err)
	}
	if s.LimitBackoff != 0.5 || s.LimitInitial != 50 || s.LimitTimeout != 2*time.Second {
		t.Errorf("ParseServer(%q) = %+v", spec, s)
	}
	if back, err := ParseServer(s.Spec(base), base); err != nil || back != s {
		t.Errorf("ParseServer(Spec) = %+v, %v; want %+v", back, err, s)
	}
	g1, err1 := ParseServer("concurrency=5 service=exponential service_s=0.02 limiter=gradient2 limit_smoothing=0.1", base)
	g2, err2 := ParseServer("concurrency=5 service=exponential service_s=0.02 limiter=gradient2 limit_smoothing=1", base)
	if err1 != nil || err2 != nil || g1.Label() == g2.Label() || !strings.Contains(g1.Label(), "smoothing 0.1") {
		t.Errorf("labels %q and %q (%v, %v): want each with its smoothing", g1.Label(), g2.Label(), err1, err2)
	}
}
