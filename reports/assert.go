package reports

import (
	"fmt"
	"io"
	"math"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/internal/num"
)

// AssertResult is one assertion of a file (its file and line) with its
// verdict over a dataset.
type AssertResult struct {
	File string
	Line int
	analysis.Assertion
	Checked analysis.Checked
}

// Asserted is `sweep assert`'s answer: the assertions with their
// verdicts, the runs read and the cells the dataset lacks seeds of.
type Asserted struct {
	Results []AssertResult
	Runs    int
	Short   []analysis.Shortfall
}

// Failed counts the assertions violated.
func (v *Asserted) Failed() int {
	n := 0
	for _, a := range v.Results {
		if !a.Checked.OK() {
			n++
		}
	}
	return n
}

func assertNumber(v float64) string {
	if math.IsInf(v, 1) {
		return "never (a run did not reach it)"
	}
	return fmt.Sprintf("%.4g", v)
}

// WriteAssertText writes `sweep assert`'s verdicts for a terminal: each
// assertion with its file and line, ok or FAIL, its worst cell or the
// cells that violate it (five at most), then how many hold.
func WriteAssertText(w io.Writer, v *Asserted) error {
	ew := &errWriter{w: w}
	as, runs, short := v.Results, v.Runs, v.Short
	failed := 0
	for _, a := range as {
		c := a.Checked
		verdict := "ok  "
		if !c.OK() {
			verdict, failed = "FAIL", failed+1
		}
		ew.printf("%s %s:%d: %s\n", verdict, a.File, a.Line, a.Text)
		switch {
		case c.Cells == 0:
			ew.printf("     matches no cell of the dataset\n")
		case len(c.Violations) == 0:
			ew.printf("     %s; worst %s %s: %s\n", num.Plural(c.Cells, "cell"), a.Stat, assertNumber(c.Worst.Value), c.Worst.Agg.Label)
		default:
			ew.printf("     %d of %s %s it:\n", len(c.Violations), num.Plural(c.Cells, "cell"), num.Agree(len(c.Violations), "violates", "violate"))
			for j, v := range c.Violations {
				if j == 5 {
					ew.printf("       … and %d more (--json lists them all)\n", len(c.Violations)-5)
					break
				}
				switch {
				case v.Agg == nil:
					ew.printf("       no run in the dataset, which lacks %s: %s\n", ShortText(v.Short), v.Label())
				case v.Short != nil:
					s := v.Agg.Summary(a.Metric)
					ew.printf("       lacks %s; %s %s over %d seeds (%d unfinished): %s\n", ShortText(v.Short), a.Stat, assertNumber(v.Value), len(v.Agg.Seeds), s.Unfinished, v.Label())
				default:
					s := v.Agg.Summary(a.Metric)
					ew.printf("       %s %s over %d seeds (%d unfinished): %s\n", a.Stat, assertNumber(v.Value), len(v.Agg.Seeds), s.Unfinished, v.Agg.Label)
				}
			}
		}
	}
	ew.printf("%d of %s %s (%s read)\n", len(as)-failed, num.Plural(len(as), "assertion"), num.Agree(len(as)-failed, "holds", "hold"), num.Plural(runs, "run"))
	if len(short) > 0 {
		ew.printf("the dataset lacks %s of %s it was meant to hold (`sweep check` names them)\n", num.Plural(analysis.MissingRuns(short), "run"), num.Plural(len(short), "cell"))
	}
	return ew.err
}

// AssertJSON is `sweep assert --json`'s document: every assertion with
// its verdict, worst cell and violations.
func AssertJSON(v *Asserted) any {
	as, runs, short := v.Results, v.Runs, v.Short
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
	mk := func(a AssertResult, v analysis.CellValue) cell {
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
	}{Runs: runs, OK: true, Missing: analysis.MissingRuns(short)}
	for _, a := range as {
		c := a.Checked
		r := result{File: a.File, Line: a.Line, Assertion: a.Text, OK: c.OK(), Cells: c.Cells, Violations: []cell{}}
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
