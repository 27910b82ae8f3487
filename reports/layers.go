package reports

import (
	"cmp"
	"fmt"
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

// maxLayerPanels bounds the panels of the layers figure: the first
// scenarios of chains as long as the first one's.
const maxLayerPanels = 6

// layersOf reads the runs of the chained cells (whole, in a streamed
// dataset, as the queueing cells' are: their per-service columns are not
// among the streamed metrics) and groups them by scenario.
func layersOf(in Input, aggs []*analysis.Aggregate) ([]analysis.LayerScenario, []string, error) {
	recs := in.Dataset.Records
	if in.Scanned != nil {
		keys := map[string]bool{}
		var sweeps []string
		for _, a := range aggs {
			if analysis.Chained(a) {
				keys[a.CellKey] = true
				for _, s := range a.Sweeps {
					sweeps = addUniq(sweeps, s)
				}
			}
		}
		if len(keys) == 0 {
			return nil, nil, nil
		}
		if in.QueueRuns == nil {
			return nil, []string{fmt.Sprintf("%s services in front of the server, not summarised: their runs were not read again (read layer1_attempts … in the dataset)", num.Agree(len(keys), num.Plural(len(keys), "cell")+" has", num.Plural(len(keys), "cell")+" have"))}, nil
		}
		var err error
		if recs, err = in.QueueRuns(sweeps, keys); err != nil {
			return nil, nil, err
		}
	}
	return analysis.LayerStudies(recs), nil, nil
}

// layerFigures draws the layers figure: a panel per scenario of chains
// as long as the first's (at most maxLayerPanels).
func layerFigures(ls []analysis.LayerScenario) []Figure {
	if len(ls) == 0 {
		return nil
	}
	var studies []analysis.LayerScenario
	for _, s := range ls {
		if s.Services == ls[0].Services && len(studies) < maxLayerPanels {
			studies = append(studies, s)
		}
	}
	panels := layerPanels(studies)
	f := plots.LayerAmplification(panels, studies)
	if f.Degenerate() != "" {
		return nil
	}
	if len(studies) < len(ls) {
		f.Caption += fmt.Sprintf(" The first %d of the %d scenarios (those with chains of %d services); the tables above have them all.", len(studies), len(ls), ls[0].Services)
	}
	return []Figure{{Figure: f, PNG: "plots/" + f.Name + ".png", SVG: "plots/" + f.Name + ".svg"}}
}

// writeLayers writes the section on retries across layers: per scenario
// of chains, a row per chain and what the data says of them, then the
// figure.
func writeLayers(ew *errWriter, ls []analysis.LayerScenario, figs []Figure) {
	if len(ls) == 0 {
		return
	}
	ew.printf("## Retries across layers\n\n")
	ew.printf("Clients call service A, which calls B, … which calls the server; each caller retries its callee by its own policy, and a service holds its caller's request while it retries (the caller waits). ")
	ew.printf("A row per chain, ranked by the attempts that reach the server per client: each service's attempts per client (the mean over seeds: its load amplification), the share of clients served by the window's end, and t99 after the server's recovery with its 95 %% interval. ")
	ew.printf("Each service counts attempts (its capacity is attempts admitted a second, and a refusal costs it nothing), so what retries at several layers cost here is the load itself: attempts every service on the way and the server must refuse; they can even bring clients back sooner, as a callee's short retries reach the server as soon as it is back. ")
	ew.printf("A queueing service (concurrency, a service time) holds a worker for its own work and its call to its callee, and a caller with a timeout gives up waiting and retries while its callee works on: there the abandoned attempts and the work wasted on them are said below each table.\n\n")
	for _, s := range ls {
		ew.printf("%s.\n\n", upperFirst(layerScenarioWords(s)))
		ew.table(layerTable(s))
		ew.printf("\n")
		for _, c := range layerClaims(s) {
			ew.printf("%s\n", c)
		}
		ew.printf("\n")
	}
	for _, f := range figs {
		ew.printf("![%s](%s)\n\n%s ([SVG](%s))\n\n", f.Title, f.PNG, f.Caption, f.SVG)
	}
}

// layerScenarioWords says a scenario of chains: its server, clients and
// their policy.
func layerScenarioWords(s analysis.LayerScenario) string {
	sc := s.Scenario
	rate := sc.Capacity
	if sc.Server() == sim.QueueingServer { // capacity_rps is not read: its workers over its (mean) service time
		rate = float64(sc.Concurrency) / sc.ServiceTime.Seconds()
	}
	w := fmt.Sprintf("the server serving %g requests/s after a %g s outage, %s on %s", rate, sc.RecoverAt.Seconds(), num.PluralOf(sc.Clients, "client", "clients"), s.Policy.Describe())
	if s.Fanout > 1 {
		w += fmt.Sprintf(", the last service calling %d copies of it", s.Fanout)
	}
	if s.Scenario.FailShare > 0 {
		w += fmt.Sprintf(", %g %% of the attempts it admits failing whatever the load", 100*s.Scenario.FailShare)
	}
	if sc.Server() == sim.QueueingServer {
		w += fmt.Sprintf(", the server a queueing one (%s, %v %s service, its caller waiting at most %v)", num.Plural(sc.Concurrency, "worker"), sc.ServiceTime, sc.Service, sc.Timeout)
	}
	return w
}

// layerPanels names the panels of the figure, one a scenario: its
// clients' policy and the server's capacity, with the clients and the
// outage when those differ between panels, and a number when two
// panels' names are still the same.
func layerPanels(studies []analysis.LayerScenario) []string {
	clients, outage := map[int]bool{}, map[time.Duration]bool{}
	for _, s := range studies {
		clients[s.Scenario.Clients], outage[s.Scenario.RecoverAt] = true, true
	}
	panels := make([]string, len(studies))
	seen := map[string]int{}
	for i, s := range studies {
		w := layerPanelWords(s)
		if n := s.Scenario.Clients; len(clients) > 1 {
			w = fmt.Sprintf("%s %s", thousands(float64(n)), w)
			if n == 1 {
				w = strings.Replace(w, " clients,", " client,", 1)
			}
		}
		if len(outage) > 1 {
			w += fmt.Sprintf(", down %g s", s.Scenario.RecoverAt.Seconds())
		}
		if seen[w]++; seen[w] > 1 {
			w += fmt.Sprintf(" (%d)", seen[w])
		}
		panels[i] = w
	}
	return panels
}

// layerPanelWords names a scenario's panel in the figure.
func layerPanelWords(s analysis.LayerScenario) string {
	who := string(s.Policy.Kind)
	if s.Policy.Preset != "" {
		who = s.Policy.Preset
	}
	w := fmt.Sprintf("%s clients, %g req/s", who, s.Scenario.Capacity)
	if s.Fanout > 1 {
		w += fmt.Sprintf(", fan-out %d", s.Fanout)
	}
	if s.Scenario.FailShare > 0 {
		w += fmt.Sprintf(", %g %% fail", 100*s.Scenario.FailShare)
	}
	if s.Scenario.Server() == sim.QueueingServer {
		w += ", queueing"
	}
	return w
}

// layerTable is a scenario's table: a row per chain.
func layerTable(s analysis.LayerScenario) *table.Table {
	t := table.New("", table.L("who retries"))
	for j := range s.Services {
		t.Columns = append(t.Columns, table.R(analysis.ServiceName(j, s.Services)))
	}
	t.Columns = append(t.Columns, table.R("served"), table.R("t99 (s after recovery)"))
	for _, a := range s.Rows {
		row := []string{s.Words(a)}
		srv := analysis.ChainServer(a)
		for j := range s.Services {
			switch {
			case j < srv:
				row = append(row, plots.Amp(a.Summary(analysis.LayerAmp[j]).Mean))
			case j == s.Services-1:
				row = append(row, plots.Amp(analysis.ServerAmp(a).Mean))
			default:
				row = append(row, "")
			}
		}
		row = append(row, fmt.Sprintf("%.1f %%", 100*a.Summary(analysis.ServedShare).Mean), layerT99(a.Summary(analysis.T99)))
		t.Add(row...)
	}
	return t
}

// layerT99 is a t99 cell: the mean and interval, or how many seeds did
// not reach it.
func layerT99(s analysis.Summary) string {
	if s.Unfinished > 0 {
		return fmt.Sprintf("not within the window in %s", num.Plural(s.Unfinished, "seed"))
	}
	lo, hi, _ := s.Bounds()
	if s.N < 2 {
		return fmt.Sprintf("%.1f", s.Mean)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", s.Mean, lo, hi)
}

// layerClaims are the sentences a scenario's table is read by: the most
// and the fewest attempts at the server, the fastest and slowest t99
// among the chains that reached it in every seed, and what a retry budget
// changes against the same chain without one. layers_claims_test.go
// recomputes each from the records.
func layerClaims(s analysis.LayerScenario) []string {
	var out []string
	if n := len(s.Rows); n > 1 {
		lo, hi := s.Rows[0], s.Rows[n-1]
		out = append(out, fmt.Sprintf("The server receives %s attempts per client when %s, %s when %s.",
			plots.Amp(analysis.ServerAmp(hi).Mean), s.Words(hi), plots.Amp(analysis.ServerAmp(lo).Mean), s.Words(lo)))
	}
	var done []*analysis.Aggregate
	for _, a := range s.Rows {
		if sum := a.Summary(analysis.T99); sum.Unfinished == 0 && sum.N > 0 {
			done = append(done, a)
		}
	}
	if len(done) > 1 {
		byT := slices.Clone(done)
		slices.SortStableFunc(byT, func(x, y *analysis.Aggregate) int {
			return cmp.Compare(x.Summary(analysis.T99).Mean, y.Summary(analysis.T99).Mean)
		})
		f, l := byT[0], byT[len(byT)-1]
		out = append(out, fmt.Sprintf("99 %% of the clients are served %.1f s after the server's recovery when %s, %.1f s when %s.",
			f.Summary(analysis.T99).Mean, s.Words(f), l.Summary(analysis.T99).Mean, s.Words(l)))
	}
	for _, a := range s.Rows {
		if c := closedForm(s, a); c != "" {
			out = append(out, c)
		}
	}
	for _, a := range s.Rows {
		if c := wastedClaim(s, a); c != "" {
			out = append(out, c)
		}
	}
	for _, b := range s.Rows {
		if !analysis.Budgeted(b) {
			continue
		}
		for _, u := range s.Rows {
			if !analysis.Budgeted(u) && slices.Equal(analysis.Retrying(u), analysis.Retrying(b)) {
				out = append(out, fmt.Sprintf("A retry budget at each service takes the server from %s to %s attempts per client when %s.",
					plots.Amp(analysis.ServerAmp(u).Mean), plots.Amp(analysis.ServerAmp(b).Mean), strings.TrimSuffix(s.Words(u), ".")))
			}
		}
	}
	return out
}

// closedForm is the sentence for row a when every client gave up (while
// the server was down, when downOnly says that is why) and the attempts
// at it are exactly the closed form
// Π over the callers of their attempts (1 + k: the clients', each
// service's) times the copies of the server: no service saturated, no
// budget cut a retry. "" otherwise: the report claims it only where the
// data shows it.
func closedForm(ls analysis.LayerScenario, a *analysis.Aggregate) string {
	ch, err := a.Cell.Chain()
	if err != nil || analysis.Budgeted(a) || a.Summary(analysis.ServedShare).Max != 0 || a.Summary(analysis.GaveUp).Min != float64(a.Cell.Scenario.Clients) {
		return ""
	}
	want := ch.Copies()
	var factors []string
	for c := range ch.N + 1 {
		p := a.Cell.Policy
		if c > 0 {
			p = ch.Front[c-1].Policy
		}
		n := p.MaxAttempts
		if p.Kind == "" {
			n = 1
		}
		if n == 0 {
			return "" // retries for ever: no closed form
		}
		want *= n
		factors = append(factors, fmt.Sprint(n))
	}
	if ch.Copies() > 1 {
		factors = append(factors, fmt.Sprintf("%d copies", ch.Copies()))
	}
	if s := analysis.ServerAmp(a); s.Min != float64(want) || s.Max != float64(want) {
		return ""
	}
	when := "while the server was down when " + ls.Words(a)
	if !downOnly(a) {
		when = "when " + ls.Words(a) + ", every call failing"
	}
	return fmt.Sprintf("Every client gave up %s: the server received exactly %d attempts per client in every seed, the closed form %s (each caller's attempts, 1 + its retries, multiplied down the chain).",
		when, want, strings.Join(factors, " × "))
}

// downOnly reports whether row a's calls could fail only because the
// server was down: it has an outage, no failure share, and no caller
// abandoned an attempt at a timeout. Else a closed form says the calls
// failed, not why.
func downOnly(a *analysis.Aggregate) bool {
	sc := a.Cell.Scenario
	if sc.RecoverAt <= sc.OutageStart || sc.FailShare > 0 {
		return false
	}
	for j := range analysis.ChainServer(a) + 1 {
		if a.Summary(analysis.LayerAbandoned[j]).Max > 0 {
			return false
		}
	}
	return true
}

// wastedClaim is the sentence for row a when callers abandoned attempts
// at their timeouts (a queued chain, sim/chainq.go): the abandoned
// attempts per client, at each service that had any, and the share of
// the queueing services' work spent on them. "" when none was abandoned.
func wastedClaim(ls analysis.LayerScenario, a *analysis.Aggregate) string {
	var total float64
	var parts []string
	for j := range analysis.ChainServer(a) + 1 {
		m := a.Summary(analysis.LayerAbandoned[j]).Mean
		if m > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", analysis.ServiceName(j, analysis.ChainServer(a)+1), abandonedAmount(m)))
		}
		total += m
	}
	if total == 0 {
		return ""
	}
	return fmt.Sprintf("When %s, callers abandoned %s attempts per client at their timeouts (%s), and %.1f %% of the services' work went to attempts nobody waited for.",
		ls.Words(a), abandonedAmount(total), strings.Join(parts, ", "), 100*a.Summary(analysis.LayerWastedShare).Mean)
}

// abandonedAmount writes abandoned attempts per client (> 0): one decimal
// as the tables say them, two significant digits below 0.05, which one
// decimal would write as none (2 attempts of 5,000 clients: 0.0004).
func abandonedAmount(m float64) string {
	if m < 0.05 {
		return strconv.FormatFloat(m, 'g', 2, 64)
	}
	return plots.Amp(m)
}
