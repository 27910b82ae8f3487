package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/internal/num"
)

const assertHelp = `Absolute checks a nightly job gates on: each line of each FILE is an
assertion over the dataset's cells,

  METRIC STAT OP BOUND [where COLUMN=VALUE …]

e.g. "t99_after_s max <= 60 where policy=decorrelated capacity_rps=300": in
every cell with those parameters, 99 %% of clients were back within 60 s of
recovery in every seed; "recovered_after_s max <= 60 where concurrency=8
arrival_rps=700": a queueing server back to steady state within 60 s of
recovery in every seed. The queueing metrics (from recovered_after_s on)
are checked in the queueing server's cells only, recovered_after_s in
those with open-loop traffic (arrival_rps > 0).
  METRIC  %s
  STAT    %s (lo and hi: the 95 %% interval of the mean)
  OP      <= < >= >
  COLUMN  a parameter's column (sweep schema), or policy_spec, which names a
          policy exactly (policy is its family); quote a value with spaces:
          policy_spec="grpc base_s=1 cap_s=30 multiplier=2 width=0.2"
A run that never reached a milestone, or never came back to steady
state, counts as +∞ (it fails an upper bound), and an assertion that matches no cell fails.
A cell with fewer seeds than the dataset was meant to hold (what
"sweep run" recorded it would write: a shard that died, parts deleted)
violates every assertion that matches it, a cell with no run at all too.
Blank lines and lines starting with # are skipped.

Exit codes: 0 every assertion holds, 1 one is violated, 2 bad input or an
unreadable dataset.
`

// assertion is one line of an assertions file.
type assertion struct {
	file string
	line int
	analysis.Assertion
}

func cmdAssert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var metrics []string
	for _, m := range analysis.AllMetrics() {
		metrics = append(metrics, m.Key)
	}
	fs := newFlagsDoc("assert", "[--results out] [--json] FILE…", fmt.Sprintf(assertHelp, strings.Join(metrics, ", "), strings.Join(analysis.Stats, ", ")), stderr)
	results := fs.String("results", "out", "the dataset")
	asJSON := fs.Bool("json", false, "print one JSON document")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("assert: want one or more assertion files")
	}
	var as []assertion
	for _, f := range files {
		got, err := readAssertions(f)
		if err != nil {
			return err
		}
		as = append(as, got...)
	}
	if len(as) == 0 {
		return usagef("assert: %s: no assertion (every line blank or a comment)", strings.Join(files, ", "))
	}
	var used []analysis.Metric
	for _, a := range as {
		if !metricIn(used, a.Metric) {
			used = append(used, a.Metric)
		}
	}
	sc, err := scanDataset(ctx, "assert", "--results "+*results, *results, analysis.ScanOptions{Metrics: used})
	if err != nil {
		return err
	}
	short, err := shortfalls("assert", *results, sc)
	if err != nil {
		return err
	}
	checked := make([]analysis.Checked, len(as))
	failed := 0
	for i, a := range as {
		checked[i] = a.Check(sc.Aggregates, short)
		if !checked[i].OK() {
			failed++
		}
	}
	if *asJSON {
		err = writeJSON(stdout, assertJSON(as, checked, sc.Runs, short))
	} else {
		writeAsserts(stdout, as, checked, sc.Runs, short)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return reported{fmt.Errorf("%d of %s violated", failed, num.Plural(len(as), "assertion"))}
	}
	return nil
}

func metricIn(ms []analysis.Metric, m analysis.Metric) bool {
	for _, x := range ms {
		if x.Key == m.Key {
			return true
		}
	}
	return false
}

// readAssertions parses a file of assertions, naming the file and line of
// every bad one, all at once.
func readAssertions(path string) ([]assertion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("assert: %v", err)
	}
	defer f.Close()
	var out []assertion
	var bad []string
	sc := bufio.NewScanner(f)
	n := 0 // the line read
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		a, err := analysis.ParseAssertion(line)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s:%d: %v", path, n, err))
			continue
		}
		out = append(out, assertion{path, n, a})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		bad = append(bad, fmt.Sprintf("%s:%d: a line of more than %d KiB: want one assertion a line, METRIC STAT OP BOUND [where COLUMN=VALUE …]", path, n+1, bufio.MaxScanTokenSize>>10))
	} else if err != nil {
		return nil, usagef("assert: %s: %v", path, err)
	}
	if len(bad) > 0 {
		return nil, usagef("%s", strings.Join(bad, "\n"))
	}
	return out, nil
}

func number(v float64) string {
	if math.IsInf(v, 1) {
		return "never (a run did not reach it)"
	}
	return fmt.Sprintf("%.4g", v)
}

// shortfalls reads what the dataset in dir was meant to hold (its
// intents) and returns the cells with fewer seeds; an intent that cannot be
// read is bad input naming its file.
func shortfalls(cmd, dir string, sc *analysis.Scanned) ([]analysis.Shortfall, error) {
	fsys := os.DirFS(dir)
	named := func(err error) error {
		if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
			return usagef("%s: %s: %v", cmd, filepath.Join(dir, filepath.FromSlash(fe.Path)), fe.Err)
		}
		return usagef("%s: %s: %v", cmd, dir, err)
	}
	plan, err := analysis.ReadPlan(fsys, sc.Metas)
	if err != nil {
		return nil, named(err)
	}
	short, err := analysis.Shortfalls(plan, sc.Aggregates)
	if err != nil {
		return nil, named(err)
	}
	return short, nil
}

// shortText says what a cell lacks: "1 of its 2 seeds (seed 2)".
func shortText(sf *analysis.Shortfall) string {
	seeds := "seed "
	if len(sf.Missing) > 1 {
		seeds = "seeds "
	}
	return fmt.Sprintf("%d of the %s it was meant to hold (%s%s)", len(sf.Missing), num.Plural(sf.Asked, "seed"), seeds, dataset.FormatSeeds(sf.Missing))
}

// missingRuns counts the runs the shortfalls lack.
func missingRuns(short []analysis.Shortfall) int {
	n := 0
	for _, sf := range short {
		n += len(sf.Missing)
	}
	return n
}

func writeAsserts(w io.Writer, as []assertion, cs []analysis.Checked, runs int, short []analysis.Shortfall) {
	failed := 0
	for i, a := range as {
		c := cs[i]
		verdict := "ok  "
		if !c.OK() {
			verdict, failed = "FAIL", failed+1
		}
		fmt.Fprintf(w, "%s %s:%d: %s\n", verdict, a.file, a.line, a.Text)
		switch {
		case c.Cells == 0:
			fmt.Fprintf(w, "     matches no cell of the dataset\n")
		case len(c.Violations) == 0:
			fmt.Fprintf(w, "     %s; worst %s %s: %s\n", num.Plural(c.Cells, "cell"), a.Stat, number(c.Worst.Value), c.Worst.Agg.Label)
		default:
			fmt.Fprintf(w, "     %d of %s %s it:\n", len(c.Violations), num.Plural(c.Cells, "cell"), num.Agree(len(c.Violations), "violates", "violate"))
			for j, v := range c.Violations {
				if j == 5 {
					fmt.Fprintf(w, "       … and %d more (--json lists them all)\n", len(c.Violations)-5)
					break
				}
				switch {
				case v.Agg == nil:
					fmt.Fprintf(w, "       no run in the dataset, which lacks %s: %s\n", shortText(v.Short), v.Label())
				case v.Short != nil:
					s := v.Agg.Summary(a.Metric)
					fmt.Fprintf(w, "       lacks %s; %s %s over %d seeds (%d unfinished): %s\n", shortText(v.Short), a.Stat, number(v.Value), len(v.Agg.Seeds), s.Unfinished, v.Label())
				default:
					s := v.Agg.Summary(a.Metric)
					fmt.Fprintf(w, "       %s %s over %d seeds (%d unfinished): %s\n", a.Stat, number(v.Value), len(v.Agg.Seeds), s.Unfinished, v.Agg.Label)
				}
			}
		}
	}
	fmt.Fprintf(w, "%d of %s %s (%s read)\n", len(as)-failed, num.Plural(len(as), "assertion"), num.Agree(len(as)-failed, "holds", "hold"), num.Plural(runs, "run"))
	if len(short) > 0 {
		fmt.Fprintf(w, "the dataset lacks %s of %s it was meant to hold (`sweep check` names them)\n", num.Plural(missingRuns(short), "run"), num.Plural(len(short), "cell"))
	}
}

func assertJSON(as []assertion, cs []analysis.Checked, runs int, short []analysis.Shortfall) any {
	type cell struct {
		CellKey    string   `json:"cell_key"`
		Label      string   `json:"label"`
		Value      *float64 `json:"value"` // null: a run never reached the milestone, or the cell has no run
		Seeds      int      `json:"seeds"`
		Unfinished int      `json:"unfinished"`
		// Missing are the seeds the dataset was meant to hold and lacks.
		Missing []uint32 `json:"missing_seeds,omitempty"`
	}
	type result struct {
		File       string `json:"file"`
		Line       int    `json:"line"`
		Assertion  string `json:"assertion"`
		OK         bool   `json:"ok"`
		Cells      int    `json:"cells"`
		Worst      *cell  `json:"worst"`
		Violations []cell `json:"violations"`
	}
	mk := func(a assertion, v analysis.CellValue) cell {
		if v.Agg == nil {
			return cell{CellKey: v.Short.CellKey, Label: v.Short.Label, Missing: v.Short.Missing}
		}
		c := cell{CellKey: v.Agg.CellKey, Label: v.Agg.Label, Seeds: len(v.Agg.Seeds), Unfinished: v.Agg.Summary(a.Metric).Unfinished}
		if v.Short != nil {
			c.Missing = v.Short.Missing
		}
		if !math.IsInf(v.Value, 0) && !math.IsNaN(v.Value) {
			x := v.Value
			c.Value = &x
		}
		return c
	}
	doc := struct {
		Runs     int      `json:"runs"`
		OK       bool     `json:"ok"`
		Violated int      `json:"violated"`
		Missing  int      `json:"missing_runs"` // runs the dataset was meant to hold and lacks, in all
		Results  []result `json:"results"`
	}{Runs: runs, OK: true, Missing: missingRuns(short)}
	for i, a := range as {
		c := cs[i]
		r := result{File: a.file, Line: a.line, Assertion: a.Text, OK: c.OK(), Cells: c.Cells, Violations: []cell{}}
		if c.Worst != nil {
			w := mk(a, *c.Worst)
			r.Worst = &w
		}
		for _, v := range c.Violations {
			r.Violations = append(r.Violations, mk(a, v))
		}
		if !r.OK {
			doc.OK = false
			doc.Violated++
		}
		doc.Results = append(doc.Results, r)
	}
	return doc
}
