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
	Lo, Hi     float64 // Student-t 95 % confidence interval of the mean; NaN when N < 2
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
