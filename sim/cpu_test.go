package sim

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The delays of every family must be the same bits on every CPU. Go may
// fuse x*y + z into one instruction (arm64, amd64 built with GOAMD64=v3)
// unless an explicit float64() conversion forbids it; JavaScript never
// does. testdata/delays_js.txt holds the delays computed by
// scripts/reference/delays.mjs in node (regenerate with
// `node scripts/reference/delays.mjs > sim/testdata/delays_js.txt`), so this
// test fails on a CPU where a formula is fused, whatever Go computes there.
// CI runs it in a GOAMD64=v3 build and on arm64 under qemu.
func TestDelaysMatchJavaScript(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/delays_js.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines, mismatches := 0, 0
	for sc.Scan() {
		head, vals, ok := strings.Cut(sc.Text(), ": ")
		h := strings.Fields(head)
		if !ok || len(h) != 9 {
			t.Fatalf("testdata/delays_js.txt: bad line %q", sc.Text())
		}
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("testdata/delays_js.txt: %v", err)
			}
			return v
		}
		msd := func(s string) time.Duration { return time.Duration(num(s) * float64(time.Millisecond)) }
		p := Policy{Kind: Kind(h[0]), Base: msd(h[1]), Cap: msd(h[2]), Multiplier: num(h[3]), Width: num(h[4]), HonorRetryAfter: h[5] == "true"}
		p = p.Normalize()
		seed, ra, up := uint32(num(h[6])), msd(h[7]), h[8] == "true"
		var want []float64
		for _, v := range strings.Fields(vals) {
			want = append(want, num(v))
		}
		got, err := p.Delays(seed, len(want), ra, up)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				mismatches++
				if mismatches <= 10 {
					t.Errorf("%s seed %d ra %v up %v: delay %d = %v (%#x), JavaScript gives %v (%#x)",
						p, seed, ra, up, i+1, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 100 {
		t.Fatalf("testdata/delays_js.txt: %d lines, want the whole file", lines)
	}
	if mismatches > 0 {
		t.Errorf("%d delays differ from JavaScript's", mismatches)
	}
}

// polly-v2 takes 2^t and tanh, which the math package computes differently
// on different CPUs (assembly on arm64, an FMA path on amd64 CPUs that have
// one). Its delays are pinned here as the amd64 build gave them before sim
// computed exp2 and tanh itself.
func TestPollyDelaysPinned(t *testing.T) {
	t.Parallel()
	pins := []struct {
		seed uint32
		want []uint64
	}{
		{1, []uint64{0x408fb01c9b022c07, 0x4076e0ed7f676ef4, 0x40a547d493a14ee3, 0x40bbffbf62ebd88f, 0x40c5a5ed8f6cd875, 0x40b5250408c4ad55, 0x40e492fceca38ae3, 0x40f3b80189a9eb27, 0x40f72ed904ac55bf, 0x411d7d96d4857b54, 0x4110b965b901ff5e, 0x41300566ccaa6713}},
		{42, []uint64{0x408ef174116a164c, 0x408cfcd7ef783c0e, 0x40a93a0de4bbb062, 0x40aebda065a6ece0, 0x40adc7c272b2efd7, 0x40d38ed3439a36b7, 0x40d5cc18a443553c, 0x40f4ee37bf09ad61, 0x4107758b35050731, 0x4105442f1015655d, 0x41161e9563237c38, 0x413bdde406ed2e16}},
		{206, []uint64{0x4090638d94c7e505, 0x4099324b3a2229b2, 0x40a4cd9c6c95e5d5, 0x4098115855ecaf81, 0x40c47f1a44638ee9, 0x40da7da1285da6b3, 0x40ce9a8c007cab33, 0x40fcbebeeb3a8ed2, 0x40f270a45ee2641c, 0x411b83ce8aa4afb9, 0x410e1a66039ebdcb, 0x4125958390743c62}},
	}
	for _, pin := range pins {
		got, err := DefaultPolicy(PollyV2).Delays(pin.seed, len(pin.want), 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range pin.want {
			if math.Float64bits(got[i]) != w {
				t.Errorf("polly-v2 seed %d: delay %d = %v (%#x), want %v (%#x)", pin.seed, i+1, got[i], math.Float64bits(got[i]), math.Float64frombits(w), w)
			}
		}
	}
}

// A mixed fleet's groups are assigned by comparing share·(i+1) − count in
// float64; the expected assignment is computed here with every product
// rounded on its own.
func TestAssignIsUnfused(t *testing.T) {
	t.Parallel()
	groups := []Group{{Share: 0.37}, {Share: 0.21}, {Share: 0.42}}
	got := make([]uint8, 100_000)
	assign(got, groups)
	var count [MaxGroups]float64
	for i := range got {
		best, lag := 0, math.Inf(-1)
		for g, gr := range groups {
			prod := float64(gr.Share * float64(i+1))
			if l := prod - count[g]; l > lag+1e-12 {
				best, lag = g, l
			}
		}
		if got[i] != uint8(best) {
			t.Fatalf("client %d: group %d, want %d", i, got[i], best)
		}
		count[best]++
	}
}
