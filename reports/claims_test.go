package reports

import (
	"bytes"
	"context"
	"image/color"
	"image/png"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot/palette"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"
)

// A small world for the report's tests: 300 clients, 30 s outage, a 10 min
// window after recovery; timelines for each cell's first seed.
func world(capacity float64) sim.Scenario {
	sc := sim.Article()
	sc.Clients, sc.Capacity = 300, capacity
	sc.Horizon = sc.RecoverAt + 10*time.Minute
	return sc
}

func exp(w float64, cp time.Duration) sim.Policy {
	return sim.Policy{Kind: sim.WidthJitter, Base: time.Second, Cap: cp, Multiplier: 2, Width: w}
}

func preset(t *testing.T, name string) sim.Policy {
	p, ok := sim.PresetByName(name)
	if !ok {
		t.Fatalf("no preset %s", name)
	}
	return p.Policy
}

// simulate runs every cell on seeds 1…n and returns the report's input.
func simulate(t *testing.T, cells []grid.Cell, n int, timelines bool) Input {
	t.Helper()
	var recs []analysis.Record
	tls := map[string][]dataset.TimelineRow{}
	var groups []dataset.GroupRow
	for _, c := range cells {
		c.Policy = c.Policy.Normalize()
		for seed := uint32(1); seed <= uint32(n); seed++ {
			var s sim.Sim
			var tl sim.Timeline
			tp := &tl
			if !timelines || seed != 1 {
				tp = nil
			}
			res, err := c.Simulate(&s, sim.NewMulberry32(seed), tp)
			if err != nil {
				t.Fatal(err)
			}
			r := grid.Run{Cell: c, Seed: seed}
			recs = append(recs, analysis.Record{Sweep: "t", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: seed, Label: c.Label(), Cell: c, Result: res}})
			if tp != nil {
				for k, a := range tl.Arrivals {
					if a > 0 {
						tls[r.Key()] = append(tls[r.Key()], dataset.TimelineRow{RunKey: r.Key(), Tick: k, T: float64(k) * c.Scenario.Tick.Seconds(), Arrivals: int(a), Served: int(tl.Served[k])})
					}
				}
			}
			for g, gp := range c.Groups()[:res.NGroups] {
				groups = append(groups, dataset.GroupRow{RunKey: r.Key(), CellKey: c.Key(), Seed: seed, Group: g, Share: gp.Share,
					Policy: string(gp.Policy.Kind), Label: gp.Policy.Describe(), Result: res.Groups[g]})
			}
		}
	}
	meta := dataset.Meta{Tool: "test", Sim: sim.Version, ConfigHash: "0123abcd", Command: "sweep run --sweep t", Created: "2026-01-02T03:04:05Z", Sweep: "t"}
	in := Input{Dataset: &analysis.Dataset{Records: recs, Metas: []dataset.Meta{meta}, Files: 1}, Groups: groups}
	if timelines {
		in.Timelines = func(keys map[string]bool) (map[string][]dataset.TimelineRow, error) {
			out := map[string][]dataset.TimelineRow{}
			for k := range keys {
				if rows, ok := tls[k]; ok {
					out[k] = rows
				}
			}
			return out, nil
		}
	}
	return in
}

func cellsOf(pols []sim.Policy, caps []float64, edit func(*sim.Scenario)) []grid.Cell {
	var out []grid.Cell
	for _, cp := range caps {
		for _, p := range pols {
			sc := world(cp)
			if edit != nil {
				edit(&sc)
			}
			out = append(out, grid.Cell{Scenario: sc, Policy: p})
		}
	}
	return out
}

// configs are the datasets the claims are checked on: a reduced version of
// the default sweeps (families × widths × caps × capacities × fleet sizes,
// library presets, a mixed fleet, a server whose 429s cost work) and small
// configs as a user writes them.
func configs(t *testing.T) map[string]Input {
	six := []sim.Policy{sim.DefaultPolicy(sim.FullJitter), sim.DefaultPolicy(sim.Decorrelated), sim.DefaultPolicy(sim.EqualJitter),
		{Kind: sim.Fixed, Base: 5 * time.Second}, sim.DefaultPolicy(sim.Exponential), exp(0.25, time.Minute)}
	var main []grid.Cell
	pols := []sim.Policy{{Kind: sim.Fixed, Base: 5 * time.Second}, sim.DefaultPolicy(sim.Exponential), sim.DefaultPolicy(sim.FullJitter),
		sim.DefaultPolicy(sim.Decorrelated), exp(0, 30*time.Second), exp(0.1, 30*time.Second), exp(0.5, 30*time.Second),
		exp(0.1, time.Minute), exp(0.5, time.Minute), preset(t, "grpc"), preset(t, "aws-sdk-go-v2")}
	main = append(main, cellsOf(pols, []float64{15, 30, 60}, nil)...)
	main = append(main, cellsOf(pols[:4], []float64{30}, func(s *sim.Scenario) { s.Clients = 600 })...)
	mixed := grid.Cell{Scenario: world(30), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	mixed.Mix[0] = sim.Group{Share: 0.25, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
	main = append(main, mixed)
	main = append(main, cellsOf([]sim.Policy{{Kind: sim.Fixed, Base: 2 * time.Second}, sim.DefaultPolicy(sim.FullJitter)}, []float64{30},
		func(s *sim.Scenario) { s.RejectCost = 0.5 })...)
	return map[string]Input{
		"main":            simulate(t, main, 6, true),
		"six-policies":    simulate(t, cellsOf(six, []float64{30}, nil), 5, false),
		"six-timelines":   simulate(t, cellsOf(six, []float64{30}, nil), 5, true),
		"capacities-only": simulate(t, cellsOf(six[:2], []float64{15, 30, 60, 120}, nil), 3, false),
		"no-jitter":       simulate(t, cellsOf(six[3:5], []float64{30}, nil), 3, true),
		"one-seed":        simulate(t, cellsOf(six, []float64{15, 30}, nil), 1, true),
		"only-mixed":      simulate(t, []grid.Cell{mixed}, 2, false),
		"queueing":        simulate(t, append(queueCells(), cellsOf(six[:2], []float64{30}, nil)...), 4, false),
	}
}

func build(t *testing.T, in Input) (*Report, map[string]string) {
	t.Helper()
	r, err := Build(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range r.Files() {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name] = b.String()
	}
	return r, files
}

// truth is what the data says, computed from the records alone, without
// the analysis: per cell its t99 after recovery per seed (NaN: not
// reached), give-ups and traffic.
type truth struct {
	cell  grid.Cell
	seeds []uint32
	t99   []float64
	gave  []int
	sent  []int
	peak  []float64
}

func truths(in Input) map[string]*truth {
	out := map[string]*truth{}
	for _, r := range in.Dataset.Records {
		tr := out[r.CellKey]
		if tr == nil {
			tr = &truth{cell: r.Cell}
			out[r.CellKey] = tr
		}
		v := math.NaN()
		if r.Result.T99.Reached {
			v = (r.Result.T99.At - r.Cell.Scenario.RecoverAt).Seconds()
		}
		tr.seeds = append(tr.seeds, r.Seed)
		tr.t99 = append(tr.t99, v)
		tr.gave = append(tr.gave, r.Result.GaveUp)
		tr.sent = append(tr.sent, int(r.Result.SentAfterRecovery))
		tr.peak = append(tr.peak, r.Result.PeakRPS)
	}
	return out
}

func (tr *truth) mean() float64 {
	s := 0.0
	for _, v := range tr.t99 {
		s += v
	}
	return s / float64(len(tr.t99))
}

func (tr *truth) feasible() bool {
	sent := 0
	for i, v := range tr.t99 {
		if math.IsNaN(v) || tr.gave[i] > 0 {
			return false
		}
		sent += tr.sent[i]
	}
	return float64(sent)/float64(len(tr.sent))/float64(tr.cell.Scenario.Clients) <= analysis.DefaultBudget
}

// pairedLo is the lower end of the paired 95 % interval of other − best
// in t99; NaN below two common seeds.
func pairedLo(best, other *truth) (lo float64, identical bool) {
	var d []float64
	for i, s := range best.seeds {
		for j, u := range other.seeds {
			if s == u && !math.IsNaN(best.t99[i]) && !math.IsNaN(other.t99[j]) {
				d = append(d, other.t99[j]-best.t99[i])
			}
		}
	}
	identical = true
	m := 0.0
	for _, x := range d {
		m += x
		identical = identical && x == 0
	}
	if len(d) < 2 {
		return math.NaN(), identical
	}
	m /= float64(len(d))
	ss := 0.0
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(len(d)-1))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Quantile(0.975)
	return m - q*sd/math.Sqrt(float64(len(d))), identical
}

func sameScenario(a, b sim.Scenario) bool { return a == b }

var useCellRE = regexp.MustCompile(`\[(?:best of ([0-9]+) measured: )?\*\*([A-Z]+)\*\*( ≈)? ([0-9.]+) s( \[([0-9.]+), ([0-9.]+)\])?\]\((scenarios/[^)]+)\)`)

// TestReportClaims checks every claim the report's first screen makes
// against the records it came from, on each config: the policy named for
// a scenario is feasible, jitters and has the least mean t99 among those
// that do; its t99 and interval are the data's; "≈" is there exactly when
// another cannot be told apart from it (paired interval includes 0); the
// library ratios; the Pareto figure's front; the figures' captions and
// data.
func TestReportClaims(t *testing.T) {
	for name, in := range configs(t) {
		t.Run(name, func(t *testing.T) {
			r, files := build(t, in)
			md := files["report.md"]
			tr := truths(in)
			checkUse(t, r, md, tr, in)
			checkLibraries(t, r, md, tr)
			checkScenarioPages(t, r, files, tr)
			checkAvoid(t, r, md, tr)
			checkPareto3(t, r, files, tr)
			checkFigures(t, r, files)
			checkQueueing(t, r, files, in)
			if n := strings.Count(md, "\n"); n > 300 {
				t.Errorf("report.md has %d lines, want at most 300", n)
			}
			for _, f := range r.Figures {
				if !strings.Contains(md, "]("+f.PNG+")") || files[f.PNG] == "" || files[f.SVG] == "" {
					t.Errorf("figure %s: not embedded, or not written as PNG and SVG", f.Name)
				}
			}
			for _, m := range regexp.MustCompile(`\]\(((scenarios|plots)/[^)]+|article\.md)\)`).FindAllStringSubmatch(md, -1) {
				if _, ok := files[m[1]]; !ok {
					t.Errorf("report.md links to %s, which the report does not write", m[1])
				}
			}
		})
	}
}

func checkUse(t *testing.T, r *Report, md string, tr map[string]*truth, in Input) {
	t.Helper()
	seen := 0
	for _, m := range useCellRE.FindAllStringSubmatch(md, -1) {
		seen++
		measured := m[1]
		m = m[1:] // the groups below as before: letter, ≈, t99, interval, file
		var s *Scenario
		for i := range r.Scenarios {
			if r.Scenarios[i].File == m[7] {
				s = &r.Scenarios[i]
			}
		}
		if s == nil || s.Rec == nil || s.Rec.Best == nil {
			t.Errorf("%s: a recommendation where the report has none", m[7])
			continue
		}
		p := r.Decision.Policies[letterIndex(m[1])]
		var best *truth
		var cands []*truth
		for _, x := range tr {
			if sameScenario(x.cell.Scenario, s.All.Scenario) && !x.cell.Mixed() && x.cell.Policy.Jittered() && x.feasible() {
				cands = append(cands, x)
				if x.cell.Policy == p {
					best = x
				}
			}
		}
		if best == nil {
			t.Errorf("%s: %s names %s, which is not a feasible policy with jitter in this scenario", m[7], m[1], p.Plain())
			continue
		}
		if measured == "" { // recommend's answer: its search over the stored seeds
			checkRecommended(t, m[7], s, p, in)
			continue
		}
		if s.Recommended || measured != strconv.Itoa(len(cands)) {
			t.Errorf("%s: marked best of %s measured, with %d feasible policies with jitter measured (recommend's answer: %v)", m[7], measured, len(cands), s.Recommended)
		}
		for _, x := range cands {
			if x.mean() < best.mean()-1e-9 {
				t.Errorf("%s: %s (t99 %.3f) is feasible and faster than the recommended %s (%.3f)", m[7], x.cell.Policy.Short(), x.mean(), p.Short(), best.mean())
			}
		}
		// The same mean summed in another order may fall on the other side
		// of a rounding edge (34.150): the printed figure is right if it is
		// within half a unit of the last digit, plus that slack.
		if got, _ := strconv.ParseFloat(m[3], 64); math.Abs(got-best.mean()) > 0.05+1e-9 {
			t.Errorf("%s: t99 %.1f s in the report, %.3f in the data", m[7], got, best.mean())
		}
		tied := false
		for _, x := range cands {
			if x == best {
				continue
			}
			if lo, same := pairedLo(best, x); !same && !(lo > 0) {
				tied = true
			}
		}
		if tied != (m[2] != "") {
			t.Errorf("%s: \"≈\" shown %v, but another candidate cannot be told apart: %v", m[7], m[2] != "", tied)
		}
	}
	want := 0
	for _, s := range r.Scenarios {
		if s.Rec != nil && s.Rec.Best != nil {
			want++
		}
	}
	if seen != want {
		t.Errorf("%d recommendations in the table, %d scenarios with one", seen, want)
	}
}

func letterIndex(l string) int {
	i := 0
	for _, c := range l {
		i = i*26 + int(c-'A') + 1
	}
	return i - 1
}

var libCellRE = regexp.MustCompile(`\[(fine, ([0-9.]+)×|([0-9.]+)× slower|no jitter, ([0-9.]+)×|all give up|some give up[^\]]*|not finished|over budget: ([0-9.]+) req/client)\]\((scenarios/[^)]+)\)`)

func checkLibraries(t *testing.T, r *Report, md string, tr map[string]*truth) {
	t.Helper()
	sec := md
	if i := strings.Index(md, "## Library defaults"); i >= 0 {
		sec = md[i:]
		if j := strings.Index(sec[3:], "\n## "); j >= 0 {
			sec = sec[:j+3]
		}
	} else {
		return
	}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| library") {
			continue
		}
		label := strings.TrimSpace(strings.Split(line, "|")[1])
		name, _, _ := strings.Cut(label, " (")
		if want := (sim.Policy{Preset: name}).PresetLabel(); label != want {
			t.Errorf("library row %q: want %q, which says what the preset's backoff is for", label, want)
		}
		for _, m := range libCellRE.FindAllStringSubmatch(line, -1) {
			var s *Scenario
			for i := range r.Scenarios {
				if r.Scenarios[i].File == m[6] {
					s = &r.Scenarios[i]
				}
			}
			var lib, best *truth
			for _, x := range tr {
				if !sameScenario(x.cell.Scenario, s.All.Scenario) || x.cell.Mixed() {
					continue
				}
				if x.cell.Policy.Preset == name {
					lib = x
				}
				if x.cell.Policy == s.Rec.Best.Cell.Policy {
					best = x
				}
			}
			if lib == nil || best == nil {
				t.Errorf("%s in %s: no such cells", name, m[6])
				continue
			}
			ratio := lib.mean() / best.mean()
			switch {
			case m[2] != "":
				if !lib.feasible() || ratio > analysis.FineFactor || m[2] != strconv.FormatFloat(ratio, 'f', 2, 64) {
					t.Errorf("%s in %s: %q, but feasible %v, ratio %.4f", name, m[6], m[1], lib.feasible(), ratio)
				}
			case m[3] != "":
				if !lib.feasible() || ratio <= analysis.FineFactor || m[3] != strconv.FormatFloat(ratio, 'f', 2, 64) || !lib.cell.Policy.Jittered() {
					t.Errorf("%s in %s: %q, but feasible %v, ratio %.4f, jitter %v", name, m[6], m[1], lib.feasible(), ratio, lib.cell.Policy.Jittered())
				}
			case m[4] != "":
				if !lib.feasible() || lib.cell.Policy.Jittered() || m[4] != strconv.FormatFloat(ratio, 'f', 2, 64) {
					t.Errorf("%s in %s: %q, but feasible %v, ratio %.4f, jitter %v", name, m[6], m[1], lib.feasible(), ratio, lib.cell.Policy.Jittered())
				}
			case m[1] == "all give up":
				for _, g := range lib.gave {
					if g != lib.cell.Scenario.Clients {
						t.Errorf("%s in %s: \"all give up\", but %d of %d gave up", name, m[6], g, lib.cell.Scenario.Clients)
					}
				}
			default:
				if lib.feasible() {
					t.Errorf("%s in %s: %q, but it is feasible", name, m[6], m[1])
				}
			}
		}
	}
}

// checkScenarioPages checks each page's "cannot be told apart" list: every
// policy named has a paired interval that includes 0.
func checkScenarioPages(t *testing.T, r *Report, files map[string]string, tr map[string]*truth) {
	t.Helper()
	for _, s := range r.Scenarios {
		page := files[s.File]
		if page == "" {
			t.Errorf("%s: not written", s.File)
			continue
		}
		if s.Rec == nil || s.Rec.Best == nil {
			continue
		}
		if strings.Contains(page, "cannot be told apart") != (len(s.Rec.Ties) > 0) {
			t.Errorf("%s: says \"cannot be told apart\" %v with %d ties", s.File, !strings.Contains(page, "cannot be told apart"), len(s.Rec.Ties))
		}
		var best *truth
		for _, x := range tr {
			if sameScenario(x.cell.Scenario, s.All.Scenario) && x.cell.Policy == s.Rec.Best.Cell.Policy && !x.cell.Mixed() {
				best = x
			}
		}
		for _, c := range s.Rec.Ties {
			for _, x := range tr {
				if sameScenario(x.cell.Scenario, s.All.Scenario) && x.cell.Policy == c.Other.Cell.Policy && !x.cell.Mixed() {
					if lo, same := pairedLo(best, x); same || lo > 0 {
						t.Errorf("%s: %s named as not told apart, but its paired interval lies above 0 (lo %.3f)", s.File, x.cell.Policy.Short(), lo)
					}
				}
			}
		}
	}
}

// checkFigures checks every embedded figure: not degenerate, its title and
// caption name the scenario it shows, the Pareto front is the front, the
// heat map's "darker is slower" holds, and the PNG the report wrote is not
// blank.
func checkFigures(t *testing.T, r *Report, files map[string]string) {
	t.Helper()
	for _, f := range r.Figures {
		if why := f.Degenerate(); why != "" {
			t.Errorf("%s: degenerate: %s", f.Name, why)
		}
		scen := f.Title[strings.LastIndex(f.Title, " — ")+len(" — "):]
		if !strings.Contains(f.Title, " — ") || !strings.HasPrefix(f.Caption, scen) {
			t.Errorf("%s: title %q and caption %q do not name the same scenario", f.Name, f.Title, f.Caption)
		}
		img, err := png.Decode(strings.NewReader(files[f.PNG]))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		colours := map[[4]uint32]bool{}
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 5 {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 5 {
				r, g, b, a := img.At(x, y).RGBA()
				colours[[4]uint32{r, g, b, a}] = true
			}
		}
		if len(colours) < 5 {
			t.Errorf("%s: %d colours: blank", f.Name, len(colours))
		}
		switch {
		case f.Name == "pareto":
			checkPareto(t, f.Figure)
		case f.ZName != "":
			cm := plots.HeatColours(0, 1)
			if !strings.Contains(f.Caption, "darker red is slower") || !(plots.Luminance(mustAt(t, cm, 1)) < plots.Luminance(mustAt(t, cm, 0))) {
				t.Errorf("%s: caption %q against a colour map whose largest value is not darker", f.Name, f.Caption)
			}
		}
	}
}

func mustAt(t *testing.T, cm palette.ColorMap, v float64) color.Color {
	c, err := cm.At(v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func checkPareto(t *testing.T, f plots.Figure) {
	t.Helper()
	var front, others []plots.Point
	for _, s := range f.Panels[0].Series {
		switch s.Mark {
		case plots.Front:
			front = s.Points
		case plots.Dot:
			others = s.Points
		}
	}
	all := append(append([]plots.Point(nil), front...), others...)
	dom := func(b, a plots.Point) bool { return b.X <= a.X && b.Y <= a.Y && (b.X < a.X || b.Y < a.Y) }
	for _, a := range front {
		for _, b := range all {
			if dom(b, a) {
				t.Errorf("pareto: front point %+v is dominated by %+v", a, b)
			}
		}
	}
	for _, a := range others {
		ok := false
		for _, b := range front {
			ok = ok || dom(b, a) || (b.X == a.X && b.Y == a.Y)
		}
		if !ok {
			t.Errorf("pareto: %+v is off the front but no front point beats it", a)
		}
	}
	if !sort.SliceIsSorted(front, func(i, j int) bool { return front[i].X < front[j].X }) {
		t.Error("pareto: the front is not drawn in order of t99")
	}
	if len(f.Notes) != len(front) {
		t.Errorf("pareto: %d numbered names for %d front points", len(f.Notes), len(front))
	}
}

// checkAvoid checks each row of the Avoid table: most scenarios where the
// shape was measured have it not fine, and the example's ratio and
// feasibility are the records'.
func checkAvoid(t *testing.T, r *Report, md string, tr map[string]*truth) {
	t.Helper()
	find := func(sc sim.Scenario, p sim.Policy) *truth {
		for _, x := range tr {
			if sameScenario(x.cell.Scenario, sc) && x.cell.Policy == p && !x.cell.Mixed() {
				return x
			}
		}
		return nil
	}
	for _, a := range r.Decision.Avoid {
		if 2*(a.Infeasible+a.Slow) <= a.Measured {
			t.Errorf("avoid %s: not fine in %d+%d of %d: not most", analysis.ShapeLabel(a.Shape), a.Infeasible, a.Slow, a.Measured)
		}
		s := r.Scenarios[a.Example]
		ex, best := find(s.All.Scenario, a.Cell.Cell.Policy), find(s.All.Scenario, s.Rec.Best.Cell.Policy)
		line := ""
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "| "+cell(analysis.ShapeLabel(a.Shape))+" |") {
				line = l
			}
		}
		if ex == nil || best == nil || line == "" {
			t.Errorf("avoid %s: no example cells or no row", analysis.ShapeLabel(a.Shape))
			continue
		}
		ratio := ex.mean() / best.mean()
		switch {
		case ex.feasible() && (ratio <= analysis.FineFactor || !strings.Contains(line, strconv.FormatFloat(ratio, 'f', 2, 64)+"×")):
			t.Errorf("avoid %s: feasible with ratio %.4f, row %q", analysis.ShapeLabel(a.Shape), ratio, line)
		case !ex.feasible() && strings.HasSuffix(line, "|  |"):
			t.Errorf("avoid %s: not feasible, but the row gives no reason: %q", analysis.ShapeLabel(a.Shape), line)
		}
	}
}

func (tr *truth) means() [3]float64 {
	var m [3]float64
	for i := range tr.t99 {
		m[0] += tr.t99[i]
		m[1] += tr.peak[i]
		m[2] += float64(tr.sent[i])
	}
	for k := range m {
		m[k] /= float64(len(tr.t99))
	}
	return m
}

var rankRowRE = regexp.MustCompile(`^\| \d+ \| (.+?)( \*)?( \*\*use\*\*| \*no jitter\*)? \| `)

// checkPareto3 checks the scenario pages' Pareto marks: a row marked * is
// beaten by no feasible candidate on t99, peak and traffic at once; a
// feasible row shown without the mark is beaten by one.
func checkPareto3(t *testing.T, r *Report, files map[string]string, tr map[string]*truth) {
	t.Helper()
	for _, s := range r.Scenarios {
		var feasible []*truth
		byName := map[string]*truth{}
		for _, x := range tr {
			if sameScenario(x.cell.Scenario, s.All.Scenario) && !x.cell.Mixed() {
				byName[analysis.ShortName(x.cell.Policy)] = x
				if x.feasible() {
					feasible = append(feasible, x)
				}
			}
		}
		beaten := func(x *truth) bool {
			for _, y := range feasible {
				a, b := x.means(), y.means()
				if analysis.Dominates(b[:], a[:]) {
					return true
				}
			}
			return false
		}
		rows := 0
		for _, line := range strings.Split(files[s.File], "\n") {
			m := rankRowRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			rows++
			x := byName[m[1]]
			if x == nil {
				t.Errorf("%s: ranking row %q names no cell", s.File, m[1])
				continue
			}
			if !x.feasible() {
				if m[2] != "" {
					t.Errorf("%s: %s is marked on the front but is not feasible", s.File, m[1])
				}
				continue
			}
			if (m[2] != "") == beaten(x) {
				t.Errorf("%s: %s marked on the front %v, beaten by a feasible candidate %v", s.File, m[1], m[2] != "", beaten(x))
			}
		}
		if rows == 0 {
			t.Errorf("%s: no ranking rows", s.File)
		}
	}
}

// checkRecommended checks a Use cell shown as recommend's answer: the
// scenario's cells hold recommend's whole candidate space, and its search
// over the records (aggregated apart from the report's scan) names p.
func checkRecommended(t *testing.T, file string, s *Scenario, p sim.Policy, in Input) {
	t.Helper()
	if !s.Recommended {
		t.Errorf("%s: shown as recommend's answer, but the report did not search", file)
		return
	}
	space := grid.CandidateSpace(s.All.Scenario)
	q := s.Query
	q.Budget, q.Margin, q.AllowGiveUp = 0, 0, false
	rec, ok, err := analysis.SearchStored(space, q, analysis.DefaultSeeding, analysis.Aggregates(in.Dataset.Records))
	if err != nil || !ok || rec.Best == nil {
		t.Errorf("%s: recommend's search over the records: %v, stored %v", file, err, ok)
		return
	}
	if rec.Best.Cell.Policy != p {
		t.Errorf("%s: the report names %s, recommend's search over the records %s", file, p.Short(), rec.Best.Cell.Policy.Short())
	}
}
