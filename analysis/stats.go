package analysis

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes one metric of a cell over its seeds.
type Summary struct {
	N          int     // runs that have a value (finished runs, for times)
	Unfinished int     // runs without a value: the milestone was never reached
	Mean, SD   float64 // SD is the sample standard deviation (n − 1)
	Lo, Hi     float64 // 95 % confidence interval of the mean (Summarize, SummarizeShare); NaN when N < 2
	Min, Max   float64
}

// MinSeedsForInterval is the fewest seeds for which an interval is shown
// without a warning.
const MinSeedsForInterval = 5

// Summarize summarises xs; unfinished counts the runs without a value.
func Summarize(xs []float64, unfinished int) Summary {
	s := Summary{N: len(xs), Unfinished: unfinished, Lo: math.NaN(), Hi: math.NaN(), Mean: math.NaN(), SD: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(xs) == 0 {
		return s
	}
	s.Mean = stat.Mean(xs, nil)
	s.Min, s.Max = xs[0], xs[0]
	for _, x := range xs {
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	if len(xs) >= 2 {
		s.SD = stat.StdDev(xs, nil)
		half := t975(len(xs)-1) * s.SD / math.Sqrt(float64(len(xs)))
		s.Lo, s.Hi = s.Mean-half, s.Mean+half
	} else {
		s.SD = 0
	}
	return s
}

// SummarizeShare is Summarize for a share: each value a proportion in
// [0, 1] (a run's goodput over its demand, say). Its interval is the
// Wilson score interval at the effective sample size (the approach of
// Korn and Graubard, 1998, for proportions of clustered samples, with
// Wilson's interval in place of Clopper–Pearson's): never beyond 0 or 1,
// where Student's t reaches past them (0.99 and 0.999 on two seeds: up to
// 1.05). The seeds' shares are not Bernoulli trials, so the interval takes
// as many trials as would give the mean's observed variance,
// n_eff = p(1 − p)/(s²/N), and Student's t at N − 1 degrees of freedom for
// z, as Summarize does. Far from 0 and 1 (n_eff large beside z²) it is
// Summarize's interval; near them it bends inward, as a proportion's
// interval should; for values that are all 0 or 1 it is the Wilson
// interval of N − 1 trials (the sample variance's N − 1). When every seed
// holds the same share, it is that share, as Summarize's interval is.
func SummarizeShare(xs []float64, unfinished int) Summary {
	s := Summarize(xs, unfinished)
	if math.IsNaN(s.Lo) {
		return s
	}
	s.Lo, s.Hi = wilsonMean(s.Mean, s.SD, len(xs))
	return s
}

// wilsonMean is the Wilson score interval of a share's mean p over n
// seeds with sample standard deviation sd (SummarizeShare).
func wilsonMean(p, sd float64, n int) (lo, hi float64) {
	v := sd * sd / float64(n) // the variance of the mean
	pq := p * (1 - p)
	if v == 0 || !(pq > 0) { // every seed alike (or a value outside [0, 1]): no spread to bend
		c := math.Min(math.Max(p, 0), 1)
		if v == 0 {
			return c, c
		}
		half := t975(n-1) * math.Sqrt(v)
		return math.Max(p-half, 0), math.Min(p+half, 1)
	}
	neff := pq / v
	z := t975(n - 1)
	z2 := z * z
	den := 1 + z2/neff
	centre := (p + z2/(2*neff)) / den
	half := z / den * math.Sqrt(v+z2/(4*neff*neff))
	return math.Max(centre-half, 0), math.Min(centre+half, 1)
}

// Finished reports whether every run reached the milestone.
func (s Summary) Finished() bool { return s.Unfinished == 0 && s.N > 0 }

// Bounds is the interval as a report prints it. Every metric is ≥ 0 (the
// server serves nothing before RecoverAt, so no milestone comes before
// it; the others are counts and rates), so a Student-t lower bound below
// 0 says only that the seeds are few (2 seeds: ±12.7 standard errors);
// Bounds clamps it at 0 and says so. The interval still holds the true
// mean whenever the unclamped one does. Lo and Hi keep the raw bounds
// that the comparisons use. NaN without an interval.
func (s Summary) Bounds() (lo, hi float64, clamped bool) {
	if s.Lo < 0 {
		return 0, s.Hi, true
	}
	return s.Lo, s.Hi, false
}

// Overlaps reports whether two intervals overlap: the cells cannot be told
// apart on this metric at these seeds. Without intervals it compares means.
func (s Summary) Overlaps(o Summary) bool {
	if math.IsNaN(s.Lo) || math.IsNaN(o.Lo) {
		return s.Mean == o.Mean
	}
	return s.Lo <= o.Hi && o.Lo <= s.Hi
}

// t975s caches t975: the quantile is a pure function of the degrees of
// freedom, and computing it (an inverse incomplete beta) took a third of
// recommend's time over a cached dataset.
var t975s sync.Map // int → float64

// t975 is Student's t 97.5 % quantile at df degrees of freedom: the half
// width of a 95 % interval, in standard errors.
func t975(df int) float64 {
	if v, ok := t975s.Load(df); ok {
		return v.(float64)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
	t975s.Store(df, t)
	return t
}
