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

func fmt1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func fmt2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// seconds formats a t99 summary in seconds: "45.2 s [44.1, 46.3]".
func seconds(s analysis.Summary) string {
	if s.N == 0 {
		return "not finished"
	}
	out := fmt1(s.Mean) + " s"
	if !math.IsNaN(s.Lo) {
		out += " [" + fmt1(s.Lo) + ", " + fmt1(s.Hi) + "]"
	}
	if s.Unfinished > 0 {
		out += fmt.Sprintf(" (%d not finished)", s.Unfinished)
	}
	return out
}

// capacityWords is "120 requests/s".
func capacityWords(c float64) string { return thousands(c) + " requests/s" }
