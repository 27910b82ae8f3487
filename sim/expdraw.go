package sim

// expDraw returns an exponential draw of mean 1 from rng by Marsaglia and
// Tsang's ziggurat ("The Ziggurat Method for Generating Random Variables",
// J. Stat. Softw. 5(8), 2000), the algorithm of Go's math/rand ExpFloat64
// (src/math/rand/exp.go, Go 1.26) on the Mulberry32 stream: one 32-bit draw
// j, its low 8 bits pick one of 256 layers of equal area, and x = j·w[i]
// is returned at once when j < k[i] (97.8 % of draws); otherwise the
// wedge's rejection test (one more draw and an e^−x) or, in the base
// layer, the tail beyond zigR by inversion (one more draw and a ln). A
// draw thus reads one number of the stream, sometimes more: the same
// numbers on every CPU, as its tables and arithmetic are (float64 tables
// computed here with logPure and expPure, not the float32 literals of
// math/rand; products rounded on their own).
//
// It replaces −ln(1 − U), whose math.Log is assembly on amd64 and fusable
// Go on arm64, at a third to a half of its cost (BenchmarkExpDraw, three
// runs on a loaded machine: 6–12 ns against 19–26).
func expDraw(rng *Mulberry32) float64 {
	x, j, ok := expFirst(rng)
	if ok {
		return x
	}
	return expMore(rng, x, j)
}

// expFirst is expDraw's first step, small enough to inline where a draw
// is hot: one number j of the stream and x = j·w[i]; ok when x is the
// draw (j < k[i]), else expMore(rng, x, j) finishes it.
func expFirst(rng *Mulberry32) (x float64, j uint32, ok bool) {
	j = rng.Uint32()
	i := j & 0xff
	return float64(float64(j) * zigW[i]), j, j < zigK[i]
}

// expMore finishes a draw whose first step (x, j) was not accepted at
// once: the tail, or the wedge's test and, failing it, a new first step.
func expMore(rng *Mulberry32, x float64, j uint32) float64 {
	for {
		i := j & 0xff
		if i == 0 {
			return zigR - logPure(1-rng.Float64()) // 1 − U ∈ (0, 1]
		}
		u := rng.Float64()
		if wedgeBelow(i, x, zigF[i]+float64(u*(zigF[i-1]-zigF[i]))) {
			return x
		}
		var ok bool
		if x, j, ok = expFirst(rng); ok {
			return x
		}
	}
}

// wedgeBelow is the wedge's test of layer i (1 … 255): whether y, a height
// in it, lies below e^−x at x, a point of it. It answers as y < expPure(−x)
// does, and mostly without computing it: e^−x is convex, so it lies above
// its tangent at the layer's edge X (f = e^−X: f·(1 + X − x)) and, for x
// between the edge L of the layer above and X, below their chord. A y
// below the tangent or above the chord by more than squeezeGap is decided
// by them; a y between them, or an x short of L (rounding can put the
// first x of a wedge just before L), by expPure. squeezeGap (10⁻¹²;
// heights are 4.5·10⁻⁴ … 1) exceeds the bounds' and expPure's rounding
// errors (under 10⁻¹⁵ here) many times over, so the answer is the same
// bits; TestWedgeSqueeze checks it against expPure on every layer.
func wedgeBelow(i uint32, x, y float64) bool {
	if below, ok := wedgeSqueeze(i, x, y); ok {
		return below
	}
	return y < expPure(-x)
}

// wedgeSqueeze is wedgeBelow's answer by the tangent and the chord, ok
// when they decide it.
func wedgeSqueeze(i uint32, x, y float64) (below, ok bool) {
	hi, lo := zigF[i-1], zigF[i]
	l, r := zigEdge[i-1], zigEdge[i]
	if y < float64(lo*float64(1+float64(r-x)))-squeezeGap {
		return true, true
	}
	if x >= l && y > lo+float64(float64(hi-lo)*float64(float64(r-x)/float64(r-l)))+squeezeGap {
		return false, true
	}
	return false, false
}

// squeezeGap is wedgeBelow's margin.
const squeezeGap = 1e-12

// The ziggurat's constants (Marsaglia and Tsang's REXP, 256 layers): r,
// where the tail starts, and v, the area of every layer.
const (
	zigR = 7.697117470131487
	zigV = 3.949659822581572e-3
)

// The ziggurat's tables: k[i], the share of layer i (× 2³²) inside the
// layer above; w[i], its width / 2³²; f[i], e^−x at its edge.
var (
	zigK [256]uint32
	zigW [256]float64
	zigF [256]float64
	// zigEdge[i] is layer i's edge X (w[i]·2³², e^−X = f[i]); 0 for the
	// top (i = 0 stands for the point above layer 1: x = 0, f = 1).
	zigEdge [256]float64
)

// init builds the tables by Marsaglia and Tsang's setup (their zigset),
// on every CPU the same bits.
func init() {
	const m2 = 4294967296.0
	de, te := zigR, zigR
	q := zigV / expPure(-de)
	zigK[0] = uint32(float64(de/q) * m2)
	zigK[1] = 0
	zigW[0] = q / m2
	zigW[255] = de / m2
	zigF[0] = 1
	zigF[255] = expPure(-de)
	for i := 254; i >= 1; i-- {
		de = -logPure(zigV/de + expPure(-de))
		zigK[i+1] = uint32(float64(de/te) * m2)
		te = de
		zigF[i] = expPure(-de)
		zigW[i] = de / m2
	}
	for i := 1; i < 256; i++ {
		zigEdge[i] = float64(zigW[i] * m2)
	}
}
