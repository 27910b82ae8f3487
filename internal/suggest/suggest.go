// Package suggest finds the name a user probably meant: the one owner of
// "did you mean" for the command line (commands, options, sweeps,
// presets) and the sweeps file (keys).
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the closest of names
// within two edits of s, and fewer edits than half of s, or else the one
// name that is s with a unit after an underscore (capacity → capacity_rps);
// else "".
func DidYouMean(s string, names []string) string {
	var unit []string
	for _, n := range names {
		if s != "" && strings.HasPrefix(n, s+"_") {
			unit = append(unit, n)
		}
	}
	best, bestD := "", min(3, len(s)/2+1)
	for _, n := range names {
		if d := EditDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" && len(unit) == 1 {
		best = unit[0]
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// EditDistance is the Levenshtein distance between a and b.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
