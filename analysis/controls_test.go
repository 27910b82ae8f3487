package analysis

import (
	"math"
	"testing"
)

// pairOf is a comparison whose cells finished (reached t99) in the given
// numbers of 10 seeds, at a t99 of 12 s where they did, and where no
// client gave up.
func pairOf(with, without int) ControlPair {
	agg := func(finished int) *Aggregate {
		xs := make([]float64, finished)
		for i := range xs {
			xs[i] = 12 + float64(i)/10
		}
		return &Aggregate{summary: map[string]Summary{
			T99.Key:    Summarize(xs, 10-finished),
			GaveUp.Key: Summarize(make([]float64, 10), 0),
		}}
	}
	return ControlPair{With: agg(with), Without: agg(without)}
}

// A component that finishes in 7 of 10 seeds where the backoff alone
// finishes in none has an effect, though neither finishes everywhere (the
// review's case: fixed 5 s with throttle_k 2, reject_cost 0.5, 60 req/s).
func TestEffectCountsSeedsFinished(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		with, without int
		want          Effect
	}{
		{"7 of 10 against none", 7, 0, Helps},
		{"none against 7 of 10", 0, 7, Costs},
		{"6 of 10 against 3 of 10: p 0.37", 6, 3, NoChange},
		{"neither", 0, 0, NoChange},
		{"every seed against 9 of 10", 10, 9, Helps}, // the rule as it was
	} {
		if got := pairOf(c.with, c.without).Effect(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Fisher's exact test, worked by hand from the hypergeometric
// probabilities C(10,x)·C(10,k−x)/C(20,k).
func TestFisherTwoSided(t *testing.T) {
	t.Parallel()
	const tol = 1e-12 // a sum of a few exp(lgamma) terms
	for _, c := range []struct {
		a, b, c, d int
		want       float64
	}{
		{7, 3, 0, 10, (120 + 120) / 77520.0},                                         // x = 0 and x = 7 of k = 7
		{6, 4, 3, 7, (10 + 450 + 5400 + 25200 + 25200 + 5400 + 450 + 10) / 167960.0}, // all but x = 4, 5 of k = 9
		{5, 5, 5, 5, 1},
	} {
		if got := fisherTwoSided(c.a, c.b, c.c, c.d); math.Abs(got-c.want) > tol {
			t.Errorf("fisher %v: %.15f, want %.15f", c, got, c.want)
		}
	}
}

// "Clients give up" needs clients to give up that never did without the
// component, or clearly more of them: 500 of 500 in every seed against
// 499.75 on average is not (the review's case: the cell read "100 % of
// clients (without: 100 %)").
func TestEffectGiveUpIsClear(t *testing.T) {
	t.Parallel()
	gaveUp := func(xs ...float64) *Aggregate {
		return &Aggregate{summary: map[string]Summary{T99.Key: Summarize(nil, len(xs)), GaveUp.Key: Summarize(xs, 0)}}
	}
	for _, c := range []struct {
		name          string
		with, without *Aggregate
		want          Effect
	}{
		{"all against nearly all", gaveUp(500, 500, 500, 500), gaveUp(500, 499, 500, 500), NoChange},
		{"some against none", gaveUp(0, 3, 1, 0), gaveUp(0, 0, 0, 0), GivesUp},
		{"many against few", gaveUp(400, 410, 420, 405), gaveUp(10, 12, 9, 11), GivesUp},
		{"fewer", gaveUp(1, 0, 0, 0), gaveUp(5, 6, 4, 5), NoChange},
	} {
		if got := (ControlPair{With: c.with, Without: c.without}).Effect(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
