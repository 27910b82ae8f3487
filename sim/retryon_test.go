package sim

import (
	"testing"
	"time"
)

// Which responses each RetryOn value retries: a 503 (server down), a 429
// (server up), with and without a Retry-After, and a queueing server's
// timeout, which none of these refuses (retry-after-only does:
// TestRetryOnEveryValue).
func TestRetryOnRetries(t *testing.T) {
	t.Parallel()
	r503, r429 := response{}, response{up: true}
	r503ra, r429ra := response{retryAfter: 1000}, response{up: true, retryAfter: 1000}
	timeout := response{up: true, noAnswer: true}
	tests := []struct {
		on                                   RetryOn
		r503, r429, r503ra, r429ra, r429draw bool
	}{
		{RetryOnAny, true, true, true, true, true},
		{RetryOn5xx, true, false, true, false, false},
		{RetryOn5xxOrRetryAfter, true, false, true, true, true},
		{RetryOnRetryAfter, false, false, true, true, true},
	}
	for _, tt := range tests {
		got := []bool{tt.on.retries(r503, false), tt.on.retries(r429, false), tt.on.retries(r503ra, false),
			tt.on.retries(r429ra, false), tt.on.retries(r429, true)}
		want := []bool{tt.r503, tt.r429, tt.r503ra, tt.r429ra, tt.r429draw}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: case %d (503, 429, 503+RA, 429+RA, 429 with a drawn RA) = %v, want %v", tt.on, i, got[i], want[i])
			}
		}
		if !tt.on.retries(timeout, false) {
			t.Errorf("%q does not retry a timeout", tt.on)
		}
	}
}

// A fleet on fixed 2 s against a server that recovers at 10 s serving one
// request a tick: under retry_on "5xx" every client sends exactly one
// request after recovery (the 429 ends its tries), and under
// "retry-after" without a Retry-After none retries at all; with a
// Retry-After, "retry-after" and "5xx+retry-after" behave as "any".
func TestRetryOnInARun(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 100, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Second, Capacity: 10, Spread: time.Second, Horizon: 5 * time.Minute}
	p := Policy{Kind: Fixed, Base: 2 * time.Second}
	run := func(sc Scenario, on RetryOn) Result {
		q := p
		q.RetryOn = on
		r, _ := runWith(t, sc, q, 1)
		if r.Succeeded+r.GaveUp+r.Pending != sc.Clients {
			t.Errorf("%q: accounting %+v", on, r)
		}
		return r
	}
	anyR := run(sc, RetryOnAny)
	if anyR.GaveUp != 0 || anyR.Succeeded != 100 || anyR.SentAfterRecovery <= 100 {
		t.Fatalf("any: %+v, want all served after several tries", anyR)
	}
	for _, on := range []RetryOn{RetryOn5xx, RetryOn5xxOrRetryAfter} {
		r := run(sc, on)
		if r.SentAfterRecovery != 100 || r.GaveUp == 0 || r.Succeeded == 0 || r.Sent != anyR.Sent-anyR.SentAfterRecovery+100 {
			t.Errorf("%q: %d sent after recovery, %d served, %d gave up: want each client once after recovery", on, r.SentAfterRecovery, r.Succeeded, r.GaveUp)
		}
	}
	if r := run(sc, RetryOnRetryAfter); r.Sent != 100 || r.GaveUp != 100 {
		t.Errorf("retry-after without one: %d sent, %d gave up, want 100 and 100", r.Sent, r.GaveUp)
	}
	ra := sc
	ra.RetryAfter = time.Second
	anyRA := run(ra, RetryOnAny)
	for _, on := range []RetryOn{RetryOnRetryAfter, RetryOn5xxOrRetryAfter} {
		if r := run(ra, on); r != anyRA {
			t.Errorf("%q with a Retry-After: %+v, want as any: %+v", on, r, anyRA)
		}
	}
}

func TestRetryOnValidate(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy(Fixed)
	p.RetryOn = "429"
	if err := p.Validate(); err == nil {
		t.Error("retry_on 429: no error")
	}
	p.RetryOn = "any"
	if err := p.Validate(); err != nil {
		t.Errorf("any: %v", err)
	}
	if q := p.Normalize(); q.RetryOn != RetryOnAny || q != DefaultPolicy(Fixed) {
		t.Errorf("any normalizes to %+v, want the default", q)
	}
}
