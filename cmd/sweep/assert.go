package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/reports"
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
	results := fs.String("results", "out", "the dataset: a folder (or file://PATH), s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")
	asJSON := fs.Bool("json", false, "print one JSON document")
	files, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("assert: want one or more assertion files")
	}
	if *results, err = location("assert", "--results", *results); err != nil {
		return err
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
	v := &reports.Asserted{Runs: sc.Runs, Short: short}
	for _, a := range as {
		v.Results = append(v.Results, reports.AssertResult{File: a.file, Line: a.line, Assertion: a.Assertion, Checked: a.Check(sc.Aggregates, short)})
	}
	if *asJSON {
		err = writeJSON(stdout, reports.AssertJSON(v))
	} else {
		err = reports.WriteAssertText(stdout, v)
	}
	if err != nil {
		return err
	}
	if failed := v.Failed(); failed > 0 {
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

// shortfalls reads what the dataset in dir was meant to hold (its
// intents) and returns the cells with fewer seeds; an intent that cannot be
// read is bad input naming its file.
func shortfalls(cmd, dir string, sc *analysis.Scanned) ([]analysis.Shortfall, error) {
	fsys := store.FS(dir)
	named := func(err error) error {
		if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
			return usagef("%s: %s: %v", cmd, store.Join(dir, fe.Path), fe.Err)
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
