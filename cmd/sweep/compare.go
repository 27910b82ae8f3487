package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
)

var compareHelp = fmt.Sprintf(`Did anything move? Compares two datasets cell by cell — two nights, or two
simulator versions: cells are matched by their parameters, not by run key —
and, for each metric, prints the change of its mean with an interval: paired
by seed over the seeds both hold when they share at least %d (seeds only one
side holds, as --add-seeds adds them, are left out and counted), else
Welch's. Intervals are simultaneous (Bonferroni over every cell and metric
compared), so that thousands of cells do not raise an alarm on noise; a
change is significant when its interval excludes zero.

A cell on one side only (a changed config, a cell lost), or a cell with
fewer seeds than its dataset was meant to hold (what "sweep run" recorded
it would write: a shard that died, parts deleted), fails the comparison
too, unless --allow-missing.

Exit codes: 0 no significant change beyond --threshold and nothing
missing, 1 changed or missing, 2 error.
`, analysis.MinPairedSeeds)

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsDoc("compare", "[--threshold 5%] [--alpha 0.05] [--all] [--json] OLD NEW   (two dataset folders)", compareHelp, stderr)
	threshold := fs.String("threshold", "0%", "a significant change counts (exit 1) only when its mean moves by more than this, in % of the old mean")
	alpha := fs.Float64("alpha", 0.05, "family-wise error rate: the chance that any change reported is noise")
	all := fs.Bool("all", false, "list every cell and metric, not only the changes")
	asJSON := fs.Bool("json", false, "print one JSON document")
	allowMissing := fs.Bool("allow-missing", false, "list cells on one side only, and runs a dataset was meant to hold and lacks, without failing on them")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("compare: want two dataset folders, OLD and NEW, got %s", num.Plural(len(pos), "argument"))
	}
	th, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(*threshold), "%")), 64)
	if err != nil || th < 0 || math.IsInf(th, 0) || math.IsNaN(th) {
		return usagef("compare: --threshold %q: want a percentage ≥ 0, such as 5%%", *threshold)
	}
	if !(*alpha > 0 && *alpha < 1) {
		return usagef("compare: --alpha %v: want a probability between 0 and 1, such as 0.05", *alpha)
	}
	var sides [2]*analysis.Scanned
	var short [2][]analysis.Shortfall
	for i, dir := range pos {
		s, err := scanDataset(ctx, "compare", dir, dir, analysis.ScanOptions{Metrics: analysis.AllMetrics()})
		if err != nil {
			return err
		}
		sides[i] = s
		if short[i], err = shortfalls("compare", dir, s); err != nil {
			return err
		}
	}
	c := analysis.CompareAggregates(sides[0].Aggregates, sides[1].Aggregates, *alpha, th/100)
	c.ShortOld, c.ShortNew = short[0], short[1]
	if *asJSON {
		if err := writeJSON(stdout, compareJSON(pos, sides, c, *allowMissing)); err != nil {
			return err
		}
	} else {
		writeCompare(stdout, pos, sides, c, *all, *allowMissing)
	}
	var failed []string
	if n := c.Changed(); n > 0 {
		failed = append(failed, num.Plural(n, "significant change")+" beyond the threshold")
	}
	if !*allowMissing {
		failed = append(failed, missingWords(c)...)
	}
	if len(failed) > 0 {
		return reported{errors.New(strings.Join(failed, "; "))}
	}
	return nil
}

// missingWords says what one side lacks, one phrase per kind.
func missingWords(c *analysis.NightlyComparison) []string {
	var out []string
	if n := len(c.OnlyOld); n > 0 {
		out = append(out, num.Plural(n, "cell")+" only in old")
	}
	if n := len(c.OnlyNew); n > 0 {
		out = append(out, num.Plural(n, "cell")+" only in new")
	}
	if n := len(c.ShortOld); n > 0 {
		out = append(out, fmt.Sprintf("old lacks %s of %s it was meant to hold", num.Plural(missingRuns(c.ShortOld), "run"), num.Plural(n, "cell")))
	}
	if n := len(c.ShortNew); n > 0 {
		out = append(out, fmt.Sprintf("new lacks %s of %s it was meant to hold", num.Plural(missingRuns(c.ShortNew), "run"), num.Plural(n, "cell")))
	}
	return out
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
		return fmt.Sprintf("%s %s (too few values for an interval)", signed(ch.Diff), ch.Metric.Unit)
	case math.IsNaN(ch.Rel):
		return fmt.Sprintf("%s [%s, %s] %s", signed(ch.Diff), signed(ch.Lo), signed(ch.Hi), ch.Metric.Unit)
	}
	return fmt.Sprintf("%s %% [%s, %s]", pct(ch.Rel), pct(ch.RelLo), pct(ch.RelHi))
}

func signed(x float64) string {
	s := strconv.FormatFloat(x, 'g', 4, 64)
	if x >= 0 {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1)
}

func how(ch analysis.Change) string {
	if ch.Paired {
		if ch.Unpaired > 0 {
			return fmt.Sprintf("paired over %s, %s of one side only left out", num.Plural(ch.N, "seed"), num.Plural(ch.Unpaired, "seed"))
		}
		return fmt.Sprintf("paired over %s", num.Plural(ch.N, "seed"))
	}
	return fmt.Sprintf("Welch, %d and %d runs", ch.Old.Summary(ch.Metric).N, ch.New.Summary(ch.Metric).N)
}

func writeCompare(w io.Writer, dirs []string, sides [2]*analysis.Scanned, c *analysis.NightlyComparison, all, allowMissing bool) {
	for i, name := range []string{"old", "new"} {
		s := sides[i]
		fmt.Fprintf(w, "%s: %s — %s runs, %s cells, simulator %s\n", name, dirs[i], num.Int(s.Runs), num.Int(len(s.Aggregates)), sims(s))
	}
	paired, shared, unpaired := 0, 0, 0
	for i, ch := range c.Changes {
		if (i == 0 || c.Changes[i-1].New != ch.New) && ch.Paired { // a cell's first metric
			paired++
			shared += ch.Shared
			unpaired += ch.Unpaired
		}
	}
	fmt.Fprintf(w, "cells: %s matched by their parameters (%s paired by seed over %s both hold, %s of one side only left out; the others by Welch's test), %s only in old, %s only in new\n",
		num.Int(c.Matched), num.Int(paired), num.Plural(shared, "seed"), num.Plural(unpaired, "seed"), num.Int(len(c.OnlyOld)), num.Int(len(c.OnlyNew)))
	fmt.Fprintf(w, "intervals: simultaneous at %g %% over %s comparisons (Bonferroni); threshold %s %%\n\n",
		100*(1-c.Alpha), num.Int(c.Tests), strconv.FormatFloat(100*c.Threshold, 'g', -1, 64))

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tcells\tsignificant\tbeyond threshold\tlargest significant change")
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
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\n", m.Title, m.Unit, num.Int(cells), num.Int(sig), num.Int(beyond), largest)
	}
	tw.Flush()

	title := "changes beyond the threshold"
	if all {
		title = "every cell and metric"
	}
	listed := 0
	for _, ch := range c.Changes {
		if !all && !ch.Beyond {
			continue
		}
		if listed == 0 {
			fmt.Fprintf(w, "\n%s:\n", title)
		}
		listed++
		mark := " "
		if ch.Beyond {
			mark = "*"
		} else if !ch.Significant {
			mark = "~"
		}
		fmt.Fprintf(w, "%s %-22s %s: %s → %s %s, %s, %s", mark, ch.Metric.Title, ch.New.Label,
			num.Short(ch.OldMean), num.Short(ch.NewMean), ch.Metric.Unit, changeText(ch), how(ch))
		if ch.UnfinishedOld != ch.UnfinishedNew {
			fmt.Fprintf(w, "; unfinished %d → %d", ch.UnfinishedOld, ch.UnfinishedNew)
		}
		fmt.Fprintln(w)
	}
	for _, side := range []struct {
		name  string
		aggs  []*analysis.Aggregate
		other string
	}{{"old", c.OnlyOld, "new"}, {"new", c.OnlyNew, "old"}} {
		for i, a := range side.aggs {
			if i == 5 {
				fmt.Fprintf(w, "… %d more cells only in %s\n", len(side.aggs)-5, side.name)
				break
			}
			fmt.Fprintf(w, "only in %s: %s (%s)\n", side.name, a.Label, num.Plural(len(a.Seeds), "seed"))
		}
	}
	for _, side := range []struct {
		name, dir string
		short     []analysis.Shortfall
	}{{"old", dirs[0], c.ShortOld}, {"new", dirs[1], c.ShortNew}} {
		for i, sf := range side.short {
			if i == 5 {
				fmt.Fprintf(w, "… and %d more cells %s lacks seeds of (`sweep check %s` names the runs)\n", len(side.short)-5, side.name, side.dir)
				break
			}
			fmt.Fprintf(w, "%s lacks %s: %s\n", side.name, shortText(&side.short[i]), sf.Label)
		}
	}
	th := strconv.FormatFloat(100*c.Threshold, 'g', -1, 64)
	if n := c.Changed(); n > 0 {
		fmt.Fprintf(w, "\nverdict: %s beyond %s %% (* above)", num.Plural(n, "significant change"), th)
	} else {
		fmt.Fprintf(w, "\nverdict: no significant change beyond %s %%", th)
	}
	if m := missingWords(c); len(m) > 0 {
		allowed := ": fails (--allow-missing to allow)"
		if allowMissing {
			allowed = " (allowed by --allow-missing)"
		}
		fmt.Fprintf(w, "; %s%s", strings.Join(m, ", "), allowed)
	}
	fmt.Fprintln(w)
}

// compareJSON is `sweep compare --json`: every matched cell and metric.
func compareJSON(dirs []string, sides [2]*analysis.Scanned, c *analysis.NightlyComparison, allowMissing bool) any {
	type side struct {
		Dir   string `json:"dir"`
		Runs  int    `json:"runs"`
		Cells int    `json:"cells"`
		Sim   string `json:"sim_version"`
	}
	type change struct {
		Cell          string   `json:"cell"` // the parameters, as sweep run keys them (without the simulator version)
		Label         string   `json:"label"`
		Metric        string   `json:"metric"` // the dataset's column
		Test          string   `json:"test"`   // paired or welch
		N             int      `json:"n"`
		Shared        int      `json:"shared_seeds"`   // seeds both sides hold
		Unpaired      int      `json:"unpaired_seeds"` // seeds one side only holds: left out of a paired test
		Old           *float64 `json:"old_mean"`
		New           *float64 `json:"new_mean"`
		Diff          *float64 `json:"diff"`
		Lo            *float64 `json:"lo"`
		Hi            *float64 `json:"hi"`
		Rel           *float64 `json:"rel"`
		RelLo         *float64 `json:"rel_lo"`
		RelHi         *float64 `json:"rel_hi"`
		Significant   bool     `json:"significant"`
		Beyond        bool     `json:"beyond_threshold"`
		UnfinishedOld int      `json:"unfinished_old"`
		UnfinishedNew int      `json:"unfinished_new"`
	}
	type short struct {
		Cell    string   `json:"cell_key"`
		Label   string   `json:"label"`
		Asked   int      `json:"asked_seeds"`   // seeds its dataset was meant to hold
		Missing []uint32 `json:"missing_seeds"` // of those, the seeds without a run
	}
	var doc struct {
		Old          side     `json:"old"`
		New          side     `json:"new"`
		Alpha        float64  `json:"alpha"`
		Threshold    float64  `json:"threshold"` // relative: 0.05 = 5 %
		Matched      int      `json:"matched_cells"`
		OnlyOld      []string `json:"only_old"`
		OnlyNew      []string `json:"only_new"`
		ShortOld     []short  `json:"short_old"` // cells with fewer seeds than old was meant to hold
		ShortNew     []short  `json:"short_new"`
		AllowMissing bool     `json:"allow_missing"`
		Tests        int      `json:"comparisons"`
		Changed      int      `json:"changed"`
		Changes      []change `json:"changes"`
	}
	for i, d := range []*side{&doc.Old, &doc.New} {
		*d = side{dirs[i], sides[i].Runs, len(sides[i].Aggregates), sims(sides[i])}
	}
	doc.Alpha, doc.Threshold, doc.Matched, doc.Tests, doc.Changed = c.Alpha, c.Threshold, c.Matched, c.Tests, c.Changed()
	doc.OnlyOld, doc.OnlyNew = []string{}, []string{}
	for _, a := range c.OnlyOld {
		doc.OnlyOld = append(doc.OnlyOld, a.Label)
	}
	for _, a := range c.OnlyNew {
		doc.OnlyNew = append(doc.OnlyNew, a.Label)
	}
	doc.ShortOld, doc.ShortNew, doc.AllowMissing = []short{}, []short{}, allowMissing
	for _, sf := range c.ShortOld {
		doc.ShortOld = append(doc.ShortOld, short{sf.CellKey, sf.Label, sf.Asked, sf.Missing})
	}
	for _, sf := range c.ShortNew {
		doc.ShortNew = append(doc.ShortNew, short{sf.CellKey, sf.Label, sf.Asked, sf.Missing})
	}
	f := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	doc.Changes = []change{}
	for _, ch := range c.Changes {
		test := "welch"
		if ch.Paired {
			test = "paired"
		}
		doc.Changes = append(doc.Changes, change{ch.New.Cell.Canonical(), ch.New.Label, ch.Metric.Key, test, ch.N, ch.Shared, ch.Unpaired,
			f(ch.OldMean), f(ch.NewMean), f(ch.Diff), f(ch.Lo), f(ch.Hi), f(ch.Rel), f(ch.RelLo), f(ch.RelHi),
			ch.Significant, ch.Beyond, ch.UnfinishedOld, ch.UnfinishedNew})
	}
	return doc
}

func addUniq(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}
