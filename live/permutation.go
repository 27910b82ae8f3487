package live

import (
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/sim"
)

// sample is one group of runs for a permutation test: per run, its
// metrics and its arrivals per tick.
type sample struct {
	values [][]float64 // [run][metric]
	curves [][]float64 // [run][tick]
}

// permResult is a permutation test's outcome: per statistic (each metric's
// Kolmogorov–Smirnov distance, then the arrivals curve's distance) its
// observed value and its own p-value, and the p-value of the test as a
// whole.
type permResult struct {
	stat   []float64
	statP  []float64
	p      float64
	curveD float64 // stat[len(stat)-1]
}

// permutationTest asks whether the runs of a and of b are draws from one
// distribution. Its statistics are the Kolmogorov–Smirnov distance of each
// metric between the two groups and the distance between their mean
// arrivals curves (curveDistance). Under the null the pooled runs are
// exchangeable, whatever their distribution, ties and correlations, so
// perms random relabellings into groups of a's and b's sizes give each
// statistic's null distribution, and its p-value (1 + relabellings at
// least as extreme) / (1 + perms). The statistics are combined by their
// smallest p-value, itself set against the smallest p-values of the
// relabellings (Pesarin's nonparametric combination, the min-p rule of
// Westfall and Young): a test that rejects when p ≤ α calls samples of
// one distribution different with probability at most α, however many
// statistics it reads. seed fixes the relabellings.
func permutationTest(a, b sample, perms int, seed uint32) permResult {
	pool := sample{values: append(slices.Clone(a.values), b.values...), curves: append(slices.Clone(a.curves), b.curves...)}
	ks := newKSPool(pool.values)
	cv := newCurvePool(pool.curves)
	nA := len(a.values)
	nStats := ks.metrics + 1
	stats := func(inA []bool, members []int, out []float64) {
		for j := range ks.metrics {
			out[j] = ks.distance(j, inA, nA)
		}
		out[ks.metrics] = cv.distance(members)
	}
	inA := make([]bool, len(pool.values))
	order := make([]int, len(pool.values))
	for i := range order {
		order[i] = i
	}
	for i := range nA {
		inA[i] = true
	}
	res := permResult{stat: make([]float64, nStats), statP: make([]float64, nStats)}
	stats(inA, order[:nA], res.stat)
	null := make([][]float64, nStats) // [stat][perm]
	for s := range null {
		null[s] = make([]float64, perms)
	}
	row := make([]float64, nStats)
	rng := sim.NewMulberry32(seed)
	for t := range perms {
		for i := range nA { // the first nA of a partial Fisher–Yates shuffle
			k := i + int(uint64(rng.Uint32())*uint64(len(order)-i)>>32)
			order[i], order[k] = order[k], order[i]
		}
		clear(inA)
		for _, i := range order[:nA] {
			inA[i] = true
		}
		stats(inA, order[:nA], row)
		for s := range row {
			null[s][t] = row[s]
		}
	}
	// Each relabelling's smallest p-value, and the observed one.
	minP := make([]float64, perms)
	for t := range minP {
		minP[t] = 1
	}
	obsMin := 1.0
	for s := range null {
		sorted := slices.Sorted(slices.Values(null[s]))
		pOf := func(x float64) float64 { return float64(1+atLeast(sorted, x)) / float64(1+perms) }
		res.statP[s] = pOf(res.stat[s])
		obsMin = math.Min(obsMin, res.statP[s])
		for t, x := range null[s] {
			minP[t] = math.Min(minP[t], pOf(x))
		}
	}
	n := 0
	for _, m := range minP {
		if m <= obsMin {
			n++
		}
	}
	res.p = float64(1+n) / float64(1+perms)
	res.curveD = res.stat[ks.metrics]
	return res
}

// atLeast counts the values of sorted that are at least x (to rounding).
func atLeast(sorted []float64, x float64) int {
	i, _ := slices.BinarySearch(sorted, x-1e-12)
	return len(sorted) - i
}

// ksPool is a pooled sample sorted once per metric, for the
// Kolmogorov–Smirnov distance of any split of it.
type ksPool struct {
	metrics int
	order   [][]int  // per metric: the rows in increasing order of the metric
	last    [][]bool // per metric, per position: the last of its run of equal values
}

func newKSPool(rows [][]float64) *ksPool {
	k := &ksPool{metrics: len(rows[0])}
	for j := range k.metrics {
		o := make([]int, len(rows))
		for i := range o {
			o[i] = i
		}
		slices.SortStableFunc(o, func(x, y int) int { return cmpValue(rows[x][j], rows[y][j]) })
		l := make([]bool, len(o))
		for i := range o {
			l[i] = i == len(o)-1 || rows[o[i]][j] != rows[o[i+1]][j]
		}
		k.order, k.last = append(k.order, o), append(k.last, l)
	}
	return k
}

// cmpValue orders metric values, +Inf (never) last.
func cmpValue(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// distance is the Kolmogorov–Smirnov distance of metric j between the
// rows in A (nA of them) and the others: the largest gap between their
// empirical distribution functions, read at the end of each run of equal
// values.
func (k *ksPool) distance(j int, inA []bool, nA int) float64 {
	nB := len(inA) - nA
	ca, cb, d := 0, 0, 0 // counts; the gap is |ca·nB − cb·nA| / (nA·nB), exactly
	last := k.last[j]
	for pos, i := range k.order[j] {
		if inA[i] {
			ca++
		} else {
			cb++
		}
		if last[pos] {
			d = max(d, abs(ca*nB-cb*nA))
		}
	}
	return float64(d) / float64(nA*nB)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// curvePool is the pooled runs' arrivals curves, padded with zeros to one
// length, with each tick's weight: 1 / (its variance over the pool + 1).
type curvePool struct {
	curves [][]float64
	total  []float64 // per tick, the sum over the pool
	weight []float64
	sumA   []float64 // scratch
}

func newCurvePool(curves [][]float64) *curvePool {
	n := 0
	for _, c := range curves {
		n = max(n, len(c))
	}
	p := &curvePool{total: make([]float64, n), weight: make([]float64, n), sumA: make([]float64, n)}
	for _, c := range curves {
		full := make([]float64, n)
		copy(full, c)
		p.curves = append(p.curves, full)
		for k, x := range full {
			p.total[k] += x
		}
	}
	m := float64(len(curves))
	for k := range n {
		mean, ss := p.total[k]/m, 0.0
		for _, c := range p.curves {
			ss += (c[k] - mean) * (c[k] - mean)
		}
		p.weight[k] = 1 / (ss/math.Max(m-1, 1) + 1)
	}
	return p
}

// distance is how far the mean arrivals curve of the runs in members is
// from the others': the weighted sum over ticks of the squared difference
// of the two means, each tick weighted by 1 / (its pooled variance + 1),
// so that the ticks where runs vary little count most.
func (p *curvePool) distance(members []int) float64 {
	clear(p.sumA)
	for _, i := range members {
		for k, x := range p.curves[i] {
			p.sumA[k] += x
		}
	}
	nA, nB := float64(len(members)), float64(len(p.curves)-len(members))
	d := 0.0
	for k, s := range p.sumA {
		diff := s/nA - (p.total[k]-s)/nB
		d += p.weight[k] * diff * diff
	}
	return d
}
