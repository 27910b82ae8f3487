package sim

import (
	"slices"
	"testing"
	"time"
)

// Policy.ReadsRetryAfter is the one owner of "does this policy read the
// server's Retry-After": it must say what runs do. For every family (with
// and without honor_retry_after where it reads it), every preset and
// gRPC's pushback, a run whose server sends a Retry-After differs from the
// same run without one exactly when the policy reads it: every wait, served
// request and give-up of the trace is compared. Policies here retry every
// rejection or only 503s (retry_on), or need a Retry-After to retry at all
// and read it (or never retry): none looks at whether one is there
// without reading it.
func TestReadsRetryAfterAsTheSimulatorDoes(t *testing.T) {
	t.Parallel()
	var ps []Policy
	for _, k := range Kinds() {
		p := DefaultPolicy(k)
		ps = append(ps, p)
		if k.Reads(FieldHonorRetryAfter) {
			p.HonorRetryAfter = !p.HonorRetryAfter
			ps = append(ps, p)
		}
	}
	for _, pr := range Presets() {
		ps = append(ps, pr.Policy)
	}
	ps = append(ps, Policy{Kind: Exponential, Base: time.Second, Multiplier: 2, Cap: time.Minute, Pushback: true},
		Policy{Kind: FullJitter, Base: time.Second, Multiplier: 2, Cap: time.Minute, Pushback: true, RetryOn: RetryOn5xx})
	base := Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 20 * time.Second, Capacity: 40, Spread: 2 * time.Second,
		Horizon: 3 * time.Minute}
	withRA := base
	withRA.RetryAfter = 7 * time.Second
	trace := func(sc Scenario, p Policy) []Event {
		var ev []Event
		s := Sim{Trace: func(e Event) { ev = append(ev, e) }}
		if _, err := s.Run(sc, p, NewMulberry32(4), nil); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return ev
	}
	readers := 0
	for _, p := range ps {
		if p.MaxAttempts != 1 && (p.RetryOn == RetryOnRetryAfter || p.RetryOn == RetryOnRetryAfterOnly || p.RetryOn == RetryOn5xxOrRetryAfter) {
			if !p.ReadsRetryAfter() {
				t.Errorf("%s retries on a Retry-After's presence and does not read it: this test cannot tell", p)
			}
		}
		differs := !slices.Equal(trace(base, p), trace(withRA, p))
		if differs != p.ReadsRetryAfter() {
			t.Errorf("%s: ReadsRetryAfter %v, but a server's Retry-After of 7 s changes its run: %v", p, p.ReadsRetryAfter(), differs)
		}
		if differs {
			readers++
		}
	}
	if readers < 10 || readers == len(ps) {
		t.Errorf("%d of %d policies read a Retry-After: the test does not separate them", readers, len(ps))
	}
}
