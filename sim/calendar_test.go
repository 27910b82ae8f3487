package sim

import (
	"slices"
	"testing"
)

// The sorter agrees with slices.Sort on lists of every size class: the
// insertion sort (≤ 16), the bitmap with its summary (fewer clients than
// words) and without (a client a word or more), over fleets whose last
// summary word is partial.
func TestSorterAgreesWithSlicesSort(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(5)
	for _, clients := range []int{64, 1000, 4096*3 + 100, 200_000} {
		var o sorter
		o.reset(clients)
		for _, m := range []int{0, 1, 2, 16, 17, 100, clients / 64, clients/64 + 1, clients / 3, clients} {
			if m > clients {
				continue
			}
			perm := make([]int32, clients)
			for i := range perm {
				perm[i] = int32(i)
			}
			for i := len(perm) - 1; i > 0; i-- { // Fisher–Yates
				j := int(rng.Uint32() % uint32(i+1))
				perm[i], perm[j] = perm[j], perm[i]
			}
			list := slices.Grow(perm[:m:m], sortSlack)
			want := slices.Sorted(slices.Values(list))
			o.sort(list)
			if !slices.Equal(list, want) {
				t.Fatalf("%d clients, a list of %d: sorted %v…, want %v…", clients, m, list[:min(m, 8)], want[:min(m, 8)])
			}
			for w, x := range o.words {
				if x != 0 {
					t.Fatalf("%d clients, a list of %d: word %d left set", clients, m, w)
				}
			}
		}
	}
}

// A sparse calendar gives back, tick by tick, the clients pushed to it, in
// index order, whatever the order of the pushes, as pushes and takes
// interleave (pushes wait in pend, blocks come back to the free list).
func TestSparseCalendarTakesWhatWasPushed(t *testing.T) {
	t.Parallel()
	const ticks, clients = 50, 3000
	var c calendar
	var o sorter
	c.sparse = true
	rng := NewMulberry32(8)
	for run := range 3 {
		c.reset(ticks, clients, false)
		o.reset(clients)
		want := make([][]int32, ticks)
		due := make([]int, clients) // 0: not due; else the tick + 1
		push := func(k int, i int32) {
			c.push(k, i)
			want[k] = append(want[k], i)
			due[i] = k + 1
		}
		for i := range int32(clients) {
			if rng.Uint32()%4 != 0 {
				push(int(rng.Uint32()%10), i)
			}
		}
		for k := range ticks {
			if got := !c.empty(k); got != (len(want[k]) > 0) {
				t.Fatalf("run %d tick %d: holds clients %v, want %v", run, k, got, len(want[k]) > 0)
			}
			if len(want[k]) == 0 {
				continue
			}
			got := c.take(k, &o)
			slices.Sort(want[k])
			if !slices.Equal(got, want[k]) {
				t.Fatalf("run %d tick %d: took %d clients %v…, want %d %v…", run, k, len(got), got[:min(len(got), 6)], len(want[k]), want[k][:min(len(want[k]), 6)])
			}
			for _, i := range slices.Clone(got) { // rescheduled in index order, as reject does
				due[i] = 0
				if nk := k + 1 + int(rng.Uint32()%uint32(1+run*20)); nk < ticks && rng.Uint32()%8 != 0 {
					push(nk, i)
				}
			}
			want[k] = want[k][:0]
		}
		for i, d := range due {
			if d != 0 {
				t.Fatalf("run %d: client %d still due at tick %d", run, i, d-1)
			}
		}
	}
	if c.np != 0 {
		t.Errorf("%d pushes left pending", c.np)
	}
}
