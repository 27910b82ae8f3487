package analysis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A brownout server changes the envelope's answer: on a queueing server at
// 20 % load with 5 s client timeouts, 200 clients back from a 10 s outage,
// the best candidate of smallSpace retries without a budget; with the same
// server failing 80 % of what it serves beside it, no candidate that
// retries without a budget or an attempt limit gets back to steady state
// there (1/(1 − 0.8) = 5 attempts a request take 20 % load to the
// capacity) and the answer is the candidate under a retry budget.
func TestBrownoutServerChangesTheAnswer(t *testing.T) {
	t.Parallel()
	base := envelopeBase(500, 200, 10*time.Second)
	q := Query{Capacity: base.Capacity, Objective: ByT99}
	plain := Server{Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: 5 * time.Second, Load: 0.2}
	brown := plain
	brown.FailShare = 0.8
	seeding := EnvelopeSeeding{Screen: 1, Final: 3}
	alone, err := SearchEnvelope(context.Background(), base, []Server{plain}, smallSpace(), q, seeding, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	both, err := SearchEnvelope(context.Background(), base, []Server{plain, brown}, smallSpace(), q, seeding, simulateStuck)
	if err != nil {
		t.Fatal(err)
	}
	if alone.Winner == nil || both.Winner == nil {
		t.Fatalf("no answer: %v, %v", alone.NoAnswer, both.NoAnswer)
	}
	if p := alone.Winner.Policy; p.RetryBudget != 0 {
		t.Errorf("without the brownout server the answer is %s; want one without a retry budget", p)
	}
	if p := both.Winner.Policy; p.RetryBudget == 0 || len(both.Defeating) > 0 {
		t.Errorf("with it the answer is %s (defeating %v); want the candidate under a retry budget, on both servers", p, both.Defeating)
	}
	j := &judger{ctx: context.Background(), q: q, measure: simulateStuck, memo: map[string]*Record{}}
	for _, p := range smallSpace() {
		if p.RetryBudget > 0 || p.MaxAttempts > 0 {
			continue
		}
		r, err := j.recovery(brown.Cell(base, sim.Policy{}), p, seeding.Final)
		if err != nil {
			t.Fatal(err)
		}
		if r.Recovers() || !strings.Contains(r.Why, "not back to its steady state") {
			t.Errorf("%s on the brownout server: %q; want it not back to steady state", p, r.Why)
		}
	}
}

// A brownout server is written and read as sweeps.toml's keys, named in
// its label, and refused where sim refuses it.
func TestBrownoutServerSpec(t *testing.T) {
	t.Parallel()
	base := envelopeBase(500, 200, 10*time.Second)
	for _, tc := range []struct {
		spec, label, err string
	}{
		{spec: "fail_share=0.3", label: "counting, 429s free, 30 % failing"},
		{spec: "fail_share=0.3 reject_cost=0.25", label: "counting, 429s cost 25 %, 30 % failing"},
		{spec: "service=exponential service_s=0.02 timeout_s=2 fail_share=0.5 added_latency_s=0.1", label: "queue 20ms exp, 2s timeout, 0 % load, 50 % failing, 100ms added"},
		{spec: "fail_share=1.5", err: "fail_share=1.5: want a share of the requests served in [0, 1]"},
		{spec: "added_latency_s=0.1", err: "a queueing server needs service and service_s"},
	} {
		s, err := ParseServer(tc.spec, base)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error containing %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := s.Label(); got != tc.label {
			t.Errorf("%s: label %q, want %q", tc.spec, got, tc.label)
		}
		again, err := ParseServer(s.Spec(base), base)
		if err != nil || again.Scenario(base) != s.Scenario(base) {
			t.Errorf("%s: Spec %q reads back as %+v (%v)", tc.spec, s.Spec(base), again, err)
		}
		if sc := s.Scenario(base); sc.FailShare != s.FailShare || sc.AddedLatency != s.AddedLatency {
			t.Errorf("%s: scenario %+v", tc.spec, sc)
		}
	}
}

// DescribeEnvelope names the servers in a brownout.
func TestDescribeEnvelopeNamesBrownouts(t *testing.T) {
	t.Parallel()
	env := []Server{{}, {FailShare: 0.3}}
	if got, want := DescribeEnvelope(env), "in a brownout: counting, 429s free, 30 % failing"; !strings.Contains(got, want) {
		t.Errorf("%q, want it to contain %q", got, want)
	}
	if got := DescribeEnvelope(DefaultEnvelope()); strings.Contains(got, "brownout") {
		t.Errorf("the default envelope: %q", got)
	}
}
