package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEveryPolicyConforms(t *testing.T) {
	t.Parallel()
	for _, p := range everyPolicy() {
		if err := CheckPolicy(p); err != nil {
			t.Errorf("%s:\n%v", p, err)
		}
	}
}

// A broken policy must fail the checker: it is only useful if it can.
func TestCheckPolicyCatchesViolations(t *testing.T) {
	t.Parallel()
	p := Policy{Kind: WidthJitter, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.5}
	tight := func(p Policy, ra float64, up bool) (float64, float64) { return 0, ms(p.Cap) } // forgets the width above the cap
	err := checkPolicy(p, tight)
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("CheckPolicy with too tight bounds: %v, want a bounds violation", err)
	}
}

// The families table cannot be written through what lookup returns: parallel
// tests and runs read it at once (go test -race ./sim failed when a test
// swapped a family's bounds through a pointer into it).
func TestFamiliesTableIsImmutable(t *testing.T) {
	t.Parallel()
	f, ok := lookup(WidthJitter)
	if !ok {
		t.Fatal("no width-jitter family")
	}
	f.bounds = func(Policy, float64, bool) (float64, float64) { return 0, 0 }
	f.Title = "changed"
	p := Policy{Kind: WidthJitter, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.5}
	if err := CheckPolicy(p); err != nil {
		t.Errorf("a change to lookup's result reached the table: %v", err)
	}
	if g, _ := lookup(WidthJitter); g.Title == "changed" {
		t.Error("a change to lookup's result reached the table's title")
	}
}

// Sequences without randomness, from each source's own words.
func TestDeterministicDelaySequences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Policy
		ra   time.Duration
		up   bool
		want []float64 // ms
	}{
		{"fixed 5 s", Policy{Kind: Fixed, Base: 5 * time.Second}, 0, true, []float64{5000, 5000, 5000}},
		// The article: "1 s, 2 s, 4 s …" as base·2^n with n = 1 first.
		{"exponential cap 60 s", DefaultPolicy(Exponential), 0, true,
			[]float64{2000, 4000, 8000, 16000, 32000, 60000, 60000}},
		{"exponential ×1.5 no cap", Policy{Kind: Exponential, Multiplier: 1.5}.Normalize(), 0, true,
			[]float64{1500, 2250, 3375}},
		// Second source: "1 s, 2 s, 4 s, 8 s, 16 s, 32 s, 60 s, 60 s, 60 s ...".
		{"watchdog example", Policy{Kind: WatchDog, Base: time.Second, Multiplier: 2, Cap: time.Minute}, 0, false,
			[]float64{1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000}},
		{"watchdog fixed", Policy{Kind: WatchDog, Base: 3 * time.Second, Multiplier: 1}, 0, false, []float64{3000, 3000}},
		// Second source: "500 ms, 1 s, 2 s, 4 s, capped by MaxInterval".
		{"http-retry curve", Policy{Kind: HTTPRetry, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second}, 0, true,
			[]float64{500, 1000, 2000, 4000, 8000, 16000, 30000}},
		// "Retry-After: 12 … the client waits 12 seconds instead."
		{"http-retry honours 12 s", Policy{Kind: HTTPRetry, Base: 500 * time.Millisecond, Multiplier: 2, HonorRetryAfter: true, Width: 0.2}, 12 * time.Second, true,
			[]float64{12000, 12000, 12000}},
		{"ra-exact up", DefaultPolicy(RAExact), 30 * time.Second, true, []float64{30000, 30000}},
		{"ra-lower-bound down waits RA exactly", DefaultPolicy(RALowerBound), 30 * time.Second, false, []float64{30000, 30000}},
		{"ra-full-jitter down waits RA exactly", DefaultPolicy(RAFullJitter), 30 * time.Second, false, []float64{30000}},
	}
	for _, tt := range tests {
		got, err := tt.p.Delays(1, len(tt.want), tt.ra, tt.up)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// Jittered families: the n-th delay is its formula applied to the n-th
// draw of the stream, in that order and no other. The formulas convert
// their products with float64() as sim does: without it Go may fuse them on
// arm64 and compute a different last bit than sim on purpose does not
// (TestDelaysMatchJavaScript checks the values themselves).
func TestJitteredDelaysFollowTheStream(t *testing.T) {
	t.Parallel()
	const n = 12
	u := make([]float64, n)
	r := NewMulberry32(42)
	for i := range u {
		u[i] = r.Float64()
	}
	exp := func(i int) float64 { return math.Min(60000, 1000*math.Pow(2, float64(i+1))) }
	tests := []struct {
		p    Policy
		ra   time.Duration
		want func(i int, prev *float64) float64
	}{
		{DefaultPolicy(FullJitter), 0, func(i int, _ *float64) float64 { return u[i] * exp(i) }},
		{DefaultPolicy(EqualJitter), 0, func(i int, _ *float64) float64 { return exp(i)/2 + float64(u[i]*exp(i))/2 }},
		{Policy{Kind: WidthJitter, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.1}, 0, func(i int, _ *float64) float64 { return exp(i) * (1 + float64(0.1*(2*u[i]-1))) }},
		{DefaultPolicy(Decorrelated), 0, func(i int, prev *float64) float64 {
			*prev = math.Min(60000, 1000+float64(u[i]*(math.Max(2000, 3**prev)-1000)))
			return *prev
		}},
		{DefaultPolicy(RAFullJitter), 30 * time.Second, func(i int, _ *float64) float64 { return u[i] * 30000 }},
		{DefaultPolicy(RALowerBound), 30 * time.Second, func(i int, _ *float64) float64 { return 30000 + float64(u[i]*30000) }},
		{Policy{Kind: WatchDog, Base: 2 * time.Second, Multiplier: 1.5, Cap: 2 * time.Minute, Width: 0.5}, 0, func(i int, _ *float64) float64 {
			return math.Min(120000, 2000*math.Pow(1.5, float64(i))) * (1 + float64(0.5*(u[i]-0.5)))
		}},
		{DefaultPolicy(ArticleClient), 0, func(i int, prev *float64) float64 {
			*prev = math.Min(60000, 1000+float64(u[i]*(math.Max(2000, 3**prev)-1000))) // prev is w, not the wait
			return math.Min(60000, *prev+float64(InstallOffset(0)*1000))
		}},
	}
	for _, tt := range tests {
		got, err := tt.p.Delays(42, n, tt.ra, true)
		if err != nil {
			t.Fatal(err)
		}
		prev := 1000.0
		for i, g := range got {
			if w := tt.want(i, &prev); g != w {
				t.Errorf("%s: delay %d = %v, want %v", tt.p, i+1, g, w)
			}
		}
	}
}

func TestInstallOffset(t *testing.T) {
	t.Parallel()
	// FNV-1a of "install-0", computed by hand from the published algorithm:
	// the offset is its value mod 100000, over 100000.
	h := uint32(2166136261)
	for _, b := range []byte("install-0") {
		h ^= uint32(b)
		h *= 16777619
	}
	if got, want := InstallOffset(0), float64(h%100000)/100000; got != want {
		t.Errorf("InstallOffset(0) = %v, want %v", got, want)
	}
	// The article found 2,000 install ids spread within ±10 % of even over
	// ten bins; ours must do no worse than its 180..217.
	var bins [10]int
	for i := range int32(2000) {
		o := InstallOffset(i)
		if o < 0 || o >= 1 {
			t.Fatalf("InstallOffset(%d) = %v, want [0, 1)", i, o)
		}
		bins[int(o*10)]++
	}
	for b, c := range bins {
		if c < 160 || c > 240 {
			t.Errorf("bin %d holds %d of 2000 offsets, want 160..240: %v", b, c, bins)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Policy
		want string // a fragment of the error; "" = valid
	}{
		{DefaultPolicy(Decorrelated), ""},
		{Policy{Kind: "decor"}, `Kind: "decor": want one of fixed, exponential, full-jitter`},
		{Policy{Kind: Exponential, Base: time.Second, Cap: 500 * time.Millisecond, Multiplier: 2}, "Cap: 500ms: want 0 (no cap) or at least Base (1s)"},
		{Policy{Kind: Exponential, Base: 0, Multiplier: 2}, "Base: 0s: want a whole number of milliseconds ≥ 1ms"},
		{Policy{Kind: Exponential, Base: 1500 * time.Microsecond, Multiplier: 2}, "Base: 1.5ms"},
		{Policy{Kind: WidthJitter, Base: time.Second, Multiplier: 2, Width: 1.5}, "Width: 1.5: want a fraction in [0, 1]"},
		{Policy{Kind: WidthJitter, Base: time.Second, Multiplier: 2, Width: math.NaN()}, "Width: NaN"},
		{Policy{Kind: Exponential, Base: time.Second, Multiplier: 0.5}, "Multiplier: 0.5: want a number in [1, 100]"},
		{Policy{Kind: Fixed, Base: time.Second, Width: 0.1}, "Width: 0.1: want 0: fixed does not read it"},
		{Policy{Kind: Fixed, Base: time.Second, MaxAttempts: -1}, "MaxAttempts: -1"},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.p, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want it to contain %q", tt.p, err, tt.want)
		}
	}
}

// TestPolicyValidateEveryFault pins the whole error of policies with
// several faults: every one, in the order Validate checks them (the
// family's parameters, the limits, then the client components), word for
// word.
func TestPolicyValidateEveryFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Policy
		want []string // one line per fault
	}{
		{"an unknown family hides the rest", Policy{Kind: "decor", Base: -1, MaxAttempts: -1, ThrottleK: 0.5}, []string{
			"Kind: \"decor\": want one of fixed, exponential, full-jitter, equal-jitter, decorrelated, width-jitter, ra-exact, ra-full-jitter, ra-lower-bound, ra-ignore, article-client, grpc, grpc-go, api-core, aws-standard, polly-v2, watchdog, http-retry, aws-2026, urllib3-retry, resilience4j-random, k8s-wait, sgc-pm",
		}},
		{"parameters a family does not read", Policy{Kind: Fixed, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.5, HonorRetryAfter: true}, []string{
			"Cap: 1m0s: want 0: fixed does not read it",
			"Multiplier: 2: want 0: fixed does not read it",
			"Width: 0.5: want 0: fixed does not read it",
			"HonorRetryAfter: true: want false: fixed does not read it",
		}},
		{"parameters out of range", Policy{Kind: WidthJitter, Base: 1500 * time.Microsecond, Cap: -time.Second, Multiplier: 0.5, Width: math.NaN()}, []string{
			"Base: 1.5ms: want a whole number of milliseconds ≥ 1ms",
			"Cap: -1s: want a whole number of milliseconds ≥ 0s",
			"Multiplier: 0.5: want a number in [1, 100]",
			"Width: NaN: want a fraction in [0, 1]",
		}},
		{"a cap below the base", Policy{Kind: Exponential, Base: time.Second, Cap: 500 * time.Millisecond, Multiplier: 101}, []string{
			"Cap: 500ms: want 0 (no cap) or at least Base (1s)",
			"Multiplier: 101: want a number in [1, 100]",
		}},
		{"an unread honour of Retry-After", Policy{Kind: RAExact, Base: time.Second, HonorRetryAfter: true}, []string{
			"HonorRetryAfter: true: want false: ra-exact does not read it",
		}},
		{"limits", Policy{Kind: Decorrelated, Base: time.Second, MaxAttempts: -1, RetryOn: "bogus", MaxElapsed: 1500 * time.Microsecond,
			BucketTokens: MaxBucket + 1, BucketCost: -1, RetryBudget: 11, BudgetMinRPS: math.NaN()}, []string{
			"MaxAttempts: -1: want 0 (unlimited) or a whole number ≥ 1",
			"RetryOn: bogus: want one of \"\" or any, 5xx, 5xx+retry-after, retry-after, retry-after-only, transient",
			"MaxElapsed: 1.5ms: want a whole number of milliseconds ≥ 0s",
			"BucketTokens: 1000000001: want 0 (no bucket) or a whole number of tokens ≤ 1000000000",
			"BucketCost: -1: want a whole number of tokens ≤ 1000000000, ≥ 1 when there are BucketTokens",
			"RetryBudget: 11: want a fraction of requests in [0, 10]",
			"BudgetMinRPS: NaN: want retries/s ≥ 0, with a RetryBudget",
		}},
		{"a bucket without a cost and a rate without a budget", Policy{Kind: Decorrelated, Base: time.Second, BucketTokens: 10, BudgetMinRPS: 1}, []string{
			"BucketCost: 0: want a whole number of tokens ≤ 1000000000, ≥ 1 when there are BucketTokens",
			"BudgetMinRPS: 1: want retries/s ≥ 0, with a RetryBudget",
		}},
		{"components off with their parameters set", Policy{Kind: Decorrelated, Base: time.Second, ClientsPerProcess: 10, ThrottleWindow: time.Minute,
			RetryTokenRatio: 0.1, BreakerMinThroughput: 5, BreakerWindow: time.Minute, BreakerBreak: time.Second}, []string{
			"ClientsPerProcess: 10: want 0 without a per-process component (throttle_k, aws_adaptive, retry_tokens, retry_cap, breaker_ratio, retry_budget)",
			"ThrottleWindow: 1m0s: want 0 without ThrottleK",
			"RetryTokenRatio: 0.1: want gRPC's tokenRatio in (0, 1] with RetryTokens, 0 without",
			"BreakerMinThroughput: 5: want 0 without BreakerRatio",
			"BreakerWindow: 1m0s: want 0 without BreakerRatio",
			"BreakerBreak: 1s: want 0 without BreakerRatio",
		}},
		{"components out of range", Policy{Kind: Decorrelated, Base: time.Second, ClientsPerProcess: -1, ThrottleK: 0.5, ThrottleWindow: 1500 * time.Microsecond,
			RetryTokens: 2000, RetryTokenRatio: 2, RetryCap: -1, BreakerRatio: 1.5, BreakerMinThroughput: -1, BreakerWindow: 2 * time.Hour, BreakerBreak: 1500 * time.Microsecond}, []string{
			"ClientsPerProcess: -1: want 0 (one process for the fleet) or a whole number of clients ≤ 1073741824",
			"ThrottleK: 0.5: want 0 (no adaptive throttling) or a multiplier of accepts in [1, 100] (the SRE book's K = 2)",
			"ThrottleWindow: 1.5ms: want a whole number of milliseconds ≥ 0s",
			"RetryTokens: 2000: want 0 (no retry throttling) or gRPC's maxTokens in (0, 1000]",
			"RetryTokenRatio: 2: want gRPC's tokenRatio in (0, 1] with RetryTokens, 0 without",
			"RetryCap: -1: want 0 (no cap) or a whole number of outstanding retries ≤ 1073741824",
			"BreakerRatio: 1.5: want 0 (no circuit breaker) or a failure ratio in (0, 1]",
			"BreakerMinThroughput: -1: want requests in the window before the breaker may open, ≥ 0 (0: Polly's 100), ≤ 1073741824",
			"BreakerWindow: 2h0m0s: want at most 1h0m0s",
			"BreakerBreak: 1.5ms: want a whole number of milliseconds ≥ 0s",
		}},
		{"component windows too long", Policy{Kind: Fixed, Base: time.Second, ThrottleK: 2, ThrottleWindow: 2 * time.Hour, RetryTokens: 10,
			BreakerRatio: 0.5, BreakerWindow: -time.Second, BreakerBreak: 2 * time.Hour}, []string{
			"ThrottleWindow: 2h0m0s: want at most 1h0m0s",
			"RetryTokenRatio: 0: want gRPC's tokenRatio in (0, 1] with RetryTokens, 0 without",
			"BreakerWindow: -1s: want a whole number of milliseconds ≥ 0s",
			"BreakerBreak: 2h0m0s: want at most 1h0m0s",
		}},
		{"everything at once", Policy{Kind: Exponential, Base: -time.Second, Cap: 1500 * time.Microsecond, Multiplier: math.Inf(1), Width: 0.1, HonorRetryAfter: true,
			MaxAttempts: math.MaxInt32 + 1, RetryOn: "5XX", MaxElapsed: -time.Second, BucketCost: MaxBucket + 1, RetryBudget: -1, BudgetMinRPS: 2e6,
			ClientsPerProcess: MaxClientsPerProcess + 1, ThrottleK: 101, ThrottleWindow: time.Minute, RetryTokens: -1, RetryCap: MaxClients + 1,
			BreakerRatio: math.NaN(), BreakerWindow: time.Second}, []string{
			"Base: -1s: want a whole number of milliseconds ≥ 1ms",
			"Cap: 1.5ms: want a whole number of milliseconds ≥ 0s",
			"Multiplier: +Inf: want a number in [1, 100]",
			"Width: 0.1: want 0: exponential does not read it",
			"HonorRetryAfter: true: want false: exponential does not read it",
			"MaxAttempts: 2147483648: want 0 (unlimited) or a whole number ≥ 1",
			"RetryOn: 5XX: want one of \"\" or any, 5xx, 5xx+retry-after, retry-after, retry-after-only, transient",
			"MaxElapsed: -1s: want a whole number of milliseconds ≥ 0s",
			"BucketCost: 1000000001: want a whole number of tokens ≤ 1000000000, ≥ 1 when there are BucketTokens",
			"RetryBudget: -1: want a fraction of requests in [0, 10]",
			"BudgetMinRPS: 2e+06: want retries/s ≥ 0, with a RetryBudget",
			"ClientsPerProcess: 1073741825: want 0 (one process for the fleet) or a whole number of clients ≤ 1073741824",
			"ThrottleK: 101: want 0 (no adaptive throttling) or a multiplier of accepts in [1, 100] (the SRE book's K = 2)",
			"RetryTokens: -1: want 0 (no retry throttling) or gRPC's maxTokens in (0, 1000]",
			"RetryCap: 1073741825: want 0 (no cap) or a whole number of outstanding retries ≤ 1073741824",
			"BreakerRatio: NaN: want 0 (no circuit breaker) or a failure ratio in (0, 1]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.p.Validate()
			if err == nil {
				t.Fatalf("valid, want %q", tt.want)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeClearsUnreadParameters(t *testing.T) {
	t.Parallel()
	a := Policy{Kind: Fixed, Base: time.Second, Width: 0.3, Cap: time.Minute, Multiplier: 3}.Normalize()
	b := Policy{Kind: Fixed, Base: time.Second}.Normalize()
	if a != b {
		t.Errorf("Normalize kept unread parameters: %+v != %+v", a, b)
	}
	if got := DefaultPolicy(ArticleClient); got.MaxAttempts != 6 || got.Cap != time.Minute || got.Base != time.Second {
		t.Errorf("article-client defaults: %+v, want base 1s, cap 1m, 6 attempts", got)
	}
	if got := (Policy{Kind: Exponential, Cap: 0, MaxAttempts: 0}).Normalize(); got.Cap != 0 || got.MaxAttempts != 0 || got.Multiplier != 2 || got.Base != time.Second {
		t.Errorf("Normalize of an uncapped exponential: %+v, want no cap, unlimited, ×2, base 1s", got)
	}
}

func TestFamiliesAreDocumented(t *testing.T) {
	t.Parallel()
	seen := map[Kind]bool{}
	for _, f := range Families() {
		if seen[f.Kind] {
			t.Errorf("family %s listed twice", f.Kind)
		}
		seen[f.Kind] = true
		if f.Title == "" || f.Formula == "" || f.Source == "" || len(f.Params) == 0 {
			t.Errorf("family %s lacks a title, formula, source or parameters: %+v", f.Kind, f)
		}
	}
}

// TestCurveTablesMatchTheirCurve: a remembered table is the table of the
// curve asked for, bit for bit, whatever was built before it (few values,
// so that tables are reused and slots collide; -0 and 0 are different).
func TestCurveTablesMatchTheirCurve(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 12))
	bases := []time.Duration{0, time.Millisecond, 50 * time.Millisecond, time.Second, 3 * time.Second}
	caps := []time.Duration{0, time.Second, time.Minute, 5 * time.Minute}
	mults := []float64{1, 1.5, 2, 3, 0, math.Copysign(0, -1), 0.5}
	for range 3000 {
		p := Policy{Base: bases[r.IntN(len(bases))], Cap: caps[r.IntN(len(caps))], Multiplier: mults[r.IntN(len(mults))]}
		c := newCurve(p)
		if c.tab == nil {
			t.Fatalf("%+v: no table", p)
		}
		for n := range int32(curveTab) {
			if got, want := c.at(n), c.calc(n); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%+v: at(%d) = %v, want %v", p, n, got, want)
			}
		}
	}
}
