package grid

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// sim.PolicyVersion moves the keys of the cells whose policies it revised
// (sim.Policy.Revised, in any group of a mixed fleet) and no other: every
// other cell, counting or queueing, keeps the key it had under sim.Version
// (+ sim.QueueVersion). Cells here: every family, every preset, with
// honor_retry_after both ways, widths, budgets and mixes, on both servers.
func TestPolicyVersionMovesRevisedKeysOnly(t *testing.T) {
	t.Parallel()
	var ps []sim.Policy
	for _, k := range sim.Kinds() {
		p := sim.DefaultPolicy(k)
		ps = append(ps, p)
		if k.Reads(sim.FieldHonorRetryAfter) {
			p.HonorRetryAfter = !p.HonorRetryAfter
			ps = append(ps, p)
		}
		if k.Reads(sim.FieldWidth) {
			p.Width = 0
			ps = append(ps, p)
		}
	}
	for _, pr := range sim.Presets() {
		ps = append(ps, pr.Policy)
	}
	ps = append(ps, sim.Policy{Kind: sim.Fixed, Base: time.Second, RetryBudget: 0.2, BudgetMinRPS: 10},
		sim.Policy{Kind: sim.Decorrelated, Base: time.Second, Cap: time.Minute, RetryBudget: 0.2, ClientsPerProcess: 10},
		sim.Policy{Kind: sim.FullJitter, Base: time.Second, Multiplier: 2, BreakerRatio: 0.1, ClientsPerProcess: 5})
	counting := sim.Article()
	queueing := counting
	queueing.Concurrency, queueing.Service, queueing.ServiceTime = 4, "exponential", 20*time.Millisecond
	var cells []Cell
	for _, sc := range []sim.Scenario{counting, queueing} {
		for _, p := range ps {
			cells = append(cells, Cell{Scenario: sc, Policy: p.Normalize()})
		}
		// A mixed fleet is revised when any group is.
		for _, other := range []sim.Policy{sim.DefaultPolicy(sim.Fixed), {Kind: sim.PollyV2, Base: time.Second, HonorRetryAfter: true}} {
			c := Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
			c.Mix[0] = sim.Group{Share: 0.3, Policy: other.Normalize()}
			cells = append(cells, c)
		}
	}
	revised, kept := 0, 0
	for _, c := range cells {
		rev := false
		for _, g := range c.Groups() {
			rev = rev || g.Policy.Revised()
		}
		old := sim.Version
		if c.Scenario.Concurrency > 0 {
			old += "+" + sim.QueueVersion
		}
		want := old
		if rev {
			want += "+" + sim.PolicyVersion
			revised++
		} else {
			kept++
		}
		can := c.Canonical()
		h := sha256.Sum256([]byte(want + "\x00" + can))
		if got := c.Key(); got != hex.EncodeToString(h[:8]) {
			t.Errorf("%s: key %s, want the hash under %s", can, got, want)
		}
		if r := (Run{Cell: c, Seed: 7}); r.Key() != RunKey(can, 7) {
			t.Errorf("%s: run key %s, RunKey %s", can, r.Key(), RunKey(can, 7))
		}
	}
	if revised < 8 || kept < 50 {
		t.Errorf("%d cells revised, %d kept: the test does not separate them", revised, kept)
	}
	// The revised ones are the policies issue 22 named.
	for _, name := range []string{"ms-resilience-standard", "resilience4j-exponential-random", "client-go-rest"} {
		pr, _ := sim.PresetByName(name)
		if !pr.Policy.Normalize().Revised() {
			t.Errorf("%s: not revised", name)
		}
	}
	for _, name := range []string{"polly-v2", "polly-v8", "resilience4j", "grpc", "aws-sdk-go-v2", "urllib3-backoff"} {
		pr, _ := sim.PresetByName(name)
		if pr.Policy.Normalize().Revised() {
			t.Errorf("%s: revised, though nothing it does changed", name)
		}
	}
}

// Each bound lives in sim's Validate and reaches the user at its key: every
// parameter's field, set out of range, comes back as that parameter's key.
func TestEveryFieldErrorMapsToItsKey(t *testing.T) {
	t.Parallel()
	fields := map[sim.Field]string{}
	for _, p := range Params {
		if other, ok := fields[p.Field]; ok {
			t.Errorf("field %s is set by both %s and %s: sim's errors could not name the key", p.Field, other, p.Key)
		}
		fields[p.Field] = p.Key
	}
	bad := map[Type]any{Int: int64(-1), Float: -1.0}
	for i := range Params {
		p := &Params[i]
		v, ok := bad[p.Type]
		if !ok {
			continue
		}
		c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.WidthJitter)}
		if p.Key == "budget_min_rps" {
			c.Policy.RetryBudget = 0.1
		}
		p.Set(&c, v)
		fes := sim.FieldErrors(c.Validate())
		if len(fes) == 0 {
			t.Errorf("%s = %v: no sim.FieldError", p.Key, v)
			continue
		}
		if key, msg := KeyWords(fes[0]); key != p.Key || fieldNames.MatchString(msg) {
			t.Errorf("%s = %v: reported as %s: %s; want the key, and keys in the message", p.Key, v, key, msg)
		}
	}
}

func TestKeysAreStable(t *testing.T) {
	t.Parallel()
	c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	// A key is the identity of stored runs: a change here makes every
	// dataset run again. Change the want only with sim.Version.
	if got, want := c.Canonical(), `policy="decorrelated" preset="" base_s=1 cap_s=60 multiplier=0 width=0 max_attempts=0 honor_retry_after=false max_elapsed_s=0 bucket_tokens=0 bucket_cost=0 retry_budget=0 budget_min_rps=0 mix="" clients=2000 tick_ms=100 recover_s=30 capacity_rps=120 spread_s=2 window_s=1170 retry_after_s=0 retry_after_max_s=0 retry_after_backlog=false ramp_s=0 ramp_from=0 reject_cost=0`; got != want {
		t.Errorf("Canonical() =\n%s\nwant\n%s", got, want)
	}
	r1, r2 := Run{Cell: c, Seed: 1}, Run{Cell: c, Seed: 2}
	if r1.Key() == r2.Key() || r1.Key() == c.Key() || len(r1.Key()) != 16 {
		t.Errorf("keys %s %s %s: want distinct 16-hex keys", r1.Key(), r2.Key(), c.Key())
	}
	d := c
	d.Policy.Width = 0.5 // unread by decorrelated, but a different value: Normalize is the caller's
	if d.Normalize().Key() != c.Key() {
		t.Errorf("normalized cells differ in key")
	}
}

// Parameters added later (OmitZero) leave the keys of the runs stored
// before them as they were: the article's decorrelated cell and its run
// of seed 206 keep the keys they had before the queueing server existed
// (computed with sim herd-4 on the commit before the queueing server was
// merged), and a queueing cell names its parameters in its key.
func TestKeysOfCountingCellsAreStable(t *testing.T) {
	t.Parallel()
	c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	if got, run := c.Key(), (Run{Cell: c, Seed: 206}).Key(); got != "cc0f771059aff697" || run != "a7396b70daf6ee1b" {
		t.Errorf("keys %s, %s: want cc0f771059aff697, a7396b70daf6ee1b", got, run)
	}
	q := c
	q.Scenario.Concurrency, q.Scenario.Service, q.Scenario.ServiceTime = 4, "exponential", 20*time.Millisecond
	if can := q.Canonical(); !strings.Contains(can, "concurrency=4 service=\"exponential\" service_s=0.02") || q.Key() == c.Key() {
		t.Errorf("queueing cell: canonical %s, key %s", can, q.Key())
	}
	// A queueing cell's keys also hash sim.QueueVersion: a change to the
	// queueing server reruns its runs and leaves the counting server's.
	without := sha256.Sum256([]byte(sim.Version + "\x00" + q.Canonical()))
	h := sha256.Sum256([]byte(sim.Version + "+" + sim.QueueVersion + "\x00" + q.Canonical()))
	if q.Key() == hex.EncodeToString(without[:8]) || q.Key() != hex.EncodeToString(h[:8]) {
		t.Errorf("queueing cell key %s: want the hash with %s+%s", q.Key(), sim.Version, sim.QueueVersion)
	}
	if r := (Run{Cell: q, Seed: 206}); r.Key() != RunKey(q.Canonical(), 206) || r.Key() == (Run{Cell: c, Seed: 206}).Key() {
		t.Errorf("queueing run key %s", r.Key())
	}
}

// Every family's defaults and every preset, written as the dataset's
// columns and read back, is the same cell under the same key: the
// "policy" column is the family, even where a preset has the same name
// (the grpc preset is the grpc-go family; the cenkalti-backoff preset is
// the grpc family).
func TestCellsRoundTripThroughTheirColumns(t *testing.T) {
	t.Parallel()
	var ps []sim.Policy
	for _, k := range sim.Kinds() {
		ps = append(ps, sim.DefaultPolicy(k))
	}
	for _, pr := range sim.Presets() {
		ps = append(ps, pr.Policy)
	}
	for _, p := range ps {
		c := Cell{Scenario: sim.Article(), Policy: p.Normalize()}
		var back Cell
		for i := range Params {
			Params[i].Set(&back, Params[i].Get(c))
		}
		if back.Canonical() != c.Canonical() || back.Key() != c.Key() {
			t.Errorf("%s: read back as\n%s\nwant\n%s", p, back.Canonical(), c.Canonical())
		}
	}
	mixed := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	cb, _ := sim.PresetByName("cenkalti-backoff")
	mixed.Mix[0] = sim.Group{Share: 0.3, Policy: cb.Policy.Normalize()}
	var back Cell
	for i := range Params {
		Params[i].Set(&back, Params[i].Get(mixed))
	}
	if back.Key() != mixed.Key() {
		t.Errorf("a mix with the cenkalti-backoff preset read back as\n%s\nwant\n%s", back.Canonical(), mixed.Canonical())
	}
}

// Every parameter sets one of sim's fields, and every field a user sets
// has its parameter (all but the horizon, which window_s sets as the time
// after recovery, and a fleet's share and groups, which mix sets).
func TestParamsCoverSimFields(t *testing.T) {
	t.Parallel()
	for _, p := range Params {
		if !slices.Contains(sim.Fields(), p.Field) {
			t.Errorf("%s sets %s, not one of sim.Fields", p.Key, p.Field)
		}
	}
	for _, f := range sim.Fields() {
		if f == sim.FieldHorizon || f == sim.FieldShare || f == sim.FieldGroups {
			continue
		}
		if paramByField(f) == nil {
			t.Errorf("sim's %s has no parameter", f)
		}
	}
}

// A Keyer keys every seed as RunKey does, whatever the length of the
// canonical form (the shared prefix ends anywhere in a hash block).
func TestKeyerKeysAsRunKey(t *testing.T) {
	c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	base := c.Canonical()
	for n := range 130 {
		can := base + strings.Repeat("x", n) // not a cell's: keyed all the same
		if n == 0 {
			can = base
		}
		k := NewKeyer(can)
		for _, seed := range []uint32{0, 1, 2, 255, 256, 65537, 1<<32 - 1} {
			if got, want := k.Key(seed), RunKey(can, seed); got != want {
				t.Fatalf("canonical of %d bytes, seed %d: %s, RunKey %s", len(can), seed, got, want)
			}
		}
	}
}

// Key asks the cell itself which versions key it (versionOf), where
// RunKey reads them back from the canonical form (keyVersion): for random
// cells (every family and preset, client components, queueing servers,
// mixed fleets) the two agree, so that a cell and its runs are keyed by
// the same versions.
func TestVersionOfIsOfTheCanonicalForm(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(24, 9))
	versions := map[string]int{}
	for range draws(4000, 500) {
		c := Cell{Scenario: sim.Article(), Policy: randomPolicy(rng).Normalize()}
		if c.Policy.Validate() != nil {
			continue
		}
		if rng.IntN(3) == 0 {
			c.Scenario.Concurrency, c.Scenario.Service, c.Scenario.ServiceTime = 1+rng.IntN(8), "fixed", 50*time.Millisecond
		}
		if p := randomPolicy(rng).Normalize(); rng.IntN(3) == 0 && p.Validate() == nil && p.ComponentsShort() == "" {
			c.Mix[0] = sim.Group{Share: 0.3, Policy: p}
		}
		got, want := versionOf(c), keyVersion(c.Canonical())
		if got != want {
			t.Fatalf("cell %s: versionOf %q, keyVersion of its canonical form %q", c.Canonical(), got, want)
		}
		versions[want]++
	}
	if len(versions) != 4 {
		t.Errorf("versions drawn %v: want the four (queueing or not, revised or not)", versions)
	}
}
