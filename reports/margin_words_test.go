package reports

import (
	"strconv"
	"testing"
)

// A margin's value reads as the bisection's step it is: the steps add up in
// binary (0.05 + 0.01 + … is 0.47000000000000003), and the words say 0.47.
func TestMarginValuesAtTheirResolution(t *testing.T) {
	x := 0.05
	for k := 5; k <= 600; k++ {
		want := strconv.FormatFloat(float64(k)/100, 'f', -1, 64)
		if got := atResolution(x, 0.01); got != want {
			t.Fatalf("%v at resolution 0.01: %q, want %q", x, got, want)
		}
		x += 0.01
	}
	for _, tc := range []struct {
		x, res float64
		want   string
	}{{2, 0.01, "2"}, {0.5, 0.1, "0.5"}, {12.25, 0.25, "12.25"}, {3, 1, "3"}} {
		if got := atResolution(tc.x, tc.res); got != tc.want {
			t.Errorf("atResolution(%v, %v) = %q, want %q", tc.x, tc.res, got, tc.want)
		}
	}
}

// A capacity reads as the user gave it: 47.3 is not rounded to 47.
func TestCapacityWordsKeepTheDecimals(t *testing.T) {
	for x, want := range map[float64]string{47.3: "47.3 requests/s", 1000: "1,000 requests/s", 120: "120 requests/s", 1234.5: "1,234.5 requests/s"} {
		if got := capacityWords(x); got != want {
			t.Errorf("capacityWords(%v) = %q, want %q", x, got, want)
		}
	}
}
