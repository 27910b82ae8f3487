package experiments

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/herdsweep/herdsweep/sim"
)

// Error is a mistake in a config file, at a line and key.
type Error struct {
	File string
	Line int    // 0 when the key could not be found in the text
	Key  string // dotted path, e.g. sweep.nightly.cap_s
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	}
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// MaxCells bounds the cells one sweep may expand to.
const MaxCells = 5_000_000

// maxErrors is how many mistakes Load reports at once.
const maxErrors = 20

// Config is a parsed sweeps.toml: its sweeps in file order.
type Config struct {
	Sweeps []*Sweep
}

// Sweep returns the sweep called name, or nil.
func (c *Config) Sweep(name string) *Sweep {
	for _, s := range c.Sweeps {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Main returns the sweeps `sweep run` runs when none is named: all but
// those marked on_demand.
func (c *Config) Main() []*Sweep {
	var out []*Sweep
	for _, s := range c.Sweeps {
		if !s.OnDemand {
			out = append(out, s)
		}
	}
	return out
}

// Names lists the sweeps' names in file order.
func (c *Config) Names() []string {
	var ns []string
	for _, s := range c.Sweeps {
		ns = append(ns, s.Name)
	}
	return ns
}

// loader carries the file being read and the errors found so far.
type loader struct {
	file string
	src  string
	errs []error
	// badPolicy: a policy value was refused; the rest of the grid is still
	// checked, with a stand-in policy, so that one run reports every mistake.
	badPolicy bool
}

func (l *loader) fail(path []string, format string, args ...any) {
	if len(l.errs) < maxErrors {
		l.errs = append(l.errs, &Error{File: l.file, Line: locate(l.src, path), Key: dotted(path), Msg: fmt.Sprintf(format, args...)})
	}
}

func dotted(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if strings.HasPrefix(p, "#") { // an index into an array of tables
			b.WriteString("[" + p[1:] + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// Load parses a sweeps.toml. file names it in errors. Every mistake found
// (up to 20) is reported in one error, each as file:line: key: message.
func Load(file string, src []byte) (*Config, error) {
	l := &loader{file: file, src: string(src)}
	var raw map[string]any
	md, err := toml.Decode(l.src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		}
		return nil, &Error{File: file, Msg: err.Error()}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if k != "defaults" && k != "sweep" {
			l.fail([]string{k}, "unknown key: want defaults or sweep")
		}
	}
	var defaults axes
	if d, ok := raw["defaults"]; ok {
		t, ok := d.(map[string]any)
		if !ok {
			l.fail([]string{"defaults"}, "want a table")
		} else {
			defaults = l.axes([]string{"defaults"}, t, false)
		}
	}
	cfg := &Config{}
	sweeps, _ := raw["sweep"].(map[string]any)
	if raw["sweep"] != nil && sweeps == nil {
		l.fail([]string{"sweep"}, "want tables [sweep.NAME]")
	}
	for _, name := range sweepOrder(md, sweeps) {
		t, ok := sweeps[name].(map[string]any)
		if !ok {
			l.fail([]string{"sweep", name}, "want a table")
			continue
		}
		if s := l.sweep(name, t, defaults); s != nil {
			cfg.Sweeps = append(cfg.Sweeps, s)
		}
	}
	if len(l.errs) > 0 {
		sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].(*Error).Line < l.errs[j].(*Error).Line })
		return nil, errors.Join(l.errs...)
	}
	if len(cfg.Sweeps) == 0 {
		return nil, &Error{File: file, Msg: "no [sweep.NAME] table: nothing to run"}
	}
	return cfg, nil
}

// sweepOrder returns the sweep names in the order the file defines them.
func sweepOrder(md toml.MetaData, sweeps map[string]any) []string {
	var names []string
	seen := map[string]bool{}
	for _, k := range md.Keys() {
		if len(k) >= 2 && k[0] == "sweep" && !seen[k[1]] {
			if _, ok := sweeps[k[1]]; ok {
				seen[k[1]] = true
				names = append(names, k[1])
			}
		}
	}
	var rest []string // not in md.Keys (should not happen): keep them, sorted
	for n := range sweeps {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// sweepKeys are the keys a [sweep.NAME] table may hold besides parameters.
var sweepKeys = []string{"description", "experiment", "seeds", "timeline_seeds", "on_demand", "cell"}

func (l *loader) sweep(name string, t map[string]any, defaults axes) *Sweep {
	path := []string{"sweep", name}
	s := &Sweep{Name: name}
	at := func(k string) []string { return append(append([]string{}, path...), k) }
	if v, ok := t["description"]; ok {
		if s.Description, ok = v.(string); !ok {
			l.fail(at("description"), "%s: want a string", show(v))
		}
	}
	if v, ok := t["on_demand"]; ok {
		if s.OnDemand, ok = v.(bool); !ok {
			l.fail(at("on_demand"), "%s: want true or false", show(v))
		}
	}
	if v, ok := t["timeline_seeds"]; ok {
		n, ok := v.(int64)
		if !ok || n < 0 || n > 1000 {
			l.fail(at("timeline_seeds"), "%s: want a whole number in [0, 1000]", show(v))
		}
		s.TimelineSeeds = int(n)
	}
	seen := map[string]bool{}
	if v, ok := t["experiment"]; ok {
		e, _ := v.(string)
		cells, ok := Builtin(e)
		if !ok {
			l.fail(at("experiment"), "%s: want one of %s", show(v), strings.Join(BuiltinNames(), ", "))
		}
		for _, c := range cells {
			s.addCell(c, seen)
		}
	}
	own := l.axes(path, t, true)
	ownParams := len(own)
	if own["seeds"] != nil {
		ownParams--
	}
	grid := defaults.merge(own)
	seedAxis := grid["seeds"]
	delete(grid, "seeds")
	if seedAxis == nil {
		if len(s.Cells) > 0 && ownParams == 0 {
			seedAxis = &axis{}
			for _, seed := range ArticleSeeds {
				seedAxis.values = append(seedAxis.values, value{v: int64(seed)})
			}
		} else {
			l.fail(at("seeds"), "missing: want a list of seeds or {from = 1, to = 20}, here or in [defaults]")
		}
	}
	if seedAxis != nil {
		s.Seeds = l.seeds(seedAxis)
	}
	switch cells, _ := t["cell"].([]map[string]any); {
	case t["cell"] != nil && cells == nil:
		l.fail(at("cell"), "want [[sweep.%s.cell]] tables", name)
	case len(cells) > 0:
		for i, ct := range cells {
			cp := append(at("cell"), fmt.Sprintf("#%d", i))
			l.expand(s, grid.merge(l.axes(cp, ct, false)), seen)
		}
	case ownParams > 0 || len(s.Cells) == 0:
		l.expand(s, grid, seen)
	}
	if len(s.Cells) == 0 && len(l.errs) == 0 {
		l.fail(path, "no cells: give it a policy axis, [[cell]] tables or an experiment")
	}
	return s
}

func (l *loader) seeds(a *axis) []uint32 {
	var out []uint32
	seen := map[int64]bool{}
	for _, v := range a.values {
		n, ok := v.v.(int64)
		if !ok || n < 0 || n > math.MaxUint32 {
			l.fail(v.path, "%s: want a seed, a whole number in [0, 4294967295]", show(v.v))
			continue
		}
		if seen[n] {
			l.fail(v.path, "seed %d listed twice", n)
			continue
		}
		seen[n] = true
		out = append(out, uint32(n))
	}
	return out
}

// expand appends every cell of the cartesian product of g to s.
func (l *loader) expand(s *Sweep, g axes, seen map[string]bool) {
	standIn := false
	if g["policy"] == nil {
		if !l.badPolicy {
			l.fail([]string{"sweep", s.Name, "policy"}, "missing: want a policy family or a list of them (%s)", kindNames())
			return
		}
		g = g.merge(axes{"policy": {values: []value{{v: string(sim.Fixed)}}}})
		standIn = true
	}
	var keys []string
	n := 1
	for i := range Params {
		if a := g[Params[i].Key]; a != nil {
			keys = append(keys, Params[i].Key)
			n *= len(a.values)
			if n > MaxCells {
				l.fail([]string{"sweep", s.Name}, "more than %d cells: split the sweep", MaxCells)
				return
			}
		}
	}
	idx := make([]int, len(keys))
	for {
		c := Cell{Scenario: sim.Article()}
		used := map[string][]string{} // param key → path of the value applied
		var bundle value
		for j, k := range keys {
			v := g[k].values[idx[j]]
			p := ParamByKey(k)
			if p.Policy && k != "policy" && k != "mix" && c.Policy.Preset != "" {
				continue // a preset keeps its library's defaults
			}
			p.set(&c, v.v)
			used[k] = v.path
			if k == "policy" {
				bundle = v
			}
		}
		// Policy parameters from the axes apply to every family that reads
		// them, but not to a library preset; those inside a policy table win
		// over the axes.
		for i := range Params {
			p := &Params[i]
			if p.Policy && p.Key != "policy" {
				if bv, ok := bundle.bundle[p.Key]; ok {
					p.set(&c, bv)
					used[p.Key] = bundle.path
				}
			}
		}
		c.Policy = c.Policy.Normalize()
		if err := c.Validate(); err != nil {
			l.cellError(err, used)
			if len(l.errs) >= maxErrors {
				return
			}
		} else if !standIn {
			s.addCell(c, seen)
		}
		j := len(idx) - 1
		for ; j >= 0; j-- {
			idx[j]++
			if idx[j] < len(g[keys[j]].values) {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			return
		}
	}
}

// cellError reports a sim validation error at the key that set the field.
func (l *loader) cellError(err error, used map[string][]string) {
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		l.fail(nil, "%v", err)
		return
	}
	isPolicy := fe.Field == "Kind" || fe.Field == "Base" || fe.Field == "Cap" || fe.Field == "Multiplier" ||
		fe.Field == "Width" || fe.Field == "MaxAttempts" || fe.Field == "HonorRetryAfter"
	p := paramByField(fe.Field, isPolicy)
	if fe.Field == "Share" || fe.Field == "Groups" {
		p = ParamByKey("mix")
	}
	key := fe.Field
	if p != nil {
		key = p.Key
	}
	path := used[key]
	if path == nil {
		path = []string{key}
	}
	msg := fmt.Sprintf("%v: want %s", fe.Value, fe.Want)
	for _, e := range l.errs { // one line per distinct mistake, not per cell
		if ce, ok := e.(*Error); ok && ce.Key == dotted(path) && ce.Msg == msg {
			return
		}
	}
	l.fail(path, "%s", msg)
}

func kindNames() string {
	var ns []string
	for _, k := range sim.Kinds() {
		ns = append(ns, string(k))
	}
	return strings.Join(ns, ", ")
}
