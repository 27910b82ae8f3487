package reports

import (
	"fmt"
	"github.com/herdsweep/herdsweep/internal/num"
	"math"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/experiments"
)

// thousands formats a whole number with comma separators: 9,423.
func thousands(v float64) string { return num.Whole(v) }

// figure formats an article metric the way the article prints it.
func figure(m experiments.Metric, v float64) string {
	if m == experiments.Sent || m == experiments.Peak {
		return thousands(v)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func signed(v float64, prec int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', prec, 64)
	switch {
	case s == strconv.FormatFloat(0, 'f', prec, 64):
		return s
	case v < 0:
		return "−" + s
	}
	return "+" + s
}

// summary formats mean [lo, hi] with the precision of the metric.
func summary(m analysis.Metric, s analysis.Summary) string {
	if s.N == 0 {
		return "not finished"
	}
	prec := 1
	if m.Key == analysis.Sent.Key || m.Key == analysis.Peak.Key || m.Key == analysis.GaveUp.Key {
		prec = 0
	}
	f := func(v float64) string {
		if prec == 0 {
			return thousands(v)
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
	out := f(s.Mean)
	if !math.IsNaN(s.Lo) {
		out += fmt.Sprintf(" [%s, %s]", f(s.Lo), f(s.Hi))
	}
	if s.Unfinished > 0 {
		out += fmt.Sprintf(" (%d not finished)", s.Unfinished)
	}
	return out
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
