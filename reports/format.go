package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/internal/num"
)

// thousands formats a whole number with comma separators: 9,423.
func thousands(v float64) string { return num.Whole(v) }

// figure formats an article metric the way the article prints it.
func figure(m article.Metric, v float64) string {
	if m == article.Sent || m == article.Peak {
		return thousands(v)
	}
	return fmt1(v)
}

func signed(v float64, prec int) string {
	s := num.Fixed(math.Abs(v), prec)
	switch {
	case s == num.Fixed(0, prec):
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
		return num.Fixed(v, prec)
	}
	return f(s.Mean) + bounds(s, f) + unfinished(s)
}

// bounds is " [lo, hi]" of a summary, clamped at 0 (Summary.Bounds;
// the report's warnings say so once), or "" without one.
func bounds(s analysis.Summary, f func(float64) string) string {
	lo, hi, _ := s.Bounds()
	if math.IsNaN(lo) {
		return ""
	}
	return " [" + f(lo) + ", " + f(hi) + "]"
}

// unfinished is " (3 not finished)", or "" when every run finished.
func unfinished(s analysis.Summary) string {
	if s.Unfinished > 0 {
		return fmt.Sprintf(" (%d not finished)", s.Unfinished)
	}
	return ""
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func fmt1(v float64) string { return num.Fixed(v, 1) }
func fmt2(v float64) string { return num.Fixed(v, 2) }

// seconds formats a t99 summary in seconds: "45.2 s [44.1, 46.3]".
func seconds(s analysis.Summary) string {
	if s.N == 0 {
		return "not finished"
	}
	return fmt1(s.Mean) + " s" + bounds(s, fmt1) + unfinished(s)
}

// capacityWords is "120 requests/s": the capacity as the user gave it,
// with separators (1,000 requests/s, and 47.3 rather than 47).
func capacityWords(c float64) string {
	text := strconv.FormatFloat(c, 'f', -1, 64)
	if _, frac, _ := strings.Cut(text, "."); len(frac) > 3 { // computed (workers over a mean service time): 157.4
		text = strconv.FormatFloat(c, 'f', 1, 64)
	}
	whole, frac, ok := strings.Cut(text, ".")
	w, err := strconv.ParseFloat(whole, 64)
	if !ok || err != nil {
		return thousands(c) + " requests/s"
	}
	return thousands(w) + "." + frac + " requests/s"
}
