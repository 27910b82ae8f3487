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

// ln2Hi + ln2Lo is ln 2 split in two, as Go's exp.go and log.go split it.
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// exp2 is Go's pure-Go math.Exp2 (exp.go, the amd64 path) with products
// rounded on their own.
func exp2(x float64) float64 {
	const (
		overflow  = 1.0239999999999999e+03
		underflow = -1.0740e+03
	)
	if v, edge := expEdge(x, overflow, underflow); edge {
		return v
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

// expEdge is what exp2 and expPure return at the edges of their range (x
// NaN, above overflow, below underflow), and whether x is there.
func expEdge(x, overflow, underflow float64) (float64, bool) {
	switch {
	case math.IsNaN(x):
		return x, true
	case x > overflow:
		return math.Inf(1), true
	case x < underflow:
		return 0, true
	}
	return 0, false
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

// The queueing server's draws (exponential service times and gaps,
// lognormal service times) need e^x, ln x and erf⁻¹ x. math.Log is assembly
// on amd64 and pure Go, fusable, on arm64; math.Exp has an FMA path on
// amd64 CPUs that have one; math.Erfinv is pure Go, fusable. So they are
// here, ported from the Go standard library (Go 1.26, src/math/log.go,
// exp.go, erfinv.go) with every product rounded on its own.

// logPure is Go's pure-Go math.log (log.go) with products rounded on their
// own.
func logPure(x float64) float64 {
	const (
		l1 = 6.666666666666735130e-01
		l2 = 3.999999999940941908e-01
		l3 = 2.857142874366239149e-01
		l4 = 2.222219843214978396e-01
		l5 = 1.818357216161805012e-01
		l6 = 1.531383769920937332e-01
		l7 = 1.479819860511658591e-01
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}

// expPure is Go's pure-Go math.exp (exp.go) with products rounded on their
// own.
func expPure(x float64) float64 {
	const (
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)
	)
	if v, edge := expEdge(x, overflow, underflow); edge {
		return v
	}
	if -nearZero < x && x < nearZero {
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	return expmulti(hi, lo, k)
}

// horner is c[0]·r⁷ + … + c[7] with every product rounded on its own.
func horner(r float64, c *[8]float64) float64 {
	p := c[0]
	for _, ci := range c[1:] {
		p = float64(p*r) + ci
	}
	return p
}

// The coefficients of Go's erfinv.go, highest power first.
var (
	erfinvA = [8]float64{8.8709406962545514830200e2, 1.1819493347062294404278e4, 2.3782041382114385731252e4, 1.6235862515167575384252e4, 4.8548868893843886794648e3, 6.9706266534389598238465e2, 4.7072688112383978012285e1, 1.1975323115670912564578e0}
	erfinvB = [8]float64{5.2264952788528545610e3, 2.8729085735721942674e4, 3.9307895800092710610e4, 2.1213794301586595867e4, 5.3941960214247511077e3, 6.8718700749205790830e2, 4.2313330701600911252e1, 1.0000000000000000000e0}
	erfinvC = [8]float64{7.74545014278341407640e-4, 2.27238449892691845833e-2, 2.41780725177450611770e-1, 1.27045825245236838258e0, 3.64784832476320460504e0, 5.76949722146069140550e0, 4.63033784615654529590e0, 1.42343711074968357734e0}
	erfinvD = [8]float64{1.4859850019840355905497876e-9, 7.7441459065157709165577218e-4, 2.1494160384252876777097297e-2, 2.0945065210512749128288442e-1, 9.7547832001787427186894837e-1, 2.3707661626024532365971225e0, 2.9036514445419946173133295e0, 1.4142135623730950488016887e0}
	erfinvE = [8]float64{2.01033439929228813265e-7, 2.71155556874348757815e-5, 1.24266094738807843860e-3, 2.65321895265761230930e-2, 2.96560571828504891230e-1, 1.78482653991729133580e0, 5.46378491116411436990e0, 6.65790464350110377720e0}
	erfinvF = [8]float64{2.891024605872965461538222e-15, 2.010321207683943062279931e-7, 2.611088405080593625138020e-5, 1.112800997078859844711555e-3, 2.103693768272068968719679e-2, 1.936480946950659106176712e-1, 8.482908416595164588112026e-1, 1.414213562373095048801689e0}
)

// erfinv is Go's math.Erfinv (erfinv.go) with products rounded on their
// own and its logarithm from logPure.
func erfinv(x float64) float64 {
	if math.IsNaN(x) || x <= -1 || x >= 1 {
		if x == -1 || x == 1 {
			return math.Inf(int(x))
		}
		return math.NaN()
	}
	sign := x < 0
	x = math.Abs(x)
	var ans float64
	if x <= 0.85 {
		r := 0.180625 - float64(float64(0.25*x)*x)
		ans = float64(x*horner(r, &erfinvA)) / horner(r, &erfinvB)
	} else {
		r := math.Sqrt(math.Ln2 - logPure(1.0-x))
		if r <= 5.0 {
			r -= 1.6
			ans = horner(r, &erfinvC) / horner(r, &erfinvD)
		} else {
			r -= 5.0
			ans = horner(r, &erfinvE) / horner(r, &erfinvF)
		}
	}
	if sign {
		return -ans
	}
	return ans
}
