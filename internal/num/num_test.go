package num

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Whole(9423), "9,423"}, {Whole(1174.4), "1,174"}, {Whole(-2500), "−2,500"}, {Whole(-0.2), "0"}, {Whole(12), "12"},
		{Whole(21_000_000), "21,000,000"}, {Int(51600), "51,600"}, {Int(1), "1"},
		{Short(1980), "1,980"}, {Short(7.54), "7.5"}, {Short(82.5), "82.5"}, {Short(150.5), "151"}, {Whole(math.NaN()), "NaN"},
		{Plural(1, "cell"), "1 cell"}, {Plural(0, "problem"), "0 problems"}, {Plural(1800, "run"), "1,800 runs"}, {PluralOf(3, "policy", "policies"), "3 policies"},
		{Fixed(-12.84, 1), "−12.8"}, {Fixed(24.1, 1), "24.1"}, {Fixed(-0.04, 1), "0.0"}, {Fixed(-10, 1), "−10.0"}, {Fixed(1234.5, 1), "1234.5"}, {Fixed(-0.4, 0), "0"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestShortPairTellsApart(t *testing.T) {
	for _, c := range []struct {
		a, b         float64
		wantA, wantB string
	}{
		{5.04, 4.96, "5.04", "4.96"},
		{5.1, 5.0, "5.1", "5"},
		{5.04, 5.01, "5.04", "5.01"},
		{5.0004, 5.0001, "5.000", "5.000"},
		{7, 7, "7", "7"},
		{120, 119.6, "120.00", "119.60"},
	} {
		a, b := ShortPair(c.a, c.b)
		if a != c.wantA || b != c.wantB {
			t.Errorf("ShortPair(%g, %g) = %q, %q; want %q, %q", c.a, c.b, a, b, c.wantA, c.wantB)
		}
	}
}
