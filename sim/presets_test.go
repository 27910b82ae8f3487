package sim

import (
	"math"
	"testing"
	"time"
)

// draws returns the first n numbers of seed's stream.
func draws(seed uint32, n int) []float64 {
	r := NewMulberry32(seed)
	u := make([]float64, n)
	for i := range u {
		u[i] = r.Float64()
	}
	return u
}

// Each preset's delay sequence, against its source's formula and numbers,
// written out here by hand: every preset is pinned (the last check), for
// fixed draws u (seed 3), the server up unless down is set.
func TestPresetSequences(t *testing.T) {
	t.Parallel()
	const n = 8
	u := draws(3, n)
	pow := math.Pow
	tests := []struct {
		preset string
		ra     time.Duration
		down   bool
		want   func(i int) float64 // ms, rejection i+1
	}{
		// grpc-go internal/backoff Backoff(retries): BaseDelay exactly when
		// retries == 0 (no draw), else min(120 s, 1 s × 1.6^retries) ×
		// (1 + 0.2·(2U − 1)); rejection i+1 is retries = i, and draw i−1.
		{"grpc", 0, false, func(i int) float64 {
			if i == 0 {
				return 1000
			}
			return math.Min(120000, 1000*pow(1.6, float64(i))) * (1 + 0.2*(2*u[i-1]-1))
		}},
		// aws-sdk-go-v2 v1.48.0 backoffDelay2026 after a 429 (throttling):
		// b·min(1 s·2^(attempt−1), 20 s), one draw per retry …
		{"aws-sdk-go-v2", 0, false, func(i int) float64 { return u[i] * math.Min(20000, 1000*pow(2, float64(i))) }},
		{"aws-sdk-go-v2-2026", 0, false, func(i int) float64 { return u[i] * math.Min(20000, 1000*pow(2, float64(i))) }},
		// … after a 503: base 50 ms, …
		{"aws-sdk-go-v2-2026", 0, true, func(i int) float64 { return u[i] * math.Min(20000, 50*pow(2, float64(i))) }},
		// … and x-amz-retry-after 10 s clamped to [t, t + 5 s].
		{"aws-sdk-go-v2-2026", 10 * time.Second, true, func(i int) float64 {
			t := u[i] * math.Min(20000, 50*pow(2, float64(i)))
			return math.Min(math.Max(10000, t), t+5000)
		}},
		// aws-sdk-go-v2 before v1.48.0: U·2^attempt s for attempt ≤ int(log2 20) = 4, then exactly 20 s.
		{"aws-sdk-go-v2-standard-2020", 0, false, func(i int) float64 {
			if i+1 > 4 {
				return 20000
			}
			return u[i] * 1000 * pow(2, float64(i+1))
		}},
		// botocore legacy: rand × 2^(attempts − 1) s, no cap.
		{"botocore-legacy", 0, false, func(i int) float64 { return u[i] * 1000 * pow(2, float64(i)) }},
		// botocore standard 2.0: rand × min(2^(attempt − 1), 20) s.
		{"botocore-standard", 0, false, func(i int) float64 { return u[i] * math.Min(20000, 1000*pow(2, float64(i))) }},
		// urllib3 Retry.DEFAULT = Retry(3) and Retry(): a Retry-After of 45 s
		// is slept as sent (Retry.sleep_for_retry); requests'
		// Retry(0, read=False) never gets to sleep (TestURLLib3Attempts) …
		{"urllib3-default", 45 * time.Second, false, func(int) float64 { return 45000 }},
		{"urllib3-retry-10", 45 * time.Second, false, func(int) float64 { return 45000 }},
		{"requests-default", 45 * time.Second, false, func(int) float64 { return 45000 }},
		// … and Retry(backoff_factor=0.5, backoff_jitter=0.5): 0 on the
		// first error (no draw), then min(120, 0.5·2^(errors−1) + random()·0.5) s.
		{"urllib3-backoff", 0, false, func(i int) float64 {
			if i == 0 {
				return 0
			}
			return math.Min(120000, 500*pow(2, float64(i))+u[i-1]*500)
		}},
		{"urllib3-backoff", 45 * time.Second, false, func(int) float64 { return 45000 }},
		// client-go rest: the Retry-After exactly; a retryable error's artificial one is 1 s.
		{"client-go-rest", 45 * time.Second, false, func(int) float64 { return 45000 }},
		{"client-go-rest", 0, false, func(int) float64 { return 1000 }},
		// wait.Backoff: Duration·Factor^(step) then + rand·Jitter·that.
		{"client-go-default-backoff", 0, false, func(i int) float64 { d := 10 * pow(5, float64(i)); return d + u[i]*0.1*d }},
		{"client-go-default-retry", 0, false, func(i int) float64 { return 10 + u[i]*0.1*10 }},
		// Resilience4j: IntervalFunction.ofDefaults() = 500 ms; and
		// ofExponentialRandomBackoff(): intervals (long)(x·1.5) from 500,
		// then (long)randomize(i, 0.5) = (long)max(1, min + random·(max −
		// min + 1)), min = i − 0.5·i, max = i + 0.5·i (v2.4.0
		// IntervalFunctionCompanion.randomize).
		{"resilience4j", 0, false, func(int) float64 { return 500 }},
		{"resilience4j-exponential-random", 0, false, func(i int) float64 {
			iv := []float64{500, 750, 1125, 1687, 2530, 3795, 5692, 8538}[i]
			lo, hi := iv-0.5*iv, iv+0.5*iv
			return math.Floor(math.Max(1, lo+u[i]*(hi-lo+1)))
		}},
		// failsafe-go: no delay (0); the simulator's 1 ms reaches the next tick as 0 does.
		{"failsafe-go", 0, false, func(int) float64 { return 1 }},
		// cenkalti: 500 ms × 1.5^k, capped at 60 s before ±50 % randomisation.
		{"cenkalti-backoff", 0, false, func(i int) float64 {
			return math.Min(60000, 500*pow(1.5, float64(i))) * (1 + float64(0.5*(2*u[i]-1)))
		}},
		// go-retryablehttp: 1 s · 2^k up to 30 s, no jitter …
		{"go-retryablehttp", 0, false, func(i int) float64 { return math.Min(30000, 1000*pow(2, float64(i))) }},
		// … and a Retry-After of 45 s used as is, above RetryWaitMax.
		{"go-retryablehttp", 45 * time.Second, false, func(int) float64 { return 45000 }},
		// Polly v8: constant 2 s, no jitter.
		{"polly-v8", 0, false, func(int) float64 { return 2000 }},
		// google-api-core: uniform(0, min(60, 1·2^k)) s.
		{"google-api-core", 0, false, func(i int) float64 { return u[i] * math.Min(60000, 1000*pow(2, float64(i))) }},
		// Envoy: 25 ms base doubling to 250 ms, fully jittered.
		{"envoy", 0, false, func(i int) float64 { return u[i] * math.Min(250, 25*pow(2, float64(i))) }},
		// second source, Jitter read as a band j wide (d·(1 + j·(U − 0.5)))
		// and as ±j (d·(1 + j·(2U − 1))), d = min(cap, base·m^k).
		{"sgc-watchdog", 0, false, func(int) float64 { return 1000 }},
		{"sgc-watchdog-example", 0, false, func(i int) float64 {
			return math.Min(60000, 1000*pow(2, float64(i))) * (1 + 0.2*(u[i]-0.5))
		}},
		{"sgc-watchdog-example-pm", 0, false, func(i int) float64 {
			return math.Min(60000, 1000*pow(2, float64(i))) * (1 + 0.2*(2*u[i]-1))
		}},
		{"sgc-fleet", 0, false, func(i int) float64 {
			return math.Min(120000, 2000*pow(1.5, float64(i))) * (1 + float64(0.5*(u[i]-0.5)))
		}},
		{"sgc-fleet-pm", 0, false, func(i int) float64 {
			return math.Min(120000, 2000*pow(1.5, float64(i))) * (1 + float64(0.5*(2*u[i]-1)))
		}},
		{"sgc-http-retry", 0, false, func(i int) float64 {
			return math.Min(30000, 500*pow(2, float64(i))) * (1 + 0.2*(u[i]-0.5))
		}},
		{"sgc-http-retry", 45 * time.Second, false, func(int) float64 { return 45000 }},
		{"sgc-http-retry-pm", 0, false, func(i int) float64 {
			return math.Min(30000, 500*pow(2, float64(i))) * (1 + 0.2*(2*u[i]-1))
		}},
		{"sgc-http-retry-pm", 45 * time.Second, false, func(int) float64 { return 45000 }},
	}
	pinned := map[string]bool{"polly-v2": true, // TestPollyV2
		"grpc-retry-throttled": true, "ms-resilience-standard": true, "aws-sdk-go-v2-adaptive": true, "envoy-retry-cap": true} // TestComponentPresetSequences
	for _, tt := range tests {
		pinned[tt.preset] = true
		pr, ok := PresetByName(tt.preset)
		if !ok {
			t.Fatalf("no preset %s", tt.preset)
		}
		got, err := pr.Policy.Delays(3, n, tt.ra, !tt.down)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if w := tt.want(i); math.Abs(g-w) > 1e-9*w {
				t.Errorf("%s (ra %v, down %v): delay %d = %v ms, want %v", tt.preset, tt.ra, tt.down, i+1, g, w)
			}
		}
	}
	for _, pr := range Presets() {
		if !pinned[pr.Name] {
			t.Errorf("preset %s: no delays pinned", pr.Name)
		}
	}
}

// Polly's V2 formula: t = k + U, f(t) = 2^t·tanh(√(4t)), delay (f(t) − f(prev))/1.4·base.
func TestPollyV2(t *testing.T) {
	t.Parallel()
	u := draws(5, 8)
	pr, _ := PresetByName("polly-v2")
	got, err := pr.Policy.Delays(5, 8, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	sum := 0.0
	for i, g := range got {
		tt := float64(i) + u[i]
		next := math.Pow(2, tt) * math.Tanh(math.Sqrt(4*tt))
		if w := (next - prev) / 1.4 * 1000; math.Abs(g-w) > 1e-9*math.Max(1, w) { // Exp2 and Pow may differ in the last bit
			t.Errorf("delay %d = %v, want %v", i+1, g, w)
		}
		prev = next
		sum += g
	}
	// The sum telescopes to f(t_last)/1.4: the formula's whole point.
	if w := prev / 1.4 * 1000; math.Abs(sum-w) > 1e-6 {
		t.Errorf("sum %v, want %v", sum, w)
	}
}

func TestPresetsAreValidAndDocumented(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, pr := range Presets() {
		if seen[pr.Name] || pr.Source == "" || pr.Policy.Preset != pr.Name {
			t.Errorf("preset %+v: duplicate, undocumented or unlabelled", pr)
		}
		seen[pr.Name] = true
		if err := CheckPolicy(pr.Policy); err != nil {
			t.Errorf("%s: %v", pr.Name, err)
		}
		if got, ok := PresetByName(pr.Name); !ok || got != pr {
			t.Errorf("PresetByName(%q) = %+v, %v; want Presets' %+v", pr.Name, got, ok, pr)
		}
	}
	if got, ok := PresetByName("no-such-preset"); ok {
		t.Errorf("PresetByName of no preset: %+v", got)
	}
}

func runWith(t *testing.T, sc Scenario, p Policy, seed uint32) (Result, Timeline) {
	t.Helper()
	var s Sim
	var tl Timeline
	r, err := s.Run(sc, p, NewMulberry32(seed), &tl)
	if err != nil {
		t.Fatal(err)
	}
	return r, tl
}

func TestClientLimits(t *testing.T) {
	t.Parallel()
	down := Scenario{Clients: 100, Tick: 100 * time.Millisecond, RecoverAt: 10 * time.Minute, Capacity: 10, Spread: time.Second, Horizon: 15 * time.Minute}
	// Fixed 2 s against a server that stays down: MaxElapsed 9 s allows
	// retries at +2, +4, +6, +8 s; the fifth wait would end at 10 s.
	r, _ := runWith(t, down, Policy{Kind: Fixed, Base: 2 * time.Second, MaxElapsed: 9 * time.Second}, 1)
	if r.GaveUp != 100 || r.Sent != 500 {
		t.Errorf("max elapsed: %d gave up after %d requests, want 100 after 500", r.GaveUp, r.Sent)
	}
	// A bucket of 12 tokens at 5 a retry pays for 2 retries: 3 requests each.
	r, _ = runWith(t, down, Policy{Kind: Fixed, Base: 2 * time.Second, BucketTokens: 12, BucketCost: 5}, 1)
	if r.GaveUp != 100 || r.Sent != 300 {
		t.Errorf("token bucket: %d gave up after %d requests, want 100 after 300", r.GaveUp, r.Sent)
	}
	// A 10 % budget with 1 retry/s: over any 10 s window retries stay
	// within 10 % of requests plus 10.
	sc := down
	sc.RecoverAt, sc.Capacity = 5*time.Second, 10
	p := Policy{Kind: Fixed, Base: time.Second, RetryBudget: 0.1, BudgetMinRPS: 1}
	var events []Event
	s := Sim{Trace: func(e Event) { events = append(events, e) }}
	res, err := s.Run(sc, p, NewMulberry32(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	granted := 0
	for _, e := range events {
		if !e.Served && !e.GaveUp {
			granted++
		}
	}
	if res.GaveUp == 0 || granted == 0 || granted > int(0.1*float64(res.Sent))+10*int(res.End.Seconds()/10+1) {
		t.Errorf("retry budget: %d retries granted, %d gave up, of %d requests", granted, res.GaveUp, res.Sent)
	}
	if res.Succeeded+res.GaveUp+res.Pending != sc.Clients {
		t.Errorf("budget: accounting %+v", res)
	}
}

// The metastable failure: rejections that cost work keep a large enough
// herd from ever being served, although the same herd drains when 429s
// are free.
func TestMetastability(t *testing.T) {
	t.Parallel()
	sc := Article()
	sc.Horizon = 10 * time.Minute
	p := Policy{Kind: Fixed, Base: 2 * time.Second}
	free, _ := runWith(t, sc, p, 1)
	if !free.AllDone.Reached {
		t.Fatalf("without rejection cost the herd does not drain: %+v", free)
	}
	sc.RejectCost = 0.5
	costly, tl := runWith(t, sc, p, 1)
	if costly.AllDone.Reached || costly.Succeeded > 0 {
		t.Errorf("with rejection cost 0.5 the server recovered: %+v", costly)
	}
	for k, a := range tl.Arrivals {
		if tl.Served[k] > 0 {
			t.Fatalf("tick %d served %d of %d", k, tl.Served[k], a)
		}
	}
	// Jitter spreads the herd under the point of no return.
	jittered, _ := runWith(t, sc, DefaultPolicy(FullJitter), 1)
	if !jittered.AllDone.Reached {
		t.Errorf("full jitter does not recover with rejection cost 0.5: %+v", jittered)
	}
}

func TestServerOptions(t *testing.T) {
	t.Parallel()
	sc := Article()
	sc.RampUp, sc.RampFrom = 30*time.Second, 0.1
	_, tl := runWith(t, sc, DefaultPolicy(Decorrelated), 2)
	for k := range tl.Served {
		tt := float64(k) / 10
		if tt < 30 {
			continue
		}
		limit := math.Floor(120 * math.Min(1, 0.1+0.9*(tt-30)/30) / 10)
		if float64(tl.Served[k]) > limit {
			t.Fatalf("t=%v s: served %d, ramp allows %v", tt, tl.Served[k], limit)
		}
	}
	// Retry-After drawn from [5 s, 15 s): ra-exact waits exactly what it
	// is told, so every wait after recovery falls in that range.
	sc = Article()
	sc.RetryAfter, sc.RetryAfterMax = 5*time.Second, 15*time.Second
	var waits []float64
	s := Sim{Trace: func(e Event) {
		if !e.Served && !e.GaveUp && e.Tick >= 300 {
			waits = append(waits, e.Delay)
		}
	}}
	if _, err := s.Run(sc, DefaultPolicy(RAExact), NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), 0.0
	for _, w := range waits {
		lo, hi = math.Min(lo, w), math.Max(hi, w)
	}
	if len(waits) == 0 || lo < 5000 || hi >= 15000 || hi-lo < 5000 {
		t.Errorf("Retry-After range: %d waits in [%v, %v], want spread over [5000, 15000)", len(waits), lo, hi)
	}
	// The backlog's Retry-After shrinks as the herd drains.
	sc = Article()
	sc.RetryAfterBacklog = true
	waits = waits[:0]
	if _, err := s.Run(sc, DefaultPolicy(RAExact), NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	if len(waits) < 2 || waits[0] != 1000*math.Ceil(float64(2000-12)/120) || waits[len(waits)-1] >= waits[0] {
		t.Errorf("backlog Retry-After: first %v, last %v", waits[0], waits[len(waits)-1])
	}
	for _, bad := range []Scenario{{RetryAfter: 5 * time.Second, RetryAfterMax: time.Second}, {RetryAfterBacklog: true, RetryAfter: time.Second}, {RejectCost: 1}, {RampFrom: 2}} {
		b := Article()
		b.RetryAfter, b.RetryAfterMax, b.RetryAfterBacklog, b.RejectCost, b.RampFrom = bad.RetryAfter, bad.RetryAfterMax, bad.RetryAfterBacklog, bad.RejectCost, bad.RampFrom
		if err := b.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// The candidate presets exist and jitter: recommend never recommends a
// policy that keeps a herd in step.
func TestCandidatePresetsJitter(t *testing.T) {
	t.Parallel()
	n := 0
	for _, pr := range Presets() {
		if pr.Candidate() {
			n++
			if !pr.Policy.Jittered() {
				t.Errorf("candidate preset %s does not jitter", pr.Name)
			}
		}
	}
	if n != len(spacePresets) {
		t.Errorf("%d candidate presets, want %d (%v)", n, len(spacePresets), spacePresets)
	}
}

// Where the cap falls against the jitter, with a cap that binds from the
// second rejection: Resilience4j caps after its randomisation (no wait
// above 1 s), Kubernetes' wait.Backoff jitters after its cap (a wait may
// reach 1.1 s), both from their sources' formulas.
func TestCapAgainstJitter(t *testing.T) {
	t.Parallel()
	u := draws(7, 8)
	r4j := Policy{Kind: Resilience4j, Base: 500 * time.Millisecond, Multiplier: 2, Width: 0.5, Cap: time.Second}
	k8s := Policy{Kind: K8sWait, Base: 500 * time.Millisecond, Multiplier: 2, Width: 0.1, Cap: time.Second}
	for _, tt := range []struct {
		p    Policy
		want func(i int) float64
	}{
		// (long)randomize((long)(500·2^k), 0.5), then min(…, 1000).
		{r4j, func(i int) float64 {
			iv := 500 * math.Pow(2, float64(i))
			return math.Min(1000, math.Floor(math.Max(1, iv*0.5+u[i]*(iv+1))))
		}},
		// min(1000, 500·2^k), then + rand·0.1·that.
		{k8s, func(i int) float64 { d := math.Min(1000, 500*math.Pow(2, float64(i))); return d + u[i]*0.1*d }},
	} {
		got, err := tt.p.Delays(7, 8, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if w := tt.want(i); math.Abs(g-w) > 1e-9*w {
				t.Errorf("%s: delay %d = %v ms, want %v", tt.p, i+1, g, w)
			}
		}
		if err := CheckPolicy(tt.p); err != nil {
			t.Error(err)
		}
	}
}
