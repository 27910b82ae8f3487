package reports

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The client components' section says for each comparison what the data
// says, computed here from the records alone, and its counts add up to
// the cells it prints.
func TestControlsClaims(t *testing.T) {
	t.Parallel()
	dec, fixed := sim.DefaultPolicy(sim.Decorrelated), sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}
	var pols []sim.Policy
	for _, b := range []sim.Policy{dec, fixed} {
		pols = append(pols, b)
		for _, c := range []sim.Policy{
			{BreakerRatio: 0.1, BreakerMinThroughput: 20, ClientsPerProcess: 30},
			{RetryCap: 3},
			{ThrottleK: 2, ClientsPerProcess: 30},
			{AWSAdaptive: true, ClientsPerProcess: 30},
		} {
			p := b
			p.BreakerRatio, p.BreakerMinThroughput, p.RetryCap, p.ThrottleK, p.AWSAdaptive, p.ClientsPerProcess =
				c.BreakerRatio, c.BreakerMinThroughput, c.RetryCap, c.ThrottleK, c.AWSAdaptive, c.ClientsPerProcess
			pols = append(pols, p.Normalize())
		}
	}
	cells := cellsOf(pols, []float64{15, 60}, nil)
	cells = append(cells, cellsOf(pols, []float64{15, 60}, func(s *sim.Scenario) { s.RejectCost = 0.5 })...)
	in := simulate(t, cells, 5, false)
	r, files := build(t, in)
	md := files["report.md"]
	tr := truths(in)
	sec := md[strings.Index(md, "## Client-side throttling"):]
	sec = sec[:strings.Index(sec, "\n## ")+1]

	var counted [4]int
	words := map[string]int{"faster": 0, "slower": 1, "clients give up": 2, "no clear change": 3}
	if len(r.Controls) != 2 {
		t.Fatalf("%d tables, want 2 (reject cost 0 and 0.5)", len(r.Controls))
	}
	checked := 0
	for _, tb := range r.Controls {
		head := "### " + analysis.FamilyOf(tb.Scenario).String() + "\n"
		i := strings.Index(sec, head)
		if i < 0 {
			t.Fatalf("no heading %q", head)
		}
		body := sec[i+len(head):]
		for _, row := range tb.Rows {
			label := "| " + cell(analysis.ControlLabel(row.Policy)) + " |"
			j := strings.Index(body, label)
			if j < 0 {
				t.Fatalf("no row %q", label)
			}
			line := body[j : j+strings.Index(body[j:], "\n")]
			cols := strings.Split(strings.Trim(line, "|"), " | ")[1:]
			for c, p := range row.Pairs {
				with, without := tr[p.With.CellKey], tr[p.Without.CellKey]
				want := effectOf(with, without, tb.Scenario.Clients)
				m := regexp.MustCompile(`^\*\*([a-z ]+)\*\*`).FindStringSubmatch(strings.TrimSpace(cols[c]))
				if m == nil {
					t.Fatalf("cell %q: no effect", cols[c])
				}
				if m[1] != want {
					t.Errorf("%s at %g req/s: says %q, the data says %q (with %v, without %v)", label, tb.Capacities[c], m[1], want, with.t99, without.t99)
				}
				counted[words[m[1]]]++
				if want != "clients give up" {
					for _, x := range []struct {
						tr   *truth
						name string
					}{{with, "with"}, {without, "without"}} {
						if s := meanWords(x.tr); !strings.Contains(cols[c], s) {
							t.Errorf("%s at %g req/s: %q does not give t99 %s %s", label, tb.Capacities[c], cols[c], x.name, s)
						}
					}
				}
				checked++
			}
		}
	}
	m := regexp.MustCompile(`Of (\d+) comparisons: (\d+) faster, (\d+) slower, (\d+) with clients giving up, (\d+) without a clear change\.`).FindStringSubmatch(sec)
	if m == nil {
		t.Fatalf("no count sentence in\n%s", sec)
	}
	total, _ := strconv.Atoi(m[1])
	if total != checked {
		t.Errorf("says %d comparisons, prints %d", total, checked)
	}
	for e := range counted {
		if n, _ := strconv.Atoi(m[2+e]); n != counted[e] {
			t.Errorf("says %d %s, prints %d", n, []string{"faster", "slower", "giving up", "unclear"}[e], counted[e])
		}
	}
	if counted[0]+counted[1]+counted[2] == 0 {
		t.Error("no comparison with an effect: the test would not see a wrong one")
	}
}

// effectOf is the rule the section states, from the per-seed values.
func effectOf(with, without *truth, clients int) string {
	mg := func(tr *truth) float64 {
		s := 0
		for _, g := range tr.gave {
			s += g
		}
		return float64(s) / float64(len(tr.gave))
	}
	if mg(with) > mg(without) && mg(with) > 0 {
		return "clients give up"
	}
	wf, of := finished(with), finished(without)
	switch {
	case wf && !of:
		return "faster"
	case !wf && of:
		return "slower"
	case !wf || !of:
		switch a, c := finishedSeeds(with), finishedSeeds(without); {
		case fisherP(a, len(with.t99)-a, c, len(without.t99)-c) >= 0.05:
		case a*len(without.t99) > c*len(with.t99):
			return "faster"
		case a*len(without.t99) < c*len(with.t99):
			return "slower"
		}
		return "no clear change"
	}
	wl, wh := interval(with.t99)
	ol, oh := interval(without.t99)
	if wh >= ol && oh >= wl {
		return "no clear change"
	}
	if with.mean() < without.mean() {
		return "faster"
	}
	return "slower"
}

// fisherP is Fisher's exact two-sided p on [[a b] [c d]], with exact
// binomials: the tables of the same margins no likelier than this one.
func fisherP(a, b, c, d int) float64 {
	r1, r2, k := int64(a+b), int64(c+d), int64(a+c)
	ways := func(x int64) *big.Int {
		return new(big.Int).Mul(new(big.Int).Binomial(r1, x), new(big.Int).Binomial(r2, k-x))
	}
	obs, sum := ways(int64(a)), new(big.Int)
	for x := int64(0); x <= k; x++ {
		if x <= r1 && k-x <= r2 {
			if w := ways(x); w.Cmp(obs) <= 0 {
				sum.Add(sum, w)
			}
		}
	}
	p, _ := new(big.Rat).SetFrac(sum, new(big.Int).Binomial(r1+r2, k)).Float64()
	return p
}

func finished(tr *truth) bool {
	for _, v := range tr.t99 {
		if math.IsNaN(v) {
			return false
		}
	}
	return true
}

// interval is the Student-t 95 % interval of the mean of xs.
func interval(xs []float64) (lo, hi float64) {
	n := float64(len(xs))
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	return m - half, m + half
}

// meanWords is a cell's t99 as the section prints it.
func meanWords(tr *truth) string {
	var xs []float64
	for _, v := range tr.t99 {
		if !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return "not finished"
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	out := fmt.Sprintf("%.1f s", s/float64(len(xs)))
	if u := len(tr.t99) - len(xs); u > 0 {
		out += fmt.Sprintf(", %d not finished", u)
	}
	return out
}

// The recovery section tells a cell whose clients gave up (a retry cap
// refuses their retries) from one the server never brought back (fixed
// 2 s with 429s that cost work: the metastable failure); both are 0 %, and
// only the first may say "gave up".
func TestRecoverySaysWhoGaveUp(t *testing.T) {
	t.Parallel()
	capped := sim.DefaultPolicy(sim.Decorrelated)
	capped.RetryCap = 3
	pols := []sim.Policy{capped.Normalize(), {Kind: sim.Fixed, Base: 2 * time.Second}}
	in := simulate(t, cellsOf(pols, []float64{30}, func(s *sim.Scenario) { s.RejectCost = 0.5 }), 3, false)
	_, files := build(t, in)
	md := files["report.md"]
	i := strings.Index(md, "## Servers that do more than count")
	if i < 0 {
		t.Fatal("no recovery section")
	}
	sec := md[i:]
	sec = sec[:strings.Index(sec[3:], "\n## ")+4]
	checked := 0
	for _, tr := range truths(in) {
		label := "| " + cell(analysis.PolicyLabel(tr.cell)) + " |"
		j := strings.Index(sec, label)
		if j < 0 {
			t.Fatalf("no row %q in\n%s", label, sec)
		}
		line := sec[j : j+strings.Index(sec[j:], "\n")]
		finished, gave := 0, 0
		for k := range tr.t99 {
			if !math.IsNaN(tr.t99[k]) {
				finished++
			}
			gave += tr.gave[k]
		}
		if finished != 0 {
			t.Fatalf("%s: %d of %d runs finished; the test wants cells that never recover", label, finished, len(tr.t99))
		}
		if says := strings.Contains(line, "gave up"); says != (gave > 0) {
			t.Errorf("%s: %d clients gave up in all, yet the row %q says \"gave up\" %v", label, gave, line, says)
		}
		checked++
	}
	if checked != 2 {
		t.Errorf("checked %d rows, want 2", checked)
	}
}

// A library default without jitter that is feasible and faster than the
// recommended policy (sgc-watchdog's fixed 1 s at a capacity that serves
// the herd at once) is not "0.26× slower": its cell in the library table
// says it does not jitter, with its ratio, and every cell agrees with the
// data (checkLibraries).
func TestLibraryWithoutJitterIsNotSlower(t *testing.T) {
	t.Parallel()
	pols := []sim.Policy{preset(t, "sgc-watchdog"), sim.DefaultPolicy(sim.Decorrelated), sim.DefaultPolicy(sim.FullJitter)}
	in := simulate(t, cellsOf(pols, []float64{480}, nil), 3, false)
	r, files := build(t, in)
	md := files["report.md"]
	tr := truths(in)
	var lib, best *truth
	for _, x := range tr {
		if x.cell.Policy.Preset == "sgc-watchdog" {
			lib = x
		}
		if x.cell.Policy == r.Scenarios[0].Rec.Best.Cell.Policy {
			best = x
		}
	}
	if !lib.feasible() || lib.mean() >= best.mean() {
		t.Fatalf("sgc-watchdog: feasible %v, t99 %.1f s against the recommended %.1f s; the test wants it feasible and faster", lib.feasible(), lib.mean(), best.mean())
	}
	want := "[no jitter, " + strconv.FormatFloat(lib.mean()/best.mean(), 'f', 2, 64) + "×]"
	if !strings.Contains(md, want) {
		i := strings.Index(md, "| sgc-watchdog |")
		t.Errorf("library table: want %q in\n%s", want, md[i:i+strings.Index(md[i:], "\n")])
	}
	checkLibraries(t, r, md, tr)
}

// A report page that suggests a flag names the command it belongs to:
// "--budget 5.3 would admit it" on a report page sent readers to `sweep
// report --budget`, which does not exist (the flag is recommend's).
func TestReportFlagsNameTheirCommand(t *testing.T) {
	t.Parallel()
	sc := world(15)
	sc.Clients = 3000 // at 15 req/s: 200 s to serve them, more than 4 requests per client
	in := simulate(t, []grid.Cell{{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)},
		{Scenario: sc, Policy: preset(t, "envoy")}}, 3, false)
	_, files := build(t, in)
	flag := regexp.MustCompile("(`sweep [a-z]+ [^`]*)?(--[a-z][a-z-]*)")
	seen := 0
	for name, text := range files {
		if !strings.HasSuffix(name, ".md") {
			continue
		}
		for _, m := range flag.FindAllStringSubmatch(text, -1) {
			seen++
			if m[1] == "" {
				i := strings.Index(text, m[2])
				t.Errorf("%s: %s without its command: …%s…", name, m[2], text[max(0, i-80):min(len(text), i+40)])
			}
		}
	}
	if seen == 0 {
		t.Error("no flag in any page: the test checks nothing")
	}
}
