package reports

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"

	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
)

// RankingTop is how many feasible candidates a scenario's ranking shows
// besides those on the Pareto front and the best cap of every other shape.
const RankingTop = 10

// writeScenario writes scenario i's page: the decision in full, the
// article's table 5, the library verdicts and the ranking.
func (r *Report) writeScenario(w io.Writer, i int) error {
	ew := &errWriter{w: w}
	s := r.Scenarios[i]
	rec := s.Rec
	ew.printf("# %s\n\n[← report](../report.md)\n\n", heading(s))
	sc := s.All.Scenario
	if rec == nil {
		ew.printf("No policy that jitters was measured here, and only those are recommended; the ranking below shows how the others do.\n\n")
		writeRanking(ew, s.All, nil)
		return ew.err
	}
	ew.printf("Window after recovery: %v. Times are counted from recovery.\n\n", sc.Horizon-sc.RecoverAt)
	if rec.Best == nil {
		ew.printf("**No feasible policy**: %s.\n\n", rec.NoAnswer)
	} else {
		b := rec.Best
		pk := b.Summary(analysis.Peak)
		ew.printf("**Use: %s**\n\n", b.Cell.Policy.Plain())
		ew.printf("- t99 %s after recovery, t50 %s; peak %s req/s (%s× capacity); %s requests per client after recovery; %s\n",
			seconds(b.Summary(analysis.T99)), seconds(b.Summary(analysis.T50)), thousands(pk.Mean), fmt1(pk.Mean/sc.Capacity), fmt1(perClient(b)), num.Plural(len(b.Seeds), "seed"))
		if len(rec.Ties) > 0 {
			var names []string
			for _, c := range rec.Ties {
				names = append(names, fmt.Sprintf("%s (%s)", analysis.ShortName(c.Other.Cell.Policy), relDiff(&c, b.Summary(analysis.T99).Mean)))
			}
			ew.printf("- cannot be told apart from it at these seeds (the paired 95 %% interval of the t99 difference includes 0): %s\n", strings.Join(names, "; "))
		} else if len(rec.Against) > 0 {
			for _, c := range rec.Against {
				if !c.Identical {
					ew.printf("- separated from every other feasible policy; the runner-up, %s, is %s slower in t99, paired over %s\n", analysis.ShortName(c.Other.Cell.Policy), relDiff(&c, b.Summary(analysis.T99).Mean), num.Plural(c.Seeds, "seed"))
					break
				}
			}
		}
		if len(rec.Same) > 0 {
			var names []string
			for _, c := range rec.Same {
				names = append(names, analysis.ShortName(c.Other.Cell.Policy))
			}
			ew.printf("- the same runs, seed for seed (the parameters that differ never act here): %s\n", strings.Join(names, "; "))
		}
		for _, wn := range rec.Warnings {
			ew.printf("- warning: %s\n", wn)
		}
		ew.printf("\nHow to set it:\n\n")
		t := table.New("", table.L("library"), table.L("setting"))
		for _, st := range b.Cell.Policy.Settings() {
			how := st.How
			if !st.Exact && !strings.HasPrefix(how, "not") {
				how = "not exact: " + how
			}
			t.Add(st.Library, how)
		}
		ew.table(t)
		ew.printf("\n")
	}
	if len(s.Situations) > 0 {
		ew.printf("## The article's table 5, from this data\n\n")
		t := table.New("", table.L("situation"), table.L("recommended"), table.L("reason"))
		for _, st := range s.Situations {
			t.Add(st.Situation, st.Recommended, st.Reason)
		}
		ew.table(t)
		ew.printf("\n")
	}
	if len(s.Library) > 0 {
		ew.printf("## Library defaults\n\nAgainst the recommended policy above: fine when feasible and t99 within %g× of it.\n\n", analysis.FineFactor)
		t := table.New("", table.L("library"), table.R("t99 after recovery"), table.R("peak (req/s)"), table.R("requests per client"),
			table.L("not feasible because"), table.L("verdict"))
		for _, v := range s.Library {
			a := v.Preset
			t.Add(a.Cell.Policy.PresetLabel(), seconds(a.Summary(analysis.T99)), peakText(a), fmt1(perClient(a)), whyShort(rec.Query, a), verdictWords(&v))
		}
		ew.table(t)
		ew.printf("\n")
	}
	writeRanking(ew, s.All, rec.Best)
	return ew.err
}

// peakText is the peak, or why it says nothing: when every client gave up,
// a low peak is not gentleness.
func peakText(a *analysis.Aggregate) string {
	if analysis.AllGaveUp(a) {
		return "— (every client gave up)"
	}
	return summary(analysis.Peak, a.Summary(analysis.Peak))
}

// Shown is the ranking's selection rule: the RankingTop fastest feasible
// candidates, every one on the Pareto front, and the best of every other
// shape (a policy at any cap), feasible or not.
func Shown(rec *analysis.Recommendation) []bool {
	show := make([]bool, len(rec.Ranked))
	front := map[*analysis.Aggregate]bool{}
	for _, a := range rec.Pareto {
		front[a] = true
	}
	seen := map[any]bool{}
	for i, a := range rec.Ranked {
		sh := analysis.Shape(a.Cell.Policy)
		if (i < rec.Feasible && i < RankingTop) || front[a] || !seen[sh] {
			show[i] = true
		}
		seen[sh] = true
	}
	return show
}

func writeRanking(ew *errWriter, rec *analysis.Recommendation, use *analysis.Aggregate) {
	if len(rec.Ranked) == 0 {
		return
	}
	front := map[*analysis.Aggregate]bool{}
	for _, a := range rec.Pareto {
		front[a] = true
	}
	show := Shown(rec)
	n := 0
	for _, s := range show {
		if s {
			n++
		}
	}
	ew.printf("## Ranking\n\n%s, %d feasible, ranked by t99 after recovery (feasible first). Shown (%d): the %d fastest feasible, every one on the Pareto front of t99, peak and traffic among the feasible (marked *), and the best cap of every other policy shape. **use**: the recommended policy; *no jitter*: never recommended, however fast here.\n\n", num.Plural(len(rec.Ranked), "candidate"), rec.Feasible, n, RankingTop)
	t := table.New("", table.R("#"), table.L("policy"), table.R("t99 after recovery"), table.R("peak (req/s)"), table.R("requests per client"), table.L("not feasible because"))
	for i, a := range rec.Ranked {
		if !show[i] {
			continue
		}
		mark := ""
		if front[a] {
			mark = " *"
		}
		if a == use {
			mark += " **use**"
		} else if !a.Cell.Policy.Jittered() {
			mark += " *no jitter*"
		}
		t.Add(strconv.Itoa(i+1), analysis.ShortName(a.Cell.Policy)+mark, seconds(a.Summary(analysis.T99)), peakText(a), fmt1(perClient(a)), rec.Why[a.CellKey])
	}
	ew.table(t)
	ew.printf("\n")
}

// verdictWords is a library verdict without what the row's other columns
// say: fine, or how much slower and what to change.
func verdictWords(v *analysis.LibraryVerdict) string {
	switch {
	case v.Fine:
		return "fine here, " + fmt2(v.Ratio) + "×"
	case v.Better == nil:
		return v.Verdict
	}
	do := "switch to the recommended policy"
	if _, set, ok := strings.Cut(v.Verdict, "; set "); ok {
		do = "set " + set
	}
	if math.IsNaN(v.Ratio) || v.Ratio <= analysis.FineFactor {
		return do
	}
	return fmt2(v.Ratio) + "× slower; " + do
}
