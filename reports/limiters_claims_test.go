package reports

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// limitCells is queueCells' server (2 workers × 10 ms, 400 ms timeouts) at
// 80 % load, down for 5 or 20 s after 10 s, under five server-side
// limits: an unbounded queue, one that turns away waits over 300 ms, an
// AIMD and a Gradient2 limit (Netflix's defaults but a lower floor), and
// LIFO; the same four policies. Its seeds hold options that bring every
// policy back and some that do not, ties on goodput and latency.
func limitCells() []grid.Cell {
	pols := []sim.Policy{{Kind: sim.Fixed, Base: time.Second},
		{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 30 * time.Second, Multiplier: 2},
		{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 30 * time.Second, Multiplier: 2, MaxAttempts: 3},
		{Kind: sim.Decorrelated, Base: 100 * time.Millisecond, Cap: 30 * time.Second}}
	limits := []func(*sim.Scenario){func(*sim.Scenario) {}, func(s *sim.Scenario) { s.QueueWait = 300 * time.Millisecond },
		func(s *sim.Scenario) { s.Limiter, s.LimitMin, s.LimitMax = "aimd", 2, 400 },
		func(s *sim.Scenario) { s.Limiter, s.LimitMin, s.LimitMax = "gradient2", 2, 400 },
		func(s *sim.Scenario) { s.QueueOrder = "lifo" }}
	var out []grid.Cell
	for _, down := range []time.Duration{5 * time.Second, 20 * time.Second} {
		for _, lim := range limits {
			for _, p := range pols {
				sc := sim.Article()
				sc.Clients, sc.Spread = 1, 0
				sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 2, "exponential", 10*time.Millisecond, 400*time.Millisecond
				sc.ArrivalRate = 160
				sc.OutageStart, sc.RecoverAt = 10*time.Second, 10*time.Second+down
				sc.Horizon = sc.RecoverAt + time.Minute
				lim(&sc)
				out = append(out, grid.Cell{Scenario: sc, Policy: p})
			}
		}
	}
	return out
}

var limitRowRE = regexp.MustCompile(`^\| ([^|]+) \| (\d+) of (\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9,]+|none answered) \|$`)

// TestLimitClaims checks the section on server-side limits against the
// records, computed without the analysis package: each option's row (the
// policies back in every seed; the mean over the policies of goodput over
// demand, wasted share of busy time and p99 latency), each sentence's
// best options on all three, and the figure (a panel per option, drawn as
// PNG and SVG, its caption naming panels by limit). The queueing section's
// own claims hold on these servers too (checkQueueing).
func TestLimitClaims(t *testing.T) {
	in := simulate(t, limitCells(), 3, false)
	r, files := build(t, in)
	md := files["report.md"]
	checkQueueing(t, r, files, in)
	sec, ok := strings.CutPrefix(md[strings.Index(md, "## Server-side limits"):], "## Server-side limits")
	if !ok || len(r.Limits) != 2 {
		t.Fatalf("section or groups missing: %d groups", len(r.Limits))
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	type row struct {
		back, of             int
		goodput, wasted, p99 float64
	}
	for _, g := range r.Limits {
		q0 := g.Options[0].Scenario
		head := upperFirst(serverWords(g.Base)) + "; " + loadWords(q0) + ", " + outageOf(q0).String() + " outage."
		i := strings.Index(sec, head)
		if i < 0 {
			t.Fatalf("no paragraph %q", head)
		}
		body := sec[i+len(head):]
		if j := strings.Index(body, "Lowest p99 latency"); j > 0 { // the paragraph ends with its sentence
			body, _, _ = strings.Cut(body[j:], "\n")
			body = sec[i+len(head) : i+len(head)+strings.Index(sec[i+len(head):], "Lowest p99 latency")+len(body)]
		}
		truth := map[string]row{}
		var names []string
		for _, rec := range in.Dataset.Records {
			sc := rec.Cell.Scenario
			base := sc
			base.QueueWait, base.QueueOrder, base.Limiter, base.LimitMin, base.LimitMax = 0, "", "", 0, 0
			if base != g.Base {
				continue
			}
			if n := LimitName(sc); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		for _, n := range names {
			var cells [][]float64 // per policy: back in all seeds (0/1), goodput, wasted, p99 (NaN: none)
			byCell := map[grid.Cell][]int{}
			var order []grid.Cell
			for k, rec := range in.Dataset.Records {
				sc := rec.Cell.Scenario
				base := sc
				base.QueueWait, base.QueueOrder, base.Limiter, base.LimitMin, base.LimitMax = 0, "", "", 0, 0
				if base == g.Base && LimitName(sc) == n {
					if byCell[rec.Cell] == nil {
						order = append(order, rec.Cell)
					}
					byCell[rec.Cell] = append(byCell[rec.Cell], k)
				}
			}
			for _, c := range order {
				all, good, waste, p99, np := 1.0, 0.0, 0.0, 0.0, 0
				for _, k := range byCell[c] {
					res := in.Dataset.Records[k].Result
					if !res.Recovered.Reached {
						all = 0
					}
					good += float64(res.Goodput) / float64(res.Offered+int64(c.Scenario.Clients))
					if res.BusyMS > 0 {
						waste += res.WastedMS / res.BusyMS
					}
					if res.Goodput > 0 {
						p99, np = p99+res.LatencyP99, np+1
					}
				}
				s := float64(len(byCell[c]))
				p := math.NaN()
				if np > 0 {
					p = p99 / float64(np)
				}
				cells = append(cells, []float64{all, good / s, waste / s, p})
			}
			var tr row
			tr.of = len(cells)
			var ps, nps float64
			for _, c := range cells {
				tr.back += int(c[0])
				tr.goodput += c[1] / float64(len(cells))
				tr.wasted += c[2] / float64(len(cells))
				if !math.IsNaN(c[3]) {
					ps, nps = ps+c[3], nps+1
				}
			}
			tr.p99 = ps / nps
			truth[n] = tr
		}
		seen := 0
		for _, line := range strings.Split(body, "\n") {
			m := limitRowRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			seen++
			tr, ok := truth[m[1]]
			if !ok {
				t.Errorf("%s: row %q is no option of the records", head, m[1])
				continue
			}
			if b, _ := strconv.Atoi(m[2]); b != tr.back || m[3] != strconv.Itoa(tr.of) || m[4] != fmt1(100*tr.goodput) || m[5] != fmt1(100*tr.wasted) || m[6] != thousands(tr.p99) {
				t.Errorf("%s, %s: row %q; the records: %d of %d back, goodput %s, wasted %s, p99 %s", head, m[1], line, tr.back, tr.of, fmt1(100*tr.goodput), fmt1(100*tr.wasted), thousands(tr.p99))
			}
		}
		if seen != len(truth) || seen < 3 {
			t.Errorf("%s: %d rows for %d options in the records", head, seen, len(truth))
		}
		best := func(score func(row) float64) []string {
			var out []string
			v := math.Inf(-1)
			for _, n := range names {
				switch s := score(truth[n]); {
				case s > v:
					out, v = []string{n}, s
				case s == v:
					out = append(out, n)
				}
			}
			return out
		}
		back := best(func(r row) float64 { return float64(r.back) })
		good := best(func(r row) float64 { return math.Round(1000*r.goodput) / 10 })
		fast := best(func(r row) float64 { return -math.Round(r.p99) })
		for _, want := range []string{
			"Most policies back in every seed (" + strconv.Itoa(truth[back[0]].back) + " of " + strconv.Itoa(truth[back[0]].of) + "): " + listWords(back) + ".",
			"Highest goodput (" + fmt1(100*truth[good[0]].goodput) + " %): " + listWords(good) + ".",
			"Lowest p99 latency (" + thousands(truth[fast[0]].p99) + " ms): " + listWords(fast) + ".",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: want the sentence %q in\n%s", head, want, body)
			}
		}
	}
	if len(r.LimitFigures) != 1 {
		t.Fatalf("%d figures of server-side limits, want 1", len(r.LimitFigures))
	}
	f := r.LimitFigures[0]
	var panels []string
	for _, p := range f.Panels {
		panels = append(panels, p.Title)
	}
	if want := []string{"unbounded queue", "wait ≤ 300ms", "AIMD limit ≤ 400 (≥ 2)", "Gradient2 limit ≤ 400 (≥ 2)", "LIFO"}; !slices.Equal(panels, want) ||
		!strings.Contains(f.Caption, "a panel per server-side limit") || strings.Contains(f.Caption, "per load") ||
		!strings.Contains(md, "]("+f.PNG+")") || files[f.PNG] == "" || files[f.SVG] == "" {
		t.Errorf("figure %s: panels %q, caption %q, embedded %v", f.Name, panels, f.Caption, strings.Contains(md, f.PNG))
	}
}

// Two limiters that differ in a setting are named apart in the limits
// table, as recommend's servers are (analysis.LimitLabel).
func TestLimitNameNamesSettings(t *testing.T) {
	a := sim.Scenario{Limiter: "aimd", LimitMax: 1000}
	b := a
	b.LimitBackoff = 0.5
	if LimitName(a) == LimitName(b) || LimitName(b) != "AIMD limit ≤ 1000 (backoff 0.5)" {
		t.Errorf("LimitName: %q and %q", LimitName(a), LimitName(b))
	}
}
