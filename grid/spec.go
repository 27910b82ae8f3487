package grid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/internal/suggest"
	"github.com/herdsweep/herdsweep/sim"
)

// The policy-spec language names a policy in one line of text. The dataset
// writes it in its policy_spec column (Cell.PolicySpec); a user writes it
// wherever a policy is asked for (a string in sweeps.toml's policy, `sweep
// recommend --mine`, `sweep live --policy`), and ParsePolicy reads both:
//
//	NAME                 a preset ("grpc", "go-retryablehttp"), else a
//	                     family's defaults ("decorrelated"); family:NAME is
//	                     the family's defaults where a preset has the name
//	FAMILY key=value …   the family with exactly these parameters, as
//	                     policy_spec writes it: one left out is zero (no
//	                     cap, no jitter, no limit on attempts, Retry-After
//	                     not honoured), but base and multiplier, which are
//	                     never zero, take the family's defaults
//	PRESET key=value …   the preset with these parameters changed: no
//	                     longer the library's defaults
//
// A name that is both a preset and a family (grpc) is the preset alone and
// the family with parameters, as a sweeps.toml policy table is. The keys
// are the policy parameters of sweeps.toml, with the dataset's units (a
// number of seconds for a _s key, or a duration such as 500ms), and the
// shorter names people write: base, cap and max_elapsed (a duration with
// its unit), mult, attempts, and jitter (full, equal, decorrelated, none,
// ±25% or a fraction such as 0.25: it may change the family). The
// family's name is read in any case.
//
// Written by Cell.PolicySpec and read by ParsePolicy, a policy comes back
// as it was: ParsePolicy(c.PolicySpec()) is c.Policy for every normalized
// valid policy of a cell's first group (TestPolicySpecRoundTrips).

// PolicySpec names exactly the policy of the cell's first group (a mixed
// fleet's others are its "mix"), for filtering a dataset without traps and
// for writing wherever a policy is asked for (ParsePolicy reads it back): a
// preset's name ("grpc", "cenkalti-backoff"), else the family followed by
// each policy parameter that is not zero, as key=value with the dataset's
// column names ("grpc base_s=1 cap_s=30 multiplier=2 width=0.2"). Two
// cells have the same spec exactly when their first groups' policy
// parameters are the same, so a family never matches a preset of the same
// name, nor a preset its family.
func (c Cell) PolicySpec() string {
	if c.Policy.Preset != "" {
		return c.Policy.Preset
	}
	b := []byte(c.Policy.Kind)
	for i := range Params {
		p := &Params[i]
		if !p.InPolicyTable() {
			continue
		}
		v := p.get(&c)
		if isZero(v) {
			continue
		}
		b = append(b, ' ')
		b = append(b, p.Key...)
		b = append(b, '=')
		if s, ok := v.(string); ok {
			b = append(b, s...)
		} else {
			b = append(b, formatValue(v)...)
		}
	}
	return string(b)
}

// ErrScenarioParam is the error (wrapped) of a spec that sets a parameter
// of the scenario (concurrency=4): a command may say where its scenario is
// set instead.
var ErrScenarioParam = errors.New("a parameter of the scenario, not of the policy")

// ParsePolicy reads a policy spec (the language above) and returns the
// policy, normalized (sim.Policy.Normalize) and valid. Its errors say what
// is wrong and what would be accepted, in the spec's keys.
func ParsePolicy(spec string) (sim.Policy, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return sim.Policy{}, errors.New("empty: want a family or preset name, then key=value pairs")
	}
	p, err := specStart(words[0], len(words) > 1)
	if err != nil {
		return sim.Policy{}, err
	}
	seen := map[string]bool{}
	for _, kv := range words[1:] {
		if err := specSetting(&p, kv, seen); err != nil {
			return sim.Policy{}, err
		}
	}
	if len(words) > 1 {
		p.Preset = "" // a preset with a parameter changed is no longer the library's defaults
	}
	p = p.Normalize()
	if err := p.Validate(); err != nil {
		return sim.Policy{}, specWords(err)
	}
	return p, nil
}

// specStart is the policy a spec's first word names, before its
// parameters (withParams: it has some).
func specStart(word string, withParams bool) (sim.Policy, error) {
	name := strings.ToLower(word)
	if fam, ok := strings.CutPrefix(name, "family:"); ok {
		if !sim.KnownKind(sim.Kind(fam)) {
			return sim.Policy{}, fmt.Errorf("%q%s: want family:NAME with NAME a family (%s)", word, suggest.DidYouMean(fam, kindNames()), strings.Join(kindNames(), ", "))
		}
		return familyStart(sim.Kind(fam), withParams), nil
	}
	pr, isPreset := sim.PresetByName(name)
	isFamily := sim.KnownKind(sim.Kind(name))
	switch {
	case isPreset && !(withParams && isFamily):
		return pr.Policy, nil
	case isFamily:
		return familyStart(sim.Kind(name), withParams), nil
	}
	if why, ok := sim.RetiredPreset(name); ok {
		return sim.Policy{}, fmt.Errorf("%q: a retired preset: %s", word, why)
	}
	return sim.Policy{}, fmt.Errorf("%q%s: want a family (%s) or a preset (%s)", word, suggest.DidYouMean(name, append(kindNames(), presetNames()...)),
		strings.Join(kindNames(), ", "), strings.Join(presetNames(), ", "))
}

// familyStart: a family's name alone is its defaults; with parameters, the
// spec names every one that is not zero (as policy_spec writes it), so the
// family starts from none, and Normalize gives base and multiplier, which
// are never zero, the family's defaults.
func familyStart(k sim.Kind, withParams bool) sim.Policy {
	if withParams {
		return sim.Policy{Kind: k}
	}
	return sim.DefaultPolicy(k)
}

// PolicyNamed returns the policy a name alone gives (as a spec, or a
// config's policy = "NAME"): a library preset, else the family's defaults
// (an unknown name gives a policy of that kind, which does not validate).
func PolicyNamed(name string) sim.Policy {
	if p, err := specStart(name, false); err == nil {
		return p
	}
	return sim.DefaultPolicy(sim.Kind(name))
}

// TableBase is the policy a table {kind = NAME, …} starts from: the family
// NAME when there is one, even where a preset has the same name (grpc): a
// table sets parameters, and the preset would then claim to be the
// library's defaults. A preset with parameters of its own is no longer
// that preset. Unlike a spec's, a table's parameters change the
// family's defaults: what it leaves out keeps its default.
func TableBase(name string, params int) sim.Policy {
	if k := sim.Kind(strings.ToLower(name)); sim.KnownKind(k) {
		return sim.DefaultPolicy(k)
	}
	p := PolicyNamed(name)
	if params > 0 {
		p.Preset = ""
	}
	return p
}

// specAliases are the shorter keys people write, each for a parameter of
// sweeps.toml. base, cap and max_elapsed take a duration with its unit.
var specAliases = map[string]string{"base": "base_s", "cap": "cap_s", "max_elapsed": "max_elapsed_s", "mult": "multiplier", "attempts": "max_attempts"}

// specKeys lists the keys a spec takes, for messages and suggestions.
func specKeys() []string {
	return append([]string{"base", "cap", "multiplier", "jitter", "width", "attempts", "max_elapsed", "honor_retry_after"}, PolicyTableKeys()...)
}

// specSetting applies one key=value of a spec to p; seen holds the
// parameters set so far.
func specSetting(p *sim.Policy, kv string, seen map[string]bool) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("%q: want key=value", kv)
	}
	key := k
	if a, ok := specAliases[k]; ok {
		key = a
	}
	if seen[key] {
		return fmt.Errorf("%s given twice", key)
	}
	seen[key] = true
	if key == "jitter" {
		return setJitter(p, v)
	}
	pa := ParamByKey(key)
	if pa == nil || !pa.InPolicyTable() {
		return unknownSpecKey(k, v, pa)
	}
	if !p.Kind.Reads(pa.Field) {
		return fmt.Errorf("%s=%s: the %s family does not read %s (see 'sweep policies')", k, v, p.Kind, key)
	}
	text, err := specValue(k, key, v)
	if err != nil {
		return err
	}
	return SetPolicyParam(p, key, text)
}

// unknownSpecKey says why k (of parameter pa, nil when none) is no key of
// a spec.
func unknownSpecKey(k, v string, pa *Param) error {
	if pa != nil && !pa.Policy {
		return fmt.Errorf("%s=%s: %w", k, v, ErrScenarioParam)
	}
	return fmt.Errorf("unknown key %q%s: want %s (`sweep schema`: retry_on, breaker_ratio …)", k, SuggestKey(k, specKeys()), strings.Join(specKeys()[:8], ", ")+" or a policy parameter of sweeps.toml")
}

// specValue is v as SetPolicyParam reads key's values: a duration (500ms)
// as seconds. A short key (base, cap, max_elapsed) wants the unit; base
// must be positive (zero would read as the family's default).
func specValue(k, key, v string) (string, error) {
	if !strings.HasSuffix(key, "_s") {
		return v, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	asWritten := err == nil && k == key // seconds, as policy_spec writes them
	if !asWritten {
		d, derr := time.ParseDuration(v)
		if derr != nil && k != key {
			return "", fmt.Errorf("%s=%s: want a duration with its unit, such as 1s or 500ms", k, v)
		}
		if derr != nil {
			return "", fmt.Errorf("%s=%s: want a number of seconds, or a duration such as 500ms", k, v)
		}
		secs = d.Seconds()
	}
	if key == "base_s" && !(secs > 0) {
		return "", fmt.Errorf("%s=%s: want a positive duration", k, v)
	}
	if asWritten {
		return v, nil // SetPolicyParam checks them
	}
	return strconv.FormatFloat(secs, 'g', -1, 64), nil
}

// setJitter reads jitter=…: full, equal or decorrelated name a family;
// none, ±25% or a fraction set the family's jitter width
// (sim.Kind.WidthOf), changing exponential to its jittered form.
func setJitter(p *sim.Policy, v string) error {
	switch strings.ToLower(v) {
	case "full":
		p.Kind = fullJitter(p.Kind)
		return nil
	case "equal":
		p.Kind = sim.EqualJitter
		return nil
	case "decorrelated":
		p.Kind = sim.Decorrelated
		return nil
	case "none", "0":
		if !p.Kind.Reads(sim.FieldWidth) {
			return fmt.Errorf("jitter=%s: the %s family always jitters; name a family without jitter (exponential, fixed)", v, p.Kind)
		}
		p.Width = 0
		return nil
	}
	x, err := jitterFraction(v)
	if err != nil {
		return err
	}
	if p.Kind == sim.Exponential {
		p.Kind = sim.WidthJitter
	}
	if !p.Kind.Reads(sim.FieldWidth) {
		return fmt.Errorf("jitter=%s: the %s family draws its own jitter; for ± jitter name exponential or grpc", v, p.Kind)
	}
	p.Width = p.Kind.WidthOf(x)
	return nil
}

// fullJitter is the family jitter=full gives k: full jitter from the
// base (api-core) for the families whose first retry waits base, else
// exponential's own full jitter (first retry U(0, 2·base)).
func fullJitter(k sim.Kind) sim.Kind {
	switch k {
	case sim.GRPC, sim.APICore, sim.WatchDog, sim.HTTPRetry:
		return sim.APICore
	}
	return sim.FullJitter
}

// jitterFraction reads ±25%, 25% or 0.25 as the fraction 0.25.
func jitterFraction(v string) (float64, error) {
	w := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(v, "±"), "+-"), "%")
	x, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
	if err != nil {
		return 0, fmt.Errorf("jitter=%s: want full, equal, decorrelated, none, ±25%% or a fraction such as 0.25", v)
	}
	if strings.HasSuffix(v, "%") {
		x /= 100
	}
	return x, nil
}

// specWords says sim's errors about a spec's policy in the spec's keys.
func specWords(err error) error {
	fes := sim.FieldErrors(err)
	if len(fes) == 0 {
		return err
	}
	msgs := make([]string, len(fes))
	for i, fe := range fes {
		msgs[i] = UserWords(fe)
	}
	return errors.New(strings.Join(msgs, "; "))
}

func kindNames() []string {
	var ns []string
	for _, k := range sim.Kinds() {
		ns = append(ns, string(k))
	}
	return ns
}

func presetNames() []string {
	var ns []string
	for _, p := range sim.Presets() {
		ns = append(ns, p.Name)
	}
	return ns
}
