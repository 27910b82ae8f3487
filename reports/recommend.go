package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// Answer is everything `sweep recommend` says: the decision for a scenario
// (or a range of them), the verdicts on a library and on the user's own
// policy, and notes on where the runs came from.
type Answer struct {
	Rec      *analysis.Recommendation // a single scenario; nil for a range
	Robust   *analysis.Robust         // a range of scenarios; nil for one
	Library  *analysis.LibraryVerdict // --library
	Mine     *analysis.LibraryVerdict // --mine
	Space    int                      // candidates searched (per point)
	Settings []sim.Setting            // the answer's, closest built-ins measured; nil: Policy.Settings()
	Notes    []string
	Warnings []string
}

// Answered reports whether the answer names a policy.
func (a *Answer) Answered() bool {
	if a.Robust != nil {
		return a.Robust.NoAnswer == ""
	}
	return a.Rec != nil && a.Rec.Best != nil
}

func perClient(a *analysis.Aggregate) float64 {
	return a.Summary(analysis.Sent).Mean / float64(a.Cell.Scenario.Clients)
}

// WriteAnswer writes the answer as text, for a person.
func WriteAnswer(w io.Writer, ans *Answer, top int) error {
	ew := &errWriter{w: w}
	if ans.Robust != nil {
		writeRobust(ew, ans.Robust)
	} else {
		writeDecision(ew, ans.Rec, ans.Space, top, ans.Settings)
	}
	for _, v := range []*analysis.LibraryVerdict{ans.Library, ans.Mine} {
		if v == nil {
			continue
		}
		name := v.Preset.Cell.Policy.Preset
		if v == ans.Mine {
			name = "your policy"
		}
		ew.printf("\n%s: %s\n", name, v.Preset.Cell.Policy.Plain())
		if g := v.Preset.Summary(analysis.GaveUp); g.Min >= float64(v.Preset.Cell.Scenario.Clients) {
			ew.printf("  every client gives up before the server is back\n")
		} else {
			ew.printf("  t99 %s, peak %s req/s, %.1f requests per client after recovery\n",
				withUnit(analysis.T99, v.Preset.Summary(analysis.T99), " s after recovery"), summary(analysis.Peak, v.Preset.Summary(analysis.Peak)), perClient(v.Preset))
		}
		ew.printf("  verdict: %s\n", v.Verdict)
	}
	for _, wn := range ans.Warnings {
		ew.printf("warning: %s\n", wn)
	}
	for _, n := range ans.Notes {
		ew.printf("note: %s\n", n)
	}
	return ew.err
}

func scenarioWords(sc sim.Scenario) string {
	s := fmt.Sprintf("%s, %s, after a %v outage", capacityWords(sc.Capacity), num.Plural(sc.Clients, "client"), sc.RecoverAt)
	if sc.RetryAfter > 0 {
		s += fmt.Sprintf(", server sends Retry-After %v", sc.RetryAfter)
	}
	return s
}

func writeDecision(ew *errWriter, rec *analysis.Recommendation, space, top int, settings []sim.Setting) {
	q := rec.Query
	sc := rec.Scenario
	ew.printf("For %s (times counted from recovery; window %v), optimising %s:\n", scenarioWords(sc), sc.Horizon-sc.RecoverAt, rec.Metric.Title)
	ew.printf("judged on one server: %s (without --server the answer must hold over an envelope of servers)\n\n", analysis.ServerOf(sc).Label())
	if rec.Best == nil {
		ew.printf("no feasible policy: %s\n", rec.NoAnswer)
		writeTable(ew, rec, top)
		return
	}
	b := rec.Best
	pk := b.Summary(analysis.Peak)
	ew.printf("use: %s\n", b.Cell.Policy.Plain())
	ew.printf("  (as --mine: '%s')\n", b.Cell.PolicySpec())
	ew.printf("  t99 %s s after recovery, t50 %s s; peak %s req/s (%s); %.1f requests per client after recovery; %s\n",
		summary(analysis.T99, b.Summary(analysis.T99)), summary(analysis.T50, b.Summary(analysis.T50)), summary(analysis.Peak, pk), ofCapacity(pk.Mean, sc.Capacity), perClient(b), num.Plural(len(b.Seeds), "seed"))
	m := rec.Metric
	if len(rec.Against) > 0 {
		var ru *analysis.Comparison
		for i := range rec.Against {
			if !rec.Against[i].Identical {
				ru = &rec.Against[i]
				break
			}
		}
		if ru != nil {
			ew.printf("  runner-up: %s: %s %s paired over %s", ru.Other.Cell.Policy.Short(), m.Title, relDiff(ru, b.Summary(m).Mean), num.Plural(ru.Seeds, "seed"))
			if rec.Separated() {
				ew.printf(" — separated\n")
			} else {
				ew.printf(" — not separated at %s: tied within %.1f %% (%s)\n", num.Plural(len(b.Seeds), "seed"), 100*rec.TiedWithin(), num.Plural(len(rec.Ties), "candidate"))
			}
		}
		ew.printf("  confidence: P(no other candidate is more than %s %% better on %s) ≥ %s (paired t, Bonferroni over %d)\n",
			marginPct(q), m.Title, prob(rec.Confidence), len(rec.Against))
		if lean := leaner(rec); lean != nil {
			ew.printf("  note: %s is within %s %% on %s and sends %.0f %% less after recovery (%.1f vs %.1f requests per client)\n", lean.Other.Cell.Policy.Short(),
				marginPct(q), m.Title, 100*(1-perClient(lean.Other)/perClient(b)), perClient(lean.Other), perClient(b))
		}
	}
	if len(rec.Same) > 0 {
		var names []string
		for _, c := range rec.Same {
			names = append(names, c.Other.Cell.Policy.Short())
		}
		ew.printf("  the same runs, seed for seed (the parameters that differ never act here): %s\n", strings.Join(names, "; "))
	}
	ew.printf("\nhow to set it:\n")
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	if settings == nil {
		settings = b.Cell.Policy.Settings()
	}
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Library, s.How)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.printf("\n")
	writeTable(ew, rec, top)
	for _, wn := range rec.Warnings {
		ew.printf("warning: %s\n", wn)
	}
}

// leaner is the feasible candidate that sends the least after recovery
// among those within the margin of the best (paired upper bound), when it
// sends at least 10 % less than the best: worth knowing, not the answer.
func leaner(rec *analysis.Recommendation) *analysis.Comparison {
	var out *analysis.Comparison
	mean := rec.Best.Summary(rec.Metric).Mean
	for i := range rec.Against {
		c := &rec.Against[i]
		if c.Identical || math.IsNaN(c.Hi) || c.Hi > marginOf(rec.Query)*mean {
			continue
		}
		if perClient(c.Other) <= 0.9*perClient(rec.Best) && (out == nil || perClient(c.Other) < perClient(out.Other)) {
			out = c
		}
	}
	return out
}

func prob(p float64) string {
	if p >= 0.9995 {
		return "0.999"
	}
	return fmt.Sprintf("%.3f", p)
}

// ofCapacity says a rate as a multiple of the capacity: "2.4× capacity",
// "below 0.1× capacity".
func ofCapacity(rate, capacity float64) string {
	r := rate / capacity
	if r < 0.05 {
		return "below 0.1× capacity"
	}
	return fmt.Sprintf("%.1f× capacity", r)
}

// withUnit appends unit to a summary that has a value: "not finished"
// takes none.
func withUnit(m analysis.Metric, s analysis.Summary, unit string) string {
	if s.N == 0 {
		return summary(m, s)
	}
	return summary(m, s) + unit
}

func marginOf(q analysis.Query) float64 {
	if q.Margin > 0 {
		return q.Margin
	}
	return analysis.DefaultMargin
}

func relDiff(c *analysis.Comparison, mean float64) string {
	if math.IsNaN(c.Lo) {
		return fmt.Sprintf("%s %%", signed(100*c.Diff/mean, 1))
	}
	return fmt.Sprintf("%s %% [%s, %s]", signed(100*c.Diff/mean, 1), signed(100*c.Lo/mean, 1), signed(100*c.Hi/mean, 1))
}

func writeTable(ew *errWriter, rec *analysis.Recommendation, top int) {
	if len(rec.Ranked) == 0 {
		return
	}
	giveUp := "no client gives up, "
	if rec.Query.AllowGiveUp {
		giveUp = "clients may give up (--allow-give-up), "
	}
	ew.printf("candidates: %d of %d feasible (%s99 %% back within the window, ≤ %g requests per client after recovery)\n",
		rec.Feasible, len(rec.Ranked), giveUp, budgetOf(rec.Query))
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', tabwriter.AlignRight)
	if rec.Feasible > 0 {
		fmt.Fprintf(tw, "#\tpolicy\tt99 after recovery (s)\tpeak (req/s)\treq/client\tseeds\t\n")
	}
	shown := 0
	for i, a := range rec.Ranked {
		if i >= rec.Feasible {
			break
		}
		if shown >= top {
			break
		}
		shown++
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.1f\t%d\t\n", i+1, a.Cell.Policy.Short(), summary(analysis.T99, a.Summary(analysis.T99)),
			summary(analysis.Peak, a.Summary(analysis.Peak)), perClient(a), len(a.Seeds))
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	if rec.Feasible > shown {
		ew.printf("  … %d more feasible (--top N, or --json for all)\n", rec.Feasible-shown)
	}
	if bad := len(rec.Ranked) - rec.Feasible; bad > 0 {
		ew.printf("not feasible (%d), for example:\n", bad)
		for i, a := range rec.Ranked[rec.Feasible:] {
			if i >= 3 {
				break
			}
			ew.printf("  %s: %s\n", a.Cell.Policy.Short(), rec.Why[a.CellKey])
		}
	}
}

func budgetOf(q analysis.Query) float64 {
	if q.Budget > 0 {
		return q.Budget
	}
	return analysis.DefaultBudget
}

func writeRobust(ew *errWriter, rb *analysis.Robust) {
	ew.printf("Across %s (times counted from recovery), the policy of least worst-case regret on t99:\n\n", num.Plural(len(rb.Points), "scenario"))
	if rb.NoAnswer != "" {
		ew.printf("no policy is feasible at every point: %s\n", rb.NoAnswer)
		return
	}
	ew.printf("use: %s\n", rb.Winner.Policy.Plain())
	ew.printf("  worst regret %.2f× the best t99 of each point, mean %.2f×; %s %s feasible at every point\n\n", rb.WorstRegret, rb.MeanRegret, num.Plural(rb.Feasible, "candidate"), num.Agree(rb.Feasible, "is", "are"))
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "capacity (req/s)\tclients\tt99 of the answer (s)\tbest there (s)\tregret\tbest there\t\n")
	for _, p := range rb.Points {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f×\t%s\t\n", thousands(p.Scenario.Capacity), thousands(float64(p.Scenario.Clients)),
			summary(analysis.T99, p.Winner.Summary(analysis.T99)), summary(analysis.T99, p.Best.Summary(analysis.T99)), p.Regret, p.Best.Cell.Policy.Short())
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.printf("\nhow to set it:\n")
	tw = tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	for _, s := range rb.Winner.Policy.Settings() {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Library, s.How)
	}
	if err := tw.Flush(); err != nil && ew.err == nil {
		ew.err = err
	}
}

// The JSON document of `sweep recommend --json`; field names are stable
// and documented in docs/recommend.md.
type (
	jsonStat struct {
		Mean float64  `json:"mean"`
		Lo   *float64 `json:"lo"`
		Hi   *float64 `json:"hi"`
		N    int      `json:"n"`
		// Unfinished counts the runs without a value (not reached).
		Unfinished int `json:"unfinished"`
	}
	jsonPolicy struct {
		Family      string        `json:"family"`
		Preset      string        `json:"preset,omitempty"`
		BaseS       float64       `json:"base_s"`
		CapS        float64       `json:"cap_s"`
		Multiplier  float64       `json:"multiplier"`
		Jitter      string        `json:"jitter"`
		MaxAttempts int           `json:"max_attempts"`
		Plain       string        `json:"plain"`
		Short       string        `json:"short"`
		Spec        string        `json:"spec"`
		Settings    []sim.Setting `json:"settings,omitempty"`
	}
	jsonCandidate struct {
		Rank              int        `json:"rank"`
		Policy            jsonPolicy `json:"policy"`
		Feasible          bool       `json:"feasible"`
		Why               string     `json:"why_not,omitempty"`
		Seeds             int        `json:"seeds"`
		T99AfterS         jsonStat   `json:"t99_after_s"`
		T50AfterS         jsonStat   `json:"t50_after_s"`
		PeakRPS           jsonStat   `json:"peak_rps"`
		SentAfterRecovery jsonStat   `json:"sent_after_recovery"`
		RequestsPerClient float64    `json:"requests_per_client"`
		GaveUp            jsonStat   `json:"gave_up"`
	}
	jsonVerdict struct {
		Candidate jsonCandidate `json:"candidate"`
		Fine      bool          `json:"fine"`
		Tied      bool          `json:"not_told_apart,omitempty"` // slower, but not told apart from the best at these seeds
		Ratio     *float64      `json:"t99_ratio_to_best"`
		Verdict   string        `json:"verdict"`
	}
	jsonComparison struct {
		Policy    string   `json:"policy"`
		Seeds     int      `json:"seeds"`
		DiffS     float64  `json:"diff"`
		Lo        *float64 `json:"lo"`
		Hi        *float64 `json:"hi"`
		Identical bool     `json:"identical"`
	}
	jsonPoint struct {
		CapacityRPS float64  `json:"capacity_rps"`
		Clients     int      `json:"clients"`
		T99AfterS   jsonStat `json:"t99_after_s"`
		BestT99S    jsonStat `json:"best_t99_after_s"`
		BestPolicy  string   `json:"best_policy"`
		Regret      float64  `json:"regret"`
	}
	jsonAnswer struct {
		Query struct {
			CapacityRPS  float64 `json:"capacity_rps"`
			Clients      int     `json:"clients"`
			OutageS      float64 `json:"outage_s"`
			WindowS      float64 `json:"window_s"`
			RetryAfterS  float64 `json:"retry_after_s"`
			Objective    string  `json:"objective"`
			BudgetPerCli float64 `json:"budget_requests_per_client"`
			AllowGiveUp  bool    `json:"allow_give_up"`
			Margin       float64 `json:"margin"`
		} `json:"query"`
		Answered    bool             `json:"answered"`
		NoAnswer    string           `json:"no_answer,omitempty"`
		Use         *jsonCandidate   `json:"use,omitempty"`
		Separated   bool             `json:"separated"`
		TiedWithin  float64          `json:"tied_within"`
		Confidence  float64          `json:"confidence"`
		Against     []jsonComparison `json:"against_best,omitempty"`
		Candidates  []jsonCandidate  `json:"candidates,omitempty"`
		Points      []jsonPoint      `json:"points,omitempty"`
		WorstRegret float64          `json:"worst_regret,omitempty"`
		Library     *jsonVerdict     `json:"library,omitempty"`
		Mine        *jsonVerdict     `json:"mine,omitempty"`
		Warnings    []string         `json:"warnings"`
		Notes       []string         `json:"notes"`
	}
)

func stat(s analysis.Summary) jsonStat {
	j := jsonStat{Mean: s.Mean, N: s.N, Unfinished: s.Unfinished}
	if math.IsNaN(s.Mean) {
		j.Mean = 0
	}
	if !math.IsNaN(s.Lo) {
		lo, hi := s.Lo, s.Hi
		j.Lo, j.Hi = &lo, &hi
	}
	return j
}

func policyJSON(p sim.Policy, settings bool) jsonPolicy {
	j := jsonPolicy{Family: string(p.Kind), Preset: p.Preset, BaseS: p.Base.Seconds(), CapS: p.Cap.Seconds(), Multiplier: p.Multiplier,
		Jitter: p.JitterWords(), MaxAttempts: p.MaxAttempts, Plain: p.Plain(), Short: p.Short(), Spec: grid.Cell{Policy: p}.PolicySpec()}
	if settings {
		j.Settings = p.Settings()
	}
	return j
}

func candidateJSON(rank int, a *analysis.Aggregate, why string, settings bool) jsonCandidate {
	return jsonCandidate{Rank: rank, Policy: policyJSON(a.Cell.Policy, settings), Feasible: why == "", Why: why, Seeds: len(a.Seeds),
		T99AfterS: stat(a.Summary(analysis.T99)), T50AfterS: stat(a.Summary(analysis.T50)), PeakRPS: stat(a.Summary(analysis.Peak)),
		SentAfterRecovery: stat(a.Summary(analysis.Sent)), RequestsPerClient: perClient(a), GaveUp: stat(a.Summary(analysis.GaveUp))}
}

func verdictJSON(v *analysis.LibraryVerdict) *jsonVerdict {
	if v == nil {
		return nil
	}
	j := &jsonVerdict{Candidate: candidateJSON(0, v.Preset, "", false), Fine: v.Fine, Tied: v.Tied, Verdict: v.Verdict}
	if !math.IsNaN(v.Ratio) {
		r := v.Ratio
		j.Ratio = &r
	}
	return j
}

func ptr(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// WriteAnswerJSON writes the answer as one JSON document.
func WriteAnswerJSON(w io.Writer, ans *Answer) error {
	var j jsonAnswer
	j.Warnings, j.Notes = append([]string{}, ans.Warnings...), append([]string{}, ans.Notes...)
	q := analysis.Query{}
	switch {
	case ans.Robust != nil:
		rb := ans.Robust
		q = rb.Query
		j.Answered, j.NoAnswer = rb.NoAnswer == "", rb.NoAnswer
		if j.Answered {
			u := jsonCandidate{Policy: policyJSON(rb.Winner.Policy, true), Feasible: true}
			j.Use = &u
			j.WorstRegret = rb.WorstRegret
			for _, p := range rb.Points {
				j.Points = append(j.Points, jsonPoint{CapacityRPS: p.Scenario.Capacity, Clients: p.Scenario.Clients,
					T99AfterS: stat(p.Winner.Summary(analysis.T99)), BestT99S: stat(p.Best.Summary(analysis.T99)), BestPolicy: p.Best.Cell.Policy.Short(), Regret: p.Regret})
			}
		}
	case ans.Rec != nil:
		rec := ans.Rec
		q = rec.Query
		j.Warnings = append(j.Warnings, rec.Warnings...)
		sc := rec.Scenario
		j.Query.WindowS = (sc.Horizon - sc.RecoverAt).Seconds()
		j.Answered, j.NoAnswer = rec.Best != nil, rec.NoAnswer
		if rec.Best != nil {
			u := candidateJSON(1, rec.Best, "", true)
			if ans.Settings != nil {
				u.Policy.Settings = ans.Settings
			}
			j.Use = &u
			j.Separated, j.TiedWithin, j.Confidence = rec.Separated(), rec.TiedWithin(), rec.Confidence
			for _, c := range rec.Against {
				j.Against = append(j.Against, jsonComparison{Policy: c.Other.Cell.Policy.Short(), Seeds: c.Seeds, DiffS: c.Diff, Lo: ptr(c.Lo), Hi: ptr(c.Hi), Identical: c.Identical})
			}
		}
		for i, a := range rec.Ranked {
			j.Candidates = append(j.Candidates, candidateJSON(i+1, a, rec.Why[a.CellKey], false))
		}
	}
	j.Query.CapacityRPS, j.Query.Clients, j.Query.OutageS, j.Query.RetryAfterS = q.Capacity, q.Clients, q.Outage.Seconds(), q.RetryAfter.Seconds()
	j.Query.Objective, j.Query.BudgetPerCli, j.Query.AllowGiveUp, j.Query.Margin = string(q.Objective), budgetOf(q), q.AllowGiveUp, marginOf(q)
	j.Library, j.Mine = verdictJSON(ans.Library), verdictJSON(ans.Mine)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// marginPct writes the query's margin in percent as the user gave it:
// --margin 0.07 is 7, not 7.000000000000001.
func marginPct(q analysis.Query) string {
	return strconv.FormatFloat(100*marginOf(q), 'g', 10, 64)
}
