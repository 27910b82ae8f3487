package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/suggest"
	"github.com/herdsweep/herdsweep/sim"
)

// An Assertion is an absolute check a nightly job gates on, one line:
//
//	METRIC STAT OP BOUND [where COLUMN=VALUE …]
//	t99_after_s max <= 60 where policy_spec="decorrelated base_s=1 cap_s=60" capacity_rps=300
//
// reads "in every cell whose parameters match, the largest t99 after
// recovery over the seeds is at most 60 s": 99 % of clients are back
// within 60 s of recovery in every run. METRIC is a metric's column
// (AllMetrics: a queueing metric is checked in the cells it applies to,
// Metric.For), STAT one of Stats, OP one of <=, <, >=, >, and the filters
// name dataset columns: a parameter (compared as its type), or
// policy_spec. A run that never reached a milestone counts as +∞ for
// mean, lo, hi and max (it is never "within" anything), so unfinished runs
// fail an upper bound rather than vanish from it; so does a run never
// back to steady state (recovered_after_s).
type Assertion struct {
	Text   string
	Metric Metric
	Stat   string
	Op     string
	Bound  float64
	Where  []Filter
}

// A Filter keeps the cells whose column Key holds Value.
type Filter struct {
	Key   string
	Value any // int64, float64, string or bool, as grid.Param.Get returns it
}

// Stats are the statistics of a cell's runs an assertion may bound.
var Stats = []string{"mean", "lo", "hi", "min", "max"}

var ops = []string{"<=", "<", ">=", ">"}

// ParseAssertion reads one assertion line. Its errors say what is accepted.
func ParseAssertion(line string) (Assertion, error) {
	a := Assertion{Text: strings.TrimSpace(line)}
	f, err := fields(line)
	if err != nil {
		return a, err
	}
	if len(f) < 4 {
		return a, fmt.Errorf("%q: want METRIC STAT OP BOUND [where COLUMN=VALUE …], e.g. t99_after_s max <= 60 where capacity_rps=300", a.Text)
	}
	var keys []string
	for _, m := range AllMetrics() {
		keys = append(keys, m.Key)
	}
	var ok bool
	if a.Metric, ok = MetricByKey(f[0]); !ok {
		return a, fmt.Errorf("metric %q%s: want one of %s", f[0], suggest.DidYouMean(f[0], keys), strings.Join(keys, ", "))
	}
	if a.Stat = f[1]; !slices.Contains(Stats, a.Stat) {
		return a, fmt.Errorf("statistic %q: want one of %s", f[1], strings.Join(Stats, ", "))
	}
	if a.Op = f[2]; !slices.Contains(ops, a.Op) {
		return a, fmt.Errorf("comparison %q: want one of %s", f[2], strings.Join(ops, " "))
	}
	if a.Bound, err = strconv.ParseFloat(f[3], 64); err != nil || math.IsNaN(a.Bound) {
		return a, fmt.Errorf("bound %q: want a number, in %s", f[3], a.Metric.Unit)
	}
	rest := f[4:]
	if len(rest) == 0 {
		return a, nil
	}
	if rest[0] != "where" || len(rest) == 1 {
		return a, fmt.Errorf("%q after the bound: want where COLUMN=VALUE …", strings.Join(rest, " "))
	}
	for _, kv := range rest[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return a, fmt.Errorf("%q: want COLUMN=VALUE", kv)
		}
		if k == dataset.ColPolicySpec {
			a.Where = append(a.Where, Filter{k, v})
			continue
		}
		p := grid.ParamByKey(k)
		if p == nil {
			cols := []string{dataset.ColPolicySpec}
			for i := range grid.Params {
				cols = append(cols, grid.Params[i].Key)
			}
			return a, fmt.Errorf("column %q%s: want a parameter's column (see `sweep schema`) or %s", k, suggest.DidYouMean(k, cols), dataset.ColPolicySpec)
		}
		var val any
		switch p.Type {
		case grid.Int:
			val, err = strconv.ParseInt(v, 10, 64)
		case grid.Float:
			val, err = strconv.ParseFloat(v, 64)
		case grid.Bool:
			val, err = strconv.ParseBool(v)
		default:
			val = v
		}
		if err != nil {
			return a, fmt.Errorf("%s=%s: want %s", k, v, p.Type)
		}
		if pr, ok := sim.PresetByName(v); ok && k == "policy" && !slices.Contains(sim.Kinds(), sim.Kind(v)) {
			return a, fmt.Errorf("policy=%s: want a family: %s is a preset, whose rows hold its family (%s); name it with %s=%s or preset=%s", v, v, pr.Policy.Kind, dataset.ColPolicySpec, v, v)
		}
		a.Where = append(a.Where, Filter{k, val})
	}
	return a, nil
}

// fields splits a line at spaces, but not inside double quotes, which it
// removes: policy_spec="grpc base_s=1" is one field.
func fields(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, has := false, false
	for _, r := range line {
		switch {
		case r == '"':
			in, has = !in, true
		case !in && (r == ' ' || r == '\t'):
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if in {
		return nil, fmt.Errorf("%q: a quote is not closed", strings.TrimSpace(line))
	}
	if has {
		out = append(out, cur.String())
	}
	return out, nil
}

// Matches reports whether the cell passes every filter.
func (a Assertion) Matches(c grid.Cell) bool {
	for _, f := range a.Where {
		var v any
		if f.Key == dataset.ColPolicySpec {
			v = c.PolicySpec()
		} else {
			v = grid.ParamByKey(f.Key).Get(c)
		}
		if v != f.Value {
			return false
		}
	}
	return true
}

// Value is the assertion's statistic of a cell: +∞ for mean, lo, hi and
// max when a run did not reach the milestone.
func (a Assertion) Value(agg *Aggregate) float64 {
	s := agg.Summary(a.Metric)
	if s.Unfinished > 0 && a.Stat != "min" || s.N == 0 {
		return math.Inf(1)
	}
	switch a.Stat {
	case "mean":
		return s.Mean
	case "lo":
		return s.Lo
	case "hi":
		return s.Hi
	case "min":
		return s.Min
	}
	return s.Max
}

// holds reports whether v satisfies the comparison; NaN (an interval of
// fewer than two seeds) never does.
func (a Assertion) holds(v float64) bool {
	switch a.Op {
	case "<=":
		return v <= a.Bound
	case "<":
		return v < a.Bound
	case ">=":
		return v >= a.Bound
	}
	return v > a.Bound
}

// Checked is an assertion over a dataset's cells: how many matched, the
// worst (the value farthest on the wrong side), and those that violate it.
type Checked struct {
	Assertion
	Cells      int
	Worst      *CellValue // nil when no cell matched
	Violations []CellValue
}

// CellValue is a cell's statistic. Short is set when the cell has fewer
// seeds than the dataset's intents ask for (Agg is nil when it has none):
// it violates the assertion whatever its value, over the seeds it holds.
type CellValue struct {
	Agg   *Aggregate
	Value float64
	Short *Shortfall
}

// Label is the cell's label.
func (v CellValue) Label() string {
	if v.Agg == nil {
		return v.Short.Label
	}
	return v.Agg.Label
}

// OK reports whether the assertion holds: some cell matched, and none
// violates it. An assertion that matches nothing fails: a nightly gate
// whose cells have gone must not pass in silence.
func (c Checked) OK() bool { return c.Cells > 0 && len(c.Violations) == 0 }

// Check evaluates the assertion over the aggregates, in their order; a
// cell the metric does not apply to (a counting server's, for a queueing
// metric) is not matched. short are the cells with fewer seeds than the
// dataset was meant to hold (Shortfalls): a matched one violates the
// assertion, and so does one with no run at all whose parameters match
// (after the cells that have runs).
func (a Assertion) Check(aggs []*Aggregate, short []Shortfall) Checked {
	out := Checked{Assertion: a}
	upper := a.Op == "<=" || a.Op == "<"
	shortOf := make(map[string]*Shortfall, len(short))
	for i := range short {
		shortOf[short[i].CellKey] = &short[i]
	}
	for _, agg := range aggs {
		if !a.Metric.For(agg.Cell.Scenario) || !agg.Has(a.Metric) || !a.Matches(agg.Cell) {
			continue
		}
		out.Cells++
		v := a.Value(agg)
		cv := CellValue{Agg: agg, Value: v, Short: shortOf[agg.CellKey]}
		if out.Worst == nil || upper && v > out.Worst.Value || !upper && v < out.Worst.Value || math.IsNaN(v) {
			out.Worst = &cv
		}
		if !a.holds(v) || cv.Short != nil {
			out.Violations = append(out.Violations, cv)
		}
	}
	for i := range short {
		sf := &short[i]
		if sf.Agg != nil || !a.Metric.For(sf.Cell.Scenario) || !a.Matches(sf.Cell) {
			continue
		}
		out.Cells++
		out.Violations = append(out.Violations, CellValue{Value: math.NaN(), Short: sf})
	}
	return out
}
