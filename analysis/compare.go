package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// NightlyComparison is the nightly question, "did anything move?", asked of two
// datasets: every cell of both, matched by its parameters (never by its
// key, which holds the simulator's version), and for each metric the
// change of its mean with an interval. Intervals are simultaneous: each is
// at the level 1 − Alpha/Tests (Bonferroni over every cell and metric
// compared), so that comparing thousands of cells does not call noise a
// change; a change is significant when its interval excludes zero.
type NightlyComparison struct {
	Alpha     float64 // family-wise error rate
	Threshold float64 // relative change (0.05 = 5 %) a significant change must exceed to count as Changed
	Matched   int     // cells in both
	OnlyOld   []*Aggregate
	OnlyNew   []*Aggregate
	Tests     int // changes with an interval (both sides have at least 2 values)
	// Metrics are the metrics compared: AllMetrics' that some matched
	// cell has on both sides.
	Metrics []Metric
	// Changes: every matched cell × metric both sides have (Aggregate.Has)
	// and the cell has (Metric.For: the queueing metrics of queueing cells
	// only), in the new dataset's cell order, then AllMetrics order.
	Changes []Change
	// ShortOld, ShortNew are the cells with fewer seeds than their
	// dataset's own intents ask for (Shortfalls): a night whose shard died.
	ShortOld, ShortNew []Shortfall
}

// Unmatched counts what a nightly gate must not pass over in silence:
// cells on one side only (a changed config, a lost cell), and cells with
// fewer runs than their dataset was meant to hold.
func (c *NightlyComparison) Unmatched() int {
	return len(c.OnlyOld) + len(c.OnlyNew) + len(c.ShortOld) + len(c.ShortNew)
}

// Change is one metric of one cell, old against new.
type Change struct {
	Old, New *Aggregate
	Metric   Metric
	// Paired: the two sides share at least MinPairedSeeds seeds (or hold
	// the same seeds), and the difference is taken seed by seed over the
	// shared seeds where both have a value; seeds only one side holds (a
	// night of `sweep run --add-seeds`) are left out. Else Welch's unpaired
	// interval of the difference of the means over all values.
	Paired bool
	N      int // seeds paired, or the smaller of the two counts
	// Shared counts the seeds both sides hold, Unpaired the seeds only one
	// side holds: left out of a paired test, used by Welch's.
	Shared, Unpaired  int
	OldMean, NewMean  float64 // over the values the test used (NaN when none)
	Diff, Lo, Hi      float64 // new − old and its interval; Lo, Hi NaN without one
	Rel, RelLo, RelHi float64 // the same relative to OldMean; NaN when OldMean is 0
	Significant       bool    // the interval excludes 0
	Beyond            bool    // significant and |Rel| > Threshold (or, when OldMean is 0, any significant change)
	// UnfinishedOld, New: runs without a value (a milestone never reached).
	UnfinishedOld, UnfinishedNew int

	se, df   float64 // the difference's standard error and degrees of freedom
	roundoff float64 // the most summing the values can move either mean (Higham: (n − 1)·ε·max|x|)
}

// Changed counts the changes beyond the threshold.
func (c *NightlyComparison) Changed() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Beyond {
			n++
		}
	}
	return n
}

// CompareAggregates matches the cells of old and new by their parameters
// (grid.Cell.Canonical, which leaves out the simulator's version)
// and compares each metric. alpha is the family-wise error rate (0.05),
// threshold the relative change a significant one must exceed to count.
func CompareAggregates(old, new []*Aggregate, alpha, threshold float64) *NightlyComparison {
	c := &NightlyComparison{Alpha: alpha, Threshold: threshold}
	byParams := make(map[string]*Aggregate, len(old))
	for _, a := range old {
		byParams[a.Cell.Canonical()] = a
	}
	matched := map[string]bool{}
	compared := map[string]bool{}
	for _, b := range new {
		k := b.Cell.Canonical()
		a := byParams[k]
		if a == nil {
			c.OnlyNew = append(c.OnlyNew, b)
			continue
		}
		matched[k] = true
		c.Matched++
		sa, sb := sharedSeeds(a.Seeds, b.Seeds)
		for _, m := range AllMetrics() {
			if !m.For(b.Cell.Scenario) || !a.Has(m) || !b.Has(m) {
				continue
			}
			compared[m.Key] = true
			ch := change(a, b, m, sa, sb)
			if !math.IsNaN(ch.Diff) && ch.N >= 2 {
				c.Tests++
			}
			c.Changes = append(c.Changes, ch)
		}
	}
	for _, m := range AllMetrics() {
		if compared[m.Key] {
			c.Metrics = append(c.Metrics, m)
		}
	}
	for _, a := range old {
		if !matched[a.Cell.Canonical()] {
			c.OnlyOld = append(c.OnlyOld, a)
		}
	}
	level := 1 - alpha/2/float64(max(c.Tests, 1)) // two-sided, Bonferroni
	for i := range c.Changes {
		c.Changes[i].interval(level, threshold)
	}
	return c
}

// change gathers what the interval needs: the paired differences or the
// two samples' moments. The interval itself waits for the number of tests.
// sa and sb are the positions in a.Seeds and b.Seeds of the seeds both hold
// (sharedSeeds).
func change(a, b *Aggregate, m Metric, sa, sb []int) Change {
	ch := Change{Old: a, New: b, Metric: m, Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN(),
		OldMean: math.NaN(), NewMean: math.NaN(), Rel: math.NaN(), RelLo: math.NaN(), RelHi: math.NaN(),
		UnfinishedOld: a.Summary(m).Unfinished, UnfinishedNew: b.Summary(m).Unfinished}
	ch.Shared = len(sa)
	ch.Unpaired = len(a.Seeds) + len(b.Seeds) - 2*ch.Shared
	ch.Paired = ch.Unpaired == 0 || ch.Shared >= MinPairedSeeds
	if ch.Paired {
		var w, wo, wn welford
		xo, xn := a.PerSeed(m), b.PerSeed(m)
		for j := range sa {
			o, n := xo[sa[j]], xn[sb[j]]
			if !math.IsNaN(o) && !math.IsNaN(n) {
				w.add(n - o)
				wo.add(o)
				wn.add(n)
			}
		}
		ch.N = w.n
		if w.n > 0 {
			ch.OldMean, ch.NewMean, ch.Diff = wo.mean, wn.mean, w.mean
			ch.se = math.Sqrt(w.m2 / math.Max(float64(w.n-1), 1) / float64(w.n))
			ch.df = float64(w.n - 1)
		}
		return ch
	}
	so, sn := a.Summary(m), b.Summary(m)
	ch.N = min(so.N, sn.N)
	if so.N == 0 || sn.N == 0 {
		return ch
	}
	ch.OldMean, ch.NewMean, ch.Diff = so.Mean, sn.Mean, sn.Mean-so.Mean
	big := math.Max(math.Max(math.Abs(so.Min), math.Abs(so.Max)), math.Max(math.Abs(sn.Min), math.Abs(sn.Max)))
	ch.roundoff = float64(so.N+sn.N) * epsilon * big
	if so.N >= 2 && sn.N >= 2 {
		vo, vn := so.SD*so.SD/float64(so.N), sn.SD*sn.SD/float64(sn.N)
		ch.se = math.Sqrt(vo + vn)
		if vo+vn > 0 {
			// Welch–Satterthwaite degrees of freedom.
			ch.df = (vo + vn) * (vo + vn) / (vo*vo/float64(so.N-1) + vn*vn/float64(sn.N-1))
		}
	}
	return ch
}

// MinPairedSeeds is the fewest seeds two cells must share to be compared
// seed by seed when they do not hold the same seeds: the fewest a paired
// interval needs (a standard deviation of the differences). Two cells with
// the same seeds are always paired.
const MinPairedSeeds = 2

// sharedSeeds returns the positions in a and in b (both ascending) of the
// seeds both hold, in ascending order of seed.
func sharedSeeds(a, b []uint32) (ia, ib []int) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			ia, ib = append(ia, i), append(ib, j)
			i++
			j++
		}
	}
	return ia, ib
}

// interval sets the change's interval at the given two-sided level.
func (ch *Change) interval(level, threshold float64) {
	if math.IsNaN(ch.Diff) || ch.N < 2 {
		return
	}
	if math.Abs(ch.Diff) <= ch.roundoff {
		// The means of the same values, summed over other counts, differ in
		// their last bits (5 and 9 copies of 59.9): that is no change.
		ch.Diff = 0
	}
	half := 0.0
	if ch.se > 0 {
		half = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: ch.df}.Quantile(level) * ch.se
	}
	ch.Lo, ch.Hi = ch.Diff-half, ch.Diff+half
	ch.Significant = ch.Lo > 0 || ch.Hi < 0
	if ch.OldMean != 0 {
		s := math.Abs(ch.OldMean)
		ch.Rel, ch.RelLo, ch.RelHi = ch.Diff/s, ch.Lo/s, ch.Hi/s
		ch.Beyond = ch.Significant && math.Abs(ch.Rel) > threshold
	} else {
		ch.Beyond = ch.Significant
	}
}

// epsilon is float64's machine epsilon, 2^−52.
const epsilon = 0x1p-52

// welford is the running count, mean and sum of squared deviations of a
// sample (Welford's method: stable whatever the order and magnitude), with
// its extremes.
type welford struct {
	n, unfinished int
	mean, m2      float64
	min, max      float64
}

func (w *welford) add(x float64) {
	w.n++
	if w.n == 1 {
		w.min, w.max = x, x
	} else {
		w.min, w.max = math.Min(w.min, x), math.Max(w.max, x)
	}
	d := x - w.mean
	w.mean += d / float64(w.n)
	w.m2 += d * (x - w.mean)
}

// summary is Summarize's result from the running values.
func (w *welford) summary() Summary {
	s := Summary{N: w.n, Unfinished: w.unfinished, Lo: math.NaN(), Hi: math.NaN(), Mean: math.NaN(), SD: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if w.n == 0 {
		return s
	}
	s.Mean, s.Min, s.Max, s.SD = w.mean, w.min, w.max, 0
	if w.n >= 2 {
		s.SD = math.Sqrt(w.m2 / float64(w.n-1))
		t := t975(w.n - 1)
		half := t * s.SD / math.Sqrt(float64(w.n))
		s.Lo, s.Hi = s.Mean-half, s.Mean+half
	}
	return s
}
