package sim

import "math"

// The math the policies need, computed the same way on every CPU.
//
// Go may fuse x*y + z into one instruction, rounding once instead of twice,
// on arm64 and on amd64 built with GOAMD64=v3; an explicit float64()
// conversion forbids it (the Go spec, "Floating-point operators"). Every
// delay formula in this package converts its products before adding them,
// so that a run gives the same bits on every machine, as JavaScript's
// herd.mjs does. The math package's Exp2 and Tanh are not safe that way
// (assembly on arm64, an FMA path on amd64 CPUs that have one, pure Go
// elsewhere), so polly-v2's exp2 and tanh are here, ported from the Go
// standard library with every product rounded on its own.

// exp2 is Go's pure-Go math.Exp2 (exp.go, the amd64 path) with products
// rounded on their own.
func exp2(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		overflow  = 1.0239999999999999e+03
		underflow = -1.0740e+03
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	}
	var k int
	switch {
	case x > 0:
		k = int(x + 0.5)
	case x < 0:
		k = int(x - 0.5)
	}
	t := x - float64(k)
	hi := float64(t * ln2Hi)
	lo := float64(-t * ln2Lo)
	return expmulti(hi, lo, k)
}

// expmulti returns e^r × 2^k, r = hi − lo, as Go's math does.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// tanh is Go's math.Tanh (tanh.go) with products rounded on their own and
// e^x from expFMA.
func tanh(x float64) float64 {
	const maxlog = 8.8029691931113054295988e+01 // log(2**127)
	var (
		tp = [...]float64{-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3}
		tq = [...]float64{1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3}
	)
	z := math.Abs(x)
	switch {
	case z > 0.5*maxlog:
		if x < 0 {
			return -1
		}
		return 1
	case z >= 0.625:
		s := expFMA(2 * z)
		z = 1 - 2/(s+1)
		if x < 0 {
			z = -z
		}
	default:
		if x == 0 {
			return x
		}
		s := float64(x * x)
		num := float64(float64(float64(float64(tp[0]*s)+tp[1])*s) + tp[2])
		den := float64(float64(float64(float64(s+tq[0])*s)+tq[1])*s) + tq[2]
		z = x + float64(float64(float64(x*s)*num)/den)
	}
	return z
}

// expFMA is e^x computed as Go's amd64 assembly computes it on a CPU with
// FMA (math/exp_amd64.s, after Shibata's SLEEF), with math.FMA, which rounds
// once on every CPU, where the assembly fuses. It gives the bits math.Exp
// gave the datasets written on such a machine, now on any machine.
func expFMA(x float64) float64 {
	const (
		log2e    = 1.4426950408889634073599246810018920
		ln2U     = 0.69314718055966295651160180568695068359375
		ln2L     = 0.28235290563031577122588448175013436025525412068e-12
		overflow = 7.09782712893384e+02
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > overflow:
		return math.Inf(1)
	}
	kf := math.RoundToEven(float64(log2e * x)) // CVTSD2SL rounds to nearest even
	if kf < math.MinInt32 || kf > math.MaxInt32 {
		kf = math.MinInt32 // the assembly's "integer indefinite"
	}
	k := int64(kf)
	kf = float64(k)
	x = math.FMA(-kf, ln2U, x)
	x = math.FMA(-kf, ln2L, x)
	x *= 0.0625
	p := 2.4801587301587301587e-5
	for _, c := range [...]float64{1.9841269841269841270e-4, 1.3888888888888888889e-3, 8.3333333333333333333e-3,
		4.1666666666666666667e-2, 1.6666666666666666667e-1, 0.5, 1.0} {
		p = math.FMA(p, x, c)
	}
	x *= p
	for range 3 {
		x *= x + 2
	}
	x = math.FMA(x, x+2, 1)
	bx := k + 0x3FF
	scale := 1.0
	switch {
	case bx <= 0:
		if bx < -52 {
			return 0
		}
		bx += 0x3FE
		scale = math.Float64frombits(1 << 52) // 2^-1022
	case bx >= 0x7FF:
		return math.Inf(1)
	}
	return x * math.Float64frombits(uint64(bx)<<52) * scale
}
