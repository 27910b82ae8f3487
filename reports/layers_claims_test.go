package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// layerCell is a chained cell of the claims' world and the words its
// chain is named by, written by hand.
type layerCell struct {
	cell  grid.Cell
	words string
}

// layerCells: clients → A → B → a server of 30 or 60 requests/s down for
// 30 s, 300 clients on decorrelated jitter, or at 90 requests/s clients
// that give up after 3 attempts 1 s apart, while it is down; nobody in
// front retrying, A alone, A and B, and A and B under a 10 % retry
// budget; and one counting cell of the same server without services in
// front.
func layerCells(t *testing.T) ([]layerCell, grid.Cell) {
	t.Helper()
	retry := sim.Policy{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 2 * time.Second, Multiplier: 2, MaxAttempts: 4}
	budget := retry
	budget.RetryBudget, budget.BudgetMinRPS = 0.1, 1
	chains := []struct {
		a, b  sim.Policy
		words string
	}{
		{sim.Policy{}, sim.Policy{}, "clients retry"},
		{retry, sim.Policy{}, "clients and A retry"},
		{retry, retry, "clients, A and B retry"},
		{budget, budget, "clients, A and B retry, services under a retry budget"},
	}
	var out []layerCell
	gives := sim.Policy{Kind: sim.Fixed, Base: time.Second, MaxAttempts: 3} // gives up while the server is down
	for k, capacity := range []float64{30, 60, 90} {
		for _, ch := range chains {
			c := grid.Cell{Scenario: world(capacity), Policy: sim.DefaultPolicy(sim.Decorrelated)}
			if k == 2 {
				c.Policy = gives
			}
			c.Layers = grid.EncodeLayers([]sim.Layer{{Policy: ch.a.Normalize()}, {Policy: ch.b.Normalize()}})
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			out = append(out, layerCell{c, ch.words})
		}
	}
	return out, grid.Cell{Scenario: world(30), Policy: sim.DefaultPolicy(sim.Decorrelated)}
}

// ltruth is a chained cell as its records say, without the analysis: per
// seed the attempts at the server per client and the t99 after recovery
// (NaN: not reached).
type ltruth struct {
	lc                 layerCell
	server, t9, served []float64
	gaveAll            bool // every client gave up in every seed
}

func (tr *ltruth) serverMean() float64 { return meanOf(tr.server) }

// TestLayerClaims: every sentence of the section on retries across
// layers, and every row of its tables, recomputed from the records; the
// chained cells are left out of the counting server's scenarios; the
// figure's caption says the same numbers.
func TestLayerClaims(t *testing.T) {
	t.Parallel()
	lcs, single := layerCells(t)
	cells := []grid.Cell{single}
	for _, lc := range lcs {
		cells = append(cells, lc.cell)
	}
	in := simulate(t, cells, 3, false)
	r, files := build(t, in)
	md := files["report.md"]
	if len(r.Scenarios) != 1 {
		t.Errorf("%d counting scenarios, want the one of the server alone", len(r.Scenarios))
	}
	byKey := map[string]*ltruth{}
	var trs []*ltruth
	for _, lc := range lcs {
		tr := &ltruth{lc: lc}
		byKey[lc.cell.Normalize().Key()] = tr
		trs = append(trs, tr)
	}
	for _, rec := range in.Dataset.Records {
		tr := byKey[rec.CellKey]
		if tr == nil {
			continue
		}
		srv := rec.Result.Layers[2] // A, B, the server
		tr.server = append(tr.server, float64(srv.Attempts)/float64(rec.Result.Clients))
		v := math.NaN()
		if rec.Result.T99.Reached {
			v = (rec.Result.T99.At - rec.Cell.Scenario.RecoverAt).Seconds()
		}
		tr.t9 = append(tr.t9, v)
		tr.served = append(tr.served, float64(rec.Result.Succeeded)/float64(rec.Result.Clients))
		if len(tr.served) == 1 {
			tr.gaveAll = true
		}
		tr.gaveAll = tr.gaveAll && rec.Result.GaveUp == rec.Result.Clients
	}
	if !strings.Contains(md, "## Retries across layers") {
		t.Fatalf("no section on retries across layers:\n%s", md)
	}
	for _, scenario := range [][]*ltruth{trs[:4], trs[4:8], trs[8:]} {
		for _, want := range layerSentences(scenario) {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		from := strings.Index(md, fmt.Sprintf("The server serving %g requests/s", scenario[0].lc.cell.Scenario.Capacity))
		if from < 0 {
			t.Fatalf("no scenario of %g requests/s", scenario[0].lc.cell.Scenario.Capacity)
		}
		for _, tr := range scenario {
			row := fmt.Sprintf("| %s | ", tr.lc.words)
			if i := strings.Index(md[from:], row); i < 0 || !strings.Contains(strings.SplitN(md[from+i:], "\n", 2)[0], fmt.Sprintf(" %.1f | %.1f %% |", tr.serverMean(), 100*meanOf(tr.served))) {
				t.Errorf("no row %q with %.1f attempts at the server, %.1f %% served", row, tr.serverMean(), 100*meanOf(tr.served))
			}
		}
	}
	// The third scenario's clients give up while the server is down: the
	// closed form holds there, and the report says so for each chain
	// without a budget.
	for _, f := range []string{"3 × 1 × 1", "3 × 4 × 1", "3 × 4 × 4"} {
		if !strings.Contains(md, "the closed form "+f+" (") {
			t.Errorf("report.md does not give the closed form %s", f)
		}
	}
	if strings.Count(md, "the closed form") != 3 {
		t.Errorf("%d closed forms, want 3 (none for the budget, none where clients were served)", strings.Count(md, "the closed form"))
	}
	caption := r.LayerFigures[0].Caption
	for _, scenario := range [][]*ltruth{trs[:4], trs[4:8], trs[8:]} {
		hi := slices.MaxFunc(scenario, func(x, y *ltruth) int { return cmp.Compare(x.serverMean(), y.serverMean()) })
		if !strings.Contains(caption, fmt.Sprintf("the server receives %.1f attempts per client when %s", hi.serverMean(), hi.lc.words)) {
			t.Errorf("caption %q does not name %.1f for %s", caption, hi.serverMean(), hi.lc.words)
		}
	}
}

// layerSentences are the sentences a scenario's rows must bring, from
// the records alone.
func layerSentences(trs []*ltruth) []string {
	lo := slices.MinFunc(trs, func(x, y *ltruth) int { return cmp.Compare(x.serverMean(), y.serverMean()) })
	hi := slices.MaxFunc(trs, func(x, y *ltruth) int { return cmp.Compare(x.serverMean(), y.serverMean()) })
	out := []string{fmt.Sprintf("The server receives %.1f attempts per client when %s, %.1f when %s.", hi.serverMean(), hi.lc.words, lo.serverMean(), lo.lc.words)}
	var done []*ltruth
	for _, tr := range trs {
		if !slices.ContainsFunc(tr.t9, math.IsNaN) {
			done = append(done, tr)
		}
	}
	if len(done) > 1 {
		f := slices.MinFunc(done, func(x, y *ltruth) int { return cmp.Compare(meanOf(x.t9), meanOf(y.t9)) })
		l := slices.MaxFunc(done, func(x, y *ltruth) int { return cmp.Compare(meanOf(x.t9), meanOf(y.t9)) })
		out = append(out, fmt.Sprintf("99 %% of the clients are served %.1f s after the server's recovery when %s, %.1f s when %s.", meanOf(f.t9), f.lc.words, meanOf(l.t9), l.lc.words))
	}
	out = append(out, fmt.Sprintf("A retry budget at each service takes the server from %.1f to %.1f attempts per client when clients, A and B retry.", trs[2].serverMean(), trs[3].serverMean()))
	// Where every client gave up while the server was down, the closed
	// form: the clients' 3 attempts × 4 at each service that retries.
	for i, f := range []string{"3 × 1 × 1", "3 × 4 × 1", "3 × 4 × 4"} {
		tr := trs[i]
		want := map[int]float64{0: 3, 1: 12, 2: 48}[i]
		if tr.gaveAll && slices.Min(tr.server) == want && slices.Max(tr.server) == want {
			out = append(out, fmt.Sprintf("Every client gave up while the server was down when %s: the server received exactly %g attempts per client in every seed, the closed form %s", tr.lc.words, want, f))
		}
	}
	return out
}

// TestQueuedLayerClaims: with queueing services and timeouts at every
// layer, the sentence on abandoned attempts and wasted work is recomputed
// from the records: the abandoned attempts per client at each service
// (their mean over seeds, summed), and the mean over seeds of the wasted
// share of the services' work.
func TestQueuedLayerClaims(t *testing.T) {
	t.Parallel()
	retry := sim.Policy{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 2 * time.Second, Multiplier: 2, MaxAttempts: 4}.Normalize()
	sc := world(30)
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 3, "fixed", 100*time.Millisecond, time.Second
	svc := func(to time.Duration, p sim.Policy) sim.Layer {
		return sim.Layer{Concurrency: 10, Service: "exponential", ServiceTime: 5 * time.Millisecond, Timeout: to, Policy: p}
	}
	words := []string{"clients, A and B retry", "clients and A retry"}
	var cells []grid.Cell
	for _, b := range []sim.Policy{retry, {}} {
		c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: grid.EncodeLayers([]sim.Layer{svc(3*time.Second, retry), svc(2*time.Second, b)})}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	in := simulate(t, cells, 3, false)
	_, files := build(t, in)
	md := files["report.md"]
	for i, c := range cells {
		var abandoned [3]float64
		var wasted []float64
		runs := 0
		for _, rec := range in.Dataset.Records {
			if rec.CellKey != c.Normalize().Key() {
				continue
			}
			runs++
			var busy, w float64
			for j, l := range rec.Result.Layers[:3] {
				abandoned[j] += float64(l.Abandoned) / float64(rec.Result.Clients)
				busy, w = busy+l.BusyMS, w+l.WastedMS
			}
			wasted = append(wasted, w/busy)
		}
		var total float64
		var parts []string
		for j, name := range []string{"A", "B", "server"} {
			m := abandoned[j] / float64(runs)
			total += m
			if m >= 0.05 {
				parts = append(parts, fmt.Sprintf("%s %.1f", name, m))
			}
		}
		if total == 0 {
			t.Fatalf("%s: nothing abandoned; the test needs timeouts that fire", words[i])
		}
		want := fmt.Sprintf("When %s, callers abandoned %.1f attempts per client at their timeouts (%s), and %.1f %% of the services' work went to attempts nobody waited for.",
			words[i], total, strings.Join(parts, ", "), 100*meanOf(wasted))
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !strings.Contains(md, "the server a queueing one (3 workers, 100ms fixed service, its caller waiting at most 1s)") {
		t.Errorf("the scenario does not say its server queues")
	}
}

// A few attempts abandoned among many clients are said as they are, not
// as "0.0 … ()": 1,000 clients behind A, one worker whose 600 s of work
// outlasts their 0.5 s timeout and a queue of one, abandon 2 or 3
// attempts in a minute; the sentence gives their number per client, two
// significant digits, recomputed from the records.
func TestQueuedLayerClaimsFewAbandoned(t *testing.T) {
	t.Parallel()
	sc := world(30)
	sc.Clients, sc.RecoverAt, sc.Horizon = 1000, 0, time.Minute
	a := sim.Layer{Concurrency: 1, Service: "fixed", ServiceTime: 600 * time.Second, QueueLimit: 1, Timeout: 500 * time.Millisecond}
	c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: grid.EncodeLayers([]sim.Layer{a})}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := simulate(t, []grid.Cell{c}, 2, false)
	_, files := build(t, in)
	var abandoned float64
	for _, rec := range in.Dataset.Records {
		abandoned += float64(rec.Result.Layers[0].Abandoned) / float64(rec.Result.Clients) / 2
	}
	if abandoned == 0 || abandoned >= 0.05 {
		t.Fatalf("%g abandoned per client; the test needs a few", abandoned)
	}
	n := strconv.FormatFloat(abandoned, 'g', 2, 64)
	want := fmt.Sprintf("When clients retry, callers abandoned %s attempts per client at their timeouts (A %s), and 100.0 %% of the services' work went to attempts nobody waited for.", n, n)
	if md := files["report.md"]; !strings.Contains(md, want) {
		i := strings.Index(md, "When clients retry")
		t.Errorf("report.md lacks %q; it says %.200q", want, md[max(i, 0):])
	}
}

// The figure names each panel's scenario apart from the others (the
// clients and the outage when they differ), and draws a shorter chain's
// server at "server", not at the place of a service it does not have.
func TestLayerFigurePanelsAndServer(t *testing.T) {
	t.Parallel()
	retry := sim.Policy{Kind: sim.FullJitter, Base: 100 * time.Millisecond, Cap: 2 * time.Second, Multiplier: 2, MaxAttempts: 4}.Normalize()
	var cells []grid.Cell
	for _, clients := range []int{100, 200} {
		for _, down := range []time.Duration{10 * time.Second, 20 * time.Second} {
			sc := world(30)
			sc.Clients, sc.RecoverAt = clients, down
			sc.Horizon = down + time.Minute
			for _, ls := range [][]sim.Layer{{{Policy: retry}}, {{Policy: retry}, {}}} {
				cells = append(cells, grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: grid.EncodeLayers(ls)})
			}
		}
	}
	in := simulate(t, cells, 2, false)
	r, _ := build(t, in)
	if len(r.LayerFigures) != 1 {
		t.Fatalf("%d layer figures", len(r.LayerFigures))
	}
	f := r.LayerFigures[0]
	seen := map[string]bool{}
	for _, p := range f.Panels {
		if seen[p.Title] {
			t.Errorf("two panels are named %q", p.Title)
		}
		seen[p.Title] = true
		for _, s := range p.Series {
			if last := s.Points[len(s.Points)-1]; last.X != float64(len(f.X.Categories)-1) {
				t.Errorf("%s: %s's server at x = %g (%s)", p.Title, s.Name, last.X, f.X.Categories[int(last.X)])
			}
		}
	}
	if len(f.Panels) != 4 || !seen["100 decorrelated clients, 30 req/s, down 10 s"] {
		t.Errorf("panels %v", seen)
	}
}

// The closed form says the server was down only when that is why the
// calls failed: behind a server that is never down, whose 1 s of work
// outlasts A's 0.3 s timeout, every attempt is abandoned and the server
// receives exactly A's 3 attempts per client, but not "while the server
// was down"; and the scenario's line says the rate the server serves.
func TestLayerClosedFormSaysWhy(t *testing.T) {
	t.Parallel()
	sc := world(30)
	sc.Clients, sc.RecoverAt, sc.Horizon = 10, 0, 10*time.Second
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 1, "fixed", time.Second, 300*time.Millisecond
	a := sim.Layer{Concurrency: 10, Service: "fixed", ServiceTime: 10 * time.Millisecond, Policy: sim.Policy{Kind: sim.Fixed, Base: 100 * time.Millisecond, MaxAttempts: 3}.Normalize()}
	c := grid.Cell{Scenario: sc, Policy: sim.Policy{Kind: sim.Fixed, Base: time.Second, MaxAttempts: 1}, Layers: grid.EncodeLayers([]sim.Layer{a})}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := simulate(t, []grid.Cell{c}, 2, false)
	_, files := build(t, in)
	md := files["report.md"]
	want := "Every client gave up when A retries, every call failing: the server received exactly 3 attempts per client in every seed, the closed form 1 × 3"
	if !strings.Contains(md, want) || strings.Contains(md, "while the server was down") {
		i := strings.Index(md, "Every client")
		t.Errorf("report.md lacks %q or says the server was down; it says %.200q", want, md[max(i, 0):])
	}
	// its rate is its workers over its service time, not capacity_rps (30), which it does not read
	if w := "The server serving 1 requests/s after a 0 s outage, 10 clients on fixed interval"; !strings.Contains(md, w) {
		t.Errorf("report.md lacks %q", w)
	}
}
