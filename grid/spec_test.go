package grid

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdsweep/herdsweep/sim"
)

// A policy spec names exactly what ran: two cells have the same spec
// exactly when their policy parameters (but the mix) are the same, a
// preset is its name, and a family never reads as a preset of the same
// name.
func TestPolicySpecNamesExactlyWhatRan(t *testing.T) {
	t.Parallel()
	cells := CandidateSpace(sim.Article())
	for _, k := range sim.Kinds() {
		cells = append(cells, Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(k).Normalize()})
	}
	for _, p := range sim.Presets() {
		cells = append(cells, Cell{Scenario: sim.Article(), Policy: p.Policy.Normalize()})
	}
	bucket := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated).Normalize()}
	bucket.Policy.BucketTokens, bucket.Policy.BucketCost = 10, 5
	cells = append(cells, bucket)
	policyOf := func(c Cell) string { // the policy parameters, as the keys hash them
		s := ""
		for i := range Params {
			if p := &Params[i]; p.Policy && p.Key != "mix" {
				s += p.Key + "=" + formatValue(p.Get(c)) + " "
			}
		}
		return s
	}
	bySpec := map[string]string{}
	for _, c := range cells {
		spec, params := c.PolicySpec(), policyOf(c)
		if prev, ok := bySpec[spec]; ok && prev != params {
			t.Errorf("spec %q names two policies:\n%s\n%s", spec, prev, params)
		}
		bySpec[spec] = params
	}
	specs := map[string]string{}
	for s, p := range bySpec {
		if prev, ok := specs[p]; ok {
			t.Errorf("one policy, two specs %q and %q", prev, s)
		}
		specs[p] = s
	}
	grpc, _ := sim.PresetByName("grpc")
	cenkalti, _ := sim.PresetByName("cenkalti-backoff")
	for _, tt := range []struct {
		cell Cell
		want string
	}{
		{Cell{Policy: grpc.Policy.Normalize()}, "grpc"},
		{Cell{Policy: cenkalti.Policy.Normalize()}, "cenkalti-backoff"},
		{Cell{Policy: sim.Policy{Kind: sim.GRPC, Base: 1e9, Cap: 30e9, Multiplier: 2, Width: 0.2}.Normalize()}, "grpc base_s=1 cap_s=30 multiplier=2 width=0.2"},
		{bucket, "decorrelated base_s=1 cap_s=60 bucket_tokens=10 bucket_cost=5"},
	} {
		if got := tt.cell.PolicySpec(); got != tt.want {
			t.Errorf("%v: spec %q, want %q", tt.cell.Policy, got, tt.want)
		}
	}
}

// randomPolicy draws a policy of a random family or preset: every
// parameter the family reads at zero or a random value (zero is where a
// spec's reading differs from the family's defaults: no cap, no jitter,
// unlimited attempts), the limits and client components each on or off.
// It may be invalid (the caller validates).
func randomPolicy(rng *rand.Rand) sim.Policy {
	if rng.IntN(5) == 0 {
		prs := sim.Presets()
		return prs[rng.IntN(len(prs))].Policy
	}
	kinds := sim.Kinds()
	k := kinds[rng.IntN(len(kinds))]
	ms := func(max int) time.Duration { return time.Duration(1+rng.IntN(max)) * time.Millisecond }
	maybe := func() bool { return rng.IntN(2) == 0 }
	p := sim.Policy{Kind: k}
	if maybe() {
		p = sim.DefaultPolicy(k)
	}
	if k.Reads(sim.FieldBase) && maybe() {
		p.Base = ms(5000)
	}
	if k.Reads(sim.FieldCap) {
		p.Cap = [...]time.Duration{0, p.Base, p.Base + ms(100000)}[rng.IntN(3)]
	}
	if k.Reads(sim.FieldMultiplier) && maybe() {
		p.Multiplier = [...]float64{1, 1.5, 1.6, 2, 1 + 3*rng.Float64()}[rng.IntN(5)]
	}
	if k.Reads(sim.FieldWidth) {
		p.Width = [...]float64{0, 0.2, rng.Float64()}[rng.IntN(3)]
	}
	if k.Reads(sim.FieldHonorRetryAfter) {
		p.HonorRetryAfter = maybe()
	}
	p.MaxAttempts = [...]int{0, 0, 1, 3, 1 + rng.IntN(20)}[rng.IntN(5)]
	ros := sim.RetryOnValues()
	p.RetryOn = ros[rng.IntN(len(ros))].Value
	if maybe() {
		p.MaxElapsed = ms(600000) * time.Duration(rng.IntN(2))
	}
	if rng.IntN(4) == 0 {
		p.BucketTokens, p.BucketCost = 1+rng.IntN(1000), rng.IntN(20)
	}
	if rng.IntN(4) == 0 {
		p.RetryBudget, p.BudgetMinRPS = 0.05+rng.Float64(), float64(rng.IntN(3))*rng.Float64()*10
	}
	randomComponents(rng, &p)
	return p
}

// randomComponents switches each client component on or off, with random
// parameters.
func randomComponents(rng *rand.Rand, p *sim.Policy) {
	on := func() bool { return rng.IntN(4) == 0 }
	if on() {
		p.ClientsPerProcess = 1 + rng.IntN(500)
	}
	if on() {
		p.ThrottleK, p.ThrottleWindow = 1+rng.Float64()*3, time.Duration(rng.IntN(300))*time.Second
	}
	p.AWSAdaptive = on()
	if on() {
		p.RetryTokens, p.RetryTokenRatio = 1+float64(rng.IntN(999)), 0.01+0.99*rng.Float64()
	}
	p.Pushback = on()
	if on() {
		p.RetryCap = 1 + rng.IntN(10)
	}
	if on() {
		p.BreakerRatio, p.BreakerMinThroughput = 0.01+0.99*rng.Float64(), rng.IntN(200)
		p.BreakerWindow, p.BreakerBreak = time.Duration(rng.IntN(60))*time.Second, time.Duration(rng.IntN(10))*time.Second
	}
}

// draws is how many random policies or specs a test draws: n, or short
// under -short (.ci/run's race and GOAMD64=v3 steps; the full counts run
// in its plain go test step). The short draws are the first of the full
// run's, from the same seed, and the test's floors on what they cover
// scale with the count.
func draws(n, short int) int {
	if testing.Short() {
		return short
	}
	return n
}

// What the dataset writes reads back as what ran: for random valid
// policies of every family and preset, client components included,
// ParsePolicy(spec(p)) is p, and the spec of what it reads is the spec it
// read (the written form is canonical). Zero is drawn often for every
// parameter a family defaults to something else (a cap, a jitter, a limit
// on attempts), where a reading from the family's defaults would differ.
func TestPolicySpecRoundTrips(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 1))
	valid, zeroCaps, components := 0, 0, 0
	families := map[sim.Kind]bool{}
	presets := map[string]bool{}
	n := draws(20000, 5000)
	for range n {
		p := randomPolicy(rng).Normalize()
		if p.Validate() != nil {
			continue
		}
		valid++
		spec := Cell{Policy: p}.PolicySpec()
		got, err := ParsePolicy(spec)
		if err != nil {
			t.Fatalf("ParsePolicy(%q): %v", spec, err)
		}
		if diff := cmp.Diff(p, got); diff != "" {
			t.Fatalf("ParsePolicy(%q) (-wrote +read):\n%s", spec, diff)
		}
		if again := (Cell{Policy: got}).PolicySpec(); again != spec {
			t.Fatalf("spec %q read and written again: %q", spec, again)
		}
		families[p.Kind] = true
		presets[p.Preset] = true
		if p.Kind.Reads(sim.FieldCap) && p.Cap == 0 && sim.DefaultPolicy(p.Kind).Cap != 0 {
			zeroCaps++
		}
		if p.ComponentsShort() != "" {
			components++
		}
	}
	if valid < n/4 || len(families) != len(sim.Kinds()) || len(presets) < len(sim.Presets())/2 || zeroCaps < n/200 || components < n/40 {
		t.Errorf("%d valid policies of %d families and %d presets, %d without the cap their family's defaults set, %d with client components: too few to test the language",
			valid, len(families), len(presets)-1, zeroCaps, components)
	}
}

// randomSpec writes a spec as a person might: a family (in any case, or
// family:NAME) or a preset, then random keys in random order and spelling
// (the short keys with units, the dataset's with seconds), some of them
// out of range or unread by the family.
func randomSpec(rng *rand.Rand) string {
	var name string
	switch kinds, prs := sim.Kinds(), sim.Presets(); rng.IntN(4) {
	case 0:
		name = prs[rng.IntN(len(prs))].Name
	case 1:
		name = "family:" + string(kinds[rng.IntN(len(kinds))])
	case 2:
		name = strings.ToUpper(string(kinds[rng.IntN(len(kinds))]))
	default:
		name = string(kinds[rng.IntN(len(kinds))])
	}
	secs := func() string { return strconv.FormatFloat(float64(rng.IntN(120000))/1000, 'g', -1, 64) }
	dur := func() string { return (time.Duration(rng.IntN(120000)) * time.Millisecond).String() }
	settings := []func() string{
		func() string { return "base=" + dur() },
		func() string { return "base_s=" + secs() },
		func() string { return "cap=" + dur() },
		func() string { return "cap_s=" + secs() },
		func() string { return "multiplier=" + strconv.FormatFloat(1+3*rng.Float64(), 'g', 4, 64) },
		func() string { return "mult=2" },
		func() string { return "width=" + strconv.FormatFloat(rng.Float64(), 'g', 3, 64) },
		func() string {
			return "jitter=" + [...]string{"full", "equal", "decorrelated", "none", "±25%", "0.1", "10%"}[rng.IntN(7)]
		},
		func() string { return "attempts=" + strconv.Itoa(rng.IntN(8)) },
		func() string { return "max_attempts=" + strconv.Itoa(rng.IntN(8)) },
		func() string { return "honor_retry_after=" + strconv.FormatBool(rng.IntN(2) == 0) },
		func() string { return "max_elapsed=" + dur() },
		func() string {
			return "retry_on=" + string(sim.RetryOnValues()[rng.IntN(len(sim.RetryOnValues()))].Value)
		},
		func() string { return "bucket_tokens=" + strconv.Itoa(rng.IntN(600)) },
		func() string { return "retry_budget=0.2" },
		func() string { return "clients_per_process=" + strconv.Itoa(1+rng.IntN(100)) },
		func() string { return "throttle_k=2" },
		func() string { return "retry_tokens=10 retry_token_ratio=0.1" },
		func() string { return "breaker_ratio=" + strconv.FormatFloat(rng.Float64(), 'g', 2, 64) },
		func() string { return "pushback=true" },
		func() string { return "aws_adaptive=true" },
	}
	words := []string{name}
	for _, i := range rng.Perm(len(settings))[:rng.IntN(5)] {
		words = append(words, settings[i]())
	}
	return strings.Join(words, " ")
}

// Whatever a person writes, what ParsePolicy accepts is a normalized,
// valid policy whose spec reads back as the same policy and writes the
// same spec: the written form is canonical.
func TestParsedSpecsAreCanonical(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 2))
	read, refused := 0, 0
	n := draws(20000, 5000)
	for range n {
		s := randomSpec(rng)
		p, err := ParsePolicy(s)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("ParsePolicy(%q): an empty error", s)
			}
			refused++
			continue
		}
		read++
		if p != p.Normalize() || p.Validate() != nil {
			t.Fatalf("ParsePolicy(%q) = %+v: not normalized and valid (%v)", s, p, p.Validate())
		}
		spec := Cell{Policy: p}.PolicySpec()
		q, err := ParsePolicy(spec)
		if err != nil {
			t.Fatalf("ParsePolicy(%q) wrote %q, which does not read: %v", s, spec, err)
		}
		if diff := cmp.Diff(p, q); diff != "" {
			t.Fatalf("%q reads as\n%+v\nits spec %q as (-first +second):\n%s", s, p, spec, diff)
		}
		if again := (Cell{Policy: q}).PolicySpec(); again != spec {
			t.Fatalf("%q: spec %q, then %q", s, spec, again)
		}
	}
	if read < n/5 || refused < n/20 {
		t.Errorf("%d specs read, %d refused: the random specs do not test both", read, refused)
	}
}

// What a spec means, by example: a name alone, a family with exactly its
// parameters, a preset changed, and the keys people write.
func TestParsePolicyExamples(t *testing.T) {
	t.Parallel()
	preset := func(name string) sim.Policy { pr, _ := sim.PresetByName(name); return pr.Policy }
	changed := func(p sim.Policy, f func(*sim.Policy)) sim.Policy { f(&p); p.Preset = ""; return p.Normalize() }
	for _, tt := range []struct {
		spec string
		want sim.Policy
	}{
		{"decorrelated", sim.DefaultPolicy(sim.Decorrelated)},
		{"Exponential", sim.DefaultPolicy(sim.Exponential)},
		{"decorrelated base_s=1 cap_s=30", sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}},
		// a stored row's spec leaves out the zero cap: no cap, not the family's 60 s
		{"exponential base_s=1 multiplier=2", sim.Policy{Kind: sim.Exponential, Base: time.Second, Multiplier: 2}},
		{"exponential base=1s", sim.Policy{Kind: sim.Exponential, Base: time.Second, Multiplier: 2}},
		{"grpc", preset("grpc")},
		{"family:grpc", sim.DefaultPolicy(sim.GRPC)},
		{"grpc base=2s", sim.Policy{Kind: sim.GRPC, Base: 2 * time.Second, Multiplier: 1.6}},
		{"cenkalti-backoff cap=30s", changed(preset("cenkalti-backoff"), func(p *sim.Policy) { p.Cap = 30 * time.Second })},
		{"full-jitter base=1s cap=30s attempts=5", sim.Policy{Kind: sim.FullJitter, Base: time.Second, Cap: 30 * time.Second, Multiplier: 2, MaxAttempts: 5}},
		{"exponential jitter=±25%", sim.Policy{Kind: sim.WidthJitter, Base: time.Second, Multiplier: 2, Width: 0.25}},
		{"grpc jitter=full", sim.Policy{Kind: sim.APICore, Base: time.Second, Multiplier: 2}},
		{"watchdog jitter=10%", sim.Policy{Kind: sim.WatchDog, Base: time.Second, Multiplier: 2, Width: 0.2}}, // its width is the band's full width
		{"decorrelated base_s=1.5 max_elapsed=2m", sim.Policy{Kind: sim.Decorrelated, Base: 1500 * time.Millisecond, MaxElapsed: 2 * time.Minute}},
		{"decorrelated base_s=1 cap_s=60 breaker_ratio=0.1 clients_per_process=100", sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: time.Minute,
			BreakerRatio: 0.1, ClientsPerProcess: 100}.Normalize()},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParsePolicy(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A spec ParsePolicy refuses says what is wrong and what would be
// accepted.
func TestParsePolicyErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ spec, want string }{
		{" ", "empty: want a family or preset name"},
		{"fixd base=5s", `"fixd" (did you mean "fixed"?): want a family (fixed, exponential`},
		{"decor", `"decor": want a family (fixed, exponential, full-jitter`},
		{"urllib3", `"urllib3": a retired preset:`},
		{"family:nope", `"family:nope": want family:NAME with NAME a family (fixed,`},
		{"decorrelated breaker_raito=0.1", `unknown key "breaker_raito" (did you mean "breaker_ratio"?): want base, cap`},
		{"decorrelated mix=grpc:1", `unknown key "mix": want base, cap`},
		{"decorrelated concurrency=3", "concurrency=3: a parameter of the scenario, not of the policy"},
		{"decorrelated retry_on=foo", "retry_on=foo: want one of"},
		{"decorrelated breaker_ratio=2", "breaker_ratio=2: want 0 (no circuit breaker) or a failure ratio"},
		{"decorrelated retry_tokens=x", "retry_tokens=x: want a number"},
		{"decorrelated multiplier=2", "multiplier=2: the decorrelated family does not read multiplier"},
		{"decorrelated base=1", "base=1: want a duration with its unit"},
		{"decorrelated base=0s", "base=0s: want a positive duration"},
		{"decorrelated base_s=1 base=2s", "base_s given twice"},
		{"decorrelated base_s=0.0015", "base_s=0.0015: want a number of seconds in whole milliseconds"},
		{"decorrelated cap=500ms", "cap_s=0.5: want 0 (no cap) or at least base_s (1s)"},
		{"full-jitter jitter=wide", "jitter=wide: want full, equal, decorrelated, none, ±25% or a fraction"},
		{"full-jitter jitter=none", "jitter=none: the full-jitter family always jitters"},
		{"decorrelated base", `"base": want key=value`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			if _, err := ParsePolicy(tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %s", err, tt.want)
			}
		})
	}
}
