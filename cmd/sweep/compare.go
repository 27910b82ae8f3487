package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports"
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
	for i := range pos {
		if pos[i], err = location("compare", "dataset", pos[i]); err != nil {
			return err
		}
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
	v := &reports.Compared{Dirs: [2]string{pos[0], pos[1]}, Sides: sides, C: c, All: *all, AllowMissing: *allowMissing}
	if *asJSON {
		err = writeJSON(stdout, reports.CompareJSON(v))
	} else {
		err = reports.WriteCompareText(stdout, v)
	}
	if err != nil {
		return err
	}
	var failed []string
	if n := c.Changed(); n > 0 {
		failed = append(failed, num.Plural(n, "significant change")+" beyond the threshold")
	}
	if !*allowMissing {
		failed = append(failed, reports.MissingWords(c)...)
	}
	if len(failed) > 0 {
		return reported{errors.New(strings.Join(failed, "; "))}
	}
	return nil
}
