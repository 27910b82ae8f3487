package reports

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// brownoutCells are two small brownout worlds. A queueing server of 2
// workers × 10 ms (200 requests/s) at 50 % load with 400 ms timeouts,
// failing 0, 30, 60 or 90 % of what it serves for 30 s, under a policy
// that never retries, one of 3 retries, the same under a 10 % retry budget
// and one that retries without limit: retrying collapses it past some
// share. And the counting server with no capacity to speak of, without a
// policy that never retries (no comparison with one), and beside it a
// plain cell that is no brownout.
func brownoutCells() []grid.Cell {
	fj := sim.Policy{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 10 * time.Second, Multiplier: 2}
	with := func(p sim.Policy, f func(*sim.Policy)) sim.Policy { f(&p); return p }
	pols := []sim.Policy{with(fj, func(p *sim.Policy) { p.MaxAttempts = 1 }), with(fj, func(p *sim.Policy) { p.MaxAttempts = 4 }),
		with(fj, func(p *sim.Policy) { p.MaxAttempts, p.RetryBudget, p.BudgetMinRPS = 4, 0.1, 1 }), fj}
	var out []grid.Cell
	for _, p := range pols {
		for _, share := range []float64{0, 0.3, 0.6, 0.9} {
			sc := sim.Scenario{Clients: 1, Tick: 100 * time.Millisecond, Horizon: 30 * time.Second, Concurrency: 2, Service: "exponential",
				ServiceTime: 10 * time.Millisecond, Timeout: 400 * time.Millisecond, ArrivalRate: 100, FailShare: share}
			out = append(out, grid.Cell{Scenario: sc, Policy: p})
		}
	}
	for _, max := range []int{3, 0} {
		for _, share := range []float64{0, 0.5, 1} {
			sc := sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, Capacity: 1e4, Spread: 2 * time.Second, Horizon: 20 * time.Second, FailShare: share}
			out = append(out, grid.Cell{Scenario: sc, Policy: sim.Policy{Kind: sim.Fixed, Base: time.Second, MaxAttempts: max}})
		}
	}
	plain := out[len(out)-1]
	plain.Scenario.Capacity, plain.Scenario.FailShare = 200, 0
	return append(out, plain)
}

// btruth is a brownout cell as its records say, without the analysis
// package: per seed its success rate and load amplification.
type btruth struct {
	cell      grid.Cell
	succ, amp []float64
}

func btruths(in Input) map[string]*btruth {
	out := map[string]*btruth{}
	for _, r := range in.Dataset.Records {
		tr := out[r.CellKey]
		if tr == nil {
			tr = &btruth{cell: r.Cell}
			out[r.CellKey] = tr
		}
		logical := float64(int64(r.Cell.Scenario.Clients) + r.Result.Offered)
		tr.succ = append(tr.succ, float64(int64(r.Result.Succeeded)+r.Result.OfferedSucceeded)/logical)
		tr.amp = append(tr.amp, float64(r.Result.Sent)/logical)
	}
	return out
}

// claimRE reads a brownout claim back: the policy, the most it sends and
// where, and from which share it does worse than not retrying, if it says.
var claimRE = regexp.MustCompile(`^- \*\*(.+)\*\* sends at most ([0-9.]+) attempts per request \(at a failure share of ([0-9.]+) %\)\.(?: It does no worse than not retrying at any failure share measured\.| From a failure share of ([0-9.]+) % it does worse than not retrying in every seed: ([0-9.]+) % of requests succeed, against ([0-9.]+) % without retries\.)?$`)

// Every sentence of the brownout section is recomputed from the records:
// the most a policy sends per request and at which share, and the least
// share at which its best seed does worse than the worst seed of the
// policy that never retries; every policy of a scenario has its sentence;
// the table's cells are the means; the figure's points are the records'
// means; and the brownout cells are in no other section.
func TestBrownoutClaims(t *testing.T) {
	t.Parallel()
	in := simulate(t, brownoutCells(), 3, false)
	r, files := build(t, in)
	md := files["report.md"]
	sec, _, _ := strings.Cut(md[strings.Index(md, BrownoutHeading):], "\n## Where")
	truth := btruths(in)
	byScenario := map[string][]*btruth{} // by the scenario's words
	for _, tr := range truth {
		if brownoutFree(tr, truth) {
			continue
		}
		sc := tr.cell.Scenario
		sc.FailShare = 0
		byScenario[brownoutWords(sc)] = append(byScenario[brownoutWords(sc)], tr)
	}
	if len(r.Brownouts) != 2 || len(byScenario) != 2 {
		t.Fatalf("%d brownout scenarios in the report, %d in the records; want 2", len(r.Brownouts), len(byScenario))
	}
	claims := 0
	for _, part := range strings.Split(sec, "\n### ")[1:] {
		words, body, _ := strings.Cut(part, "\n")
		cells := byScenario[words]
		if cells == nil {
			t.Fatalf("section %q: no such scenario in the records", words)
		}
		said := map[string]bool{}
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(line, "- ") {
				continue
			}
			m := claimRE.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: a sentence the test cannot read: %s", words, line)
				continue
			}
			said[m[1]] = true
			claims++
			checkClaim(t, cells, m, line)
		}
		for _, tr := range cells {
			if n := queueName(tr.cell.Policy); !said[n] && tr.cell.Policy.MaxAttempts != 1 {
				t.Errorf("%s: no sentence on %s", words, n)
			}
			row := fmt.Sprintf("%s · %s×", pctWords(mean(tr.succ)), fmt2(mean(tr.amp)))
			if !strings.Contains(body, row) {
				t.Errorf("%s: %s at %g: the table has no %q", words, queueName(tr.cell.Policy), tr.cell.Scenario.FailShare, row)
			}
		}
	}
	if claims != 5 {
		t.Errorf("%d claims, want 5: 3 queueing policies but the one that never retries, 2 counting ones", claims)
	}
	checkBrownoutFigures(t, r, truth)
	if strings.Contains(files[QueueingPage], "400ms") {
		t.Errorf("a brownout cell in %s", QueueingPage)
	}
	if !strings.Contains(md, "capacity") || len(r.Scenarios) != 1 {
		t.Errorf("want the plain counting cell, and it alone, as the report's one scenario: %d", len(r.Scenarios))
	}
}

// brownoutFree reports whether tr is a cell no brownout cell shares its
// scenario with (the plain counting cell).
func brownoutFree(tr *btruth, all map[string]*btruth) bool {
	key := tr.cell.Scenario
	key.FailShare = 0
	for _, o := range all {
		sc := o.cell.Scenario
		if sc.FailShare > 0 {
			sc.FailShare = 0
			if sc == key {
				return false
			}
		}
	}
	return true
}

// checkClaim recomputes one sentence (claimRE's match m) from the cells
// of its scenario.
func checkClaim(t *testing.T, cells []*btruth, m []string, line string) {
	t.Helper()
	var mine, base []*btruth
	for _, tr := range cells {
		if queueName(tr.cell.Policy) == m[1] {
			mine = append(mine, tr)
		}
		if tr.cell.Policy.MaxAttempts == 1 {
			base = append(base, tr)
		}
	}
	byShare := func(xs []*btruth) {
		slices.SortFunc(xs, func(a, b *btruth) int { return cmpF(a.cell.Scenario.FailShare, b.cell.Scenario.FailShare) })
	}
	byShare(mine)
	byShare(base)
	most, at := math.Inf(-1), 0.0
	below := -1
	for j, tr := range mine {
		if a := mean(tr.amp); a > most {
			most, at = a, tr.cell.Scenario.FailShare
		}
		if below < 0 && len(base) > 0 && slices.Max(tr.succ) < slices.Min(base[j].succ) {
			below = j
		}
	}
	if m[2] != fmt2(most) || m[3] != fmt.Sprintf("%.1f", 100*at) {
		t.Errorf("%s\nwant at most %s attempts at %.1f %%", line, fmt2(most), 100*at)
	}
	switch {
	case len(base) == 0:
		if strings.Contains(line, "retrying") {
			t.Errorf("%s\nwant no comparison: no policy that never retries", line)
		}
	case below < 0:
		if !strings.Contains(line, "no worse") {
			t.Errorf("%s\nwant: no worse than not retrying at any share", line)
		}
	default:
		want := []string{fmt.Sprintf("%.1f", 100*mine[below].cell.Scenario.FailShare), fmt.Sprintf("%.1f", 100*mean(mine[below].succ)), fmt.Sprintf("%.1f", 100*mean(base[below].succ))}
		if !slices.Equal(m[4:7], want) {
			t.Errorf("%s\nwant worse from %s %%: %s %% against %s %%", line, want[0], want[1], want[2])
		}
	}
}

// checkBrownoutFigures holds each figure's points to the records' means:
// success in % and amplification, at the share in %.
func checkBrownoutFigures(t *testing.T, r *Report, truth map[string]*btruth) {
	t.Helper()
	if len(r.BrownoutFigures) != 2 {
		t.Fatalf("%d brownout figures, want 2", len(r.BrownoutFigures))
	}
	n := 0
	for _, f := range r.BrownoutFigures {
		if len(f.Panels) != 2 {
			t.Fatalf("%s: %d panels, want success and amplification", f.Name, len(f.Panels))
		}
		for si, s := range f.Panels[0].Series {
			for pi, pt := range s.Points {
				amp := f.Panels[1].Series[si].Points[pi]
				found := false
				for _, tr := range truth {
					if queueName(tr.cell.Policy) == s.Name && 100*tr.cell.Scenario.FailShare == pt.X && brownoutShort(tr.cell.Scenario) != "" &&
						math.Abs(pt.Y-100*mean(tr.succ)) < 1e-9 && math.Abs(amp.Y-mean(tr.amp)) < 1e-9 {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %s at %g %%: success %g %%, amplification %g: no cell of the records has them", f.Name, s.Name, pt.X, pt.Y, amp.Y)
				}
				n++
			}
		}
	}
	if n != 22 {
		t.Errorf("%d points, want 16 + 6", n)
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
