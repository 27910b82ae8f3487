package experiments

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// value is one value of an axis and where in the file it came from.
type value struct {
	v      any            // int64, float64, string or bool, in the parameter's type
	bundle map[string]any // for a policy given as a table: its other parameters
	path   []string
	// spec: a policy given as a spec with parameters ("decorrelated
	// base_s=1 cap_s=30", as the dataset's policy_spec writes it), which
	// names the whole policy: the axes' policy parameters do not change it.
	spec *sim.Policy
}

type axis struct{ values []value }

// axes maps a parameter key (or "seeds") to its values.
type axes map[string]*axis

// merge returns a copy of a with b's axes replacing a's.
func (a axes) merge(b axes) axes {
	out := axes{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// maxRange bounds the values one {from, to, step} may expand to.
const maxRange = 100_000

// axes reads the parameter axes of table t at path. In a sweep table
// (sweepTable) the sweep's own keys are allowed besides parameters.
func (l *loader) axes(path []string, t map[string]any, sweepTable bool) axes {
	out := axes{}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys) // never range over a map to report: errors come in a stable order
	for _, k := range keys {
		raw := t[k]
		kp := append(append([]string{}, path...), k)
		if sweepTable && slices.Contains(sweepKeys, k) && k != "seeds" {
			continue
		}
		if k == "seeds" {
			out[k] = l.axis(kp, raw, nil)
			continue
		}
		p := grid.ParamByKey(k)
		if p != nil && p.Key == "preset" {
			l.fail(kp, "a preset is a policy: policy = \"NAME\" (one of %s)", presetNames())
			continue
		}
		if p != nil && p.Key == "mix" {
			if a := l.mixAxis(kp, raw); a != nil {
				out[k] = a
			}
			continue
		}
		if p != nil && p.Key == "layers" {
			if a := l.layersAxis(kp, raw); a != nil {
				out[k] = a
			}
			continue
		}
		if p == nil {
			want := "a parameter (" + paramKeys() + ")"
			if sweepTable {
				want += " or " + strings.Join(sweepKeys, ", ")
			}
			names := paramKeyList()
			if sweepTable {
				names = append(names, sweepKeys...)
			}
			l.fail(kp, "unknown key%s: want %s", grid.SuggestKey(k, names), want)
			continue
		}
		if a := l.axis(kp, raw, p); a != nil {
			out[k] = a
		}
	}
	return out
}

func paramKeys() string { return strings.Join(paramKeyList(), ", ") }

// paramKeyList: the keys a sweep or [defaults] may set as parameters.
func paramKeyList() []string {
	var ks []string
	for _, p := range grid.Params {
		if p.Key != "preset" {
			ks = append(ks, p.Key)
		}
	}
	return append(ks, "seeds")
}

// policyTableKeys lists the keys a policy table takes besides kind.
func policyTableKeys() string { return strings.Join(grid.PolicyTableKeys(), ", ") }

// refuse records that a value at path was refused (loader.refused).
func (l *loader) refuse(path []string) {
	if l.refused == nil {
		l.refused = map[string]bool{}
	}
	l.refused[dotted(path)] = true
}

// axis reads one axis: a value, a list of values, or {from, to, step}.
// p is nil for seeds.
func (l *loader) axis(path []string, raw any, p *grid.Param) *axis {
	a := &axis{}
	add := func(v any, bundle map[string]any) {
		if p != nil {
			cv, err := p.Coerce(v)
			if err != nil {
				l.fail(path, "%v", err)
				l.refuse(path)
				return
			}
			v = cv
			if !l.inRange(path, p, v) {
				l.refuse(path)
				return
			}
			if p.Key == "policy" {
				spec, ok := l.policyValue(path, v.(string), bundle != nil)
				if !ok {
					return
				}
				a.values = append(a.values, value{v: v, bundle: bundle, path: path, spec: spec})
				return
			}
		}
		a.values = append(a.values, value{v: v, bundle: bundle, path: path})
	}
	switch x := raw.(type) {
	case []any:
		if len(x) == 0 {
			l.fail(path, "empty list: want at least one value")
			return nil
		}
		if len(x) > MaxList {
			l.fail(path, "a list of %d values: want at most %d", len(x), MaxList)
			return nil
		}
		for _, e := range x {
			if t, ok := e.(map[string]any); ok && p != nil && p.Key == "policy" {
				l.policyTable(path, t, add)
				continue
			}
			if _, ok := e.([]any); ok {
				l.fail(path, "a list inside a list: want values")
				continue
			}
			add(e, nil)
		}
	case []map[string]any:
		if p == nil || p.Key != "policy" {
			l.fail(path, "want a value, a list or {from, to, step}")
			return nil
		}
		for _, t := range x {
			l.policyTable(path, t, add)
		}
	case map[string]any:
		if p != nil && p.Key == "policy" {
			l.policyTable(path, x, add)
			break
		}
		l.rangeAxis(path, x, p, add)
	default:
		add(raw, nil)
	}
	if len(a.values) == 0 {
		return nil
	}
	return a
}

// inRange reports whether v is a value p may take whatever the policy
// family, so that a value out of range is an error even in a sweep whose
// families all ignore it (Normalize clears it there). sim's Validate is
// the judge: v is tried on the first family that reads it (with base 1 ms
// and no cap, so that it meets no other bound), and only errors about p's
// own field count; the cells check the rest. A value other than zero is
// tried with every client component on, so that a component's own
// parameters (breaker_window_s) are read even in a sweep that leaves the
// component off; zero is off, or the component's default.
func (l *loader) inRange(path []string, p *grid.Param, v any) bool {
	if !p.Policy || p.Key == "policy" || p.Key == "mix" || p.Key == "preset" {
		return true
	}
	for _, k := range sim.Kinds() {
		c := grid.Cell{Policy: sim.DefaultPolicy(k)}
		c.Policy.Base, c.Policy.Cap = time.Millisecond, 0
		c.Policy.RetryBudget = 0.1 // budget_min_rps needs a budget to be read; the cells check the pair
		if v != p.Of(&grid.Cell{}) {
			c.Policy.ThrottleK, c.Policy.RetryTokens, c.Policy.RetryTokenRatio, c.Policy.BreakerRatio = 2, 10, 0.1, 0.1
		}
		p.Apply(&c, v)
		n := grid.Cell{Policy: c.Policy.Normalize()}
		if p.Of(&n) != p.Of(&c) {
			continue // k does not read p
		}
		ok := true
		for _, fe := range sim.FieldErrors(n.Policy.Validate()) {
			if fe.Field == p.Field {
				_, msg := grid.KeyWords(fe)
				l.fail(path, "%s", msg)
				ok = false
			}
		}
		return ok
	}
	return true
}

// policyValue checks a policy's name or spec (grid.ParsePolicy: the
// language of the dataset's policy_spec, which recommend --mine and live
// --policy read too) and returns the policy of a spec with parameters; a
// table's kind is a name. ok is false when it is refused.
func (l *loader) policyValue(path []string, text string, table bool) (spec *sim.Policy, ok bool) {
	withParams := len(strings.Fields(text)) > 1
	if table && withParams {
		l.fail(path, "kind %q: want a family or a preset's name (a policy spec with its parameters is a string: policy = %q)", text, text)
		l.badPolicy = true
		return nil, false
	}
	p, err := grid.ParsePolicy(text)
	switch {
	case err != nil && withParams:
		l.fail(path, "%q: %v", text, err)
	case err != nil:
		l.fail(path, "%v", err)
	case withParams:
		return &p, true
	default:
		return nil, true
	}
	l.badPolicy = true
	return nil, false
}

// presetNames lists the presets, for messages.
func presetNames() string {
	var ns []string
	for _, p := range sim.Presets() {
		ns = append(ns, p.Name)
	}
	return strings.Join(ns, ", ")
}

// mixAxis reads mix: a list of group tables is one fleet, a list of such
// lists is an axis of fleets, and [] is a fleet of one policy.
func (l *loader) mixAxis(path []string, raw any) *axis {
	fleets, ok := l.fleets(path, raw)
	if !ok {
		return nil
	}
	a := &axis{}
	for _, f := range fleets {
		if mix, ok := l.fleet(path, f); ok {
			a.values = append(a.values, value{v: grid.EncodeMix(mix), path: path})
		}
	}
	if len(a.values) == 0 {
		return nil
	}
	return a
}

// fleets reads mix's value as fleets of group tables: a list of tables is
// one fleet, a list of such lists is several, and [] a fleet of one
// policy. ok is false for a value that is no list.
func (l *loader) fleets(path []string, raw any) (fleets [][]map[string]any, ok bool) {
	switch x := raw.(type) {
	case []map[string]any:
		return [][]map[string]any{x}, true
	case []any:
		if len(x) == 0 {
			fleets = append(fleets, nil)
		}
		for _, e := range x {
			switch y := e.(type) {
			case map[string]any:
				if len(fleets) == 0 {
					fleets = append(fleets, nil)
				}
				fleets[0] = append(fleets[0], y)
			case []map[string]any:
				fleets = append(fleets, y)
			case []any:
				var f []map[string]any
				for _, z := range y {
					if t, ok := z.(map[string]any); ok {
						f = append(f, t)
					} else {
						l.fail(path, "%s: want a table {share = …, kind = …}", grid.Show(z))
					}
				}
				fleets = append(fleets, f)
			default:
				l.fail(path, "%s: want tables {share = 0.1, kind = \"fixed\", …}, or lists of them", grid.Show(e))
			}
		}
		return fleets, true
	}
	l.fail(path, "%s: want a list of tables {share = 0.1, kind = \"fixed\", …}", grid.Show(raw))
	return nil, false
}

// fleet reads one fleet's group tables {share = …, kind = …, …} as the
// groups beside the policy; ok is false when one is refused.
func (l *loader) fleet(path []string, f []map[string]any) (mix [sim.MaxGroups - 1]sim.Group, ok bool) {
	if len(f) > len(mix) {
		l.fail(path, "%d groups: want at most %d besides the policy", len(f), len(mix))
		return mix, false
	}
	sum := 0.0
	for _, t := range f {
		if x, isNum := t["share"].(float64); isNum {
			sum += x
		}
	}
	if sum >= 1 {
		l.fail(path, "shares sum to %g: want less than 1, the rest of the fleet runs the policy", sum)
		return mix, false
	}
	ok = true
	for i, t := range f {
		share, isNum := t["share"].(float64)
		if !isNum || !(share > 0 && share < 1) {
			l.fail(path, "share %s: want a fraction in (0, 1)", grid.Show(t["share"]))
			ok = false
			continue
		}
		p, pok := l.groupPolicy(path, t)
		ok = ok && pok
		mix[i] = sim.Group{Share: share, Policy: p}
	}
	return mix, ok
}

// groupPolicy reads a group table's policy (its keys but share, as a
// policy table); ok is false when it is refused.
func (l *loader) groupPolicy(path []string, t map[string]any) (p sim.Policy, ok bool) {
	rest := map[string]any{}
	for k, v := range t {
		if k != "share" {
			rest[k] = v
		}
	}
	ok = true
	l.policyTable(path, rest, func(kind any, bundle map[string]any) {
		name, _ := kind.(string)
		c := grid.Cell{Policy: grid.TableBase(name, len(bundle))}
		for _, k := range slices.Sorted(maps.Keys(bundle)) {
			grid.ParamByKey(k).Apply(&c, bundle[k])
		}
		p = c.Policy.Normalize()
		if err := p.Validate(); err != nil {
			for _, fe := range sim.FieldErrors(err) {
				k, msg := grid.KeyWords(fe)
				l.fail(path, "%s: %s", k, msg)
			}
			ok = false
		}
	})
	return p, ok
}

// policyTable reads {kind = "fixed", base_s = 5, …}: a family with its own
// parameters, which win over the sweep's axes.
func (l *loader) policyTable(path []string, t map[string]any, add func(any, map[string]any)) {
	kind, ok := t["kind"]
	if !ok {
		l.fail(path, "a policy table needs kind = one of %s", kindNames())
		return
	}
	bundle := map[string]any{}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := t[k]
		if k == "kind" {
			continue
		}
		p := grid.ParamByKey(k)
		if p == nil || !p.InPolicyTable() {
			l.fail(append(append([]string{}, path...), k), "unknown key in a policy table%s: want kind or a policy parameter (%s)", grid.SuggestKey(k, append(grid.PolicyTableKeys(), "kind")), policyTableKeys())
			continue
		}
		cv, err := p.Coerce(v)
		if err != nil {
			l.fail(append(append([]string{}, path...), k), "%v", err)
			continue
		}
		if !l.inRange(append(append([]string{}, path...), k), p, cv) {
			continue
		}
		bundle[k] = cv
	}
	add(kind, bundle)
}

func (l *loader) rangeAxis(path []string, t map[string]any, p *grid.Param, add func(any, map[string]any)) {
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if k != "from" && k != "to" && k != "step" {
			l.fail(append(append([]string{}, path...), k), "unknown key in a range: want from, to, step")
			return
		}
	}
	if p != nil && (p.Type == grid.String || p.Type == grid.Bool) {
		l.fail(path, "a range of %s: want a list", p.Type)
		return
	}
	num := func(k string, def float64) (float64, bool) {
		v, ok := t[k]
		if !ok {
			if def >= 0 {
				return def, true
			}
			l.fail(path, "range without %s: want {from = …, to = …, step = …}", k)
			return 0, false
		}
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		l.fail(append(append([]string{}, path...), k), "%s: want a number", grid.Show(v))
		return 0, false
	}
	from, ok1 := num("from", -1)
	to, ok2 := num("to", -1)
	step, ok3 := num("step", 1)
	if !ok1 || !ok2 || !ok3 {
		return
	}
	if !(step > 0) || math.IsInf(step, 0) || to < from || (to-from)/step >= maxRange {
		l.fail(path, "from %g to %g step %g: want from ≤ to, step > 0 and at most %d values", from, to, step, maxRange)
		return
	}
	integral := p == nil || p.Type == grid.Int
	for i := 0; ; i++ {
		v := from + float64(float64(i)*step) // float64(): unfused, the same value on every CPU
		v = math.Round(v*1e9) / 1e9          // 0.1·3 is 0.3 here, not 0.30000000000000004
		if v > to+float64(step*1e-9) {
			break
		}
		if integral {
			if v != math.Trunc(v) {
				l.fail(path, "%g: want whole numbers", v)
				return
			}
			add(int64(v), nil)
		} else {
			add(v, nil)
		}
	}
}

// locate returns the line of path in a TOML text, or of its longest prefix
// that can be found; 0 if none. It understands [table] and [[array]]
// headers, whose n-th occurrence is the path element "#n".
func locate(src string, path []string) int {
	best, bestLen := 0, 0
	var table []string
	count := map[string]int{}
	for n, line := range strings.Split(src, "\n") {
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' {
			continue
		}
		if strings.HasPrefix(s, "[[") {
			name := strings.TrimSpace(strings.Trim(strings.SplitN(s, "]]", 2)[0], "[ "))
			table = append(splitKey(name), "")
			table[len(table)-1] = "#" + strconv.Itoa(count[name])
			count[name]++
		} else if s[0] == '[' {
			name := strings.TrimSpace(strings.Trim(strings.SplitN(s, "]", 2)[0], "[ "))
			table = splitKey(name)
		} else if eq := strings.IndexByte(s, '='); eq > 0 {
			full := append(append([]string{}, table...), splitKey(strings.TrimSpace(s[:eq]))...)
			if m := prefixLen(full, path); m == len(full) && m > bestLen {
				best, bestLen = n+1, m
			}
			continue
		} else {
			continue
		}
		if m := prefixLen(table, path); (m == len(table) || m == len(path)) && m > bestLen {
			best, bestLen = n+1, m
		}
	}
	return best
}

// splitKey splits a dotted TOML key, keeping the dots inside quoted parts
// (sweep."a.b" is two parts) and reading their escapes (sweep."a\u0007b").
func splitKey(k string) []string {
	var parts []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			if c == '\\' && quote == '"' && i+1 < len(k) {
				if r, _, tail, err := strconv.UnquoteChar(k[i:], '"'); err == nil {
					cur.WriteRune(r)
					i = len(k) - len(tail) - 1
					continue
				}
				i++
				c = k[i]
			}
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func prefixLen(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
