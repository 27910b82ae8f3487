package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Issue 22 item 5: presets against their libraries' source. Each test
// computes what the library does from its own formula (transcribed here,
// not from our code) and holds the simulator to it.

// pollyV8Delays transcribes Polly's RetryResilienceStrategy.ExecuteCore
// and RetryHelper.DecorrelatedJitterBackoffV2 (src/Polly.Core/Retry,
// commit 173d6d1d, after 8.7.0) for an exponential, jittered retry with
// base delay base and a DelayGenerator that returns ra[i] (ms, 0 = none)
// on retry i: the formula runs on every retry, moving retryState and
// taking a draw, and only then does a generated delay replace its value.
// Delays are whole TimeSpan ticks of 100 ns, returned in ms.
func pollyV8Delays(u []float64, base time.Duration, ra []float64) []float64 {
	const ticksPerMS = 10_000
	retryState := 0.0 // double retryState = 0
	target := float64(base / 100)
	out := make([]float64, len(ra))
	for attempt := range ra {
		t := float64(attempt) + u[attempt]
		next := math.Pow(2, t) * math.Tanh(math.Sqrt(4*t))
		intrinsic := next - retryState
		retryState = next
		delay := float64(int64(math.Min(intrinsic*(1/1.4)*target, math.MaxInt64))) / ticksPerMS
		if ra[attempt] > 0 { // DelayGenerator: the Retry-After header, when there is one
			delay = ra[attempt]
		}
		out[attempt] = delay
	}
	return out
}

// A Retry-After replaces Polly's computed delay but does not skip its
// computation: the case (seed 3, a Retry-After of 7 s on
// rejections 1 and 4 only, base 2 s) is 7000, 636, 4973, 7000, 26,760 ms
// in Polly. Before the fix the second retry read a stale state in ms and
// waited −2,852,485 ms: the client gave up.
func TestPollyRetryAfterKeepsTheFormulaGoing(t *testing.T) {
	t.Parallel()
	ra := []float64{7000, 0, 0, 7000, 0}
	want := pollyV8Delays(draws(3, len(ra)), 2*time.Second, ra)
	var rounded []float64
	for _, w := range want {
		rounded = append(rounded, math.Round(w))
	}
	if diff := cmp.Diff([]float64{7000, 636, 4973, 7000, 26760}, rounded); diff != "" {
		t.Fatalf("the transcription of Polly does not give the issue's numbers (-issue +transcription):\n%s", diff)
	}
	for _, p := range []Policy{
		{Kind: PollyV2, Base: 2 * time.Second, HonorRetryAfter: true},
		must(PresetByName("ms-resilience-standard")).Policy, // its 4 attempts and 30 s are limits beside the delayer
	} {
		d := p.compile()
		rng := NewMulberry32(3)
		c := client{prev: ms(p.Base)}
		for i, r := range ra {
			c.att++
			got := d.delay(&c, response{retryAfter: r, up: true}, rng)
			if math.Abs(got-want[i]) > 1e-4 { // Polly truncates to whole 100 ns ticks; we keep the fraction
				t.Errorf("%s: retry %d (Retry-After %v ms) = %v ms, Polly %v ms", p, i+1, r, got, want[i])
			}
		}
	}
	// Random Retry-After patterns: every delay is Polly's, never negative.
	for seed := uint32(1); seed <= 200; seed++ {
		pat := NewMulberry32(seed + 1000)
		ra := make([]float64, 8)
		for i := range ra {
			if pat.Float64() < 0.4 {
				ra[i] = 1000 * math.Ceil(30*pat.Float64())
			}
		}
		want := pollyV8Delays(draws(seed, len(ra)), time.Second, ra)
		d := Policy{Kind: PollyV2, Base: time.Second, HonorRetryAfter: true}.compile()
		rng := NewMulberry32(seed)
		c := client{prev: 1000}
		for i, r := range ra {
			c.att++
			got := d.delay(&c, response{retryAfter: r, up: true}, rng)
			if got < 0 || math.Abs(got-want[i]) > 1e-4 {
				t.Fatalf("seed %d, Retry-After pattern %v: retry %d = %v ms, Polly %v ms", seed, ra, i+1, got, want[i])
			}
		}
	}
}

func must(p Preset, ok bool) Preset {
	if !ok {
		panic("sim test: no such preset")
	}
	return p
}

// urllib3 retries 3 times when it is given no retries (Retry.DEFAULT =
// Retry(3), which connectionpool.urlopen uses for retries=None), 10 times
// with a Retry() object built without arguments (total 10), and requests
// never (Retry(0, read=False)): one attempt. The old name "urllib3", which
// meant Retry(), is gone so that no one reads it as urllib3's default.
func TestURLLib3Attempts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		preset string
		total  int // Retry's total
	}{{"urllib3-default", 3}, {"urllib3-retry-10", 10}, {"requests-default", 0}} {
		pr, ok := PresetByName(tt.preset)
		if !ok {
			t.Fatalf("no preset %s", tt.preset)
		}
		if pr.Policy.MaxAttempts != tt.total+1 {
			t.Errorf("%s: %d attempts, want total %d + 1", tt.preset, pr.Policy.MaxAttempts, tt.total)
		}
		// Against a server that stays down and sends a Retry-After, each
		// client sends exactly total + 1 requests.
		sc := Scenario{Clients: 50, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Minute, Capacity: 10, Spread: time.Second,
			Horizon: 11 * time.Minute, RetryAfter: 2 * time.Second}
		r, _ := runWith(t, sc, pr.Policy, 1)
		if r.Sent != int64(50*(tt.total+1)) || r.GaveUp != 50 {
			t.Errorf("%s: %d requests, %d gave up; want %d, 50", tt.preset, r.Sent, r.GaveUp, 50*(tt.total+1))
		}
	}
	if _, ok := PresetByName("urllib3"); ok {
		t.Error(`preset "urllib3" still exists: it reads as urllib3's default (3 retries) and meant Retry() (10)`)
	}
	why, ok := RetiredPreset("urllib3")
	for _, name := range []string{"urllib3-retry-10", "urllib3-default", "requests-default"} {
		if !ok || !strings.Contains(why, name) {
			t.Errorf("retired urllib3: %q does not say %s", why, name)
		}
	}
	for name := range retiredPresets {
		if _, ok := PresetByName(name); ok {
			t.Errorf("%s is retired and a preset", name)
		}
	}
}

// Finagle's RetryFilter deposits into the retry budget once per original
// request (apply: retryBudget.deposit(), then dispatch; retries deposit
// nothing), so a budget of percentCanRetry 0.2 and minRetriesPerSec 10
// over its 10 s ttl allows 0.2·O + 100 retries in any 10 s holding O
// original requests (TokenRetryBudget: deposit 1000, withdrawal
// 1000/0.2, reserve 10·10·5000), not the 0.25·O + 125 of a deposit per
// request sent. Every path that keeps a budget holds to it in every
// window, and reaches it: 300 retries in the first 10 s after 1,000
// originals, then the reserve alone, 100, once the originals have left
// the window. Paths: the fleet-wide budget on the counting server
// (dense and sparse calendars), a per-process budget with the fleet in
// one process, and the queueing server.
func TestRetryBudgetDepositsPerOriginalRequest(t *testing.T) {
	t.Parallel()
	const clients, pct, minRPS = 1000, 0.2, 10.0
	const window = BudgetWindow * 10 // ticks of 100 ms
	down := Scenario{Clients: clients, Tick: 100 * time.Millisecond, RecoverAt: 5 * time.Minute, Capacity: 100, Spread: time.Second,
		Horizon: 6 * time.Minute}
	queueing := down
	queueing.Concurrency, queueing.Service, queueing.ServiceTime = 4, "fixed", 10*time.Millisecond
	// Retries 12 s apart: those granted in the first 10 s come back in a
	// window that holds no original request.
	fleet := Policy{Kind: Fixed, Base: 12 * time.Second, RetryBudget: pct, BudgetMinRPS: minRPS}
	perProcess := fleet
	perProcess.ClientsPerProcess = clients
	one := func(p Policy) []Group { return []Group{{Share: 1, Policy: p}} }
	for _, tt := range []struct {
		name   string
		sc     Scenario
		groups []Group // each with a budget of its own
	}{
		{"fleet budget", down, one(fleet)},
		{"per-process budget, one process", down, one(perProcess)},
		{"fleet budget, queueing server", queueing, one(fleet)},
		{"a budget per group of a mixed fleet", down, []Group{{Share: 0.5, Policy: fleet}, {Share: 0.5, Policy: fleet}}},
	} {
		reserve := minRPS * BudgetWindow * float64(len(tt.groups))
		nt := int(tt.sc.Horizon / tt.sc.Tick)
		orig, granted := make([]int, nt), make([]int, nt)
		seen := map[int]bool{}
		s := Sim{Trace: func(e Event) {
			if !seen[e.Client] {
				seen[e.Client] = true
				orig[e.Tick]++
			}
			if !e.Served && !e.GaveUp {
				granted[e.Tick]++
			}
		}}
		traced, err := s.RunFleet(tt.sc, tt.groups, NewMulberry32(1), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var o, g int
		for k := range nt {
			o, g = o+orig[k], g+granted[k]
			if k >= window {
				o, g = o-orig[k-window], g-granted[k-window]
			}
			if float64(g) > pct*float64(o)+reserve {
				t.Fatalf("%s: %d retries granted in the 10 s to tick %d with %d original requests: Finagle allows %v", tt.name, g, k, o, pct*float64(o)+reserve)
			}
		}
		sum := func(xs []int, from, to int) (n int) {
			for _, x := range xs[from:to] {
				n += x
			}
			return n
		}
		if g, o := sum(granted, 0, window), sum(orig, 0, window); o != clients || g != int(pct*clients+reserve) {
			t.Errorf("%s: %d retries granted in the first 10 s after %d original requests, want Finagle's %v", tt.name, g, o, pct*clients+reserve)
		}
		if g := sum(granted, window+10, 2*window+10); g != int(reserve) {
			t.Errorf("%s: %d retries granted in the next 10 s without an original request, want the reserve %v", tt.name, g, reserve)
		}
		if tt.sc.Concurrency == 0 { // untraced (the dense path for one policy): the same run
			var plain Sim
			if r, err := plain.RunFleet(tt.sc, tt.groups, NewMulberry32(1), nil); err != nil || r != traced {
				t.Errorf("%s: untraced %+v, traced %+v (%v)", tt.name, r, traced, err)
			}
		}
	}
}

// The .NET standard handler puts its circuit breaker inside the retry, and
// the retry's ShouldHandle (HttpClientResiliencePredicates.IsTransient:
// 5xx, 408, 429, HttpRequestException, TimeoutRejectedException) does not
// match an open breaker's BrokenCircuitException: the call fails at once.
// Plain Polly v8, whose ShouldHandle takes every exception but
// OperationCanceledException, retries it. With one shared pipeline (so
// that the breaker opens), every request the breaker refuses ends its
// client's tries under the preset, and none does under plain Polly.
func TestStandardHandlerFailsOnAnOpenBreaker(t *testing.T) {
	t.Parallel()
	ms := must(PresetByName("ms-resilience-standard")).Policy
	ms.ClientsPerProcess = 0 // one pipeline for the fleet, so that its breaker sees enough calls to open
	plain := ms
	plain.RetryOn = RetryOnAny                 // Polly v8's own ShouldHandle
	plain.MaxAttempts, plain.MaxElapsed = 0, 0 // so that no limit ends a try the breaker refused
	sc := Scenario{Clients: 2000, Tick: 100 * time.Millisecond, RecoverAt: 20 * time.Second, Capacity: 100, Spread: 2 * time.Second,
		Horizon: 2 * time.Minute}
	for _, tt := range []struct {
		name   string
		p      Policy
		giveUp bool
	}{{"ms-resilience-standard", ms, true}, {"plain Polly v8", plain, false}} {
		local, quit := 0, 0
		s := Sim{Trace: func(e Event) {
			if e.Local {
				local++
				if e.GaveUp {
					quit++
				}
			}
		}}
		if _, err := s.Run(sc, tt.p, NewMulberry32(2), nil); err != nil {
			t.Fatal(err)
		}
		want := 0
		if tt.giveUp {
			want = local
		}
		if local == 0 || quit != want {
			t.Errorf("%s: %d requests refused by the open breaker, %d of them ended their client's tries; want %d", tt.name, local, quit, want)
		}
	}
}

// client-go's Request.Do and DoRaw retry a response only with a
// Retry-After and an error only when it is a GET's connection reset or
// EOF: a timeout ends the call (rest/request.go request(); only Watch
// retries timeouts). urllib3 retries read timeouts within total.
func TestClientGoDoesNotRetryTimeouts(t *testing.T) {
	t.Parallel()
	// A queueing server whose every answer comes after the client's 1 s
	// timeout: every request times out.
	sc := Scenario{Clients: 100, Tick: 10 * time.Millisecond, RecoverAt: 0, Capacity: 100, Spread: time.Second, Horizon: 2 * time.Minute,
		Concurrency: 1, Service: "fixed", ServiceTime: 3 * time.Second, Timeout: time.Second}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	cg := must(PresetByName("client-go-rest")).Policy
	r, _ := runWith(t, sc, cg, 1)
	if r.TimedOut == 0 || r.Sent != int64(sc.Clients) || r.GaveUp != sc.Clients {
		t.Errorf("client-go-rest: %d requests, %d timed out, %d gave up; want one request each, all given up at their timeout", r.Sent, r.TimedOut, r.GaveUp)
	}
	u3 := must(PresetByName("urllib3-default")).Policy
	r, _ = runWith(t, sc, u3, 1)
	if r.Sent != int64(sc.Clients*u3.MaxAttempts) {
		t.Errorf("urllib3-default: %d requests, want %d: it retries read timeouts", r.Sent, sc.Clients*u3.MaxAttempts)
	}
}

// Resilience4j's randomize draws from [min, max + 1) ms: with seed 1 the
// first wait of ofExponentialRandomBackoff() is (long)(250 + U·501) = 564
// ms, not the 563 of [min, max). It calls Math.random() at a factor of 0
// too: one draw per retry, whatever the width.
func TestResilience4jRandomizeRange(t *testing.T) {
	t.Parallel()
	u := draws(1, 1)
	pr := must(PresetByName("resilience4j-exponential-random"))
	got, err := pr.Policy.Delays(1, 1, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if w := math.Floor(250 + u[0]*(750-250+1)); got[0] != w || w != 564 {
		t.Errorf("first wait %v ms, Resilience4j %v (564)", got[0], w)
	}
	p := Policy{Kind: Resilience4j, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 3 * time.Second}
	rng := NewMulberry32(9)
	d := p.delays(rng, 4, 0, 0, true)
	if diff := cmp.Diff([]float64{500, 1000, 2000, 3000}, d); diff != "" {
		t.Errorf("width 0 (-want +got):\n%s", diff)
	}
	if next, want := rng.Float64(), draws(9, 5)[4]; next != want {
		t.Errorf("width 0: the stream after 4 waits is at %v, want the 5th draw %v (one draw per wait)", next, want)
	}
	// Random configurations: every wait is the formula's, within the bounds.
	pick := NewMulberry32(77)
	for range cases(300, 30) {
		q := Policy{Kind: Resilience4j, Base: time.Duration(1+int(pick.Float64()*2000)) * time.Millisecond,
			Multiplier: 1 + 2*pick.Float64(), Width: 0.99 * pick.Float64()}
		if pick.Float64() < 0.5 {
			q.Cap = q.Base * time.Duration(1+int(pick.Float64()*20))
		}
		seed := uint32(pick.Float64() * 1e6)
		u := draws(seed, 6)
		got, err := q.Delays(seed, 6, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		iv := float64(q.Base.Milliseconds())
		for i, g := range got {
			lo, hi := iv-q.Width*iv, iv+q.Width*iv
			w := math.Floor(math.Max(1, lo+u[i]*(hi-lo+1)))
			if q.Cap > 0 {
				w = math.Min(w, float64(q.Cap.Milliseconds()))
			}
			if g != w {
				t.Fatalf("%s seed %d: wait %d = %v ms, Resilience4j %v", q, seed, i+1, g, w)
			}
			iv = math.Floor(iv * q.Multiplier)
		}
		if err := CheckPolicy(q); err != nil {
			t.Fatal(err)
		}
	}
}

// The grpc preset is grpc-go's connection backoff, not call retries
// (grpc-go retries a failed call only under a configured retry policy):
// wherever it is judged it says so, as its note in `sweep policies` does.
func TestGRPCPresetSaysConnectionBackoff(t *testing.T) {
	t.Parallel()
	g := must(PresetByName("grpc"))
	const scope = "connection backoff, not call retries"
	if !strings.HasPrefix(g.Note, scope) {
		t.Errorf("grpc's note %q does not start with %q", g.Note, scope)
	}
	if got := g.Policy.Plain(); !strings.HasPrefix(got, "grpc's defaults ("+scope+"): ") {
		t.Errorf("Plain: %q", got)
	}
	if got := g.Policy.PresetLabel(); got != "grpc ("+scope+")" {
		t.Errorf("PresetLabel: %q", got)
	}
	for _, pr := range Presets() {
		if pr.Scope != "" && !strings.HasPrefix(pr.Note, pr.Scope) {
			t.Errorf("%s has a scope %q: its note, which sweep policies prints, must start with it", pr.Name, pr.Scope)
		}
		if pr.Scope == "" && pr.Policy.PresetLabel() != pr.Name {
			t.Errorf("%s: label %q", pr.Name, pr.Policy.PresetLabel())
		}
	}
}

// RetryOn.Retries, value by value, the new values among them: what each
// library retries (TestRetryOnRetries holds the rule itself).
func TestRetryOnEveryValue(t *testing.T) {
	t.Parallel()
	type ev struct{ up, ra, timeout, local bool }
	events := []ev{{false, false, false, false}, {false, true, false, false}, {true, false, false, false}, {true, true, false, false},
		{false, false, true, false}, {true, false, false, true}}
	// 503, 503 with Retry-After, 429, 429 with Retry-After, timeout, refused locally
	want := map[RetryOn][]bool{
		RetryOnAny:             {true, true, true, true, true, true},
		RetryOn5xx:             {true, true, false, false, true, false},
		RetryOn5xxOrRetryAfter: {true, true, false, true, true, false},
		RetryOnRetryAfter:      {false, true, false, true, true, false},
		RetryOnRetryAfterOnly:  {false, true, false, true, false, false}, // client-go Do: a timeout ends it
		RetryOnTransient:       {true, true, true, true, true, false},    // .NET standard handler: an open breaker ends it
	}
	for _, v := range RetryOnValues() {
		w, ok := want[v.Value]
		if !ok {
			t.Errorf("retry_on %q: no expectation", v.Value)
			continue
		}
		var got []bool
		for _, e := range events {
			got = append(got, v.Value.Retries(e.up, e.ra, e.timeout, e.local))
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("retry_on %q (-want +got):\n%s", v.Value, diff)
		}
	}
}

// A request the AWS adaptive rate limiter held back arrives at its tick
// and again when its token comes: it is one original request, one deposit.
func TestOriginalsCountAHeldRequestOnce(t *testing.T) {
	t.Parallel()
	var s Sim
	s.clients = []client{{}, {}, {att: 1}, {}}
	st := &runState{gate: &s.comp}
	s.comp.rate.setup(true, 1, 4)
	if n := s.originals(st, []int32{0, 1, 2, 3}); n != 3 {
		t.Errorf("%d originals among three first requests and a retry, want 3", n)
	}
	s.comp.rate.hold(1)
	if n := s.originals(st, []int32{0, 1, 2, 3}); n != 2 {
		t.Errorf("%d originals with client 1 held back since its first arrival, want 2", n)
	}
	if !s.comp.rate.held(1) {
		t.Error("counting originals cleared the hold")
	}
}
