package experiments

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
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
	if e.Line > 0 && e.Key == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	}
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
}

// Bounds on what a config may ask for, checked before anything is
// allocated for it: the grid's size is the product of its axes' lengths,
// counted before the grid is expanded (a cell takes about 3 KB while the
// config is loaded), and the runs are those cells times the seeds.
const (
	MaxCells = 100_000    // cells of one sweep, before equal cells are merged
	MaxRuns  = 10_000_000 // cells × seeds of one sweep
	MaxList  = 100_000    // values in one list or range, seeds included
)

// MaxNameLen bounds a sweep's name.
const MaxNameLen = 64

// CheckName reports whether name may name a sweep: it becomes a folder
// (runs/sweep=NAME), so it is 1 to 64 lower-case letters, digits, '-' and
// '_', starting with a letter or a digit: no separator, no leading dot.
func CheckName(name string) error {
	ok := len(name) > 0 && len(name) <= MaxNameLen
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_')
	}
	if !ok {
		return fmt.Errorf("%q: want a sweep name of 1 to %d characters a-z, 0-9, '-' and '_', starting with a letter or digit (it names the folder sweep=NAME)", name, MaxNameLen)
	}
	return nil
}

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
	lim  Limits
	errs []error
	// cells: the cells of the sweeps read so far; runs: the most runs of
	// one of them (gridOK).
	cells, runs int64
	// badPolicy: a policy value was refused; the rest of the grid is still
	// checked, with a stand-in policy, so that one run reports every mistake.
	badPolicy bool
	// refused: the dotted keys whose value was refused before any cell was
	// built; a cell then holds the default there, whose own error would
	// only repeat the mistake in other words ("service_s: 0").
	refused map[string]bool
	// cores: how many goroutines build a grid's cells (expand); 0 = one
	// a core.
	cores int
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
		b.WriteString(tomlKey(p))
	}
	return b.String()
}

// tomlKey writes one part of a key as TOML does: bare when it is letters,
// digits, '_' and '-', else quoted, with a control character as \uXXXX
// (a name never reaches the terminal raw).
func tomlKey(k string) string {
	bare := k != ""
	for _, c := range k {
		bare = bare && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-')
	}
	if bare {
		return k
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range k {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == utf8.RuneError || unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c):
			fmt.Fprintf(&b, "\\u%04X", c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Load parses a sweeps.toml. file names it in errors. Every mistake found
// (up to 20) is reported in one error, each as file:line: key: message.
func Load(file string, src []byte) (*Config, error) { return LoadWith(file, src, Limits{}) }

// LoadWith is Load with memory limits: a grid, or a cell whose run, would
// take more than its share of lim (Limits) is an error at the key that
// makes it large.
func LoadWith(file string, src []byte, lim Limits) (*Config, error) { return load(file, src, lim, 0) }

// load is LoadWith with the cells of a grid built on cores goroutines (0:
// one a core).
func load(file string, src []byte, lim Limits, cores int) (*Config, error) {
	l := &loader{file: file, src: string(src), lim: lim, cores: cores}
	var raw map[string]any
	md, err := toml.Decode(l.src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			key, line := pe.LastKey, pe.Position.Line
			if strings.Contains(pe.Message, "table") && !headerAt(l.src, line) && headerAt(l.src, line-1) {
				line-- // the parser counts a header's end of line as the next line's
				key = ""
			}
			if key == "" || headerAt(l.src, line) { // a table's header, or a line before any key: what the line starts with
				key = lineKey(l.src, line)
			}
			return nil, &Error{File: file, Line: line, Key: key, Msg: pe.Message}
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
		if err := CheckName(name); err != nil {
			l.fail([]string{"sweep", name}, "%v", err)
			continue
		}
		t, ok := sweeps[name].(map[string]any)
		if !ok {
			l.fail([]string{"sweep", name}, "want a table")
			continue
		}
		if s := l.sweep(name, t, defaults); s != nil {
			l.envelope(s)
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

// headerAt reports whether line n (from 1) of src is a table's header.
func headerAt(src string, n int) bool {
	lines := strings.Split(src, "\n")
	return n >= 1 && n <= len(lines) && strings.HasPrefix(strings.TrimSpace(lines[n-1]), "[")
}

// lineKey is the key line n (from 1) of src starts with, for a syntax
// error the parser names no key for: a table header's name ("[sweep.a"
// → sweep.a), or the text before '=' (at most 60 characters); "" when
// there is none.
func lineKey(src string, n int) string {
	lines := strings.Split(src, "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[n-1])
	if strings.HasPrefix(s, "[") {
		s = strings.TrimLeft(s, "[ ")
		if i := strings.IndexAny(s, "]#="); i >= 0 {
			s = s[:i]
		}
	} else if i := strings.IndexAny(s, "=#"); i >= 0 {
		s = s[:i]
	} else {
		return ""
	}
	parts := splitKey(strings.TrimSpace(s))
	if len(parts) == 1 && parts[0] == "" {
		return ""
	}
	k := dotted(parts)
	if r := []rune(k); len(r) > 60 {
		k = string(r[:60]) + "…"
	}
	return k
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
var sweepKeys = []string{"description", "experiment", "seeds", "timeline_seeds", "on_demand", "candidates", "cell"}

func (l *loader) sweep(name string, t map[string]any, defaults axes) *Sweep {
	path := []string{"sweep", name}
	s := &Sweep{Name: name}
	at := func(k string) []string { return append(append([]string{}, path...), k) }
	l.sweepSettings(s, t, at)
	seen := map[string]bool{}
	if v, ok := t["experiment"]; ok {
		e, _ := v.(string)
		cells, ok := article.Builtin(e)
		if !ok {
			l.fail(at("experiment"), "%s: want one of %s", grid.Show(v), strings.Join(article.BuiltinNames(), ", "))
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
	sweepAxes := defaults.merge(own)
	seedAxis := sweepAxes["seeds"]
	delete(sweepAxes, "seeds")
	if seedAxis == nil {
		if len(s.Cells) > 0 && ownParams == 0 {
			seedAxis = &axis{}
			for _, seed := range article.Seeds {
				seedAxis.values = append(seedAxis.values, value{v: int64(seed)})
			}
		} else {
			l.fail(at("seeds"), "missing: want a list of seeds or {from = 1, to = 20}, here or in [defaults]")
		}
	}
	if seedAxis != nil {
		s.Seeds = l.seeds(seedAxis)
	}
	var grids []axes
	switch cells, _ := t["cell"].([]map[string]any); {
	case t["cell"] != nil && cells == nil:
		l.fail(at("cell"), "want [[sweep.%s.cell]] tables", name)
	case len(cells) > 0:
		for i, ct := range cells {
			cp := append(at("cell"), fmt.Sprintf("#%d", i))
			if ct["seeds"] != nil { // a sweep has one list of seeds: a cell's would be read and not used
				l.fail(append(cp, "seeds"), "a cell table has no seeds of its own: want the sweep's seeds, given in [sweep.%s] or [defaults], which every cell runs", name)
			}
			grids = append(grids, sweepAxes.merge(l.axes(cp, ct, false)))
		}
	case ownParams > 0 || len(s.Cells) == 0:
		grids = append(grids, sweepAxes)
	}
	if !l.sizeOK(path, grids, len(s.Cells), len(s.Seeds)) {
		return s
	}
	if s.Candidates {
		l.candidates(s, t, grids)
		return s
	}
	for _, g := range grids {
		l.expand(s, g, seen)
	}
	if len(s.Cells) == 0 && len(l.errs) == 0 {
		l.fail(path, "no cells: give it a policy axis, [[cell]] tables or an experiment")
	}
	return s
}

// sweepSettings reads the sweep's own keys that are no axis:
// description, on_demand, candidates and timeline_seeds.
func (l *loader) sweepSettings(s *Sweep, t map[string]any, at func(string) []string) {
	if v, ok := t["description"]; ok {
		if s.Description, ok = v.(string); !ok {
			l.fail(at("description"), "%s: want a string", grid.Show(v))
		}
	}
	if v, ok := t["on_demand"]; ok {
		if s.OnDemand, ok = v.(bool); !ok {
			l.fail(at("on_demand"), "%s: want true or false", grid.Show(v))
		}
	}
	if v, ok := t["candidates"]; ok {
		if s.Candidates, ok = v.(bool); !ok {
			l.fail(at("candidates"), "%s: want true or false", grid.Show(v))
		}
	}
	if v, ok := t["timeline_seeds"]; ok {
		n, ok := v.(int64)
		if !ok || n < 0 || n > 1000 {
			l.fail(at("timeline_seeds"), "%s: want a whole number in [0, 1000]", grid.Show(v))
		}
		s.TimelineSeeds = int(n)
	}
}

// candidates fills a sweep with candidates = true: recommend's candidate
// space and the closest built-in settings it judges (CandidateCells) at
// every scenario of its axes, so that a dataset
// holding it answers `sweep recommend` there without simulating. The
// candidates are the policies: the sweep may not name its own.
func (l *loader) candidates(s *Sweep, t map[string]any, grids []axes) {
	at := func(k string) []string { return []string{"sweep", s.Name, k} }
	for _, k := range []string{"experiment", "cell"} {
		if t[k] != nil {
			l.fail(at(k), "not with candidates = true: the sweep's cells are recommend's candidates at each scenario of its axes")
			return
		}
	}
	for k := range t {
		if p := grid.ParamByKey(k); p != nil && p.Policy {
			l.fail(at(k), "not with candidates = true: the policies are recommend's candidate space (`sweep recommend -h` lists it); give only scenario parameters")
		}
	}
	// The scenarios: the grid with a stand-in policy, each cell checked as
	// any other (bounds, memory).
	scen := &Sweep{Name: s.Name, TimelineSeeds: s.TimelineSeeds}
	seen := map[string]bool{}
	for _, g := range grids {
		g = g.merge(axes{"policy": {values: []value{{v: string(sim.Decorrelated)}}}})
		if g["window_s"] == nil { // recommend's window, not the article's horizon from the start
			g = g.merge(axes{"window_s": {values: []value{{v: grid.RecommendWindow.Seconds()}}}})
		}
		l.expand(scen, g, seen)
	}
	var scenarios []sim.Scenario
	for _, c := range scen.Cells {
		if !slices.Contains(scenarios, c.Scenario) {
			scenarios = append(scenarios, c.Scenario)
		}
	}
	n := 0
	for _, sc := range scenarios {
		n += len(grid.CandidateCells(sc))
	}
	switch {
	case n > MaxCells:
		l.fail([]string{"sweep", s.Name}, "%d scenarios × recommend's candidates = %d cells: more than %d; split the sweep", len(scenarios), n, MaxCells)
		return
	case n*max(len(s.Seeds), 1) > MaxRuns:
		l.fail([]string{"sweep", s.Name}, "%d cells × %d seeds = %d runs: more than %d; split the sweep", n, len(s.Seeds), n*len(s.Seeds), MaxRuns)
		return
	case !l.gridOK([]string{"sweep", s.Name}, n, n*len(s.Seeds)):
		return
	}
	seen = map[string]bool{}
	for _, sc := range scenarios {
		for _, c := range grid.CandidateCells(sc) {
			s.addCell(c, seen)
		}
	}
}

// sizeOK counts the cells of grids (the product of each grid's axis
// lengths) plus n built-in cells, before anything is expanded, and reports
// a sweep over MaxCells cells or MaxRuns runs.
func (l *loader) sizeOK(path []string, grids []axes, n, seeds int) bool {
	cells := n
	for _, g := range grids {
		c := 1
		for _, a := range g {
			if c *= len(a.values); c > MaxCells {
				break
			}
		}
		if cells += c; cells > MaxCells {
			break
		}
	}
	switch {
	case cells > MaxCells:
		l.fail(path, "more than %d cells (the product of the axes' lengths): split the sweep", MaxCells)
	case cells*max(seeds, 1) > MaxRuns:
		l.fail(path, "%d cells × %d seeds = %d runs: more than %d; split the sweep", cells, seeds, cells*seeds, MaxRuns)
	default:
		return l.gridOK(path, cells, cells*seeds)
	}
	return false
}

func (l *loader) seeds(a *axis) []uint32 {
	var out []uint32
	seen := map[int64]bool{}
	for _, v := range a.values {
		n, ok := v.v.(int64)
		if !ok || n < 0 || n > math.MaxUint32 {
			l.fail(v.path, "%s: want a seed, a whole number in [0, 4294967295]", grid.Show(v.v))
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

// fanoutHasLayers reports whether a fanout g sets has a chain to belong
// to: a sweep whose cells all lack layers would have its fanout dropped
// (grid.Cell.Normalize), so that is an error at the fanout key.
func (l *loader) fanoutHasLayers(s *Sweep, g axes) bool {
	f := g["fanout"]
	if f == nil || !slices.ContainsFunc(f.values, func(v value) bool { return v.v != int64(0) }) {
		return true
	}
	if ls := g["layers"]; ls != nil && slices.ContainsFunc(ls.values, func(v value) bool { return v.v != "" }) {
		return true
	}
	l.fail([]string{"sweep", s.Name, "fanout"}, "%v: want layers beside it (fanout is how many copies of the server the last service of a chain calls; without layers it would be dropped)", f.values[0].v)
	return false
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
	if !l.fanoutHasLayers(s, g) {
		return
	}
	var keys []string
	total := 1 // gridOK bounded the product
	for i := range grid.Params {
		if g[grid.Params[i].Key] != nil {
			keys = append(keys, grid.Params[i].Key)
			total *= len(g[grid.Params[i].Key].values)
		}
	}
	// The cells are built, checked and keyed a chunk at a time on every
	// core (what a sharded sweep's every shard does before its first run:
	// 1.1 s of one core for the repository's sweeps.toml), then taken in
	// order, as one at a time would.
	buf := make([]expanded, min(total, expandChunk))
	for lo := 0; lo < total; lo += expandChunk {
		n := min(expandChunk, total-lo)
		parallel(n, l.cores, func(i int) { buf[i] = l.expandOne(s, g, keys, lo+i, standIn) })
		for i := range n {
			e := &buf[i]
			if e.err != nil {
				l.cellError(s.Name, e.err, e.used)
				if len(l.errs) >= maxErrors {
					return
				}
			} else if !standIn {
				s.addKeyed(e.c, e.key, seen)
			}
			*e = expanded{}
		}
	}
}

// expandChunk is how many cells expand builds at once.
const expandChunk = 256

// expanded is a cell of a sweep's grid as expand builds it: the cell, the
// values that set its parameters, and its key, or why it is refused.
type expanded struct {
	c    grid.Cell
	used map[string][]string
	key  string
	err  error
}

// expandOne builds cell i of the cartesian product of g over keys (the
// last key's values the fastest), checks it and keys it. It changes
// nothing of l.
func (l *loader) expandOne(s *Sweep, g axes, keys []string, i int, standIn bool) expanded {
	idx := make([]int, len(keys))
	for j := len(keys) - 1; j >= 0; j-- {
		n := len(g[keys[j]].values)
		idx[j], i = i%n, i/n
	}
	c, used := cellAt(g, keys, idx)
	c = c.Normalize() // the policy, and a chain's settings without layers
	err := c.Validate()
	if err == nil {
		err = l.memory(c, s.TimelineSeeds > 0, used)
	}
	if err != nil {
		return expanded{used: used, err: err}
	}
	e := expanded{c: c, used: used}
	if !standIn {
		e.key = c.Key()
	}
	return e
}

// parallel calls f(0) … f(n-1) on as many goroutines as there are cores
// to run them (or workers, if > 0), and returns when all have returned.
func parallel(n, workers int, f func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(n, workers)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}

// cellAt builds the cell at index idx of the axes keys of g, and says
// which value (its path) set each parameter.
func cellAt(g axes, keys []string, idx []int) (grid.Cell, map[string][]string) {
	c := grid.Cell{Scenario: sim.Article()}
	used := map[string][]string{} // param key → path of the value applied
	var pol value
	for j, k := range keys {
		v := g[k].values[idx[j]]
		p := grid.ParamByKey(k)
		if p.Policy && k != "policy" && k != "mix" && (c.Policy.Preset != "" || pol.spec != nil) {
			continue // a preset keeps its library's defaults, a spec its parameters
		}
		switch {
		case k == "policy" && v.spec != nil:
			c.Policy = *v.spec
			for i := range grid.Params {
				if grid.Params[i].InPolicyTable() {
					used[grid.Params[i].Key] = v.path
				}
			}
		case k == "policy" && v.bundle != nil:
			c.Policy = grid.TableBase(v.v.(string), len(v.bundle))
		default:
			p.Apply(&c, v.v)
		}
		used[k] = v.path
		if k == "policy" {
			pol = v
		}
	}
	// Policy parameters from the axes apply to every family that reads
	// them, but not to a library preset; those inside a policy table win
	// over the axes.
	for i := range grid.Params {
		p := &grid.Params[i]
		if bv, ok := pol.bundle[p.Key]; ok && p.Policy && p.Key != "policy" {
			p.Apply(&c, bv)
			used[p.Key] = pol.path
		}
	}
	return c, used
}

// cellError reports the sim validation errors in err, each at the key that
// set its field: sim.FieldError.Field is a Param's Field, one mapping, and
// the message is in the config's words (userWords). A field the cell took
// from the article's defaults is reported at the sweep's table.
func (l *loader) cellError(sweep string, err error, used map[string][]string) {
	fes := sim.FieldErrors(err)
	if len(fes) == 0 {
		l.fail([]string{"sweep", sweep}, "%v", err)
		return
	}
	for _, fe := range fes {
		key, msg := grid.KeyWords(fe)
		path := used[key]
		if path == nil {
			path = []string{"sweep", sweep, key}
			if l.refused[dotted(path)] || l.refused["defaults."+key] {
				continue
			}
		}
		dup := false
		for _, e := range l.errs { // one line per distinct mistake, not per cell
			if ce, ok := e.(*Error); ok && ce.Key == dotted(path) && ce.Msg == msg {
				dup = true
			}
		}
		if !dup {
			l.fail(path, "%s", msg)
		}
	}
}

func kindNames() string {
	var ns []string
	for _, k := range sim.Kinds() {
		ns = append(ns, string(k))
	}
	return strings.Join(ns, ", ")
}
