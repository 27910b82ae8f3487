package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/sim"
)

// QueueingPage is the page of the queueing scenarios, every policy of each.
const QueueingPage = "queueing.md"

// queueing ranks the queueing cells of the dataset: from its records, or,
// when it was streamed, from the runs of those cells read again whole
// (in.QueueRuns); with its warnings (queueingWarnings), or one saying it
// could not read them.
func queueing(in Input, aggs []*analysis.Aggregate) ([]analysis.QueueScenario, []analysis.StoredOwner, []string, error) {
	recs := in.Dataset.Records
	if in.Scanned != nil {
		keys := map[string]bool{}
		var sweeps []string
		for _, a := range aggs {
			if analysis.Queueing(a) {
				keys[a.CellKey] = true
				for _, s := range a.Sweeps {
					sweeps = addUniq(sweeps, s)
				}
			}
		}
		if len(keys) == 0 {
			return nil, nil, nil, nil
		}
		if in.QueueRuns == nil {
			return nil, nil, []string{fmt.Sprintf("%s a queueing server, not ranked: their runs were not read again (read goodput, timed_out, wasted_ms and recovered_after_s in the dataset)", num.Agree(len(keys), num.Plural(len(keys), "cell")+" has", num.Plural(len(keys), "cell")+" have"))}, nil
		}
		var err error
		if recs, err = in.QueueRuns(sweeps, keys); err != nil {
			return nil, nil, nil, err
		}
	}
	owners, rest, err := ownersOf(recs)
	if err != nil {
		return nil, nil, nil, err
	}
	qs := analysis.RankQueueing(analysis.QueueAggregates(rest))
	return qs, owners, queueingWarnings(aggs, qs), nil
}

// queueingWarnings are the dataset's warnings about its queueing cells:
// those without open-loop traffic, not ranked; too few seeds for an
// interval; and intervals of the time back printed from 0.
func queueingWarnings(aggs []*analysis.Aggregate, qs []analysis.QueueScenario) []string {
	var w []string
	closed := 0
	for _, a := range aggs {
		if analysis.Queueing(a) && !analysis.SteadyState(a.Cell.Scenario) {
			closed++
		}
	}
	if closed > 0 {
		w = append(w, fmt.Sprintf("%s a queueing server without open-loop traffic (arrival_rps = 0): no steady state to return to, so not ranked; read t99_after_s, goodput and wasted_ms in the dataset", num.Agree(closed, num.Plural(closed, "cell")+" runs", num.Plural(closed, "cell")+" run")))
	}
	cells, few, clamped := 0, 0, 0
	for _, q := range qs {
		for _, a := range q.Ranked {
			cells++
			if len(a.Seeds) < analysis.MinSeedsForInterval {
				few++
			}
			if s := a.Summary(analysis.Recovered); s.Unfinished == 0 {
				if _, _, c := s.Bounds(); c {
					clamped++
				}
			}
		}
	}
	if few > 0 {
		w = append(w, fmt.Sprintf("%d of %s of a queueing server %s fewer than %d seeds: too few for a 95 %% interval", few, num.Plural(cells, "cell"), num.Agree(few, "has", "have"), analysis.MinSeedsForInterval))
	}
	if clamped > 0 {
		w = append(w, fmt.Sprintf("%d of %s of a queueing server %s a 95 %% interval of the time back that reaches below 0 (few seeds, or seeds far apart): it is printed from 0", clamped, num.Plural(cells, "cell"), num.Agree(clamped, "has", "have")))
	}
	return w
}

// queueFigures draws, for each server (analysis.SameServer) whose
// scenarios differ in their outage, the time back against the outage: a
// panel per load. A server measured at one outage has none, nor one where
// no policy is back in every seed anywhere (noQueueFigure says why).
func queueFigures(qs []analysis.QueueScenario) []Figure {
	var out []Figure
	for si, group := range byServer(qs) {
		var panels []string
		var byPanel [][]analysis.QueueScenario
		for _, q := range group {
			l := loadWords(q.Scenario)
			i := slices.Index(panels, l)
			if i < 0 {
				panels, byPanel = append(panels, l), append(byPanel, nil)
				i = len(panels) - 1
			}
			byPanel[i] = append(byPanel[i], q)
		}
		f := plots.QueueRecovery(serverShort(group[0].Scenario), panels, byPanel, queueName)
		if f.Degenerate() != "" {
			continue
		}
		if len(out) > 0 {
			f.Name = fmt.Sprintf("%s-%d", f.Name, len(out)+1)
		}
		out = append(out, Figure{Figure: f, PNG: "plots/" + f.Name + ".png", SVG: "plots/" + f.Name + ".svg", Server: si})
	}
	return out
}

// noQueueFigure says why a server's scenarios (byServer's group) have no
// figure.
func noQueueFigure(group []analysis.QueueScenario) string {
	outages := map[time.Duration]bool{}
	back := false
	for _, q := range group {
		outages[q.Scenario.RecoverAt-q.Scenario.OutageStart] = true
		for _, a := range q.Ranked {
			if b, n := analysis.Back(a); b == n {
				back = true
			}
		}
	}
	switch {
	case len(outages) < 2:
		return "No figure of the time back against the outage: this server was measured at one outage."
	case !back:
		return "No figure of the time back against the outage: no policy was back in every seed of any of these scenarios."
	}
	return "No figure of the time back against the outage: too few points to draw."
}

// byServer splits scenarios, in the order RankQueueing gives them, into
// runs of the same server.
func byServer(qs []analysis.QueueScenario) [][]analysis.QueueScenario {
	var out [][]analysis.QueueScenario
	for i := 0; i < len(qs); {
		j := i + 1
		for j < len(qs) && analysis.SameServer(qs[i].Scenario, qs[j].Scenario) {
			j++
		}
		out = append(out, qs[i:j])
		i = j
	}
	return out
}

// queueName names a policy of a queueing scenario in its tables: its short
// name, which names the limits that tell apart the same backoff (a library
// preset's name says its own).
func queueName(p sim.Policy) string {
	return analysis.ShortName(p)
}

// serverWords describes a queueing scenario's server and clients, without
// its load and outage: "10 workers × 20 ms exponential service, 1s
// timeout, unbounded queue, window 4m0s".
func serverWords(sc sim.Scenario) string {
	svc := sc.Service
	if sc.Service == "lognormal" {
		svc = fmt.Sprintf("lognormal (p99 %v)", sc.ServiceP99)
	}
	what := "mean " // a fixed time has no mean to speak of
	switch sc.Service {
	case "lognormal":
		what = "median "
	case "fixed":
		what = ""
	}
	parts := []string{fmt.Sprintf("%s × %v %s%s service", num.Plural(int(sc.Concurrency), "worker"), sc.ServiceTime, what, svc)}
	if c, ok := analysis.QueueCapacity(sc); ok {
		mean := ""
		if sc.Service == "lognormal" {
			mean = fmt.Sprintf("mean %v, ", sc.MeanService().Round(100*time.Microsecond))
		}
		parts[0] += fmt.Sprintf(" (%scapacity %s)", mean, capacityWords(c))
	}
	if sc.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("clients time out after %v", sc.Timeout))
	} else {
		parts = append(parts, "clients wait for ever")
	}
	var bound []string
	if sc.QueueLimit > 0 {
		bound = append(bound, fmt.Sprintf("holds at most %d waiting", sc.QueueLimit))
	}
	if sc.QueueWait > 0 {
		bound = append(bound, fmt.Sprintf("turns away what would wait over %v", sc.QueueWait))
	}
	if sc.ShedTarget > 0 {
		bound = append(bound, fmt.Sprintf("sheds while its delay stays over %v", sc.ShedTarget))
	}
	if len(bound) == 0 {
		parts = append(parts, "unbounded queue")
	} else {
		parts = append(parts, "a queue that "+strings.Join(bound, ", "))
	}
	if w := limitWords(sc); w != "" { // limiters.go
		parts = append(parts, w)
	}
	switch {
	case sc.RetryAfterMax > sc.RetryAfter:
		parts = append(parts, fmt.Sprintf("sends a Retry-After drawn from U(%v, %v) with its rejections", sc.RetryAfter, sc.RetryAfterMax))
	case sc.RetryAfter > 0:
		parts = append(parts, fmt.Sprintf("sends Retry-After %v with its rejections", sc.RetryAfter))
	}
	if sc.ArrivalCurve != "" {
		c, _ := sim.ParseCurve(sc.ArrivalCurve)
		parts = append(parts, fmt.Sprintf("new requests at %s requests/s × a daily curve of %d slots, the run starting at %s", thousands(sc.ArrivalRate), len(c), clockWords(sc.ArrivalClock)))
	}
	parts = append(parts, fmt.Sprintf("%v observed after recovery", sc.Horizon-sc.RecoverAt))
	return strings.Join(parts, "; ")
}

// clockWords is a time of day, "09:00" or "09:00:30".
func clockWords(d time.Duration) string {
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, d%time.Minute
	if s != 0 {
		return fmt.Sprintf("%02d:%02d:%02g", h, m, s.Seconds())
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// serverShort names a queueing server in a figure's title: "10 workers ×
// 20ms exponential, timeout 1s, queue wait ≤ 500ms".
func serverShort(sc sim.Scenario) string {
	s := fmt.Sprintf("%d workers × %v %s", sc.Concurrency, sc.ServiceTime, sc.Service)
	if sc.Timeout > 0 {
		s += fmt.Sprintf(", timeout %v", sc.Timeout)
	}
	if sc.QueueLimit > 0 {
		s += fmt.Sprintf(", queue ≤ %d", sc.QueueLimit)
	}
	if sc.QueueWait > 0 {
		s += fmt.Sprintf(", queue wait ≤ %v", sc.QueueWait)
	}
	if sc.ShedTarget > 0 {
		s += fmt.Sprintf(", shed over %v", sc.ShedTarget)
	}
	if sc.QueueLimit == 0 && sc.QueueWait == 0 && sc.ShedTarget == 0 {
		s += ", unbounded queue"
	}
	if sc.Limiter != "" { // limiters.go
		s += ", " + LimitName(sim.Scenario{Limiter: sc.Limiter, LimitMax: sc.LimitMax})
	}
	if sc.QueueOrder == "lifo" {
		s += ", LIFO"
	}
	if sc.ArrivalCurve != "" {
		s += ", daily curve from " + clockWords(sc.ArrivalClock)
	}
	return s
}

// columnWords heads a scenario's column in report.md's grid: "70 % load,
// 5s outage", or "350 requests/s, 5s outage".
func columnWords(sc sim.Scenario) string {
	if lo, hi, ok := analysis.QueueLoad(sc); ok {
		return fmt.Sprintf("%s %% load, %v outage", span(loadPercent, lo, hi), outageOf(sc))
	}
	lo, hi := sc.ArrivalRates()
	return fmt.Sprintf("%s requests/s, %v outage", span(thousands, lo, hi), outageOf(sc))
}

// loadWords is "70 % load (350 requests/s)", "60–87 % load (300–435
// requests/s)" on a daily curve, or the rate alone when the mean service
// time is not a parameter.
func loadWords(sc sim.Scenario) string {
	lo, hi := sc.ArrivalRates()
	rates := span(thousands, lo, hi) + " requests/s"
	if llo, lhi, ok := analysis.QueueLoad(sc); ok {
		return fmt.Sprintf("%s %% load (%s)", span(loadPercent, llo, lhi), rates)
	}
	return rates
}

// span is lo and hi in words by f: "70", or "60–87" when they read
// differently.
func span(f func(float64) string, lo, hi float64) string {
	if a, b := f(lo), f(hi); a != b {
		return a + "–" + b
	}
	return f(lo)
}

func loadPercent(x float64) string { return num.Fixed(100*x, 0) }

func outageOf(sc sim.Scenario) time.Duration { return sc.RecoverAt - sc.OutageStart }

// backWords is a policy's time back: "12.0 [10.1, 13.9]", "12.0 (2 not
// back)", "not back".
func backWords(a *analysis.Aggregate) string {
	s := a.Summary(analysis.Recovered)
	if s.N == 0 {
		return "not back"
	}
	out := fmt1(s.Mean)
	if s.Unfinished == 0 {
		out += bounds(s, fmt1)
	} else {
		out += fmt.Sprintf(" (in the %d seeds back)", s.N)
	}
	return out
}

// degraded lists the policies not back to steady state in some seed, with
// how many: "fixed 1s (5 of 5 seeds)".
func degraded(q *analysis.QueueScenario) []string {
	var out []string
	for _, a := range q.Ranked {
		if b, n := analysis.Back(a); b < n {
			out = append(out, fmt.Sprintf("%s (%d of %s)", queueName(a.Cell.Policy), n-b, num.Plural(n, "seed")))
		}
	}
	return out
}

// backCell is a policy's cell in report.md's grid: its mean time back,
// bold when it is among the first back, and the seeds not back.
func backCell(q *analysis.QueueScenario, a *analysis.Aggregate) string {
	b, n := analysis.Back(a)
	if b == 0 {
		return fmt.Sprintf("not back (%d of %d)", n, n)
	}
	t := fmt1(a.Summary(analysis.Recovered).Mean)
	if slices.Contains(q.First(), a) {
		t = "**" + t + "**"
	}
	if b < n {
		t += fmt.Sprintf(", not back in %d of %d", n-b, n)
	}
	return t
}

// writeQueueing writes report.md's section on queueing servers: per
// server, a grid of policies × (load, outage) with each policy's time back
// to steady state, the first back in bold, and the seeds not back.
func writeQueueing(ew *errWriter, qs []analysis.QueueScenario, figs []Figure) {
	if len(qs) == 0 {
		return
	}
	ew.printf("## Queueing servers: back to steady state\n\n")
	ew.printf("A queueing server with open-loop traffic is **back** to steady state %s; a run that never gets there is *not back*, never fast. ", sim.BackRule)
	ew.printf("Each cell is the mean time back after recovery (s) over the seeds back, and how many seeds were not back by the horizon. ")
	ew.printf("Policies are ranked by the share of seeds back, then by the mean time back; **bold**: the first, and those back in some seed that cannot be told apart from it (the 95 %% interval of the difference in time back, paired by seed, includes 0; or, when seeds did not all come back, Fisher's exact test on the seeds back gives p ≥ 0.05 and, if one of the two came back in every seed, the 95 %% interval of the difference, with the other's seeds not back counted as back at the horizon, does not show it sooner). ")
	ew.printf("Each scenario's ranking, with goodput, timed-out share, wasted work and latency: [%s](%s).\n\n", QueueingPage, QueueingPage)
	for si, group := range byServer(qs) {
		server := serverWords(group[0].Scenario)
		ew.printf("%s.\n\n", upperFirst(server))
		ew.table(queueGrid(group))
		ew.printf("\n")
		if i := slices.IndexFunc(figs, func(f Figure) bool { return f.Server == si }); i >= 0 {
			f := figs[i]
			ew.printf("![%s](%s)\n\n%s ([SVG](%s))\n\n", f.Title, f.PNG, f.Caption, f.SVG)
		} else {
			ew.printf("%s\n\n", noQueueFigure(group))
		}
	}
}

// queueGrid is a server's table in report.md: a row per policy, a column
// per (load, outage), each cell the policy's time back (backCell).
func queueGrid(group []analysis.QueueScenario) *table.Table {
	t := table.New("", table.L("policy"))
	for _, q := range group {
		t.Columns = append(t.Columns, table.L(columnWords(q.Scenario)))
	}
	for _, p := range gridPolicies(group) {
		name := ""
		var cells []string
		for k := range group {
			q := &group[k]
			c := ""
			for _, a := range q.Ranked {
				if a.Cell.Policy == p {
					c, name = backCell(q, a), queueName(a.Cell.Policy)
				}
			}
			cells = append(cells, c)
		}
		t.Add(append([]string{name}, cells...)...)
	}
	return t
}

// gridPolicies lists the policies of a server's scenarios, in the order of
// the first scenario's ranking, then those it lacks in the order met.
func gridPolicies(group []analysis.QueueScenario) []sim.Policy {
	var out []sim.Policy
	for _, q := range group {
		for _, a := range q.Ranked {
			if !slices.Contains(out, a.Cell.Policy) {
				out = append(out, a.Cell.Policy)
			}
		}
	}
	return out
}

// writeQueueingPage writes queueing.md: every queueing scenario with every
// policy in rank order and its metrics.
func (r *Report) writeQueueingPage(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("# Queueing servers: every policy\n\n")
	ew.printf("[← report](report.md)\n\n")
	ew.printf("Each table ranks the policies of one scenario by the share of seeds back to steady state, then by the mean time back after recovery. ")
	ew.printf("**≈** lists the rows the data cannot tell apart from this one (95 %% interval of the difference in time back, paired by seed, or Welch's when the seeds differ, includes 0; Fisher's exact test on the seeds back, p ≥ 0.05, when some seeds did not come back, and, if one of the two came back in every seed, an interval of the difference that includes 0 with the other's seeds not back counted as back at the horizon, the soonest they could be; two policies never back are alike). ")
	ew.printf("Means over the seeds: goodput is the requests answered in time over the new requests; *timed out* the share of requests sent answered after their client stopped waiting; *wasted* the share of the server's busy time spent on them; p99 latency of the requests answered in time. ")
	ew.printf("A policy not back by the horizon with goodput near demand and little work wasted is still draining a backlog (clients the outage left waiting, or a queue longer than its steady state's); with goodput far below demand and most work wasted, the server is stuck serving requests nobody waits for.\n\n")
	for i := range r.Queueing {
		q := &r.Queueing[i]
		if i == 0 || !analysis.SameServer(r.Queueing[i-1].Scenario, q.Scenario) {
			ew.printf("## %s\n\n", upperFirst(serverWords(q.Scenario)))
		}
		ew.printf("### %s, %v outage\n\n", upperFirst(loadWords(q.Scenario)), outageOf(q.Scenario))
		ew.table(queueRanking(q))
		ew.printf("\n")
		if d := degraded(q); len(d) > 0 {
			ew.printf("Not back to steady state by the horizon: %s.\n\n", strings.Join(d, "; "))
		} else {
			ew.printf("Every policy came back to steady state in every seed.\n\n")
		}
	}
	return ew.err
}

// queueRanking is a queueing scenario's table in queueing.md: every
// policy in rank order with its metrics.
func queueRanking(q *analysis.QueueScenario) *table.Table {
	t := table.New("", table.R("#"), table.L("policy"), table.R("seeds back"), table.L("back after (s)"), table.L("≈"), table.R("goodput (% of demand)"),
		table.R("timed out (% of sent)"), table.R("wasted (% of busy time)"), table.R("p99 latency (ms)"))
	for j, a := range q.Ranked {
		b, n := analysis.Back(a)
		var tied []string
		for _, k := range q.Tied(j) {
			tied = append(tied, strconv.Itoa(k+1))
		}
		t.Add(strconv.Itoa(j+1), queueName(a.Cell.Policy), fmt.Sprintf("%d of %d", b, n), backWords(a), strings.Join(tied, ", "),
			percent(a.Summary(analysis.GoodputShare)), percent(a.Summary(analysis.TimedOutShare)), percent(a.Summary(analysis.WastedShare)),
			latencyWords(a.Summary(analysis.LatencyP99)))
	}
	return t
}

func percent(s analysis.Summary) string {
	if s.N == 0 {
		return "—"
	}
	return fmt1(100 * s.Mean)
}

func latencyWords(s analysis.Summary) string {
	if s.N == 0 {
		return "none answered"
	}
	return thousands(s.Mean)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
