package sim

import (
	"math"
	"slices"
	"testing"
)

// The workers' heap gives the earliest free time after every admission,
// as a sorted list of the same times does, for 1 to 33 workers (full and
// partial last levels, and ties: times on a coarse grid).
func TestWorkersHeap(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(5)
	for c := 1; c <= 33; c++ {
		q := queueRun{free: make([]float64, c)}
		want := make([]float64, c)
		now := 0.0
		for range 2000 {
			now += math.Floor(rng.Float64() * 4)
			start := max(now, q.free[0])
			done := start + math.Floor(rng.Float64()*40)
			q.free[0] = done
			q.siftDown()
			want[0] = done
			slices.Sort(want)
			if q.free[0] != want[0] {
				t.Fatalf("%d workers: earliest free %v, want %v", c, q.free[0], want[0])
			}
			for i := 1; i < c; i++ {
				if q.free[(i-1)/2] > q.free[i] {
					t.Fatalf("%d workers: not a heap at %d: %v", c, i, q.free)
				}
			}
		}
	}
}
