package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/sim"
)

// LimitGroup is one server measured at one load and outage under several
// server-side limits (sim/limiter.go, sim/lifo.go and the fixed bounds):
// the scenarios of the queueing section that differ only in those, at
// least one of them an adaptive limiter or LIFO.
type LimitGroup struct {
	Base    sim.Scenario // the server without its limits
	Options []analysis.QueueScenario
}

// limitBase is sc without its server-side limits.
func limitBase(sc sim.Scenario) sim.Scenario {
	sc.QueueLimit, sc.QueueWait, sc.ShedTarget, sc.QueueOrder = 0, 0, 0, ""
	sc.Limiter, sc.LimitInitial, sc.LimitMin, sc.LimitMax = "", 0, 0, 0
	sc.LimitBackoff, sc.LimitTimeout, sc.LimitSmoothing = 0, 0, 0
	return sc
}

// adaptive reports whether sc has an adaptive limiter or LIFO service.
func adaptive(sc sim.Scenario) bool { return sc.Limiter != "" || sc.QueueOrder != "" }

// limitGroups gathers qs's scenarios into LimitGroups, in the order met;
// the options of a group go unbounded first, then the fixed bounds, then
// the limiters, then LIFO.
func limitGroups(qs []analysis.QueueScenario) []LimitGroup {
	var out []LimitGroup
	for _, q := range qs {
		b := limitBase(q.Scenario)
		i := slices.IndexFunc(out, func(g LimitGroup) bool { return g.Base == b })
		if i < 0 {
			out, i = append(out, LimitGroup{Base: b}), len(out)
		}
		out[i].Options = append(out[i].Options, q)
	}
	out = slices.DeleteFunc(out, func(g LimitGroup) bool {
		return len(g.Options) < 2 || !slices.ContainsFunc(g.Options, func(q analysis.QueueScenario) bool { return adaptive(q.Scenario) })
	})
	for _, g := range out {
		slices.SortStableFunc(g.Options, func(x, y analysis.QueueScenario) int { return limitRank(x.Scenario) - limitRank(y.Scenario) })
	}
	return out
}

func limitRank(sc sim.Scenario) int {
	switch {
	case sc.QueueOrder != "":
		return 3
	case sc.Limiter != "":
		return 2
	case sc.QueueLimit > 0 || sc.QueueWait > 0 || sc.ShedTarget > 0:
		return 1
	}
	return 0
}

// LimitName names a server's limits in a few words: "unbounded queue",
// "wait ≤ 500ms", "AIMD limit ≤ 1000", "Gradient2 limit", "LIFO",
// "Gradient2 limit ≤ 1000 + LIFO".
func LimitName(sc sim.Scenario) string {
	var parts []string
	switch {
	case sc.QueueLimit > 0:
		parts = append(parts, fmt.Sprintf("≤ %d waiting", sc.QueueLimit))
	case sc.QueueWait > 0:
		parts = append(parts, fmt.Sprintf("wait ≤ %v", sc.QueueWait))
	case sc.ShedTarget > 0:
		parts = append(parts, fmt.Sprintf("shed above %v", sc.ShedTarget))
	}
	if l := analysis.LimitLabel(sc); l != "" {
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "unbounded queue"
	}
	return strings.Join(parts, " + ")
}

// limitWords says a server's adaptive limits in a sentence's words, for
// serverWords; "" without any.
func limitWords(sc sim.Scenario) string {
	var parts []string
	if sc.Limiter != "" {
		parts = append(parts, fmt.Sprintf("admits while fewer than an adaptive %s are in flight (Netflix concurrency-limits)", strings.ToLower(LimitName(sim.Scenario{Limiter: sc.Limiter, LimitMax: sc.LimitMax}))))
	}
	if sc.QueueOrder == "lifo" {
		parts = append(parts, "serves the newest waiting request first (LIFO)")
	}
	return strings.Join(parts, "; ")
}

// limitRow is an option's line: the policies back in every seed, and the
// means over its policies of goodput, wasted work and p99 latency (NaN:
// none has a value).
type limitRow struct {
	back, of             int
	goodput, wasted, p99 float64
}

func limitRowOf(q analysis.QueueScenario) limitRow {
	r := limitRow{of: len(q.Ranked)}
	mean := func(m analysis.Metric) float64 {
		s, n := 0.0, 0
		for _, a := range q.Ranked {
			if x := a.Summary(m); x.N > 0 {
				s, n = s+x.Mean, n+1
			}
		}
		if n == 0 {
			return math.NaN()
		}
		return s / float64(n)
	}
	for _, a := range q.Ranked {
		if b, n := analysis.Back(a); b == n {
			r.back++
		}
	}
	r.goodput, r.wasted, r.p99 = mean(analysis.GoodputShare), mean(analysis.WastedShare), mean(analysis.LatencyP99)
	return r
}

// writeLimits is report.md's section on server-side limits: for each
// LimitGroup, a row per option (how many policies it brings back in
// every seed, and its goodput, wasted work and p99 latency over the
// policies), a sentence that says which option does best on each, and
// the server's figure.
func writeLimits(ew *errWriter, groups []LimitGroup, figs []Figure) {
	if len(groups) == 0 {
		return
	}
	ew.printf("## Server-side limits\n\n")
	ew.printf("What an adaptive concurrency limit (Netflix concurrency-limits' AIMD and Gradient2, ported in sim/limiter.go) or LIFO service (Facebook's adaptive LIFO) adds to the same server with an unbounded queue and with a fixed bound, for the same policies. ")
	ew.printf("Each row: the policies back to steady state in every seed, then the mean over the policies of goodput (%% of demand), wasted work (%% of busy time) and p99 latency (ms, requests answered in time).\n\n")
	for _, g := range groups {
		q0 := g.Options[0].Scenario
		ew.printf("%s; %s, %v outage.\n\n", upperFirst(serverWords(g.Base)), loadWords(q0), outageOf(q0))
		t := table.New("", table.L("server"), table.R("policies back"), table.R("goodput (%)"), table.R("wasted (%)"), table.R("p99 latency (ms)"))
		for _, q := range g.Options {
			r := limitRowOf(q)
			t.Add(LimitName(q.Scenario), fmt.Sprintf("%d of %d", r.back, r.of), fmt1(100*r.goodput), fmt1(100*r.wasted), latencyMean(r.p99))
		}
		ew.table(t)
		ew.printf("\n%s\n\n", limitSentence(g))
	}
	for _, f := range figs {
		ew.printf("![%s](%s)\n\n%s ([SVG](%s))\n\n", f.Title, f.PNG, f.Caption, f.SVG)
	}
}

func latencyMean(x float64) string {
	if math.IsNaN(x) {
		return "none answered"
	}
	return thousands(x)
}

// limitSentence says, of a group, which options bring the most policies
// back in every seed, and which has the highest goodput and the lowest
// p99 latency.
func limitSentence(g LimitGroup) string {
	rows := make([]limitRow, len(g.Options))
	for i, q := range g.Options {
		rows[i] = limitRowOf(q)
	}
	best := func(score func(limitRow) float64) (names []string, v float64) {
		v = math.Inf(-1)
		for i, r := range rows {
			switch s := score(r); {
			case math.IsNaN(s):
			case s > v:
				names, v = []string{LimitName(g.Options[i].Scenario)}, s
			case s == v:
				names = append(names, LimitName(g.Options[i].Scenario))
			}
		}
		return names, v
	}
	back, nb := best(func(r limitRow) float64 { return float64(r.back) })
	good, vg := best(func(r limitRow) float64 { return math.Round(1000*r.goodput) / 10 })
	lat, vl := best(func(r limitRow) float64 { return -math.Round(r.p99) })
	return fmt.Sprintf("Most policies back in every seed (%d of %d): %s. Highest goodput (%s %%): %s. Lowest p99 latency (%s ms): %s.",
		int(nb), rows[0].of, listWords(back), fmt1(vg), listWords(good), thousands(-vl), listWords(lat))
}

// limitFigures draws, for each server and load measured at two outages
// or more under server-side limits, the time back against the outage: a
// panel per option (plots.QueueRecovery's drawing, panels by limit).
func limitFigures(groups []LimitGroup) []Figure {
	var keys []sim.Scenario
	byKey := map[sim.Scenario][]LimitGroup{}
	for _, g := range groups {
		b := g.Base
		b.OutageStart, b.RecoverAt, b.Horizon = 0, 0, g.Base.Horizon-g.Base.RecoverAt
		k := b
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], g)
	}
	var out []Figure
	for _, k := range keys {
		var panels []string
		var byPanel [][]analysis.QueueScenario
		for _, g := range byKey[k] {
			for _, q := range g.Options {
				name := LimitName(q.Scenario)
				i := slices.Index(panels, name)
				if i < 0 {
					panels, byPanel, i = append(panels, name), append(byPanel, nil), len(panels)
				}
				byPanel[i] = append(byPanel[i], q)
			}
		}
		f := plots.QueueRecovery(serverShort(byKey[k][0].Base), panels, byPanel, queueName)
		if len(f.X.Ticks) < 2 || f.Degenerate() != "" {
			continue
		}
		f.Name, f.Title = "limiters", "What a server-side limit adds after an outage — "+serverShort(byKey[k][0].Base)+", "+loadWords(byKey[k][0].Options[0].Scenario)
		if len(out) > 0 {
			f.Name = fmt.Sprintf("%s-%d", f.Name, len(out)+1)
		}
		f.Caption = limitCaption(f.Caption)
		out = append(out, Figure{Figure: f, PNG: "plots/" + f.Name + ".png", SVG: "plots/" + f.Name + ".svg", Server: -1})
	}
	return out
}

// limitCaption is QueueRecovery's caption with its panels named as they
// are here: one per server-side limit, not per load.
func limitCaption(c string) string {
	c = strings.Replace(c, "a panel per load", "a panel per server-side limit (the same server, load and policies)", 1)
	return strings.Replace(c, "(the table above names them)", "(queueing.md names them)", 1)
}

// listWords is "a", "a and b", "a, b and c".
func listWords(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
