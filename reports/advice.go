package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/sim"
)

// EnvelopeAssumes says, in two sentences a newcomer understands, what an
// answer over servers assumes: the docs' recommend page and the answer's
// first lines say it.
const EnvelopeAssumes = "The answer assumes only that your server serves the capacity you give once it is back; " +
	"it must bring the clients back on every server listed (free or costly 429s, queueing servers with client timeouts and background traffic), " +
	"and is the one whose slowest recovery, measured against the least time any policy could take on that server, is the least. " +
	"Name your own server with --server (sweeps.toml keys: 'reject_cost=0.1', 'concurrency=16 service=exponential service_s=0.02 timeout_s=2 arrival_rps=560') to judge on it alone."

// AdviceAnswer is what `sweep recommend` says when the server is part of
// the question: the advice, and notes on where the runs came from.
type AdviceAnswer struct {
	Advice   *analysis.Advice
	Settings []sim.Setting // the answer's, closest built-ins measured; nil: Policy.Settings()
	Notes    []string
}

// Answered reports whether the advice names a policy.
func (a *AdviceAnswer) Answered() bool { return a.Advice.Envelope.Winner != nil }

// WriteAdvice writes the advice as text, for a person.
func WriteAdvice(w io.Writer, ans *AdviceAnswer, top int) error {
	ew := &errWriter{w: w}
	a := ans.Advice
	e := a.Envelope
	base := a.Question.Base
	ew.printf("For %s (times counted from recovery; window %v):\n", scenarioWords(base), base.Horizon-base.RecoverAt)
	what := "judged over"
	if a.Question.Own {
		what = "judged on your"
	}
	ew.printf("%s %s\n", what, analysis.DescribeEnvelope(e.Servers))
	if !a.Question.Own {
		ew.printf("(%s)\n", EnvelopeAssumes)
	}
	writeServes(ew, e.Servers, base)
	writeNotModelled(ew, e)
	ew.printf("\n")
	if e.Winner == nil {
		ew.printf("no answer: %s\n", e.NoAnswer)
		writeNotes(ew, ans.Notes)
		return ew.err
	}
	writeUse(ew, e)
	if line := marginLine(a.Margins); line != "" {
		ew.printf("  %s\n", line)
	}
	writeDefeating(ew, e)
	writeMargins(ew, a.Margins)
	ew.printf("\nhow to set it:\n")
	writeSettings(ew, e.Winner.Policy, ans.Settings)
	if a.Owner != nil {
		writeOwner(ew, a.Owner, base)
	}
	writeEnvelopeRanking(ew, e, top)
	writeNotes(ew, ans.Notes)
	return ew.err
}

func writeNotes(ew *errWriter, notes []string) {
	for _, n := range notes {
		ew.printf("note: %s\n", n)
	}
}

// writeUse is the answer and where it is slowest.
func writeUse(ew *errWriter, e *analysis.Envelope) {
	w := e.Winner
	ew.printf("use: %s\n", w.Policy.Plain())
	ew.printf("  (as --mine: '%s')\n", grid.Cell{Policy: w.Policy}.PolicySpec())
	kept := len(e.Servers) - len(e.Defeating)
	worst, free := -1, -1
	for i, r := range w.On {
		if r == nil || !r.Recovers() {
			continue
		}
		if worst < 0 || r.Regret > w.On[worst].Regret {
			worst = i
		}
		if s := e.Servers[i]; !s.Queueing() && s.RejectCost == 0 {
			free = i
		}
	}
	ew.printf("  recovers on %d of %d servers", w.RecoversOn(), len(e.Servers))
	if e.Compromise {
		ew.printf(" (every server some policy comes back on: %d)", kept)
	}
	took, least := num.ShortPair(w.On[worst].Time, w.On[worst].Ideal)
	ew.printf("; slowest against the least possible time: %.2f× on %s (%s s, least possible %s s)\n",
		w.On[worst].Regret, e.Servers[worst].Label(), took, least)
	if free >= 0 {
		r := w.On[free]
		ew.printf("  with free rejections: t99 %s s after recovery (%s)\n", summary(analysis.T99, r.Agg.Summary(analysis.T99)), num.Plural(len(r.Agg.Seeds), "seed"))
	}
	if w.Policy.LetsClientsGiveUp() {
		ew.printf("  its clients may give up (%s): it comes back where retrying for ever would bury the server, by failing requests\n", giveUpWords(w.Policy))
	}
	if len(e.Ranked) > 1 {
		ru := e.Ranked[1]
		if w.Score > 0 {
			ew.printf("  runner-up: %s, worst %.2f× (%+.1f %%)\n", ru.Policy.Short(), ru.Score, 100*(ru.Score/w.Score-1))
		} else {
			ew.printf("  runner-up: %s, worst %.2f×\n", ru.Policy.Short(), ru.Score)
		}
	}
}

// writeServes says which queueing servers serve another rate than the
// question's capacity: those with their own workers, one line each, and
// those whose workers are sized to it in whole workers, one line for all.
func writeServes(ew *errWriter, servers []analysis.Server, base sim.Scenario) {
	var sized []string
	for _, s := range servers {
		sc := s.Scenario(base)
		c := analysis.ServerCapacity(sc)
		if !s.Queueing() || math.Abs(c-base.Capacity) <= 1e-9*base.Capacity {
			continue
		}
		if s.Workers > 0 {
			ew.printf("(%s serves %s requests/s, %d workers at a mean service of %v: its workers, not --capacity, set what it serves)\n",
				s.Label(), num.Short(c), s.Workers, sc.MeanService())
			continue
		}
		w := fmt.Sprintf("of %v service serve %s requests/s with %s", sc.MeanService(), num.Short(c), num.Plural(sc.Concurrency, "worker"))
		if !slices.Contains(sized, w) {
			sized = append(sized, w)
		}
	}
	if len(sized) > 0 {
		ew.printf("(workers are whole: the queueing servers %s, the nearest to %s requests/s)\n", strings.Join(sized, "; those "), num.Short(base.Capacity))
	}
}

// giveUpWords says what lets p's clients give up.
func giveUpWords(p sim.Policy) string {
	var ws []string
	if p.MaxAttempts > 0 {
		ws = append(ws, fmt.Sprintf("at most %d attempts", p.MaxAttempts))
	}
	if p.RetryBudget > 0 {
		ws = append(ws, fmt.Sprintf("a retry budget of %s of requests + %s/s", pctWord(p.RetryBudget), num.Short(p.BudgetMinRPS)))
	}
	if p.RetryTokens > 0 {
		ws = append(ws, fmt.Sprintf("gRPC retry throttling, %s tokens, ratio %g", num.Short(p.RetryTokens), p.RetryTokenRatio))
	}
	if p.MaxElapsed > 0 {
		ws = append(ws, fmt.Sprintf("no retry past %v", p.MaxElapsed))
	}
	if p.BucketTokens > 0 {
		ws = append(ws, "a retry token bucket")
	}
	if p.RetryCap > 0 {
		ws = append(ws, fmt.Sprintf("at most %d retries outstanding", p.RetryCap))
	}
	if p.RetryOn != sim.RetryOnAny {
		ws = append(ws, "retries only "+string(p.RetryOn))
	}
	return strings.Join(ws, ", ")
}

func pctWord(x float64) string { return num.Short(100*x) + " %" }

// writeDefeating names the servers left out of the answer.
func writeDefeating(ew *errWriter, e *analysis.Envelope) {
	if len(e.Defeating) == 0 && len(e.OnlyGivingUp) == 0 {
		return
	}
	ew.printf("\n")
	var none, giving, unsteady []int
	for _, i := range e.Defeating {
		switch {
		case e.GiveUpRecovers[i] != nil:
			giving = append(giving, i)
		case slices.Contains(e.NotEverySeed, i):
			unsteady = append(unsteady, i)
		default:
			none = append(none, i)
		}
	}
	if len(none) > 0 {
		ew.printf("no candidate comes back on %s: %s\n", num.Plural(len(none), "server"), serverList(e, none))
	}
	if len(unsteady) > 0 {
		screening := "the screening seed"
		if e.Screened > 1 {
			screening = fmt.Sprintf("the %d screening seeds", e.Screened)
		}
		ew.printf("no contender comes back in all %s on %s, though some did on %s: %s\n",
			num.Plural(e.Seeds, "seed"), num.Plural(len(unsteady), "server"), screening, serverList(e, unsteady))
	}
	if len(giving) > 0 {
		ex := e.GiveUpRecovers[giving[0]]
		ew.printf("on %s none of the policies tried that never give up came back: %s\n", num.Plural(len(giving), "server"), serverList(e, giving))
		ew.printf("  tried there, gentlest first: %s\n", triedList(e.Tried))
		ew.printf("  only policies that let clients give up come back there, by failing the outage's requests: e.g. %s\n", ex.Policy.Short())
		ew.printf("  the answer there: %s\n", lossWords(e.Winner, giving))
	}
	for _, i := range e.OnlyGivingUp {
		if !containsIdx(e.Defeating, i) {
			ew.printf("on %s only policies that let clients give up come back; the answer does, by failing requests\n", e.Servers[i].Label())
		}
	}
}

func containsIdx(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func serverList(e *analysis.Envelope, idx []int) string {
	var ls []string
	for _, i := range idx {
		ls = append(ls, e.Servers[i].Label())
	}
	if len(ls) > 4 {
		return strings.Join(ls[:3], "; ") + fmt.Sprintf("; and %d more (--json lists them)", len(ls)-3)
	}
	return strings.Join(ls, "; ")
}

func triedList(cs []*analysis.Candidate) string {
	var ls []string
	for _, c := range cs {
		ls = append(ls, c.Policy.Short())
	}
	if len(ls) > 6 {
		return strings.Join(ls[:6], "; ") + fmt.Sprintf(" and %d more", len(ls)-6)
	}
	return strings.Join(ls, "; ")
}

// lossWords says how the answer does on servers it does not recover on.
func lossWords(c *analysis.Candidate, idx []int) string {
	stuck, slow, back := 0, 0, 0
	var why string
	for _, i := range idx {
		r := c.On[i]
		switch {
		case r == nil:
		case r.Recovers():
			back++
		case strings.HasPrefix(r.Why, "stuck"):
			stuck++
		default:
			slow++
			why = r.Why
		}
	}
	var parts []string
	if back > 0 {
		parts = append(parts, fmt.Sprintf("back on %d after all (on the screening seed)", back))
	}
	if stuck > 0 {
		parts = append(parts, fmt.Sprintf("stuck from recovery on %d (every request times out)", stuck))
	}
	if slow > 0 {
		parts = append(parts, fmt.Sprintf("not back on %d (%s)", slow, why))
	}
	if len(parts) == 0 {
		return "not measured"
	}
	return strings.Join(parts, "; ")
}

// marginLine sums the margins up in one line, for the answer's first
// lines: how far along each axis it still recovers.
func marginLine(ms []analysis.Margin) string {
	var parts []string
	for _, m := range ms {
		if math.IsNaN(m.Inside) {
			continue
		}
		switch m.Axis.Key {
		case "reject_cost":
			parts = append(parts, "429s costing up to "+pctWord(m.Inside)+" of a request")
		case "timeout_s":
			parts = append(parts, "client timeouts down to "+axisValue(m, m.Inside)+" at "+pctWord(m.At.Load)+" load")
		case "load":
			if m.Inside == 0 { // it recovers only where no other traffic shares the server
				parts = append(parts, fmt.Sprintf("no background load with %v timeouts", m.At.Timeout))
				continue
			}
			parts = append(parts, fmt.Sprintf("background load up to %s with %v timeouts", pctWord(m.Inside), m.At.Timeout))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "holds with " + strings.Join(parts, ", ") + " (margins below)"
}

func writeMargins(ew *errWriter, ms []analysis.Margin) {
	if len(ms) == 0 {
		return
	}
	ew.printf("\nmargins (bisection on the simulator, %s each):\n", num.Plural(ms[0].Seeds, "seed"))
	for _, m := range ms {
		ew.printf("  %s: %s\n", m.Axis.Title, marginWords(m))
	}
}

func axisValue(m analysis.Margin, x float64) string {
	switch m.Axis.Key {
	case "timeout_s":
		return atResolution(x, m.Axis.Resolution) + " s"
	}
	return pctWord(x)
}

// atResolution writes x with the decimals of the bisection's resolution
// (0.47, not 0.47000000000000003: the bisection's steps add up in binary),
// without trailing zeros.
func atResolution(x, res float64) string {
	decimals := 0
	if _, frac, ok := strings.Cut(strconv.FormatFloat(res, 'f', -1, 64), "."); ok {
		decimals = len(frac)
	}
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func marginWords(m analysis.Margin) string {
	where := ""
	if m.At.Queueing() {
		where = " (" + m.At.Label() + ")"
		if m.Axis.Key == "timeout_s" {
			where = fmt.Sprintf(" (queue %v %s, %s load)", m.At.ServiceTime, m.At.Service, pctWord(m.At.Load))
		} else if m.Axis.Key == "load" {
			where = fmt.Sprintf(" (queue %v %s, %v timeout)", m.At.ServiceTime, m.At.Service, m.At.Timeout)
		}
	}
	switch {
	case math.IsNaN(m.Inside):
		return fmt.Sprintf("does not recover even at %s%s", axisValue(m, m.Outside), where)
	case math.IsNaN(m.Outside):
		end := "up to"
		if m.Axis.Key == "timeout_s" {
			end = "down to"
		}
		return fmt.Sprintf("recovers %s %s, the end of the range%s", end, axisValue(m, m.Inside), where)
	}
	s := fmt.Sprintf("recovers at %s, not at %s%s", axisValue(m, m.Inside), axisValue(m, m.Outside), where)
	switch sw := m.SwitchTo; {
	case sw == nil:
		s += fmt.Sprintf("; past it none of the %d other candidates comes back", m.Tried)
	default:
		if sw.Policy.LetsClientsGiveUp() {
			// Its time back there is reached by failing requests, not by
			// serving them: not a time to compare with the answer's.
			s += fmt.Sprintf("; past it switch to %s, which comes back there by letting clients give up", sw.Policy.Short())
		} else {
			s += fmt.Sprintf("; past it switch to %s (%s s there)", sw.Policy.Short(), num.Short(sw.On[0].Time))
		}
	}
	return s
}

func writeSettings(ew *errWriter, p sim.Policy, settings []sim.Setting) {
	if settings == nil {
		settings = p.Settings()
	}
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Library, s.How)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
}

// writeOwner is the owner's view: a table of options × fleet.
func writeOwner(ew *errWriter, v *analysis.OwnerView, base sim.Scenario) {
	what := "time back to steady state, s after recovery, and goodput (% of demand)"
	if !sim.HasSteadyState(v.Server.Scenario(base)) { // no open-loop traffic: the cohort's t99 (Query.Recovery)
		what = "t99, s after recovery (never: not 99 % back within the window in every seed, or clients gave up), and goodput (% of demand)"
	}
	ew.printf("\nfor the server's owner, on %s (%s): %s, for today's library defaults and the answer\n",
		v.Server.Label(), num.Plural(v.Seeds, "seed"), what)
	if err := ownerTable(v, "the answer").Text(ew, table.TextStyle{Indent: "  "}); err != nil && ew.err == nil {
		ew.err = err
	}
	if v.Best > 0 {
		o := v.Options[v.Best]
		back := 0
		for _, r := range v.Back[v.Best] {
			if r.Recovers() {
				back++
			}
		}
		ew.printf("  %s (%s) brings %d of %d back; as a sweep (`sweep run --sweep owner` reproduces it):\n", o.Name, o.Key, back, len(v.Fleet))
		for _, l := range strings.Split(strings.TrimRight(OwnerSweep(v, v.Best, base), "\n"), "\n") {
			ew.printf("    %s\n", l)
		}
	}
}

// ownerTable is the owner's view as a table: a row per option (the best
// marked), a column per fleet policy, named by its preset, or answer for
// the one that has none.
func ownerTable(v *analysis.OwnerView, answer string) *table.Table {
	t := table.New("", table.L("option"))
	for _, p := range v.Fleet {
		name := p.Preset
		if name == "" {
			name = answer
		}
		t.Columns = append(t.Columns, table.L(name))
	}
	for i, o := range v.Options {
		row := []string{o.Name}
		if i == v.Best {
			row[0] += " ← best"
		}
		for _, r := range v.Back[i] {
			row = append(row, ownerCell(r))
		}
		t.Add(row...)
	}
	return t
}

func ownerCell(r analysis.Recovery) string {
	if !r.Recovers() {
		return "never"
	}
	g := ""
	if r.Agg != nil && r.Agg.Has(analysis.GoodputShare) {
		g = fmt.Sprintf(" (%.0f %%)", 100*r.Agg.Summary(analysis.GoodputShare).Mean)
	}
	return num.Short(r.Time) + g
}

// OwnerSweep is a sweeps.toml sweep that measures option i of v for the
// fleet on the same seeds: what the owner's view promises, for `sweep run`.
func OwnerSweep(v *analysis.OwnerView, i int, base sim.Scenario) string {
	sc := v.Options[i].Server.Scenario(base)
	var b strings.Builder
	fmt.Fprintf(&b, "[sweep.owner]\n")
	fmt.Fprintf(&b, "description = %q\n", "the owner's view: "+v.Options[i].Name)
	var pols []string
	for _, p := range v.Fleet {
		pols = append(pols, fmt.Sprintf("%q", grid.Cell{Policy: p}.PolicySpec()))
	}
	fmt.Fprintf(&b, "policy = [%s]\n", strings.Join(pols, ", "))
	c := grid.Cell{Scenario: sc, Policy: v.Fleet[0]}
	for _, p := range grid.Params {
		if p.Policy {
			continue
		}
		val := p.Get(c)
		if val == p.Get(grid.Cell{Scenario: sim.Article(), Policy: v.Fleet[0]}) && p.Key != "capacity_rps" && p.Key != "clients" {
			continue
		}
		fmt.Fprintf(&b, "%s = %s\n", p.Key, tomlValue(val))
	}
	fmt.Fprintf(&b, "seeds = {from = 1, to = %d}\n", v.Seeds)
	return b.String()
}

func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// writeEnvelopeRanking lists the candidates that recover on every server
// kept, by their worst regret.
func writeEnvelopeRanking(ew *errWriter, e *analysis.Envelope, top int) {
	if top <= 0 || len(e.Ranked) == 0 {
		return
	}
	ew.printf("\ncandidates that recover on every server kept (%d of %d searched; screened on %s, ranked on %s):\n", len(e.Ranked), e.Space, num.Plural(e.Screened, "seed"), num.Plural(e.Seeds, "seed"))
	// Ties at the least worst regret are broken by the least goodput
	// (analysis ranking): shown where a candidate loses demand.
	goodput := slices.ContainsFunc(e.Ranked, func(c *analysis.Candidate) bool { return c.LeastGoodput() < 1 })
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', tabwriter.AlignRight)
	if goodput {
		fmt.Fprintf(tw, "  #\tpolicy\tworst × least possible\tleast goodput\t\n")
	} else {
		fmt.Fprintf(tw, "  #\tpolicy\tworst × least possible\t\n")
	}
	for i, c := range e.Ranked {
		if i >= top {
			break
		}
		if goodput {
			fmt.Fprintf(tw, "  %d\t%s\t%.2f\t%.1f %%\t\n", i+1, c.Policy.Short(), c.Score, 100*c.LeastGoodput())
		} else {
			fmt.Fprintf(tw, "  %d\t%s\t%.2f\t\n", i+1, c.Policy.Short(), c.Score)
		}
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	if len(e.Left) == 0 {
		return
	}
	ew.printf("  contenders left on %s (%d): not back in every run somewhere, or slower on a server than one that recovers everywhere is at its worst:\n", num.Plural(e.Seeds, "seed"), len(e.Left))
	for i, c := range e.Left {
		if i >= top {
			ew.printf("    and %d more (--json lists them)\n", len(e.Left)-top)
			break
		}
		ew.printf("    %s: %s\n", c.Policy.Short(), c.Out)
	}
}

type (
	jsonRecovery struct {
		Server   string   `json:"server"`
		Recovers bool     `json:"recovers"`
		TimeS    *float64 `json:"time_after_s"`
		IdealS   float64  `json:"least_possible_s"`
		Regret   *float64 `json:"regret"`
		Why      string   `json:"why_not,omitempty"`
		Seeds    int      `json:"seeds"`
		Goodput  *float64 `json:"goodput_share,omitempty"`
		GaveUp   *float64 `json:"gave_up,omitempty"`
		Measured bool     `json:"measured"`
	}
	jsonEnvCandidate struct {
		Policy   jsonPolicy     `json:"policy"`
		Worst    float64        `json:"worst_regret"`
		Recovers int            `json:"recovers_on"`
		On       []jsonRecovery `json:"servers"`
	}
	jsonLeft struct {
		Policy jsonPolicy `json:"policy"`
		Why    string     `json:"why"`
	}
	jsonMargin struct {
		Axis     string   `json:"axis"`
		Unit     string   `json:"unit"`
		Inside   *float64 `json:"recovers_at"`
		Outside  *float64 `json:"not_at"`
		Server   string   `json:"server"`
		SwitchTo *string  `json:"switch_to"`
		Tried    int      `json:"tried"`
		Seeds    int      `json:"seeds"`
	}
	jsonOwnerRow struct {
		Option string         `json:"option"`
		Keys   string         `json:"sweeps_toml"`
		Fleet  []jsonRecovery `json:"fleet"`
	}
	jsonOwner struct {
		Server string         `json:"server"`
		Fleet  []string       `json:"fleet"`
		Rows   []jsonOwnerRow `json:"options"`
		Best   *string        `json:"best"`
		Sweep  string         `json:"sweep,omitempty"`
		Seeds  int            `json:"seeds"`
	}
	jsonAdvice struct {
		Query struct {
			CapacityRPS float64 `json:"capacity_rps"`
			Clients     int     `json:"clients"`
			OutageS     float64 `json:"outage_s"`
			WindowS     float64 `json:"window_s"`
			RetryAfterS float64 `json:"retry_after_s"`
			Budget      float64 `json:"budget_requests_per_client"`
			AllowGiveUp bool    `json:"allow_give_up"`
		} `json:"query"`
		Envelope     string             `json:"envelope"`
		Servers      []string           `json:"servers"`
		Own          bool               `json:"own_servers"`
		Assumes      string             `json:"assumes,omitempty"`
		Answered     bool               `json:"answered"`
		NoAnswer     string             `json:"no_answer,omitempty"`
		Compromise   bool               `json:"compromise"`
		Use          *jsonEnvCandidate  `json:"use,omitempty"`
		Defeating    []string           `json:"left_out"`
		OnlyGivingUp []string           `json:"only_giving_up_recovers"`
		NotEverySeed []string           `json:"left_out_not_back_in_every_seed"`
		NotModelled  []jsonNotModelled  `json:"not_modelled,omitempty"`
		Margins      []jsonMargin       `json:"margins"`
		Owner        *jsonOwner         `json:"owner,omitempty"`
		Ranked       []jsonEnvCandidate `json:"ranked"`
		Left         []jsonLeft         `json:"left_ranking"`
		Library      *jsonEnvVerdict    `json:"library,omitempty"`
		Mine         *jsonEnvVerdict    `json:"mine,omitempty"`
		Runs         int                `json:"runs"`
		Notes        []string           `json:"notes"`
	}
	jsonEnvVerdict struct {
		Policy   jsonPolicy     `json:"policy"`
		Recovers int            `json:"recovers_on"`
		Worst    *float64       `json:"worst_regret"`
		Fine     bool           `json:"fine"`
		Verdict  string         `json:"verdict"`
		On       []jsonRecovery `json:"servers"`
	}
)

func recoveryJSON(s analysis.Server, r *analysis.Recovery) jsonRecovery {
	j := jsonRecovery{Server: s.Label()}
	if r == nil {
		return j
	}
	if r.NotModelled { // not run there: its chain cannot
		j.Why = r.Why
		return j
	}
	j.Measured, j.Recovers, j.Why, j.IdealS = true, r.Recovers(), r.Why, r.Ideal
	j.TimeS, j.Regret = ptr(r.Time), ptr(r.Regret)
	if math.IsInf(r.Regret, 0) {
		j.Regret = nil
	}
	if a := r.Agg; a != nil {
		j.Seeds = len(a.Seeds)
		// A queueing run that does not come back may have stopped once
		// provably stuck (sim.Sim.StopStuck), its counts those of the
		// stop: its goodput and clients given up are left out, as the
		// text leaves them, so that the answer is the same whether the
		// run was simulated now or read whole from a dataset.
		if r.Recovers() || a.Cell.Scenario.Concurrency == 0 {
			if a.Has(analysis.GoodputShare) {
				j.Goodput = ptr(a.Summary(analysis.GoodputShare).Mean)
			}
			j.GaveUp = ptr(a.Summary(analysis.GaveUp).Mean)
		}
	}
	return j
}

func envCandidateJSON(e *analysis.Envelope, c *analysis.Candidate) jsonEnvCandidate {
	j := jsonEnvCandidate{Policy: policyJSON(c.Policy, true), Worst: c.Score, Recovers: c.RecoversOn()}
	for i, r := range c.On {
		j.On = append(j.On, recoveryJSON(e.Servers[i], r))
	}
	return j
}

// WriteAdviceJSON writes the advice as one JSON document.
func WriteAdviceJSON(w io.Writer, ans *AdviceAnswer) error { return writeAdviceJSON(w, ans, nil) }

// ownerJSON is the owner's view v of an answer over base's servers, as
// --json writes it.
func ownerJSON(v *analysis.OwnerView, b sim.Scenario) *jsonOwner {
	jo := &jsonOwner{Server: v.Server.Label(), Seeds: v.Seeds}
	for _, p := range v.Fleet {
		jo.Fleet = append(jo.Fleet, grid.Cell{Policy: p}.PolicySpec())
	}
	for i, o := range v.Options {
		row := jsonOwnerRow{Option: o.Name, Keys: o.Key}
		for _, r := range v.Back[i] {
			row.Fleet = append(row.Fleet, recoveryJSON(o.Server, &r))
		}
		jo.Rows = append(jo.Rows, row)
	}
	if v.Best >= 0 {
		s := v.Options[v.Best].Name
		jo.Best = &s
		jo.Sweep = OwnerSweep(v, v.Best, b)
	}
	return jo
}

func writeAdviceJSON(w io.Writer, ans *AdviceAnswer, r *analysis.Response) error {
	a := ans.Advice
	e := a.Envelope
	var j jsonAdvice
	b := a.Question.Base
	j.Query.CapacityRPS, j.Query.Clients, j.Query.OutageS = b.Capacity, b.Clients, b.RecoverAt.Seconds()
	j.Query.WindowS, j.Query.RetryAfterS = (b.Horizon - b.RecoverAt).Seconds(), b.RetryAfter.Seconds()
	j.Query.Budget, j.Query.AllowGiveUp = budgetOf(a.Question.Query), a.Question.Query.AllowGiveUp
	j.Envelope, j.Own = analysis.DescribeEnvelope(e.Servers), a.Question.Own
	if !j.Own {
		j.Assumes = EnvelopeAssumes
	}
	for _, s := range e.Servers {
		j.Servers = append(j.Servers, s.Label())
	}
	j.Answered, j.NoAnswer, j.Compromise, j.Runs = e.Winner != nil, e.NoAnswer, e.Compromise, a.Runs
	j.Defeating, j.OnlyGivingUp, j.Margins, j.Ranked, j.Left = []string{}, []string{}, []jsonMargin{}, []jsonEnvCandidate{}, []jsonLeft{}
	for _, i := range e.Defeating {
		j.Defeating = append(j.Defeating, e.Servers[i].Label())
	}
	for _, i := range e.OnlyGivingUp {
		j.OnlyGivingUp = append(j.OnlyGivingUp, e.Servers[i].Label())
	}
	j.NotEverySeed = []string{}
	for _, i := range e.NotEverySeed {
		j.NotEverySeed = append(j.NotEverySeed, e.Servers[i].Label())
	}
	j.NotModelled = notModelledJSON(e)
	if e.Winner != nil {
		u := envCandidateJSON(e, e.Winner)
		if ans.Settings != nil {
			u.Policy.Settings = ans.Settings
		}
		j.Use = &u
	}
	for _, c := range e.Ranked {
		jc := envCandidateJSON(e, c)
		jc.Policy.Settings = nil
		j.Ranked = append(j.Ranked, jc)
	}
	for _, c := range e.Left {
		p := policyJSON(c.Policy, false)
		j.Left = append(j.Left, jsonLeft{Policy: p, Why: c.Out})
	}
	for _, m := range a.Margins {
		jm := jsonMargin{Axis: m.Axis.Key, Unit: m.Axis.Unit, Inside: ptr(m.Inside), Outside: ptr(m.Outside), Server: m.At.Label(), Tried: m.Tried, Seeds: m.Seeds}
		if m.SwitchTo != nil {
			s := grid.Cell{Policy: m.SwitchTo.Policy}.PolicySpec()
			jm.SwitchTo = &s
		}
		j.Margins = append(j.Margins, jm)
	}
	if a.Owner != nil {
		j.Owner = ownerJSON(a.Owner, b)
	}
	if r != nil {
		for _, v := range []struct {
			v   *analysis.EnvelopeVerdict
			out **jsonEnvVerdict
		}{{r.LibraryOver, &j.Library}, {r.MineOver, &j.Mine}} {
			if v.v == nil {
				continue
			}
			jv := &jsonEnvVerdict{Policy: policyJSON(v.v.Policy, false), Recovers: v.v.Recovers, Fine: v.v.Fine, Verdict: v.v.Verdict}
			jv.Worst = ptr(v.v.Worst)
			for i, rec := range v.v.On {
				jv.On = append(jv.On, recoveryJSON(e.Servers[i], rec))
			}
			*v.out = jv
		}
	}
	j.Notes = append([]string{}, ans.Notes...)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// WriteResponse writes recommend's answer as text, for a person: the
// answer over servers, or on one counting server (or a range of them),
// with the verdicts asked for.
func WriteResponse(w io.Writer, r *analysis.Response, top int) error {
	if r.Advice == nil {
		return WriteAnswer(w, &Answer{Rec: r.Rec, Robust: r.Robust, Library: r.Library, Mine: r.Mine, Space: r.Space, Settings: r.Settings, Notes: r.Notes}, top)
	}
	ew := &errWriter{w: w}
	if err := WriteAdvice(ew, &AdviceAnswer{Advice: r.Advice, Settings: r.Settings}, top); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		v    *analysis.EnvelopeVerdict
	}{{r.Request.Library.Name, r.LibraryOver}, {"your policy", r.MineOver}} {
		if v.v == nil {
			continue
		}
		ew.printf("\n%s: %s\n  verdict: %s\n", v.name, v.v.Policy.Plain(), v.v.Verdict)
	}
	writeNotes(ew, r.Notes)
	return ew.err
}

// WriteResponseJSON writes recommend's answer as one JSON document: the
// answer over servers (WriteAdviceJSON's fields, with the verdicts), or
// on one counting server (WriteAnswerJSON's).
func WriteResponseJSON(w io.Writer, r *analysis.Response) error {
	if r.Advice == nil {
		return WriteAnswerJSON(w, &Answer{Rec: r.Rec, Robust: r.Robust, Library: r.Library, Mine: r.Mine, Space: r.Space, Settings: r.Settings, Notes: r.Notes})
	}
	return writeAdviceJSON(w, &AdviceAnswer{Advice: r.Advice, Settings: r.Settings, Notes: r.Notes}, r)
}
