package sim

import (
	"hash/fnv"
	"math"
	"testing"
)

// The ziggurat's tables agree with those of Go's math/rand
// (src/math/rand/exp.go, Go 1.26), written out here by hand: k exactly or
// within one unit (theirs come from the same setup in C), w and f within
// float32's rounding (theirs are float32).
func TestZigguratTables(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		i int
		k uint32
		w float64
		f float64
	}{
		{0, 0xe290a139, 2.0249555e-09, 1},
		{1, 0x0, 1.486674e-11, 0.9381437},
		{2, 0x9beadebc, 2.4409617e-11, 0.90046996},
		{3, 0xc377ac71, 3.1968806e-11, 0.87170434},
		{4, 0xd4ddb990, 3.844677e-11, 0.8477855},
		{254, 0xeeefb15d, 1.6160854e-09, 0.0009672693},
		{255, 0xe6da6ecf, 1.7921248e-09, 0.00045413437},
	} {
		if d := int64(zigK[c.i]) - int64(c.k); d < -1 || d > 1 {
			t.Errorf("k[%d] = %#x, math/rand has %#x", c.i, zigK[c.i], c.k)
		}
		if math.Abs(zigW[c.i]-c.w) > 1e-7*c.w || math.Abs(zigF[c.i]-c.f) > 1e-7*c.f {
			t.Errorf("w[%d], f[%d] = %g, %g; math/rand has %g, %g", c.i, c.i, zigW[c.i], zigF[c.i], c.w, c.f)
		}
	}
}

// expDraw is exponential of mean 1: over 2,000,000 draws of a fixed seed,
// the mean and the second moment (2) within four standard errors, the
// share beyond each of 24 points of the CDF within four standard errors of
// e^−x, and the ziggurat's three paths (fast, wedge, tail) all taken.
func TestExpDrawIsExponential(t *testing.T) {
	t.Parallel()
	const n = 2_000_000
	rng := NewMulberry32(12)
	xs := []float64{0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.3, 1.6, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.697117470131487, 8, 9}
	above := make([]int, len(xs))
	var sum, sum2 float64
	draws := 0
	for range n {
		before := rng.state
		x := expDraw(rng)
		for k := uint32(1); ; k++ { // numbers read: the state moves by a constant each
			if before+k*0x6D2B79F5 == rng.state {
				draws += int(k)
				break
			}
		}
		sum += x
		sum2 += x * x
		for j, v := range xs {
			if x > v {
				above[j]++
			}
		}
	}
	mean, m2 := sum/n, sum2/n
	// Var(X) = 1, Var(X²) = E X⁴ − (E X²)² = 24 − 4 = 20.
	if math.Abs(mean-1) > 4/math.Sqrt(n) || math.Abs(m2-2) > 4*math.Sqrt(20.0/n) {
		t.Errorf("mean %v, E X² %v: want 1, 2", mean, m2)
	}
	for j, v := range xs {
		p := math.Exp(-v)
		if got := float64(above[j]) / n; math.Abs(got-p) > 4*math.Sqrt(p*(1-p)/n) {
			t.Errorf("P(X > %v) = %v, want %v", v, got, p)
		}
	}
	// The fast path takes one number: the mean of k[i]/2³² is 0.978, and a
	// wedge takes one more, or two and again on a rejection: 0.033 extra
	// numbers per draw on this seed.
	if extra := float64(draws-n) / n; extra < 0.022 || extra > 0.05 {
		t.Errorf("%.4f extra numbers per draw: want 0.022–0.05", extra)
	}
	if above[len(xs)-3] == 0 {
		t.Errorf("no draw in the tail")
	}
}

// The draws, logPure, expPure and erfinv give the same bits on every CPU:
// a hash of their bits over many inputs is pinned. CI runs this test built
// with GOAMD64=v3 and on arm64, where an unrounded product would be fused
// (removing one float64() from logPure's polynomial changes the hash under
// GOAMD64=v3 on this machine). The values themselves are checked against
// the math package's: within 1 ulp (log), 2 (exp: its assembly differs),
// 2 or 1e-15 (erfinv).
func TestQueueMathIsTheSameEverywhere(t *testing.T) {
	t.Parallel()
	h := fnv.New64a()
	put := func(v float64) {
		b := math.Float64bits(v)
		h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(b >> 32), byte(b >> 40), byte(b >> 48), byte(b >> 56)})
	}
	ulps := func(a, b float64) int64 {
		d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
		return max(d, -d)
	}
	rng := NewMulberry32(3)
	for i := range 20000 {
		u := rng.Float64()
		x := math.Ldexp(1+u, i%80-40) // 2⁻⁴⁰ … 2⁴⁰
		l, e, f := logPure(x), expPure(20*u-10), erfinv(2*u-1)
		if ulps(l, math.Log(x)) > 1 || ulps(e, math.Exp(20*u-10)) > 2 || (ulps(f, math.Erfinv(2*u-1)) > 2 && math.Abs(f-math.Erfinv(2*u-1)) > 1e-15) {
			t.Fatalf("x %v u %v: log %v (math %v), exp %v (%v), erfinv %v (%v)", x, u, l, math.Log(x), e, math.Exp(20*u-10), f, math.Erfinv(2*u-1))
		}
		put(l)
		put(e)
		put(f)
		put(expDraw(rng))
	}
	if got, want := h.Sum64(), uint64(0x99a77062ed47d849); got != want {
		t.Errorf("hash %#x, want %#x: the queueing server's math gives other bits on this CPU", got, want)
	}
}

// The wedge's squeeze (tangent and chord) answers as the test by expPure
// does, on every layer: at points of the wedge spread over it, its edges
// included, and at heights spread over it, at e^−x itself and one ulp
// either side of it; and it decides most of the spread points (else it
// would save nothing).
func TestWedgeSqueeze(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(8)
	decided, points := 0, 0
	for i := uint32(1); i < 256; i++ {
		hi, lo := zigF[i-1], zigF[i]
		for n := range 400 {
			j := zigK[i] + uint32(rng.Float64()*float64(math.MaxUint32-zigK[i]))
			switch n {
			case 0:
				j = zigK[i] // the wedge's first x, which may fall just short of the layer above's edge
			case 1:
				j = math.MaxUint32
			}
			x := float64(float64(j) * zigW[i])
			e := expPure(-x)
			ys := []float64{e, math.Nextafter(e, 0), math.Nextafter(e, 2)}
			for range 20 {
				ys = append(ys, lo+float64(rng.Float64()*(hi-lo)))
			}
			for m, y := range ys {
				below, ok := wedgeSqueeze(i, x, y)
				if ok && below != (y < e) {
					t.Fatalf("layer %d, x %v, y %v: the squeeze says below %v, e^−x = %v", i, x, y, below, e)
				}
				if wedgeBelow(i, x, y) != (y < e) {
					t.Fatalf("layer %d, x %v, y %v: wedgeBelow differs from y < e^−x = %v", i, x, y, e)
				}
				if m >= 3 {
					points++
					if ok {
						decided++
					}
				}
			}
		}
	}
	if share := float64(decided) / float64(points); share < 0.9 {
		t.Errorf("the squeeze decides %.3f of the wedges' points, want ≥ 0.9", share)
	}
}

// BenchmarkExpDraw: the ziggurat against −ln(1 − U) with math.Log.
func BenchmarkExpDraw(b *testing.B) {
	rng := NewMulberry32(1)
	var s float64
	b.Run("ziggurat", func(b *testing.B) {
		for b.Loop() {
			s += expDraw(rng)
		}
	})
	b.Run("math.Log", func(b *testing.B) {
		for b.Loop() {
			s -= math.Log(1 - rng.Float64())
		}
	})
	if s == 0 {
		b.Log(s)
	}
}
