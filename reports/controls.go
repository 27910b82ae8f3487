package reports

import (
	"fmt"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
)

// writeControls writes the section on client components: each beside the
// same backoff without it, in each world and capacity measured, and how
// many of those comparisons it won, lost, ended in clients giving up, or
// could not tell apart.
func writeControls(ew *errWriter, tables []analysis.ControlTable) {
	if len(tables) == 0 {
		return
	}
	n := analysis.Count(tables)
	total := 0
	for _, c := range n {
		total += c
	}
	ew.printf("## Client-side throttling and breakers: do they help after an outage?\n\n")
	ew.printf("Each client component (throttling, circuit breaker, retry tokens, retry cap, rate limiter, per-process budget: `sweep policies` says what each does and which library it follows) beside the same backoff without it, in the same scenario. ")
	ew.printf("A cell gives the t99 after recovery with the component, then without it; **faster** and **slower** need 95 %% intervals that do not overlap, or one of the two to finish in every seed where the other does not, or in clearly more seeds (Fisher's exact test, p < 0.05); a cell says so when the two finish in different numbers of seeds; **give up** means clients gave up that did not without it (their requests failed: no t99 shows that as a gain).\n\n")
	ew.printf("Of %s: %d faster, %d slower, %d with clients giving up, %d without a clear change.\n\n",
		num.Plural(total, "comparison"), n[analysis.Helps], n[analysis.Costs], n[analysis.GivesUp], n[analysis.NoChange])
	if slow, all := throttledUnfinished(tables); slow > 0 {
		ew.printf("Adaptive throttling counts the requests it refuses as attempted (the SRE book's definition), so after an outage in which the server accepted nothing its refusal probability, (requests − K·accepts) / (requests + 1), starts near 1 and falls only as accepts come in: with throttling, %d of %s did not finish in every seed.\n\n",
			slow, num.Plural(all, "comparison"))
	}
	for _, t := range tables {
		ew.table(controlGrid(t))
		ew.printf("\n")
	}
}

// controlGrid is one family's table of client components: a row per
// backoff with its component, a column per capacity.
func controlGrid(ct analysis.ControlTable) *table.Table {
	t := table.New(analysis.FamilyOf(ct.Scenario).String(), table.L("backoff + component"))
	for _, c := range ct.Capacities {
		t.Columns = append(t.Columns, table.L(thousands(c)+" req/s"))
	}
	for _, r := range ct.Rows {
		row := []string{analysis.ControlLabel(r.Policy)}
		for _, p := range r.Pairs {
			row = append(row, controlCell(p))
		}
		t.Add(row...)
	}
	return t
}

// controlCell is one comparison: its effect, the t99 with and without the
// component, and the clients that gave up when it made them.
func controlCell(p *analysis.ControlPair) string {
	if p == nil {
		return ""
	}
	w, o := p.With.Summary(analysis.T99), p.Without.Summary(analysis.T99)
	e := p.Effect()
	s := fmt.Sprintf("**%s**: %s (without: %s)", e, short99(w), short99(o))
	if w.N != o.N && (w.Unfinished > 0 || o.Unfinished > 0) {
		s += fmt.Sprintf("; finishes in %d of %d seeds where the backoff alone finishes in %d", w.N, w.N+w.Unfinished, o.N)
	}
	if e == analysis.GivesUp {
		clients := float64(p.With.Cell.Scenario.Clients)
		s = fmt.Sprintf("**%s**: %.0f %% of clients (without: %.0f %%)", e, 100*p.With.Summary(analysis.GaveUp).Mean/clients, 100*p.Without.Summary(analysis.GaveUp).Mean/clients)
	}
	return s
}

// short99 is a t99 in a table cell: the mean, or "not finished" with the
// seeds that did not.
func short99(s analysis.Summary) string {
	switch {
	case s.N == 0:
		return "not finished"
	case s.Unfinished > 0:
		return fmt.Sprintf("%s s, %d not finished", fmt1(s.Mean), s.Unfinished)
	}
	return fmt1(s.Mean) + " s"
}

// throttledUnfinished counts the comparisons of policies with adaptive
// throttling (all) and those whose runs with it did not all finish (slow).
func throttledUnfinished(tables []analysis.ControlTable) (slow, all int) {
	for _, t := range tables {
		for _, r := range t.Rows {
			if r.Policy.ThrottleK == 0 {
				continue
			}
			for _, p := range r.Pairs {
				if p == nil {
					continue
				}
				all++
				if p.With.Summary(analysis.T99).Unfinished > 0 {
					slow++
				}
			}
		}
	}
	return slow, all
}
