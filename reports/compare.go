package reports

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports/table"
)

// Compared is `sweep compare`'s answer as it is rendered: the two datasets
// (their folders as the user named them, and what a scan read of each)
// and their comparison.
type Compared struct {
	Dirs  [2]string
	Sides [2]*analysis.Scanned
	C     *analysis.NightlyComparison
	// All lists every cell and metric, not only the changes beyond the
	// threshold; AllowMissing says that what one side lacks does not fail.
	All, AllowMissing bool
}

// MissingWords says what one side of c lacks, one phrase per kind.
func MissingWords(c *analysis.NightlyComparison) []string {
	var out []string
	if n := len(c.OnlyOld); n > 0 {
		out = append(out, num.Plural(n, "cell")+" only in old")
	}
	if n := len(c.OnlyNew); n > 0 {
		out = append(out, num.Plural(n, "cell")+" only in new")
	}
	if n := len(c.ShortOld); n > 0 {
		out = append(out, fmt.Sprintf("old lacks %s of %s it was meant to hold", num.Plural(analysis.MissingRuns(c.ShortOld), "run"), num.Plural(n, "cell")))
	}
	if n := len(c.ShortNew); n > 0 {
		out = append(out, fmt.Sprintf("new lacks %s of %s it was meant to hold", num.Plural(analysis.MissingRuns(c.ShortNew), "run"), num.Plural(n, "cell")))
	}
	return out
}

// ShortText says what a cell lacks: "1 of the 2 seeds it was meant to
// hold (seed 2)".
func ShortText(sf *analysis.Shortfall) string {
	seeds := "seed "
	if len(sf.Missing) > 1 {
		seeds = "seeds "
	}
	return fmt.Sprintf("%d of the %s it was meant to hold (%s%s)", len(sf.Missing), num.Plural(sf.Asked, "seed"), seeds, dataset.FormatSeeds(sf.Missing))
}

// sims lists the simulator versions of a dataset's parts.
func sims(s *analysis.Scanned) string {
	var v []string
	for _, m := range s.Metas {
		v = addUniq(v, m.Sim)
	}
	return strings.Join(v, ", ")
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "?"
	}
	s := strconv.FormatFloat(100*x, 'f', 1, 64)
	if x >= 0 {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1)
}

// changeText is a change in words: "+12.3 % [+10.1, +14.5]", or in the
// metric's unit when the old mean is 0.
func changeText(ch analysis.Change) string {
	switch {
	case math.IsNaN(ch.Diff):
		return "no values to compare"
	case math.IsNaN(ch.Lo):
		return fmt.Sprintf("%s %s (too few values for an interval)", signed4(ch.Diff), ch.Metric.Unit)
	case math.IsNaN(ch.Rel):
		return fmt.Sprintf("%s [%s, %s] %s", signed4(ch.Diff), signed4(ch.Lo), signed4(ch.Hi), ch.Metric.Unit)
	}
	return fmt.Sprintf("%s %% [%s, %s]", pct(ch.Rel), pct(ch.RelLo), pct(ch.RelHi))
}

// signed4 is x to 4 significant digits with its sign.
func signed4(x float64) string {
	s := strconv.FormatFloat(x, 'g', 4, 64)
	if x >= 0 {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1)
}

// how says which test a change comes from.
func how(ch analysis.Change) string {
	if ch.Paired {
		if ch.Unpaired > 0 {
			return fmt.Sprintf("paired over %s, %s of one side only left out", num.Plural(ch.N, "seed"), num.Plural(ch.Unpaired, "seed"))
		}
		return fmt.Sprintf("paired over %s", num.Plural(ch.N, "seed"))
	}
	return fmt.Sprintf("Welch, %d and %d runs", ch.Old.Summary(ch.Metric).N, ch.New.Summary(ch.Metric).N)
}

// WriteCompareText writes `sweep compare`'s answer for a terminal: the two
// datasets, how the cells matched, a table by metric, the changes (or
// every cell and metric), what one side lacks, and the verdict.
func WriteCompareText(w io.Writer, v *Compared) error {
	ew := &errWriter{w: w}
	c := v.C
	v.writeHeader(ew)
	if ew.err == nil {
		ew.err = metricsTable(c).Text(ew.w, table.TextStyle{})
	}
	v.writeChanges(ew)
	v.writeMissing(ew)
	th := strconv.FormatFloat(100*c.Threshold, 'g', -1, 64)
	if n := c.Changed(); n > 0 {
		ew.printf("\nverdict: %s beyond %s %% (* above)", num.Plural(n, "significant change"), th)
	} else {
		ew.printf("\nverdict: no significant change beyond %s %%", th)
	}
	if m := MissingWords(c); len(m) > 0 {
		allowed := ": fails (--allow-missing to allow)"
		if v.AllowMissing {
			allowed = " (allowed by --allow-missing)"
		}
		ew.printf("; %s%s", strings.Join(m, ", "), allowed)
	}
	ew.printf("\n")
	return ew.err
}

// writeHeader says what was compared: each side, the cells matched and how,
// and the intervals.
func (v *Compared) writeHeader(ew *errWriter) {
	c := v.C
	for i, name := range []string{"old", "new"} {
		s := v.Sides[i]
		ew.printf("%s: %s — %s runs, %s cells, simulator %s\n", name, v.Dirs[i], num.Int(s.Runs), num.Int(len(s.Aggregates)), sims(s))
	}
	paired, shared, unpaired := 0, 0, 0
	for i, ch := range c.Changes {
		if (i == 0 || c.Changes[i-1].New != ch.New) && ch.Paired { // a cell's first metric
			paired++
			shared += ch.Shared
			unpaired += ch.Unpaired
		}
	}
	ew.printf("cells: %s matched by their parameters (%s paired by seed over %s both hold, %s of one side only left out; the others by Welch's test), %s only in old, %s only in new\n",
		num.Int(c.Matched), num.Int(paired), num.Plural(shared, "seed"), num.Plural(unpaired, "seed"), num.Int(len(c.OnlyOld)), num.Int(len(c.OnlyNew)))
	ew.printf("intervals: simultaneous at %g %% over %s comparisons (Bonferroni); threshold %s %%\n\n",
		100*(1-c.Alpha), num.Int(c.Tests), strconv.FormatFloat(100*c.Threshold, 'g', -1, 64))
}

// metricsTable counts, by metric, the cells compared, the significant
// changes and those beyond the threshold, with the largest significant
// change.
func metricsTable(c *analysis.NightlyComparison) *table.Table {
	t := table.New("", table.L("metric"), table.L("cells"), table.L("significant"), table.L("beyond threshold"), table.L("largest significant change"))
	for _, m := range c.Metrics {
		cells, sig, beyond := 0, 0, 0
		var big *analysis.Change
		for i, ch := range c.Changes {
			if ch.Metric.Key != m.Key {
				continue
			}
			cells++
			if ch.Significant {
				sig++
				if big == nil || math.Abs(ch.Rel) > math.Abs(big.Rel) || math.IsNaN(big.Rel) {
					big = &c.Changes[i]
				}
			}
			if ch.Beyond {
				beyond++
			}
		}
		largest := "—"
		if big != nil {
			largest = changeText(*big) + "  " + big.New.Label
		}
		t.Add(fmt.Sprintf("%s (%s)", m.Title, m.Unit), num.Int(cells), num.Int(sig), num.Int(beyond), largest)
	}
	return t
}

// writeChanges lists the changes beyond the threshold, or with All every
// cell and metric: * beyond, ~ not significant.
func (v *Compared) writeChanges(ew *errWriter) {
	title := "changes beyond the threshold"
	if v.All {
		title = "every cell and metric"
	}
	listed := 0
	for _, ch := range v.C.Changes {
		if !v.All && !ch.Beyond {
			continue
		}
		if listed == 0 {
			ew.printf("\n%s:\n", title)
		}
		listed++
		mark := " "
		if ch.Beyond {
			mark = "*"
		} else if !ch.Significant {
			mark = "~"
		}
		ew.printf("%s %-22s %s: %s → %s %s, %s, %s", mark, ch.Metric.Title, ch.New.Label,
			num.Short(ch.OldMean), num.Short(ch.NewMean), ch.Metric.Unit, changeText(ch), how(ch))
		if ch.UnfinishedOld != ch.UnfinishedNew {
			ew.printf("; unfinished %d → %d", ch.UnfinishedOld, ch.UnfinishedNew)
		}
		ew.printf("\n")
	}
}

// writeMissing lists, five at most a kind, the cells one side only holds
// and those a side lacks seeds of.
func (v *Compared) writeMissing(ew *errWriter) {
	c := v.C
	for _, side := range []struct {
		name string
		aggs []*analysis.Aggregate
	}{{"old", c.OnlyOld}, {"new", c.OnlyNew}} {
		for i, a := range side.aggs {
			if i == 5 {
				ew.printf("… %d more cells only in %s\n", len(side.aggs)-5, side.name)
				break
			}
			ew.printf("only in %s: %s (%s)\n", side.name, a.Label, num.Plural(len(a.Seeds), "seed"))
		}
	}
	for _, side := range []struct {
		name, dir string
		short     []analysis.Shortfall
	}{{"old", v.Dirs[0], c.ShortOld}, {"new", v.Dirs[1], c.ShortNew}} {
		for i, sf := range side.short {
			if i == 5 {
				ew.printf("… and %d more cells %s lacks seeds of (`sweep check %s` names the runs)\n", len(side.short)-5, side.name, side.dir)
				break
			}
			ew.printf("%s lacks %s: %s\n", side.name, ShortText(&side.short[i]), sf.Label)
		}
	}
}
