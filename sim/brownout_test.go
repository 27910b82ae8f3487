package sim

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// brownoutSeeds are the seeds of the closed-form checks: fixed, so that a
// check passes or fails for good.
const brownoutSeeds = 4

// zBrownout is how many standard errors a mean may stray from its closed
// form: a two-sided 4σ band (a 6·10⁻⁵ chance per check that a right
// model falls outside it, on seeds that are fixed).
const zBrownout = 4

// attemptsMoments are the mean and variance of a client's attempts when
// each fails with probability p and it makes at most n+1: A = min(G, n+1),
// G geometric on {1, 2, …} with success 1−p. P(A = k) = p^(k−1)(1−p) for
// k ≤ n, P(A = n+1) = p^n.
func attemptsMoments(p float64, n int) (mean, variance float64) {
	var m1, m2 float64
	for k := 1; k <= n+1; k++ {
		pk := math.Pow(p, float64(k-1)) * (1 - p)
		if k == n+1 {
			pk = math.Pow(p, float64(n))
		}
		m1 += float64(k) * pk
		m2 += float64(k*k) * pk
	}
	return m1, m2 - m1*m1
}

// closedForm is the brownout's success rate and amplification with no
// capacity limit and at most n retries: 1 − p^(n+1) and (1 − p^(n+1))/(1 − p)
// (n + 1 at p = 1).
func closedForm(p float64, n int) (success, amp float64) {
	q := math.Pow(p, float64(n+1))
	if p == 1 {
		return 0, float64(n + 1)
	}
	return 1 - q, (1 - q) / (1 - p)
}

// checkClosedForm runs sc (whose capacity is far above its load) under a
// fixed 1 s delay with at most n retries over brownoutSeeds seeds and holds
// the pooled success rate and amplification to the closed forms, within
// zBrownout binomial (success) and exact (attempts) standard errors over
// the clients × seeds.
func checkClosedForm(t *testing.T, sc Scenario, p float64, n int) {
	t.Helper()
	sc.FailShare = p
	pol := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: n + 1}
	var s Sim
	var ok, sent, logical int64
	for seed := uint32(1); seed <= brownoutSeeds; seed++ {
		r, err := s.Run(sc, pol, NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Pending != 0 {
			t.Fatalf("p=%g n=%d seed %d: %d clients pending: the horizon is too short for the check", p, n, seed, r.Pending)
		}
		if r.Sent != r.Failed+int64(r.Succeeded) {
			t.Errorf("p=%g n=%d seed %d: %d sent, but %d failed + %d succeeded", p, n, seed, r.Sent, r.Failed, r.Succeeded)
		}
		ok += int64(r.Succeeded)
		sent += r.Sent
		logical += r.Logical()
		if got, want := r.SuccessRate(), float64(r.Succeeded)/float64(r.Clients); got != want {
			t.Errorf("SuccessRate %g, want succeeded/clients %g", got, want)
		}
	}
	nn := float64(logical)
	wantS, wantA := closedForm(p, n)
	gotS, gotA := float64(ok)/nn, float64(sent)/nn
	mean, variance := attemptsMoments(p, n)
	if math.Abs(mean-wantA) > 1e-12 {
		t.Fatalf("attemptsMoments' mean %g is not the closed form %g", mean, wantA)
	}
	tolS := zBrownout * math.Sqrt(wantS*(1-wantS)/nn)
	tolA := zBrownout * math.Sqrt(variance/nn)
	if math.Abs(gotS-wantS) > tolS+1e-12 {
		t.Errorf("p=%g, at most %d retries: success %.5f, want 1 − p^(N+1) = %.5f ± %.5f", p, n, gotS, wantS, tolS)
	}
	if math.Abs(gotA-wantA) > tolA+1e-12 {
		t.Errorf("p=%g, at most %d retries: amplification %.5f, want (1 − p^(N+1))/(1 − p) = %.5f ± %.5f", p, n, gotA, wantA, tolA)
	}
}

// brownoutShares and brownoutRetries are the closed-form checks' grid.
var (
	brownoutShares  = []float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 1}
	brownoutRetries = []int{0, 1, 3}
)

// With no capacity limit, a brownout of share p and a policy of at most N
// retries give success 1 − p^(N+1) and amplification (1 − p^(N+1))/(1 − p)
// (N + 1 at p = 1): the counting server, 2,000 clients × 4 seeds, a budget
// of 10⁵ a tick, a pure brownout (RecoverAt 0).
func TestBrownoutClosedFormCounting(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 2000, Tick: 100 * time.Millisecond, Capacity: 1e6, Spread: 2 * time.Second, Horizon: 30 * time.Second}
	for _, n := range brownoutRetries {
		for _, p := range brownoutShares {
			t.Run(fmt.Sprintf("N=%d/p=%g", n, p), func(t *testing.T) { checkClosedForm(t, sc, p, n) })
		}
	}
}

// The same on a queueing server with a worker per client (no request
// waits) and no timeout: a failed request takes its worker and its
// service time, then its client retries.
func TestBrownoutClosedFormQueueing(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 2000, Tick: 100 * time.Millisecond, Spread: 2 * time.Second, Horizon: 30 * time.Second,
		Concurrency: 2000, Service: "exponential", ServiceTime: 20 * time.Millisecond, AddedLatency: 30 * time.Millisecond}
	for _, n := range brownoutRetries {
		for _, p := range brownoutShares {
			t.Run(fmt.Sprintf("N=%d/p=%g", n, p), func(t *testing.T) { checkClosedForm(t, sc, p, n) })
		}
	}
}

// Open-loop traffic: the success rate is the share of requests answered
// in time, the amplification attempts over requests, with the same closed
// forms when nothing waits (200 workers for 100 requests/s of 10 ms).
func TestBrownoutClosedFormOpenLoop(t *testing.T) {
	t.Parallel()
	const p, n = 0.4, 2
	sc := Scenario{Clients: 1, Tick: 100 * time.Millisecond, Horizon: 600 * time.Second, Concurrency: 200,
		Service: "fixed", ServiceTime: 10 * time.Millisecond, ArrivalRate: 100, FailShare: p}
	pol := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: n + 1}
	var ok, sent, logical int64
	for seed := uint32(1); seed <= brownoutSeeds; seed++ {
		r, err := Run(sc, pol, seed)
		if err != nil {
			t.Fatal(err)
		}
		ok += int64(r.Succeeded) + r.OfferedSucceeded
		sent += r.Sent
		logical += r.Logical()
	}
	// Requests within the last 3 s may not be done by the horizon: at most
	// 3 s × 100/s × seeds of them, a bias bounded beside the noise.
	nn := float64(logical)
	wantS, wantA := closedForm(p, n)
	_, variance := attemptsMoments(p, n)
	edge := 3 * 100 * brownoutSeeds / nn
	tolS := zBrownout*math.Sqrt(wantS*(1-wantS)/nn) + edge
	tolA := zBrownout*math.Sqrt(variance/nn) + float64(n)*edge
	if got := float64(ok) / nn; math.Abs(got-wantS) > tolS {
		t.Errorf("open loop: success %.5f, want %.5f ± %.5f", got, wantS, tolS)
	}
	if got := float64(sent) / nn; math.Abs(got-wantA) > tolA {
		t.Errorf("open loop: amplification %.5f, want %.5f ± %.5f", got, wantA, tolA)
	}
}

// A queueing server with added latency A answers an unqueued request
// after its service S and then A: with fixed service every latency is
// exactly S + A; with exponential service the mean is S̄ + A within
// zBrownout standard errors (the exponential's sd is its mean); a timeout
// shorter than S + A times every request out, though its worker is free
// after S.
func TestBrownoutAddedLatency(t *testing.T) {
	t.Parallel()
	base := Scenario{Clients: 1, Tick: 100 * time.Millisecond, Horizon: 200 * time.Second, Concurrency: 100,
		Service: "fixed", ServiceTime: 10 * time.Millisecond, ArrivalRate: 50, AddedLatency: 40 * time.Millisecond}
	pol := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}
	r, err := Run(base, pol, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Goodput == 0 || r.LatencyMean != 50 {
		t.Errorf("fixed 10 ms + 40 ms: mean latency %g ms over %d requests, want 50", r.LatencyMean, r.Goodput)
	}
	if r.BusyMS != float64(r.Goodput)*10 {
		t.Errorf("busy %g ms for %d requests of 10 ms: the added latency must not hold a worker", r.BusyMS, r.Goodput)
	}
	expo := base
	expo.Service = "exponential"
	r, err = Run(expo, pol, 3)
	if err != nil {
		t.Fatal(err)
	}
	tol := zBrownout * 10 / math.Sqrt(float64(r.Goodput))
	if math.Abs(r.LatencyMean-50) > tol {
		t.Errorf("exponential 10 ms + 40 ms: mean latency %g ms, want 50 ± %.3f", r.LatencyMean, tol)
	}
	late := base
	late.Timeout = 45 * time.Millisecond
	r, err = Run(late, pol, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.Goodput != 0 || r.TimedOut == 0 || r.TimedOut != r.Sent {
		t.Errorf("timeout 45 ms < 10 + 40 ms: %d answered in time, %d timed out of %d sent; want none, all", r.Goodput, r.TimedOut, r.Sent)
	}
}

// A failed request is a 503 carrying the scenario's Retry-After: a client
// that retries 5xx only retries it, one that retries only what carries a
// Retry-After gives up on it unless one is sent, and a client honouring
// Retry-After waits it.
func TestBrownoutFailureIsA503(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 500, Tick: 100 * time.Millisecond, Capacity: 1e5, Horizon: 60 * time.Second, FailShare: 1}
	for _, tc := range []struct {
		name       string
		on         RetryOn
		ra         time.Duration
		wantGaveUp int
	}{
		{"5xx", RetryOn5xx, 0, 0},
		{"retry-after-only, none sent", RetryOnRetryAfterOnly, 0, 500},
		{"retry-after-only, 2 s sent", RetryOnRetryAfterOnly, 2 * time.Second, 0},
	} {
		s := sc
		s.RetryAfter = tc.ra
		r, err := Run(s, Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 3, RetryOn: tc.on}, 1)
		if err != nil {
			t.Fatal(err)
		}
		// 5xx and a Retry-After: every client makes its 3 attempts, then
		// gives up at its attempt limit; the rest give up at the first.
		want := int64(3 * 500)
		if tc.wantGaveUp == 500 {
			want = 500
		}
		if r.Sent != want || r.GaveUp != 500 || r.Failed != want {
			t.Errorf("%s: sent %d, failed %d, gave up %d; want %d sent and failed, all 500 gave up", tc.name, r.Sent, r.Failed, r.GaveUp, want)
		}
	}
	var events []Event
	s := Sim{Trace: func(e Event) { events = append(events, e) }}
	sc.RetryAfter, sc.Clients = 5*time.Second, 3
	if _, err := s.Run(sc, Policy{Kind: HTTPRetry, Base: time.Second, Cap: time.Minute, Multiplier: 2, HonorRetryAfter: true, MaxAttempts: 2}, NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Tick == 0 && (!e.Failed || e.Delay < 5000) {
			t.Errorf("first attempt %+v: want failed, waiting at least the 5 s Retry-After", e)
		}
	}
}

// A FailCurve of "0 1" over a 20 s horizon fails nothing before 10 s and
// everything after, on both servers (the share is read at the tick's
// time, and at a queueing request's arrival).
func TestBrownoutFailCurve(t *testing.T) {
	t.Parallel()
	for _, sc := range []Scenario{
		{Clients: 300, Tick: 100 * time.Millisecond, Capacity: 1e5, Spread: 20 * time.Second, Horizon: 20 * time.Second, FailShare: 1, FailCurve: "0 1"},
		{Clients: 300, Tick: 100 * time.Millisecond, Spread: 20 * time.Second, Horizon: 20 * time.Second, FailShare: 1, FailCurve: "0, 1",
			Concurrency: 300, Service: "fixed", ServiceTime: time.Millisecond},
	} {
		var events []Event
		s := Sim{Trace: func(e Event) { events = append(events, e) }}
		r, err := s.Run(sc, Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}, NewMulberry32(7), nil)
		if err != nil {
			t.Fatal(err)
		}
		var failed int64
		for _, e := range events {
			early := e.Tick < 100
			if e.Failed {
				failed++
			}
			if early == e.Failed || early != e.Served {
				t.Errorf("%v: %+v: want served before 10 s, failed after", sc.Server(), e)
			}
		}
		if failed != r.Failed || failed == 0 || r.Succeeded == 0 {
			t.Errorf("%v: %d failed in the trace, %d in the result, %d succeeded", sc.Server(), failed, r.Failed, r.Succeeded)
		}
		if got := sc.FailShareAt(15 * time.Second); got != 1 {
			t.Errorf("FailShareAt(15 s) = %g, want 1", got)
		}
	}
}

// The same seed gives the same brownout run on a reused Sim, and a run
// with a brownout draws from the run's own stream (another seed differs).
func TestBrownoutDeterministic(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 1000, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Second, Capacity: 300, Spread: 2 * time.Second,
		Horizon: 120 * time.Second, FailShare: 0.3, FailCurve: "1 2 1"}
	p := DefaultPolicy(FullJitter)
	p.MaxAttempts = 5
	var s Sim
	a, _ := s.Run(sc, p, NewMulberry32(5), nil)
	b, _ := s.Run(sc, p, NewMulberry32(5), nil)
	c, _ := s.Run(sc, p, NewMulberry32(6), nil)
	if a != b {
		t.Errorf("same seed, two results:\n%+v\n%+v", a, b)
	}
	if a == c || a.Failed == 0 {
		t.Errorf("seeds 5 and 6 agree or nothing failed: %+v", a)
	}
}

// Validate refuses brownouts out of range, each at its field.
func TestBrownoutValidate(t *testing.T) {
	t.Parallel()
	q := Scenario{Clients: 1, Tick: 100 * time.Millisecond, Horizon: time.Minute, Concurrency: 2, Service: "fixed", ServiceTime: 10 * time.Millisecond}
	c := Article()
	for _, tc := range []struct {
		name  string
		sc    Scenario
		field Field
	}{
		{"share above 1", with(c, func(s *Scenario) { s.FailShare = 1.5 }), FieldFailShare},
		{"share negative", with(c, func(s *Scenario) { s.FailShare = -0.1 }), FieldFailShare},
		{"share NaN", with(c, func(s *Scenario) { s.FailShare = math.NaN() }), FieldFailShare},
		{"curve without share that does not parse", with(c, func(s *Scenario) { s.FailCurve = "1 x" }), FieldFailCurve},
		{"curve that does not parse", with(c, func(s *Scenario) { s.FailShare, s.FailCurve = 0.1, "1,,2" }), FieldFailCurve},
		{"curve above 1", with(c, func(s *Scenario) { s.FailShare, s.FailCurve = 0.6, "1 2" }), FieldFailCurve},
		{"added latency on the counting server", with(c, func(s *Scenario) { s.AddedLatency = time.Second }), FieldAddedLatency},
		{"added latency negative", with(q, func(s *Scenario) { s.AddedLatency = -time.Millisecond }), FieldAddedLatency},
		{"added latency not whole ms", with(q, func(s *Scenario) { s.AddedLatency = time.Microsecond }), FieldAddedLatency},
	} {
		fe := FieldErrors(tc.sc.Validate())
		if len(fe) != 1 || fe[0].Field != tc.field {
			t.Errorf("%s: %v, want an error at %s", tc.name, tc.sc.Validate(), tc.field)
		}
	}
	for _, ok := range []Scenario{
		with(c, func(s *Scenario) { s.FailShare = 1 }),
		with(c, func(s *Scenario) { s.FailCurve = "0 5" }), // no brownout at share 0: a sweep's axis may hold 0 beside a curve
		with(c, func(s *Scenario) { s.FailShare, s.FailCurve = 0.5, "0 2" }),
		with(q, func(s *Scenario) { s.FailShare, s.AddedLatency = 0.2, 50*time.Millisecond }),
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

func with(s Scenario, f func(*Scenario)) Scenario {
	f(&s)
	return s
}

// BenchmarkBrownout: the article's scenario with 30 % of what is served
// failing, on the counting server, and a queueing server with open-loop
// traffic; both allocate nothing per run once the Sim has grown.
func BenchmarkBrownout(b *testing.B) {
	sc := Article()
	sc.FailShare = 0.3
	b.Run("counting", func(b *testing.B) { benchRun(b, sc, DefaultPolicy(FullJitter)) })
	q := Scenario{Clients: 1000, Tick: 100 * time.Millisecond, RecoverAt: 30 * time.Second, Spread: 2 * time.Second, Horizon: 120 * time.Second,
		Concurrency: 10, Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: time.Second, ArrivalRate: 300,
		OutageStart: 20 * time.Second, FailShare: 0.2, AddedLatency: 50 * time.Millisecond}
	p := DefaultPolicy(FullJitter)
	p.MaxAttempts = 4
	b.Run("queueing", func(b *testing.B) { benchRun(b, q, p) })
}

// Properties of random brownout runs, every policy, on both servers: every
// client ends served, given up or pending; no more fail than were sent; a
// share of 1 serves nobody; a reused Sim gives a fresh one's result; and
// MemoryBytes bounds what the Sim holds.
func TestBrownoutProperties(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(11)
	pick := func(n int) int { return int(r.Float64() * float64(n)) }
	policies := everyPolicy()
	var reused Sim
	for i := range 40 {
		sc := Scenario{Clients: 1 + pick(3000), Tick: time.Duration(10+pick(190)) * time.Millisecond,
			RecoverAt: time.Duration(pick(20)) * time.Second, Spread: time.Duration(pick(5000)) * time.Millisecond,
			FailShare: float64(pick(11)) / 10}
		sc.Capacity = float64(1+pick(200)) * 1000 / float64(sc.Tick.Milliseconds())
		sc.Horizon = sc.RecoverAt + time.Duration(1+pick(120))*time.Second
		if i%4 == 0 {
			sc.FailCurve = "0 1 0.5"
		}
		if i%3 == 0 {
			sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 1+pick(8), "exponential", time.Duration(5+pick(50))*time.Millisecond, time.Duration(100+pick(900))*time.Millisecond
			sc.AddedLatency = time.Duration(pick(200)) * time.Millisecond
			sc.ArrivalRate = float64(pick(100))
		}
		p := policies[i%len(policies)]
		var s Sim
		var tl Timeline
		got, err := s.Run(sc, p, NewMulberry32(uint32(i)), &tl)
		if err != nil {
			t.Fatalf("%+v %s: %v", sc, p, err)
		}
		if got.Succeeded+got.GaveUp+got.Pending != sc.Clients || got.Failed > got.Sent || got.Failed < 0 {
			t.Errorf("%+v %s: %d served + %d gave up + %d pending of %d clients; %d failed of %d sent", sc, p, got.Succeeded, got.GaveUp, got.Pending, sc.Clients, got.Failed, got.Sent)
		}
		if sc.FailShare == 1 && sc.FailCurve == "" && (got.Succeeded > 0 || got.Goodput > 0) {
			t.Errorf("%+v %s: everything fails, yet %d served, goodput %d", sc, p, got.Succeeded, got.Goodput)
		}
		if est, held := sc.MemoryBytes(true), int64(s.footprint()+cap(s.fleet.group)+12*cap(tl.Arrivals)); held > est {
			t.Errorf("%+v %s: holds %d bytes, estimate %d", sc, p, held, est)
		}
		again, err := reused.Run(sc, p, NewMulberry32(uint32(i)), nil)
		if err != nil || again != got {
			t.Errorf("%+v %s: a reused Sim gives %+v (%v), a fresh one %+v", sc, p, again, err, got)
		}
	}
}
