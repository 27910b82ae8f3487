// Package num writes numbers for people: thousands separated by commas
// (golang.org/x/text/message, English), a minus sign as the report's
// typography has it, and no needless decimals. It is the one owner of
// number formatting in herdsweep's text output.
package num

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Whole writes x rounded to a whole number with separators: 9,423.
// NaN and infinities are written as Go writes them.
func Whole(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return printer.Sprint(x)
	}
	r := math.Round(x)
	if r == 0 {
		r = 0 // no "-0"
	}
	return strings.Replace(printer.Sprintf("%.0f", r), "-", "−", 1)
}

// Int writes n with separators: 51,600.
func Int(n int) string { return strings.Replace(printer.Sprintf("%d", n), "-", "−", 1) }

// Short writes x with separators, and one decimal for values below 100
// that are not whole: 1,980 but 7.5.
func Short(x float64) string {
	if !math.IsNaN(x) && !math.IsInf(x, 0) && math.Abs(x-math.Round(x)) > 1e-9 && math.Abs(x) < 100 {
		return strings.Replace(printer.Sprintf("%.1f", x), "-", "−", 1)
	}
	return Whole(x)
}

// Fixed writes x with prec decimals and no separators, with the minus
// sign the other writers use: −12.8, never -12.8; 0.0, never −0.0.
func Fixed(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" && s[0] == '-' {
		return s[1:] // a negative that rounds to zero
	}
	return strings.Replace(s, "-", "−", 1)
}

// Plural writes a count and its noun, the noun in the plural unless the
// count is 1: "1 cell", "2 cells", "1,800 runs", "0 problems". word is the
// singular; nouns whose plural is not word+"s" are passed to PluralOf.
func Plural(n int, word string) string { return PluralOf(n, word, word+"s") }

// PluralOf is Plural with the plural spelled out: "1 policy", "3 policies".
func PluralOf(n int, one, many string) string {
	if n == 1 {
		return Int(n) + " " + one
	}
	return Int(n) + " " + many
}

// Agree picks the verb that agrees with a count as its subject: "1 of 3
// cells violates", "2 of 3 cells violate".
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ShortPair writes a and b as Short does, with more decimals (up to 3)
// while they read the same although they differ: "5.04" and "4.96", not
// "5.0" and "5.0", beside a ratio of 1.02.
func ShortPair(a, b float64) (string, string) {
	x, y := Short(a), Short(b)
	for prec := 2; x == y && a != b && prec <= 3; prec++ {
		x, y = Fixed(a, prec), Fixed(b, prec)
	}
	return x, y
}
