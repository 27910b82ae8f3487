package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Adaptive throttling's probability, on a controlled sequence, against the
// SRE book's formula written out by hand: max(0, (requests − K·accepts) /
// (requests + 1)), the counts taken before the new request.
func TestThrottleProbabilityFollowsTheFormula(t *testing.T) {
	t.Parallel()
	var th throttleSet
	th.setup(Policy{ThrottleK: 2, ThrottleWindow: 2 * time.Minute}, 1, 100) // buckets of 12 s = 120 ticks
	w := &th.s[0]
	// 10 requests, 3 accepted, all in tick 0.
	for j := range 10 {
		w.addA(0)
		if j < 3 {
			th.accepted(0, 0)
		}
	}
	const tol = 1e-12
	if got, want := RejectProbability(float64(w.sa), float64(w.sb), 2), (10.0-2*3)/(10+1); math.Abs(got-want) > tol {
		t.Errorf("p(10 requests, 3 accepts) = %v, want 4/11 = %v", got, want)
	}
	if got := RejectProbability(10, 5, 2); got != 0 {
		t.Errorf("p(10, 5) = %v, want 0: requests ≤ K·accepts never throttles", got)
	}
	// The next request sees p = 4/11: with a draw below it, refused.
	rng := NewMulberry32(1)
	u := NewMulberry32(1).Float64()
	if got, want := th.reject(0, 1, rng), u < 4.0/11; got != want {
		t.Errorf("reject with U = %v: %v, want %v", u, got, want)
	}
	if w.sa != 11 {
		t.Errorf("requests after one more: %d, want 11 (a refused request counts as attempted)", w.sa)
	}
	// Two minutes later the window has forgotten tick 0: p = 0, no draw.
	before := *rng
	if th.reject(0, 1+1200, rng) {
		t.Error("refused with an empty window")
	}
	if *rng != before {
		t.Error("drew a number at probability 0")
	}
}

// A breaker closes → opens → half-opens → opens → half-opens → closes, as
// Polly v8 does, on a hand-made sequence.
func TestBreakerStateTransitions(t *testing.T) {
	t.Parallel()
	var b breakerSet
	b.setup(Policy{BreakerRatio: 0.5, BreakerMinThroughput: 4, BreakerWindow: 10 * time.Second, BreakerBreak: 5 * time.Second}, 1, 100)
	st := func() uint8 { return b.s[0].state }
	b.record(0, 0, 0, true)
	b.record(0, 0, 0, false)
	b.record(0, 0, 0, false)
	if st() != closed {
		t.Fatal("opened below the minimum throughput (3 < 4)")
	}
	b.record(0, 1, 100, true) // 4 requests, 2 failures: ratio 0.5, but a success never opens it
	if st() != closed {
		t.Fatal("opened on a success")
	}
	b.record(0, 2, 200, false) // 5 requests, 3 failures ≥ 0.5
	if st() != open {
		t.Fatalf("state %d after 3 failures of 5, want open", st())
	}
	if b.allow(0, 200+4999) {
		t.Error("let a request through 4.999 s into a 5 s break")
	}
	if !b.allow(0, 5200) || st() != halfOpen {
		t.Fatal("no probe once the break is over")
	}
	if b.allow(0, 5200) {
		t.Error("a second request while the probe is out")
	}
	b.record(0, 52, 5200, false)
	if st() != open || b.s[0].openUntil != 10200 {
		t.Fatalf("a failed probe: state %d until %v, want open until 10200", st(), b.s[0].openUntil)
	}
	if !b.allow(0, 10200) {
		t.Fatal("no second probe")
	}
	b.record(0, 102, 10200, true)
	if st() != closed || b.s[0].win.sa != 0 {
		t.Fatalf("a good probe: state %d, window %d, want closed and empty", st(), b.s[0].win.sa)
	}
	// The window forgets: 3 failures, then 10 s later one more is alone.
	for range 3 {
		b.record(0, 200, 20000, false)
	}
	b.record(0, 200+100+10, 31000, false)
	if st() != closed {
		t.Error("counted failures older than the window")
	}
}

// gRPC's retry throttling with the canonical example of gRFC A6
// (maxTokens 10, tokenRatio 0.1): 10 → 9, 8, 7, 6 allowed, 5 refused
// (≤ 10/2); a success brings 5.1, the next failure 4.1, refused.
func TestRetryTokens(t *testing.T) {
	t.Parallel()
	var ts tokenSet
	ts.setup(Policy{RetryTokens: 10, RetryTokenRatio: 0.1}, 1)
	for j, want := range []bool{true, true, true, true, false, false} {
		if got := ts.allow(0); got != want {
			t.Fatalf("failure %d: allowed %v, want %v (tokens %v)", j+1, got, want, ts.s[0])
		}
	}
	for range 100 {
		ts.record(0, true)
	}
	if ts.s[0] != 10 {
		t.Errorf("tokens %v after many successes, want the maximum 10", ts.s[0])
	}
}

// The AWS adaptive rate limiter against aws-sdk-go-v2's Update and
// AcquireToken, computed by hand from its constants (smooth 0.8, β 0.7,
// scale 0.4, minimum fill 0.5).
func TestAWSRateFollowsTheSDK(t *testing.T) {
	t.Parallel()
	var rs rateSet
	rs.setup(true, 1, 1)
	if w := rs.acquire(0, 0); w != 0 {
		t.Fatalf("waited %v ms before any throttling", w)
	}
	// A throttled response at 0.6 s: bucket 0.5, 1 request over 0.5 s:
	// measured = 2·0.8 = 1.6; lastMax 1.6; rate 1.6·0.7 = 1.12.
	rs.update(0, 600, true)
	a := rs.s[0]
	const tol = 1e-12
	if math.Abs(a.measured-1.6) > tol || math.Abs(a.fill-1.12) > tol || !a.enabled {
		t.Fatalf("after a throttle: measured %v fill %v enabled %v, want 1.6, 1.12, true", a.measured, a.fill, a.enabled)
	}
	// The bucket is empty: the first request waits 1/1.12 s, the next 2/1.12.
	if w := rs.acquire(0, 600); math.Abs(w-1000/1.12) > 1e-9 {
		t.Errorf("first wait %v ms, want %v", w, 1000/1.12)
	}
	if w := rs.acquire(0, 600); math.Abs(w-2000/1.12) > 1e-9 {
		t.Errorf("second wait %v ms, want %v", w, 2000/1.12)
	}
	// A success at 2 s: bucket 2.0, 1 request over 1.5 s: measured =
	// (1/1.5)·0.8 + 1.6·0.2; CUBIC: 0.4·(2 − 0.6 − K)³ + 1.6, K = ∛(1.6·0.3/0.4).
	rs.update(0, 2000, false)
	measured := (1/1.5)*0.8 + 1.6*0.2
	k := math.Cbrt(1.6 * 0.3 / 0.4)
	cubic := 0.4*math.Pow(2-0.6-k, 3) + 1.6
	want := math.Min(cubic, 2*measured)
	if got := rs.s[0].fill; math.Abs(got-want) > 1e-9 {
		t.Errorf("fill after a success %v, want %v (cubic %v, 2·measured %v)", got, want, cubic, 2*measured)
	}
}

// Envoy's cap: over random runs, never more than RetryCap retries are
// outstanding (scheduled and not yet arrived), counted from the trace
// independently of the component; and the cap binds.
func TestRetryCapBoundsOutstandingRetries(t *testing.T) {
	t.Parallel()
	for seed := uint32(1); seed <= 6; seed++ {
		sc := Article()
		sc.Clients = 300 + 100*int(seed)
		sc.Horizon = sc.RecoverAt + 2*time.Minute
		p := DefaultPolicy(Kind([]Kind{Decorrelated, FullJitter, Exponential}[seed%3]))
		p.RetryCap = int(seed) * 3
		var s Sim
		outstanding, most := 0, 0
		pending := map[int]bool{}
		last := -1
		check := func() {
			most = max(most, outstanding)
			if outstanding > p.RetryCap {
				t.Fatalf("seed %d: %d retries outstanding, cap %d", seed, outstanding, p.RetryCap)
			}
		}
		var retried int
		s.Trace = func(e Event) {
			if e.Tick != last {
				check() // the component counts a tick's arrivals before its new retries
				last = e.Tick
			}
			if pending[e.Client] {
				pending[e.Client] = false
				outstanding--
			}
			if !e.GaveUp && !e.Served {
				pending[e.Client] = true
				outstanding++
				retried++
			}
		}
		r, err := s.Run(sc, p, NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		check()
		if most != p.RetryCap {
			t.Errorf("seed %d: at most %d outstanding, want the cap %d to bind", seed, most, p.RetryCap)
		}
		if r.GaveUp == 0 || retried == 0 {
			t.Errorf("seed %d: %d gave up, %d retries: want both", seed, r.GaveUp, retried)
		}
	}
}

// A retry budget per process with one process for the whole fleet is the
// fleet-wide budget: the same run, whichever loop runs it.
func TestProcessBudgetOfOneProcessIsTheFleetBudget(t *testing.T) {
	t.Parallel()
	sc := Article()
	for _, k := range []Kind{Decorrelated, FullJitter} {
		p := DefaultPolicy(k)
		p.RetryBudget, p.BudgetMinRPS = 0.2, 10
		fleet, err := Run(sc, p, 7)
		if err != nil {
			t.Fatal(err)
		}
		p.ClientsPerProcess = sc.Clients
		proc, err := Run(sc, p, 7)
		if err != nil {
			t.Fatal(err)
		}
		if fleet != proc {
			t.Errorf("%s: fleet budget %+v\nprocess budget %+v", k, fleet, proc)
		}
		if fleet.GaveUp == 0 {
			t.Errorf("%s: the budget refused nothing: the test would not see a difference", k)
		}
		p.ClientsPerProcess = 10 // 200 processes, each with a floor of 10 retries/s
		many, err := Run(sc, p, 7)
		if err != nil {
			t.Fatal(err)
		}
		if many.GaveUp >= fleet.GaveUp {
			t.Errorf("%s: 200 processes' floors refused %d, one process %d: want fewer", k, many.GaveUp, fleet.GaveUp)
		}
	}
}

// Every component runs on the counting and the queueing server, refuses
// or holds back what it should, and keeps the books: sent + local
// rejections are the requests the clients attempted.
func TestComponentsRunOnBothServers(t *testing.T) {
	t.Parallel()
	queue := Article()
	queue.Concurrency, queue.Service, queue.ServiceTime, queue.Timeout = 12, "exponential", 100*time.Millisecond, time.Second
	comps := map[string]Policy{
		"throttle": {ThrottleK: 2},
		"breaker":  {BreakerRatio: 0.1, ClientsPerProcess: 100},
		"aws":      {AWSAdaptive: true, ClientsPerProcess: 50},
		"tokens":   {RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 20},
		"cap":      {RetryCap: 3},
		"pushback": {Pushback: true},
	}
	for _, name := range []string{"throttle", "breaker", "aws", "tokens", "cap", "pushback"} {
		for _, sc := range []Scenario{Article(), queue} {
			p := comps[name]
			p.Kind = Decorrelated
			p = p.Normalize()
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var s Sim
			var attempts int64
			s.Trace = func(Event) { attempts++ }
			r, err := s.Run(sc, p, NewMulberry32(3), nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Sent+r.LocalRejections != attempts {
				t.Errorf("%s (queue %v): sent %d + local %d ≠ %d attempts", name, sc.Concurrency > 0, r.Sent, r.LocalRejections, attempts)
			}
			local := name == "throttle" || name == "breaker"
			if (r.LocalRejections > 0) != local {
				t.Errorf("%s (queue %v): %d local rejections", name, sc.Concurrency > 0, r.LocalRejections)
			}
			plain, _ := Run(sc, DefaultPolicy(Decorrelated), 3)
			if name != "pushback" && r == plain {
				t.Errorf("%s (queue %v): the same result as without it", name, sc.Concurrency > 0)
			}
		}
	}
}

func TestComponentsValidate(t *testing.T) {
	t.Parallel()
	for _, p := range []Policy{
		{Kind: Decorrelated, ClientsPerProcess: 10},
		{Kind: Decorrelated, ThrottleK: 0.5},
		{Kind: Decorrelated, ThrottleWindow: time.Minute},
		{Kind: Decorrelated, RetryTokens: 10},
		{Kind: Decorrelated, RetryTokenRatio: 0.1},
		{Kind: Decorrelated, RetryCap: -1},
		{Kind: Decorrelated, BreakerRatio: 1.5},
		{Kind: Decorrelated, BreakerBreak: time.Second},
		{Kind: Decorrelated, BreakerRatio: 0.1, BreakerWindow: 1500 * time.Microsecond},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: valid", p)
		}
	}
	groups := []Group{{Share: 0.5, Policy: Policy{Kind: Fixed, Base: time.Second, RetryCap: 3}}, {Share: 0.5, Policy: DefaultPolicy(Fixed)}}
	if err := ValidateFleet(groups); err == nil {
		t.Error("a mixed fleet with a component: valid")
	}
}

// The component presets' first 8 delays for the draws of seed 11, from
// each library's formula written out here.
func TestComponentPresetSequences(t *testing.T) {
	t.Parallel()
	const n = 8
	u := draws(11, n)
	f := func(x float64) float64 { return math.Pow(2, x) * math.Tanh(math.Sqrt(4*x)) }
	tests := []struct {
		preset string
		want   func(i int) float64 // ms, rejection i+1
	}{
		// grpc-go stream.go shouldRetry: min(initialBackoff·multiplier^n,
		// maxBackoff) × (0.8 + 0.4·U), n retries so far (0 at the first).
		{"grpc-retry-throttled", func(i int) float64 { return math.Min(100*math.Pow(2, float64(i)), 1000) * (0.8 + 0.4*u[i]) }},
		// Polly v8 RetryHelper.DecorrelatedJitterBackoffV2, Delay 2 s: t =
		// attempt + U, next = 2^t·tanh(√(4t)), delay = (next − prev)/1.4 × 2 s.
		{"ms-resilience-standard", func(i int) float64 {
			prev := 0.0
			if i > 0 {
				prev = f(float64(i-1) + u[i-1])
			}
			return (f(float64(i)+u[i]) - prev) / 1.4 * 2000
		}},
		// Envoy JitteredExponentialBackOffStrategy: random() % min(25 ms·2^(n−1), 250 ms), the fraction kept.
		{"envoy-retry-cap", func(i int) float64 { return u[i] * math.Min(250, 25*math.Pow(2, float64(i))) }},
		// aws-sdk-go-v2 v1.48.0 backoffDelay2026 after a 429 (throttling):
		// U·min(1 s·2^(attempt−1), 20 s).
		{"aws-sdk-go-v2-adaptive", func(i int) float64 { return u[i] * math.Min(20000, 1000*math.Pow(2, float64(i))) }},
	}
	for _, tt := range tests {
		pr, ok := PresetByName(tt.preset)
		if !ok {
			t.Fatalf("no preset %s", tt.preset)
		}
		got, err := pr.Policy.Delays(11, n, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if w := tt.want(i); math.Abs(g-w) > 1e-9*w {
				t.Errorf("%s: delay %d = %v ms, want %v", tt.preset, i+1, g, w)
			}
		}
	}
}

// The .NET standard handler waits a Retry-After as sent
// (HttpRetryStrategyOptions.ShouldRetryAfterHeader, true by default);
// plain polly-v2 does not read it.
func TestStandardHandlerHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	ms, _ := PresetByName("ms-resilience-standard")
	got, err := ms.Policy.Delays(11, 3, 7*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != 7000 {
			t.Errorf("ms-resilience-standard with Retry-After 7 s: delay %d = %v ms, want 7000", i+1, g)
		}
	}
	pv, _ := PresetByName("polly-v2")
	got, err = pv.Policy.Delays(11, 3, 7*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] == 7000 {
		t.Errorf("polly-v2 waited the Retry-After (%v ms); it does not read it", got[0])
	}
}

// Runs with components go through the dense or the sparse calendar,
// traced or not, with the same results and events.
func TestComponentPathsAgree(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 5 * time.Second, Capacity: 40, Spread: 2 * time.Second, Horizon: 3 * time.Minute, RetryAfter: 2 * time.Second}
	ps := []Policy{
		{Kind: Decorrelated, ThrottleK: 2, ClientsPerProcess: 30},
		{Kind: FullJitter, BreakerRatio: 0.5, BreakerMinThroughput: 20, ClientsPerProcess: 50},
		{Kind: Decorrelated, AWSAdaptive: true, ClientsPerProcess: 100},
		{Kind: Exponential, RetryCap: 5, Pushback: true},
		{Kind: Decorrelated, RetryBudget: 0.2, BudgetMinRPS: 1, ClientsPerProcess: 60},
	}
	for _, pr := range Presets() {
		if pr.Policy.componentsOn() {
			ps = append(ps, pr.Policy)
		}
	}
	for _, p := range ps {
		p = p.Normalize()
		var first Result
		var events [][]Event
		for j, sparse := range []bool{false, true, false, true} {
			var s Sim
			s.cal.sparse = sparse
			var ev []Event
			if j >= 2 {
				s.Trace = func(e Event) { ev = append(ev, e) }
			}
			r, err := s.Run(sc, p, NewMulberry32(5), nil)
			if err != nil {
				t.Fatal(err)
			}
			if j == 0 {
				first = r
			} else if r != first {
				t.Errorf("%s: path %d: %+v\nwant %+v", p, j, r, first)
			}
			if j >= 2 {
				events = append(events, ev)
			}
		}
		if len(events[0]) != len(events[1]) {
			t.Errorf("%s: %d events dense, %d sparse", p, len(events[0]), len(events[1]))
			continue
		}
		for i := range events[0] {
			if events[0][i] != events[1][i] {
				t.Errorf("%s: event %d: %+v dense, %+v sparse", p, i, events[0][i], events[1][i])
				break
			}
		}
	}
}

// ComponentBytes bounds what the components hold after runs of random
// sizes and process counts, and the Sim's other storage does not grow
// with them.
func TestComponentBytesBoundsTheFootprint(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(9)
	pick := func(n int) int { return int(r.Float64() * float64(n)) }
	ps := []Policy{
		{Kind: Decorrelated, BreakerRatio: 0.1},
		{Kind: Decorrelated, ThrottleK: 2},
		{Kind: Decorrelated, AWSAdaptive: true},
		{Kind: Decorrelated, RetryTokens: 10, RetryTokenRatio: 0.1},
		{Kind: Decorrelated, RetryCap: 3, Pushback: true},
		{Kind: Decorrelated, RetryBudget: 0.2, BudgetMinRPS: 10},
	}
	for i := range 30 {
		sc := Article()
		sc.Clients = 1 + pick(20000)
		sc.Tick = time.Duration(10+pick(200)) * time.Millisecond
		sc.Capacity = float64(1+pick(500)) * 1000 / float64(sc.Tick.Milliseconds())
		sc.Horizon = sc.RecoverAt + time.Duration(1+pick(300))*time.Second
		p := ps[i%len(ps)]
		p.ClientsPerProcess = 1 + pick(50)
		p = p.Normalize()
		var s Sim
		if _, err := s.Run(sc, p, NewMulberry32(uint32(i)), nil); err != nil {
			t.Fatalf("%+v %s: %v", sc, p, err)
		}
		if got, est := int64(s.comp.footprint()), ComponentBytes(p, sc); got > est || got == 0 {
			t.Errorf("%d clients, %s: components hold %d bytes, estimate %d", sc.Clients, p, got, est)
		}
	}
}

// A policy with components says so wherever it is put in words, once, and
// no library setting claims to express it exactly.
func TestComponentsInWords(t *testing.T) {
	t.Parallel()
	p := Policy{Kind: Decorrelated, BreakerRatio: 0.1, RetryBudget: 0.2, BudgetMinRPS: 10, ClientsPerProcess: 100}.Normalize()
	for _, s := range []string{p.Describe(), p.Plain()} {
		if strings.Count(s, "circuit breaker") != 1 || strings.Count(s, "budget") != 1 || !strings.Contains(s, "per process of 100") {
			t.Errorf("%q: want the breaker, the budget and the scope once each", s)
		}
	}
	for _, st := range p.Settings() {
		if st.Exact || !strings.Contains(st.How, "circuit breaker") {
			t.Errorf("%s: %q (exact %v): want the breaker named and not exact", st.Library, st.How, st.Exact)
		}
	}
	if got := p.Short(); !strings.Contains(got, "+ breaker 0.1/100") || !strings.Contains(got, "+ budget 0.2/100") {
		t.Errorf("Short %q", got)
	}
}
