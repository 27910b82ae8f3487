package reports

import (
	"fmt"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/sim"
)

// brownouts finds the dataset's brownout cells (analysis.IsBrownout) and
// groups them by scenario, summarised on the success rate and the load
// amplification: from the records, or, when the dataset was streamed,
// from those cells' runs read again whole (in.QueueRuns). It returns the
// other aggregates, for the rest of the report, and the records without
// the brownout cells' runs.
func brownouts(in Input, aggs []*analysis.Aggregate) ([]analysis.BrownoutScenario, []*analysis.Aggregate, Input, []string, error) {
	isB := analysis.IsBrownout(aggs)
	rest := filter(aggs, func(a *analysis.Aggregate) bool { return !isB(a) })
	if len(rest) == len(aggs) {
		return nil, aggs, in, nil, nil
	}
	keys := map[string]bool{}
	var sweeps []string
	for _, a := range aggs {
		if isB(a) {
			keys[a.CellKey] = true
			for _, s := range a.Sweeps {
				sweeps = addUniq(sweeps, s)
			}
		}
	}
	var recs, others []analysis.Record
	if in.Dataset != nil {
		for _, r := range in.Dataset.Records {
			if keys[r.CellKey] {
				recs = append(recs, r)
			} else {
				others = append(others, r)
			}
		}
		ds := *in.Dataset
		ds.Records = others
		in.Dataset = &ds
	}
	if in.Scanned != nil {
		if in.QueueRuns == nil {
			return nil, rest, in, []string{fmt.Sprintf("%s a brownout (fail_share), not summarised: their runs were not read again (read success_rate and amplification in the dataset)", num.Agree(len(keys), num.Plural(len(keys), "cell")+" has", num.Plural(len(keys), "cell")+" have"))}, nil
		}
		var err error
		if recs, err = in.QueueRuns(sweeps, keys); err != nil {
			return nil, nil, in, nil, err
		}
	}
	return analysis.Brownouts(analysis.BrownoutAggregates(recs)), rest, in, nil, nil
}

// brownoutWords says what a brownout scenario's server is, and when the
// brownout applies.
func brownoutWords(sc sim.Scenario) string {
	var parts []string
	if sc.Server() == sim.QueueingServer {
		words := serverWords(sc)
		if sc.RecoverAt == 0 { // never down: the run's length is said below
			words = strings.TrimSuffix(words, fmt.Sprintf("; %v observed after recovery", sc.Horizon))
		}
		parts = append(parts, "a queueing server of "+words)
		if sc.ArrivalRate > 0 {
			parts = append(parts, loadWords(sc))
		}
	} else {
		parts = append(parts, fmt.Sprintf("the counting server at %s, %s", capacityWords(sc.Capacity), num.Plural(sc.Clients, "client")))
	}
	if sc.AddedLatency > 0 {
		parts = append(parts, fmt.Sprintf("%v added to every answer", sc.AddedLatency))
	}
	if sc.FailCurve != "" {
		parts = append(parts, fmt.Sprintf("the failure share × a curve of \"%s\" over the run", sc.FailCurve))
	}
	switch {
	case sc.RecoverAt == 0 && sc.FailCurve != "":
		parts = append(parts, fmt.Sprintf("failing as the curve says over the run (%v)", sc.Horizon))
	case sc.RecoverAt == 0:
		parts = append(parts, fmt.Sprintf("failing for the whole run (%v)", sc.Horizon))
	default:
		parts = append(parts, fmt.Sprintf("down until %v, then failing", sc.RecoverAt))
	}
	return strings.Join(parts, "; ")
}

// brownoutShort names a brownout scenario's server in a figure's title:
// its kind and capacity, the fleet, and the brownout's added latency and
// curve when it has them (so that two figures differing in those do not
// read alike).
func brownoutShort(sc sim.Scenario) string {
	s := fmt.Sprintf("counting server, %s, %s", capacityWords(sc.Capacity), num.Plural(sc.Clients, "client"))
	if sc.Server() == sim.QueueingServer {
		s = serverShort(sc)
		if sc.ArrivalRate > 0 {
			s += ", " + loadWords(sc)
		}
	}
	if sc.AddedLatency > 0 {
		s += fmt.Sprintf(", %v added", sc.AddedLatency)
	}
	if sc.FailCurve != "" {
		s += fmt.Sprintf(", share × curve \"%s\"", sc.FailCurve)
	}
	return s
}

// brownoutFigures draws each brownout scenario, aligned with bs: a
// Figure without files where its data would draw nothing worth a figure
// (plots.Figure.Degenerate).
func brownoutFigures(bs []analysis.BrownoutScenario) []Figure {
	var out []Figure
	for _, b := range bs {
		f := plots.Brownout(brownoutShort(b.Scenario), b, queueName)
		if f.Degenerate() != "" {
			out = append(out, Figure{})
			continue
		}
		if n := len(out); n > 0 {
			f.Name = fmt.Sprintf("%s-%d", f.Name, n+1)
		}
		out = append(out, Figure{Figure: f, PNG: "plots/" + f.Name + ".png", SVG: "plots/" + f.Name + ".svg"})
	}
	return out
}

// BrownoutHeading opens the report's brownout section.
const BrownoutHeading = "## Brownouts: success and load amplification"

// writeBrownouts writes the report's brownout section: per scenario, its
// figure, a table of each policy's success rate and load amplification by
// failure share, and what the data says of each policy against not
// retrying (brownoutClaims).
func writeBrownouts(ew *errWriter, bs []analysis.BrownoutScenario, figs []Figure) {
	if len(bs) == 0 {
		return
	}
	ew.printf("%s\n\n", BrownoutHeading)
	ew.printf("A server that is up but fails a share of the requests it serves whatever the load (fail_share: a 503 after the work is done). The **success rate** is the share of requests (a client of the cohort's, each open-loop request) that succeeded by the horizon; the **load amplification** the attempts sent per request. Means over the seeds.\n\n")
	for i, b := range bs {
		ew.printf("### %s\n\n", brownoutWords(b.Scenario))
		if i < len(figs) && figs[i].PNG != "" {
			f := figs[i]
			ew.printf("![%s](%s)\n\n%s ([SVG](%s))\n\n", f.Title, f.PNG, f.Caption, f.SVG)
		}
		ew.table(brownoutTable(b))
		ew.printf("\n")
		for _, c := range brownoutClaims(b) {
			ew.printf("- %s\n", c)
		}
		ew.printf("\n")
	}
}

// brownoutTable is a scenario's success rate and amplification, a row per
// policy, a column per failure share.
func brownoutTable(b analysis.BrownoutScenario) *table.Table {
	cols := []table.Column{table.L("policy")}
	for _, s := range b.Shares {
		cols = append(cols, table.R(pctWords(s)+" failing").Tighten())
	}
	t := table.New("", cols...)
	for i, p := range b.Policies {
		row := []string{queueName(p)}
		for _, a := range b.Cells[i] {
			if a == nil {
				row = append(row, "")
				continue
			}
			row = append(row, fmt.Sprintf("%s · %s×", pctWords(a.Summary(analysis.SuccessRate).Mean), fmt2(a.Summary(analysis.Amplification).Mean)))
		}
		t.Add(row...)
	}
	return t
}

// pctWords is a share as a percentage to a tenth: "99.8 %".
func pctWords(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

// brownoutClaims are the sentences the section says of each policy: the
// most it sends per request and where, and, beside a policy that never
// retries, from which failure share it does worse than not retrying in
// every seed (analysis.BrownoutScenario.Verdicts).
func brownoutClaims(b analysis.BrownoutScenario) []string {
	base := b.Baseline()
	var out []string
	for _, v := range b.Verdicts() {
		c := fmt.Sprintf("**%s** sends at most %s attempts per request (at a failure share of %s).", queueName(b.Policies[v.Policy]), fmt2(v.MaxAmp), pctWords(b.Shares[v.MaxAt]))
		switch {
		case base < 0:
		case v.Below < 0:
			c += " It does no worse than not retrying at any failure share measured."
		default:
			j := v.Below
			c += fmt.Sprintf(" From a failure share of %s it does worse than not retrying in every seed: %s of requests succeed, against %s without retries.",
				pctWords(b.Shares[j]), pctWords(b.Cells[v.Policy][j].Summary(analysis.SuccessRate).Mean), pctWords(b.Cells[base][j].Summary(analysis.SuccessRate).Mean))
		}
		out = append(out, c)
	}
	return out
}
