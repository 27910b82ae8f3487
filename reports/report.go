package reports

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/sim"
)

// WriteMarkdown writes report.md: the decision first (what to use, what to
// avoid, the library defaults), then the figures, the sections the data
// holds (mixed fleets, servers that do more than count, the article), and
// where the data came from. Detail is in the pages it links to.
func (r *Report) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	p := r.Provenance
	ew.printf("# Which retry policy after an outage\n\n")
	counts := num.Plural(len(r.Scenarios), "scenario") + ", " + num.Plural(p.Runs, "run")
	if len(r.Queueing) > 0 {
		counts = fmt.Sprintf("%s of a counting server; %d of a queueing server, ranked in their own section; %s", num.Plural(len(r.Scenarios), "scenario"), len(r.Queueing), num.Plural(p.Runs, "run"))
	}
	ew.printf("For each scenario of this dataset (%s), the retry policy that brings clients back fastest once the server is back, without burying it. ", counts)
	ew.printf("**t99** is the time after recovery at which 99 %% of clients have been served: the mean over seeds with its 95 %% interval [low, high]. ")
	ew.printf("A policy is **feasible** when no client gives up, 99 %% are back within the window in every seed, and it sends at most %g requests per client after recovery; only feasible policies are recommended, and only policies that jitter: a fixed interval or backoff without jitter keeps a herd in step (how each does is in *Avoid* and on each scenario's page).\n\n", float64(analysis.DefaultBudget))

	r.writeUse(ew)
	r.writeAvoid(ew)
	r.writeLibraries(ew)

	if len(r.Warnings) > 0 {
		ew.printf("## Warnings\n\n")
		for _, w := range r.Warnings {
			ew.printf("- %s\n", w)
		}
		ew.printf("\n")
	}
	if len(r.Figures) > 0 {
		ew.printf("## Figures\n\n")
		for _, f := range r.Figures {
			ew.printf("### %s\n\n![%s](%s)\n\n%s ([SVG](%s))\n\n", f.Title, f.Title, f.PNG, f.Caption, f.SVG)
		}
	}
	if len(r.Live) > 0 {
		ew.printf("## Live checks\n\n")
		ew.printf("Real retry libraries against a real loopback server, beside the simulator's prediction over seeds (`sweep live`; each page has the figure, the band and the machine's timing):\n\n")
		for _, l := range r.Live {
			ew.printf("- [%s](%s)\n", l.Title, l.Page)
		}
		ew.printf("\n")
	}
	writeMixed(ew, r.Mixed)
	writeRecovery(ew, r.Recovery)
	writeControls(ew, r.Controls)
	writeQueueing(ew, r.Queueing, r.QueueFigures)
	writeLimits(ew, r.Limits, r.LimitFigures)
	writeOwners(ew, r.Owners)
	writeLayers(ew, r.Layers, r.LayerFigures)
	writeBrownouts(ew, r.Brownouts, r.BrownoutFigures)
	if len(r.Article) > 0 {
		writeArticleSummary(ew, r.Article)
	}
	ew.printf("## Where the data came from\n\n")
	t := table.New("", table.L("").Tighten(), table.L("").Tighten())
	t.Add("tool", "herdsweep "+p.Tool)
	t.Add("simulator", p.Sim)
	t.Add("config sha256", "`"+p.ConfigHash+"`")
	t.Add("sweeps", strings.Join(p.Sweeps, ", "))
	t.Add("seeds", p.Seeds)
	t.Add("runs", fmt.Sprintf("%s in %d part files", thousands(float64(p.Runs)), p.Files))
	t.Add("created", p.Created)
	for _, c := range p.Commands {
		t.Add("command", "`"+c+"`")
	}
	ew.table(t)
	return ew.err
}

func (r *Report) writeUse(ew *errWriter) {
	d := &r.Decision
	ew.printf("## Use\n\n")
	if len(d.Families) == 0 {
		switch {
		case len(r.Queueing) > 0:
			ew.printf("The dataset holds no scenario of a counting server with a single policy per fleet; its queueing servers are ranked in [their own section](#queueing-servers-back-to-steady-state).\n\n")
		case len(r.Owners) > 0:
			ew.printf("The dataset holds no scenario of a counting server with a single policy per fleet; its queueing servers are in the [section for the server's owner](#for-the-servers-owner).\n\n")
		case len(r.Brownouts) > 0:
			ew.printf("The dataset holds no scenario of a server that recovers from an outage with a single policy per fleet; its brownouts are in [their own section](#brownouts-success-and-load-amplification).\n\n")
		default:
			ew.printf("The dataset holds no scenario with a single policy per fleet.\n\n")
		}
		return
	}
	ew.printf("The recommended policy (letter, described below) and its t99 after recovery, by scenario; each cell links to the scenario's page (ranking, runner-up, how to set it in each library). **≈**: another feasible policy cannot be told apart from it at these seeds (its page names them). **none**: no feasible policy (its page says why). Empty: not measured. A cell is what `sweep recommend --server SERVER` answers for its scenario (on this scenario's server alone) where the dataset holds recommend's whole candidate space; elsewhere it is marked *best of N measured*: the best of the N feasible policies the sweeps measured there, which recommend may not answer.\n\n")
	ew.printf("| scenario |")
	for _, c := range d.Capacities {
		ew.printf(" %s req/s |", thousands(c))
	}
	ew.printf("\n|---|")
	for range d.Capacities {
		ew.printf("---|")
	}
	ew.printf("\n")
	for _, row := range d.Families {
		ew.printf("| %s |", cell(row.Family.String()))
		for _, i := range row.At {
			if i < 0 {
				ew.printf(" |")
				continue
			}
			s := r.Scenarios[i]
			ew.printf(" %s |", useCell(d, s))
		}
		ew.printf("\n")
	}
	ew.printf("\n")
	uses := map[string]int{}
	for _, s := range r.Scenarios {
		if s.Rec != nil && s.Rec.Best != nil {
			uses[d.Letter(s.Rec.Best.Cell.Policy)]++
		}
	}
	for i, p := range d.Policies {
		l := letter(i)
		ew.printf("- **%s** (%s): %s\n", l, num.Plural(uses[l], "scenario"), p.Plain())
	}
	ew.printf("\n")
}

func useCell(d *Decision, s Scenario) string {
	if s.Rec == nil {
		return fmt.Sprintf("[no policy with jitter measured](%s)", s.File)
	}
	if s.Rec.Best == nil {
		return fmt.Sprintf("[none](%s)", s.File)
	}
	b := s.Rec.Best
	tie := ""
	if !s.Rec.Separated() {
		tie = " ≈"
	}
	best := ""
	if !s.Recommended {
		best = fmt.Sprintf("best of %d measured: ", s.Rec.Feasible)
	}
	return fmt.Sprintf("[%s**%s**%s %s](%s)", best, d.Letter(b.Cell.Policy), tie, seconds(b.Summary(analysis.T99)), s.File)
}

// scenarioWords names a scenario: "120 requests/s, 2,000 clients, 30s outage".
func scenarioName(s Scenario) string {
	return capacityWords(s.Query.Capacity) + ", " + s.Family.String()
}

func (r *Report) writeAvoid(ew *errWriter) {
	d := &r.Decision
	if len(d.Avoid) == 0 {
		return
	}
	ref := scenarioName(r.Scenarios[d.Reference])
	ew.printf("## Avoid\n\n")
	ew.printf("Policies that are not fine in most scenarios where they were measured, at any cap: even their best cap there is not feasible, or feasible but slower than %g× the recommended t99. The example is its best cap at %s when it is not fine there, else in the scenario named.\n\n", analysis.FineFactor, ref)
	t := table.New("", table.L("policy (any cap)"), table.R("not feasible"), table.R(fmt.Sprintf("feasible, > %g×", analysis.FineFactor)),
		table.L("example"), table.R("t99 after recovery"), table.R("× recommended"), table.L("not feasible because"))
	for _, a := range d.Avoid {
		s := r.Scenarios[a.Example]
		ex := "cap " + capWords(a.Cell.Cell.Policy)
		if a.Example != d.Reference {
			ex += " at " + scenarioName(s)
		}
		ratio := "—"
		if !math.IsNaN(a.Ratio) {
			ratio = fmt2(a.Ratio) + "×"
		}
		t.Add(analysis.ShapeLabel(a.Shape), fmt.Sprintf("%d of %d", a.Infeasible, a.Measured), fmt.Sprintf("%d of %d", a.Slow, a.Measured),
			ex, seconds(a.Cell.Summary(analysis.T99)), ratio, whyShort(s.Rec.Query, a.Cell))
	}
	ew.table(t)
	ew.printf("\n")
}

func capWords(p sim.Policy) string {
	if p.Cap == 0 {
		return "none"
	}
	return p.Cap.String()
}

// whyShort says why a candidate is not feasible in a few numbers; "" when
// it is feasible.
func whyShort(q analysis.Query, a *analysis.Aggregate) string {
	if q.Infeasible(a) == "" {
		return ""
	}
	var parts []string
	if t := a.Summary(analysis.T99); t.Unfinished > 0 {
		parts = append(parts, fmt.Sprintf("%d of %s never 99 %% back", t.Unfinished, num.Plural(t.N+t.Unfinished, "run")))
	}
	if g := a.Summary(analysis.GaveUp); g.Max > 0 && !q.AllowGiveUp {
		parts = append(parts, fmt.Sprintf("%s of %s give up", thousands(g.Mean), num.Plural(a.Cell.Scenario.Clients, "client")))
	}
	if per := perClient(a); per > budgetOf(q) {
		parts = append(parts, fmt.Sprintf("%s requests per client (budget %g)", fmt1(per), budgetOf(q)))
	}
	return strings.Join(parts, "; ")
}

func (r *Report) writeLibraries(ew *errWriter) {
	d := &r.Decision
	if len(d.Libraries) == 0 {
		return
	}
	ew.printf("## Library defaults\n\n")
	ew.printf("Each library's retry defaults (`sweep policies` cites where they come from) against the recommended policy of the same scenario: **fine** when feasible and t99 within %g× of the recommended (the ratio follows); **× slower** when feasible but slower; **no jitter** when feasible without jitter, which keeps a herd in step and is never recommended, however fast here (the ratio follows); **all give up** / **some give up**, **not finished**, **over budget** when not feasible. The last column is what to do at the capacity it names; every scenario's page has the verdict in full.\n\n", analysis.FineFactor)
	refCap := analysis.ReferenceCapacity // the reference scenario's capacity, where a family has it
	if d.Reference >= 0 {
		refCap = r.Scenarios[d.Reference].Query.Capacity
	}
	for _, lt := range d.Libraries {
		ew.table(r.libraryGrid(lt, refCap))
		ew.printf("\n")
	}
}

// libraryGrid is one family's library table: each preset's verdict by
// capacity, then what to do at refCap (else at the first capacity
// measured).
func (r *Report) libraryGrid(lt LibraryTable, refCap float64) *table.Table {
	d := &r.Decision
	ref := -1
	for c, i := range lt.At {
		if i >= 0 && (ref < 0 || d.Capacities[c] == refCap) {
			ref = c
		}
	}
	cols := []table.Column{table.L("library")}
	for c := range lt.At {
		cols = append(cols, table.L(thousands(d.Capacities[c])+" req/s").Tighten())
	}
	t := table.New(lt.Family.String(), append(cols, table.L("what to do at "+thousands(d.Capacities[ref])+" req/s"))...)
	for _, name := range lt.Presets {
		row := []string{sim.Policy{Preset: name}.PresetLabel()} // what the preset is for, where it is not call retries
		vs := lt.Verdicts[name]
		for c, i := range lt.At {
			if i < 0 || vs[c] == nil {
				row = append(row, "")
				continue
			}
			row = append(row, fmt.Sprintf("[%s](%s)", shortVerdict(vs[c], r.Scenarios[i].Rec), r.Scenarios[i].File))
		}
		t.Add(append(row, todo(d, vs[ref]))...)
	}
	return t
}

// todo says what to do about a library's defaults in a few words.
func todo(d *Decision, v *analysis.LibraryVerdict) string {
	switch {
	case v == nil:
		return "not measured here"
	case v.Fine:
		return "keep the defaults"
	case v.Tied:
		return "more seeds: not told apart from the recommended policy"
	case v.Better == nil:
		return v.Verdict
	}
	if _, set, ok := strings.Cut(v.Verdict, "; set "); ok {
		return "set " + set
	}
	return "switch to **" + d.Letter(v.Better.Cell.Policy) + "**"
}

func writeRecovery(ew *errWriter, grids []analysis.RecoveryGrid) {
	if len(grids) == 0 {
		return
	}
	ew.printf("## Servers that do more than count: does it ever recover?\n\n")
	ew.printf("Share of seeds in which 99 %% of clients came back within the window, by policy, server and outage (rows) and capacity (columns). **0 %%** marks a cell that never recovers: with 429s that cost work, a herd large enough keeps the server busy rejecting (the metastable failure). **0 %%, gave up**: clients gave up (an attempt limit, or a component that refuses retries), so they never came back whatever the server did. A row with a client component is compared with the same backoff alone in the next section.\n\n")
	ew.table(recoveryGrid(grids))
	ew.printf("\n")
}

// recoveryGrid is the table of writeRecovery: a row per policy, server
// and outage, a column per capacity of any grid.
func recoveryGrid(grids []analysis.RecoveryGrid) *table.Table {
	var caps []float64
	for _, g := range grids {
		for _, c := range g.Capacities {
			if !containsF(caps, c) {
				caps = append(caps, c)
			}
		}
	}
	sortF(caps)
	t := table.New("", table.L("policy"), table.L("server"), table.L("outage"))
	for _, c := range caps {
		t.Columns = append(t.Columns, table.R(thousands(c)+" req/s").Tighten())
	}
	for _, g := range grids {
		for i, o := range g.Outages {
			pol, srv := "", ""
			if i == 0 {
				pol, srv = g.Policy, g.Server
			}
			row := []string{pol, srv, o.String()}
			for _, c := range caps {
				row = append(row, recoveredCell(g, i, c))
			}
			t.Add(row...)
		}
	}
	return t
}

// recoveredCell is the share of seeds back of outage i of g at capacity
// c: "" when not measured.
func recoveredCell(g analysis.RecoveryGrid, i int, c float64) string {
	v, gave := math.NaN(), math.NaN()
	for j, gc := range g.Capacities {
		if gc == c {
			v, gave = g.Recovered[i][j], g.GaveUp[i][j]
		}
	}
	switch {
	case math.IsNaN(v):
		return ""
	case v == 0 && gave > 0:
		return "**0 %, gave up**"
	case v == 0:
		return "**0 %**"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

func containsF(xs []float64, x float64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortF(xs []float64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// heading names a scenario.
func heading(s Scenario) string { return scenarioName(s) }
