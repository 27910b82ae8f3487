package reports

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"
)

// queueCells is a small metastable world: 2 workers × 10 ms (200
// requests/s), clients that time out after 400 ms, at 50 and 80 % load,
// down for 5 or 20 s after 10 s of steady state, an unbounded queue or one
// that turns away waits over 300 ms; policies that retry for ever and one
// that gives up after 3 attempts. On seeds 1–4 it holds policies never
// back, back in some seeds and back in all, ties and separations.
func queueCells() []grid.Cell {
	pols := []sim.Policy{{Kind: sim.Fixed, Base: time.Second},
		{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 30 * time.Second, Multiplier: 2},
		{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 30 * time.Second, Multiplier: 2, MaxAttempts: 3},
		{Kind: sim.Decorrelated, Base: 100 * time.Millisecond, Cap: 30 * time.Second}}
	var out []grid.Cell
	for _, rate := range []float64{100, 160} {
		for _, down := range []time.Duration{5 * time.Second, 20 * time.Second} {
			for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
				for _, p := range pols {
					sc := sim.Article()
					sc.Clients, sc.Spread = 1, 0
					sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 2, "exponential", 10*time.Millisecond, 400*time.Millisecond
					sc.ArrivalRate, sc.QueueWait = rate, wait
					sc.OutageStart, sc.RecoverAt = 10*time.Second, 10*time.Second+down
					sc.Horizon = sc.RecoverAt + time.Minute
					out = append(out, grid.Cell{Scenario: sc, Policy: p})
				}
			}
		}
	}
	// A server of 3 workers measured at one outage: no figure, and the
	// report says why.
	for _, c := range out[:2] {
		c.Scenario.Concurrency = 3
		out = append(out, c)
	}
	// A cohort of 300 clients and no open-loop traffic: no steady state to
	// return to, so not ranked.
	closed := out[0]
	closed.Scenario.Clients, closed.Scenario.ArrivalRate = 300, 0
	return append(out, closed)
}

// qtruth is a queueing cell as its records say, computed without the
// analysis package: per seed the time back after recovery (NaN: never),
// goodput over demand, and the share of busy time wasted.
type qtruth struct {
	cell   grid.Cell
	seeds  []uint32
	back   []float64
	good   []float64
	wasted []float64
}

func qtruths(in Input) []*qtruth {
	var out []*qtruth
	at := map[string]*qtruth{}
	for _, r := range in.Dataset.Records {
		if r.Cell.Scenario.Concurrency == 0 || r.Cell.Scenario.ArrivalRate == 0 {
			continue
		}
		tr := at[r.CellKey]
		if tr == nil {
			tr = &qtruth{cell: r.Cell}
			at[r.CellKey] = tr
			out = append(out, tr)
		}
		v := math.NaN()
		if r.Result.Recovered.Reached {
			v = (r.Result.Recovered.At - r.Cell.Scenario.RecoverAt).Seconds()
		}
		tr.seeds = append(tr.seeds, r.Seed)
		tr.back = append(tr.back, v)
		tr.good = append(tr.good, float64(r.Result.Goodput)/float64(r.Result.Offered+int64(r.Cell.Scenario.Clients)))
		w := 0.0
		if r.Result.BusyMS > 0 {
			w = r.Result.WastedMS / r.Result.BusyMS
		}
		tr.wasted = append(tr.wasted, w)
	}
	return out
}

func (tr *qtruth) nBack() int {
	n := 0
	for _, v := range tr.back {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

func meanOf(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	return s / float64(n)
}

// qtied says whether the data cannot tell x and y apart on the return to
// steady state: both never back; the same share of seeds back, not all;
// different shares with Fisher's p ≥ 0.05 (fisherP, exact) and, when one is
// back in every seed, a paired 95 % interval of the difference with the
// other's seeds not back counted at the horizon that does not put the one
// back in every seed first; or, both back in every seed (the same seeds
// here), a paired 95 % interval of the difference that includes 0.
func qtied(x, y *qtruth) bool {
	bx, by, n := x.nBack(), y.nBack(), len(x.seeds)
	switch {
	case bx == 0 && by == 0:
		return true
	case bx < n || by < n:
		if bx == by || fisherP(bx, n-bx, by, n-by) < 0.05 {
			return bx == by
		}
		if bx < n && by < n || n < 2 {
			return true
		}
		w := (x.cell.Scenario.Horizon - x.cell.Scenario.RecoverAt).Seconds()
		at := func(v float64) float64 {
			if math.IsNaN(v) {
				return w
			}
			return v
		}
		var d []float64
		for i := range x.back {
			d = append(d, at(y.back[i])-at(x.back[i]))
		}
		lo, hi := pairedInterval(d)
		return !(bx == n && lo > 0 || by == n && hi < 0)
	}
	if n < 2 {
		return true
	}
	var d []float64
	for i := range x.back {
		d = append(d, y.back[i]-x.back[i])
	}
	lo, hi := pairedInterval(d)
	return !(lo > 0 || hi < 0)
}

// pairedInterval is the Student-t 95 % interval of the mean of d, from 0
// width when every difference is the same.
func pairedInterval(d []float64) (lo, hi float64) {
	m := meanOf(d)
	ss := 0.0
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Quantile(0.975)
	half := q * math.Sqrt(ss/float64(len(d)-1)/float64(len(d)))
	return m - half, m + half
}

var (
	queueRowRE   = regexp.MustCompile(`^\| (\d+) \| (.+?) \| (\d+) of (\d+) \| (not back|[0-9.]+)[^|]* \| ([0-9, ]*) \| ([0-9.]+) \| [0-9.]+ \| ([0-9.]+) \| [^|]+ \|$`)
	degradedRE   = regexp.MustCompile(`(.+?) \((\d+) of (\d+) seeds?\)`)
	gridCellRE   = regexp.MustCompile(`^(\*\*)?([0-9.]+)(\*\*)?(, not back in (\d+) of (\d+))?$|^not back \((\d+) of (\d+)\)$`)
	queueTableRE = regexp.MustCompile(`(?s)\n\| policy \|([^\n]*)\n\|---[^\n]*\n((?:\|[^\n]*\n)+)`)
)

// checkQueueing checks every claim the report makes about queueing cells
// against the records: on queueing.md, each row's seeds back, time back,
// goodput and wasted work, its "≈" (recomputed: paired interval or
// Fisher's test), the order (never back never above back, more seeds back
// first, then sooner), and the "not back to steady state by the horizon" sentence; in
// report.md, each grid cell's time, bold exactly for the first back and
// those back that cannot be told apart from it, and the seeds not back.
func checkQueueing(t *testing.T, r *Report, files map[string]string, in Input) {
	t.Helper()
	trs := qtruths(in)
	closed := map[string]bool{}
	for _, rec := range in.Dataset.Records {
		if sc := rec.Cell.Scenario; sc.Concurrency > 0 && sc.ArrivalRate == 0 {
			closed[rec.CellKey] = true
		}
	}
	var said string
	for _, w := range r.Warnings {
		if strings.Contains(w, "without open-loop traffic") {
			said = w
		}
	}
	if (len(closed) > 0) != (said != "") || len(closed) > 0 && !strings.HasPrefix(said, strconv.Itoa(len(closed))+" cell") {
		t.Errorf("warning %q, the records: %d queueing cells without open-loop traffic", said, len(closed))
	}
	for _, q := range r.Queueing {
		if q.Scenario.ArrivalRate == 0 {
			t.Errorf("a queueing scenario without open-loop traffic ranked")
		}
	}
	if len(trs) == 0 {
		if len(r.Queueing) > 0 || files[QueueingPage] != "" || strings.Contains(files["report.md"], "Queueing") {
			t.Errorf("no queueing cells, but the report has a queueing section")
		}
		return
	}
	page := files[QueueingPage]
	sections := strings.Split(page, "\n### ")[1:]
	if len(sections) != len(r.Queueing) {
		t.Fatalf("%s has %d scenarios, the report %d", QueueingPage, len(sections), len(r.Queueing))
	}
	covered := 0
	firsts := make([]map[string]bool, len(r.Queueing)) // per scenario, the names back first
	names := make([]map[string]*qtruth, len(r.Queueing))
	for si, sec := range sections {
		sc := r.Queueing[si].Scenario
		head, _, _ := strings.Cut(sec, "\n")
		if want := upperFirst(loadWords(sc)) + ", " + outageOf(sc).String() + " outage"; head != want {
			t.Errorf("scenario %d: heading %q, want %q", si, head, want)
		}
		byName := map[string]*qtruth{}
		for _, tr := range trs {
			if tr.cell.Scenario == sc {
				n := queueName(tr.cell.Policy)
				if byName[n] != nil {
					t.Errorf("%s: two policies named %q", head, n)
				}
				byName[n] = tr
				covered++
			}
		}
		names[si] = byName
		var rows []*qtruth
		pos := map[*qtruth]int{}
		for _, line := range strings.Split(sec, "\n") {
			m := queueRowRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			tr := byName[m[2]]
			if tr == nil {
				t.Errorf("%s: row %q names no policy of the scenario", head, m[2])
				continue
			}
			pos[tr] = len(rows)
			rows = append(rows, tr)
			b, _ := strconv.Atoi(m[3])
			n, _ := strconv.Atoi(m[4])
			if b != tr.nBack() || n != len(tr.seeds) {
				t.Errorf("%s: %s back in %d of %d seeds, the records %d of %d", head, m[2], b, n, tr.nBack(), len(tr.seeds))
			}
			if m[5] == "not back" {
				if tr.nBack() != 0 {
					t.Errorf("%s: %s said never back, back in %d seeds", head, m[2], tr.nBack())
				}
			} else if got, _ := strconv.ParseFloat(m[5], 64); math.Abs(got-meanOf(tr.back)) > 0.05+1e-9 {
				t.Errorf("%s: %s back after %s s, the records %.3f", head, m[2], m[5], meanOf(tr.back))
			}
			if got, _ := strconv.ParseFloat(m[7], 64); math.Abs(got-100*meanOf(tr.good)) > 0.05+1e-9 {
				t.Errorf("%s: %s goodput %s %%, the records %.3f", head, m[2], m[7], 100*meanOf(tr.good))
			}
			if got, _ := strconv.ParseFloat(m[8], 64); math.Abs(got-100*meanOf(tr.wasted)) > 0.05+1e-9 {
				t.Errorf("%s: %s wasted %s %%, the records %.3f", head, m[2], m[8], 100*meanOf(tr.wasted))
			}
		}
		if len(rows) != len(byName) {
			t.Fatalf("%s: %d rows for %d policies", head, len(rows), len(byName))
		}
		for i, x := range rows {
			for j, y := range rows {
				if j <= i {
					continue
				}
				bx, by := x.nBack()*len(y.seeds), y.nBack()*len(x.seeds)
				if bx < by || bx == by && x.nBack() == len(x.seeds) && meanOf(x.back) > meanOf(y.back)+1e-9 {
					t.Errorf("%s: row %d ranks above row %d, which came back in more seeds or sooner", head, i+1, j+1)
				}
			}
		}
		// "≈" column: exactly the rows the data cannot tell apart.
		for _, line := range strings.Split(sec, "\n") {
			m := queueRowRE.FindStringSubmatch(line)
			if m == nil || byName[m[2]] == nil {
				continue
			}
			x := byName[m[2]]
			var got, want []int
			for _, f := range strings.Split(m[6], ", ") {
				if k, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
					got = append(got, k-1)
				}
			}
			for j, y := range rows {
				if y != x && qtied(x, y) {
					want = append(want, j)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s shown ≈ rows %v, the records tie it with %v", head, m[2], got, want)
			}
		}
		// The first back and those back tied with it.
		firsts[si] = map[string]bool{}
		if rows[0].nBack() > 0 {
			for n, tr := range byName {
				if tr == rows[0] || tr.nBack() > 0 && qtied(rows[0], tr) {
					firsts[si][n] = true
				}
			}
		}
		// "Not back to steady state by the horizon: …".
		var want []string
		for _, tr := range rows {
			if k := len(tr.seeds) - tr.nBack(); k > 0 {
				want = append(want, queueName(tr.cell.Policy)+" ("+strconv.Itoa(k)+" of "+strconv.Itoa(len(tr.seeds))+" seeds)")
			}
		}
		_, sentence, found := strings.Cut(sec, "Not back to steady state by the horizon: ")
		switch {
		case found != (len(want) > 0):
			t.Errorf("%s: a sentence on degraded policies %v, but %d of them are", head, found, len(want))
		case found:
			sentence, _, _ = strings.Cut(sentence, ".\n")
			var got []string
			for _, m := range degradedRE.FindAllStringSubmatch(sentence, -1) {
				got = append(got, strings.TrimPrefix(m[0], "; "))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: not back by the horizon %q, the records %q", head, got, want)
			}
		}
	}
	if covered != len(trs) {
		t.Errorf("queueing.md covers %d of %d queueing cells", covered, len(trs))
	}
	checkQueueGrid(t, r, files["report.md"], firsts, names)
	checkQueueFigures(t, r, files, trs)
	// The warnings about queueing cells: intervals of the time back below 0.
	clamped := 0
	for _, tr := range trs {
		if n := len(tr.seeds); tr.nBack() == n && n >= 2 {
			d := make([]float64, n) // the interval of the mean of the times is that of their differences from 0
			for i := range d {
				d[i] = tr.back[i]
			}
			if lo, _ := pairedInterval(d); lo < 0 {
				clamped++
			}
		}
	}
	var got string
	for _, w := range r.Warnings {
		if strings.Contains(w, "interval of the time back") {
			got = w
		}
	}
	if want := strconv.Itoa(clamped) + " of " + strconv.Itoa(len(trs)) + " cells of a queueing server"; (clamped > 0) != (got != "") || clamped > 0 && !strings.HasPrefix(got, want) {
		t.Errorf("warning %q, the records: %d of %d queueing cells with an interval of the time back below 0", got, clamped, len(trs))
	}
}

var moreRE = regexp.MustCompile(`^(.*) \(\+([0-9]+)\)$`)

// checkQueueFigures checks each queueing figure's data against the
// records: a line point per policy and outage exactly where the policy came
// back in every seed, at the records' mean; a hollow dot at the horizon for
// each policy and scenario not back in some seed; and the figure embedded
// and written.
func checkQueueFigures(t *testing.T, r *Report, files map[string]string, trs []*qtruth) {
	t.Helper()
	lines, stuck := 0, 0
	for _, f := range r.QueueFigures {
		if !strings.Contains(files["report.md"], "]("+f.PNG+")") || files[f.PNG] == "" || files[f.SVG] == "" {
			t.Errorf("%s: not embedded, or not written as PNG and SVG", f.Name)
		}
		// A line may stand for several policies: "A (+2)" in the legend,
		// "A = B = C" in the caption.
		sets := map[string][]string{}
		if _, list, ok := strings.Cut(f.Caption, plots.SharedLines); ok {
			for _, set := range strings.Split(strings.TrimSuffix(list, "."), "; ") {
				names := strings.Split(set, " = ")
				sets[names[0]] = names
			}
		}
		for _, pn := range f.Panels {
			for _, s := range pn.Series {
				names := []string{s.Name}
				if m := moreRE.FindStringSubmatch(s.Name); m != nil {
					names = sets[m[1]]
					if n, _ := strconv.Atoi(m[2]); len(names) != n+1 {
						t.Errorf("%s: %q stands for %d more, the caption names %d: %q", f.Name, s.Name, n, len(names)-1, f.Caption)
					}
				}
				for _, pt := range s.Points {
					if s.Mark == plots.Hollow {
						var match []*qtruth
						for _, tr := range trs {
							sc := tr.cell.Scenario
							if strings.HasSuffix(f.Title, " — "+serverShort(sc)) && pn.Title == loadWords(sc) && (sc.RecoverAt-sc.OutageStart).Seconds() == pt.X {
								match = append(match, tr)
							}
						}
						stuck++
						w := (match[0].cell.Scenario.Horizon - match[0].cell.Scenario.RecoverAt).Seconds()
						if pt.Y != w {
							t.Errorf("%s, %s: a policy not back drawn at %g s, not at the horizon %g", f.Name, pn.Title, pt.Y, w)
						}
						continue
					}
					for _, name := range names {
						var match []*qtruth
						for _, tr := range trs {
							sc := tr.cell.Scenario
							if strings.HasSuffix(f.Title, " — "+serverShort(sc)) && pn.Title == loadWords(sc) && (sc.RecoverAt-sc.OutageStart).Seconds() == pt.X &&
								queueName(tr.cell.Policy) == name {
								match = append(match, tr)
							}
						}
						lines++
						if len(match) != 1 || match[0].nBack() != len(match[0].seeds) || math.Abs(pt.Y-meanOf(match[0].back)) > 1e-9 {
							t.Errorf("%s, %s: %s at %g s outage drawn at %g; the records: %d cells", f.Name, pn.Title, name, pt.X, pt.Y, len(match))
						}
					}
				}
			}
		}
	}
	// Every server has its figure or says why it has none.
	servers := map[string]bool{}
	for _, tr := range trs {
		servers[serverWords(tr.cell.Scenario)] = true
	}
	md := files["report.md"]
	if got := strings.Count(md, "![Back to steady state") + strings.Count(md, "No figure of the time back against the outage: "); got != len(servers) {
		t.Errorf("report.md: %d queueing figures or reasons for none, for %d servers", got, len(servers))
	}
	want, drawn := 0, 0 // cells of servers with a figure: not back in some seed, all
	for _, tr := range trs {
		if !slices.ContainsFunc(r.QueueFigures, func(f Figure) bool { return strings.HasSuffix(f.Title, " — "+serverShort(tr.cell.Scenario)) }) {
			continue
		}
		drawn++
		if tr.nBack() < len(tr.seeds) {
			want++
		}
	}
	if stuck != want || lines+stuck != drawn {
		t.Errorf("queueing figures: %d line points and %d hollow dots for %d cells, %d of them not back in some seed", lines, stuck, drawn, want)
	}
}

// checkQueueGrid checks report.md's grids: one per server, a column per
// scenario in the report's order, each cell the records' time back, bold
// exactly for the first back, and the seeds not back.
func checkQueueGrid(t *testing.T, r *Report, md string, firsts []map[string]bool, names []map[string]*qtruth) {
	t.Helper()
	_, sec, _ := strings.Cut(md, "## Queueing servers")
	sec, _, _ = strings.Cut(sec, "\n## ")
	si := 0
	for _, tm := range queueTableRE.FindAllStringSubmatch(sec, -1) {
		cols := strings.Split(strings.Trim(strings.TrimSpace(tm[1]), "|"), "|")
		base := si
		for c := range cols {
			if si+c >= len(r.Queueing) || strings.TrimSpace(cols[c]) != columnWords(r.Queueing[si+c].Scenario) {
				t.Fatalf("grid column %q is not the report's scenario %d", cols[c], si+c)
			}
		}
		si += len(cols)
		for _, line := range strings.Split(strings.TrimSpace(tm[2]), "\n") {
			fields := strings.Split(strings.Trim(line, "|"), " | ")
			name := strings.TrimSpace(fields[0])
			for c, f := range fields[1:] {
				f = strings.TrimSpace(f)
				tr := names[base+c][name]
				if tr == nil {
					if f != "" {
						t.Errorf("grid: %s has %q where it was not measured", name, f)
					}
					continue
				}
				m := gridCellRE.FindStringSubmatch(f)
				if m == nil {
					t.Errorf("grid: %s: cell %q", name, f)
					continue
				}
				n, b := len(tr.seeds), tr.nBack()
				if m[7] != "" {
					if b != 0 || m[7] != strconv.Itoa(n) || m[8] != strconv.Itoa(n) {
						t.Errorf("grid: %s, %s: %q, the records back in %d of %d", name, cols[c], f, b, n)
					}
					continue
				}
				if got, _ := strconv.ParseFloat(m[2], 64); math.Abs(got-meanOf(tr.back)) > 0.05+1e-9 {
					t.Errorf("grid: %s, %s: %s s, the records %.3f", name, cols[c], m[2], meanOf(tr.back))
				}
				if (m[1] != "") != firsts[base+c][name] {
					t.Errorf("grid: %s, %s: bold %v, among the first back by the records %v", name, cols[c], m[1] != "", firsts[base+c][name])
				}
				if notBack := m[5]; (notBack != "") != (b < n) || notBack != "" && (notBack != strconv.Itoa(n-b) || m[6] != strconv.Itoa(n)) {
					t.Errorf("grid: %s, %s: %q, the records back in %d of %d", name, cols[c], f, b, n)
				}
			}
		}
	}
	if si != len(r.Queueing) {
		t.Errorf("report.md's grids have %d columns, the report %d queueing scenarios", si, len(r.Queueing))
	}
}

// TestFigureFootersNameTheirSeeds: a figure's footer names the seeds of the
// runs it draws, not every seed of the dataset: queueing cells run at
// seeds 1–3 beside counting cells at 1–6, whose herd figure draws each
// policy's first seed.
func TestFigureFootersNameTheirSeeds(t *testing.T) {
	six := []sim.Policy{sim.DefaultPolicy(sim.FullJitter), sim.DefaultPolicy(sim.Decorrelated)}
	q := simulate(t, queueCells()[:16], 3, false) // one load, two outages
	c := simulate(t, cellsOf(six, []float64{30, 60}, nil), 6, true)
	in := c
	in.Dataset.Records = append(slices.Clone(c.Dataset.Records), q.Dataset.Records...)
	r, _ := build(t, in)
	if !strings.HasSuffix(r.Footer, "seeds 1–6") {
		t.Errorf("the dataset's footer %q, want seeds 1–6", r.Footer)
	}
	want := map[string]string{"queue-recovery": "seeds 1–3", "queue-recovery-2": "seeds 1–3", "herd": "seeds 1", "recovery": "seeds 1", "ranking": "seeds 1–6", "t99-capacity": "seeds 1–6"}
	seen := 0
	for _, f := range slices.Concat(r.Figures, r.QueueFigures) {
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		seen++
		if got := r.footer(f); !strings.HasSuffix(got, " · "+w) {
			t.Errorf("%s: footer %q, want it to end with %q", f.Name, got, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d figures checked were drawn", seen, len(want))
	}
}
