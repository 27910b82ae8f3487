package sim

import (
	"math"
	"slices"
	"testing"
)

// The workers' tournament tree gives the earliest free time after every
// admission, as a sorted list of the same times does, for 1 to 33 workers
// (full and partial trees, and ties: times on a coarse grid), and every
// node holds the smaller of its children's times and the leaf it is at.
func TestWorkersTree(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(5)
	for c := 1; c <= 33; c++ {
		var w workers
		w.reset(c)
		want := make([]float64, c)
		now := 0.0
		for range 2000 {
			now += math.Floor(rng.Float64() * 4)
			start := max(now, w.first())
			done := start + math.Floor(rng.Float64()*40)
			w.replaceFirst(done)
			want[0] = done
			slices.Sort(want)
			if w.first() != want[0] {
				t.Fatalf("%d workers: earliest free %v, want %v", c, w.first(), want[0])
			}
			p := len(w.nd) / 2
			for n := 1; n < p; n++ {
				m, l := min(w.at(2*n), w.at(2*n+1)), int(w.nd[n].leaf)
				if w.at(n) != m || w.at(l) != m || l < p {
					t.Fatalf("%d workers: node %d holds %v from leaf %d, its children %v and %v", c, n, w.at(n), l, w.at(2*n), w.at(2*n+1))
				}
			}
		}
	}
}
