package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

func queueScenario() sim.Scenario {
	sc := sim.Article()
	sc.Clients, sc.Spread = 1, 0
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout = 10, "exponential", 20*time.Millisecond, time.Second
	sc.ArrivalRate, sc.OutageStart, sc.RecoverAt = 350, 30*time.Second, 35*time.Second
	sc.Horizon = sc.RecoverAt + 240*time.Second
	return sc
}

// randomQueueCells builds n policies of one queueing scenario with random
// per-seed outcomes: never back, back in some seeds, back in every seed at
// times on the 10 s grid the simulator measures (many exact ties) or
// anywhere; some cells miss seeds, so that both paired and Welch
// intervals are exercised.
func randomQueueCells(rng *rand.Rand, n, seeds int) []*Aggregate {
	sc := queueScenario()
	var recs []Record
	for i := range n {
		p := sim.Policy{Kind: sim.FullJitter, Base: time.Duration(1+i) * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second}
		c := grid.Cell{Scenario: sc, Policy: p}
		mode := rng.IntN(6) // 0: never back, 1: back in some seeds, else every seed
		level := 10 * float64(rng.IntN(8))
		onGrid := rng.IntN(2) == 0
		from := uint32(1)
		if rng.IntN(5) == 0 {
			from = 1 + uint32(rng.IntN(3))
		}
		goodput := 0.1 + 0.9*rng.Float64()
		for s := from; s <= uint32(seeds); s++ {
			r := grid.Run{Cell: c, Seed: s}
			offered := int64(80000)
			res := sim.Result{Clients: 1, Offered: offered, Goodput: int64(goodput * float64(offered)), Sent: 2 * offered, TimedOut: offered / 4, BusyMS: 1e6, WastedMS: 1e6 * rng.Float64()}
			back := mode >= 2 || (mode == 1 && rng.IntN(2) == 0)
			if back {
				v := level + 10*float64(rng.IntN(3))
				if !onGrid {
					v = level + 20*rng.Float64()
				}
				res.Recovered = sim.Milestone{At: sc.RecoverAt + time.Duration(v*1e9), Reached: true}
			}
			recs = append(recs, Record{Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: s, Cell: c, Result: res}})
		}
	}
	return QueueAggregates(recs)
}

// A policy back to steady state in no seed never ranks above one back in
// some seed, and is never said to come back sooner; the order and the
// comparisons agree (no pair compared against its order), and each
// comparison is the mirror of its reverse.
func TestQueueRankNeverBackNeverAbove(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		qs := RankQueueing(randomQueueCells(rng, 2+rng.IntN(10), 2+rng.IntN(6)))
		if len(qs) != 1 {
			t.Fatalf("trial %d: %d scenarios, want 1", trial, len(qs))
		}
		q := qs[0]
		for i, a := range q.Ranked {
			ba, _ := Back(a)
			for j, b := range q.Ranked {
				if i == j {
					continue
				}
				bb, _ := Back(b)
				if i < j && ba == 0 && bb > 0 {
					t.Fatalf("trial %d: #%d never back ranks above #%d, back in %d seeds", trial, i+1, j+1, bb)
				}
				v := q.Versus[i][j]
				if ba == 0 && bb > 0 && v.Apart > 0 {
					t.Fatalf("trial %d: #%d never back said sooner than #%d", trial, i+1, j+1)
				}
				if i < j && v.Apart < 0 {
					t.Fatalf("trial %d: #%d ranks above #%d but is measurably later", trial, i+1, j+1)
				}
				if v.Apart != -q.Versus[j][i].Apart {
					t.Fatalf("trial %d: #%d vs #%d is %d, the reverse %d", trial, i+1, j+1, v.Apart, q.Versus[j][i].Apart)
				}
			}
		}
	}
}

// Removing policies never changes how two others are ordered or compared.
func TestQueueRankIndependentOfIrrelevantAlternatives(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		aggs := randomQueueCells(rng, 3+rng.IntN(10), 2+rng.IntN(6))
		full := RankQueueing(aggs)[0]
		pos := map[*Aggregate]int{}
		for i, a := range full.Ranked {
			pos[a] = i
		}
		for range 5 {
			var sub []*Aggregate
			for _, a := range aggs {
				if rng.IntN(2) == 0 {
					sub = append(sub, a)
				}
			}
			if len(sub) < 2 {
				continue
			}
			rng.Shuffle(len(sub), func(i, j int) { sub[i], sub[j] = sub[j], sub[i] })
			part := RankQueueing(sub)[0]
			for i, a := range part.Ranked {
				for j, b := range part.Ranked {
					if i == j {
						continue
					}
					fi, fj := pos[a], pos[b]
					if (i < j) != (fi < fj) {
						t.Fatalf("trial %d: %s and %s change order when others are removed", trial, a.Cell.Policy, b.Cell.Policy)
					}
					if !sameComparison(part.Versus[i][j], full.Versus[fi][fj]) {
						t.Fatalf("trial %d: %s vs %s: %+v alone, %+v among all", trial, a.Cell.Policy, b.Cell.Policy, part.Versus[i][j], full.Versus[fi][fj])
					}
				}
			}
		}
	}
}

// Two policies back in every seed are tied exactly when the 95 % interval
// of their difference in time back includes 0: paired by seed when they
// hold the same seeds (recomputed here by hand), whatever their order. Two
// policies back in different shares of seeds are apart when Fisher's exact
// test says so; when it cannot tell and one is back in every seed, exactly
// when the paired interval with the other's seeds not back counted at the
// horizon lies above 0 (the one back in every seed sooner).
func TestQueueTiesFollowTheInterval(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	pairs, tied, apart, censored := 0, 0, 0, 0
	for range 300 {
		q := RankQueueing(randomQueueCells(rng, 2+rng.IntN(8), 3+rng.IntN(5)))[0]
		for i, a := range q.Ranked {
			for j, b := range q.Ranked {
				if i >= j {
					continue
				}
				v := q.Versus[i][j]
				ba, na := Back(a)
				bb, nb := Back(b)
				switch {
				case ba == na && bb == nb && slices.Equal(a.Seeds, b.Seeds):
					lo, hi := pairedInterval(a.PerSeed(Recovered), b.PerSeed(Recovered))
					want := 0
					if lo > 0 || hi < 0 {
						want = +1 // b − a above 0: a sooner; a ranks above b, so never −1
					}
					if v.Apart != want {
						t.Fatalf("%s vs %s: interval [%g, %g] of b − a, Apart %d", a.Cell.Policy, b.Cell.Policy, lo, hi, v.Apart)
					}
					pairs++
					if want == 0 {
						tied++
					} else {
						apart++
					}
				case ba*nb != bb*na:
					want := FinishApart(a.Summary(Recovered), b.Summary(Recovered))
					if want == 0 && (ba == na || bb == nb) && !slices.Equal(a.Seeds, b.Seeds) {
						continue // Welch's or paired on a subset: not recomputed here
					}
					if want == 0 && (ba == na || bb == nb) {
						at := func(x []float64) []float64 {
							w := (a.Cell.Scenario.Horizon - a.Cell.Scenario.RecoverAt).Seconds()
							for i := range x {
								if math.IsNaN(x[i]) {
									x[i] = w
								}
							}
							return x
						}
						lo, _ := pairedInterval(at(slices.Clone(a.PerSeed(Recovered))), at(slices.Clone(b.PerSeed(Recovered))))
						if lo > 0 && ba == na { // a ranks first: more seeds back
							want = +1
							censored++
						}
					}
					if v.Apart != want {
						t.Fatalf("%s vs %s: %d/%d and %d/%d back, Apart %d, want %d", a.Cell.Policy, b.Cell.Policy, ba, na, bb, nb, v.Apart, want)
					}
				}
			}
		}
	}
	if tied == 0 || apart == 0 || censored == 0 {
		t.Fatalf("the random cells exercise too little: %d pairs, %d tied, %d apart, %d apart by censored times", pairs, tied, apart, censored)
	}
}

// A policy back in 4 of 5 seeds at 290 s is not to be told apart from one
// back in 5 of 5 at 0 s by the seeds back (Fisher's p = 1), but it is by
// the times: the one back in every seed is sooner, whatever the seed not
// back would have done past the horizon, and only it is bold (First).
// Before, the two were "not apart" and both bold.
func TestQueueSeedsBackTiedTimesApart(t *testing.T) {
	t.Parallel()
	sc := queueScenario()
	sc.Horizon = sc.RecoverAt + 300*time.Second
	var recs []Record
	for i, back := range [][]float64{{0, 0, 0, 0, 0}, {290, 290, math.NaN(), 290, 290}, {0, 10, math.NaN(), 0, 10}} {
		c := grid.Cell{Scenario: sc, Policy: sim.Policy{Kind: sim.FullJitter, Base: time.Duration(1+i) * time.Millisecond, Multiplier: 2, Cap: 30 * time.Second}}
		for s, v := range back {
			r := grid.Run{Cell: c, Seed: uint32(s + 1)}
			res := sim.Result{Clients: 1, Offered: 1000, Goodput: 900, Sent: 1000, BusyMS: 1e6}
			if !math.IsNaN(v) {
				res.Recovered = sim.Milestone{At: sc.RecoverAt + time.Duration(v*1e9), Reached: true}
			}
			recs = append(recs, Record{Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Cell: c, Result: res}})
		}
	}
	q := RankQueueing(QueueAggregates(recs))[0]
	names := func(as []*Aggregate) []time.Duration {
		var out []time.Duration
		for _, a := range as {
			out = append(out, a.Cell.Policy.Base)
		}
		return out
	}
	if got, want := names(q.Ranked), []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}; !slices.Equal(got, want) {
		t.Fatalf("ranked %v, want %v", got, want)
	}
	if v := q.Versus[0][2]; v.Apart != +1 || !v.Censored || !(v.Lo > 0) {
		t.Errorf("5 of 5 at 0 s vs 4 of 5 at 290 s: %+v, want apart by the times (seeds not back at the horizon)", v)
	}
	// 4 of 5 at 0–10 s: its seed not back counted at 300 s does not set the
	// 5 of 5 apart (a paired interval of [−10, 300] includes 0).
	if v := q.Versus[0][1]; v.Apart != 0 || !v.Censored {
		t.Errorf("5 of 5 at 0 s vs 4 of 5 at 0–10 s: %+v, want not apart", v)
	}
	if got, want := names(q.First()), []time.Duration{time.Millisecond, 3 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("first (bold): %v, want %v", got, want)
	}
}

// pairedInterval is the Student-t 95 % interval of the mean of y − x;
// NaN below 2 pairs.
func pairedInterval(x, y []float64) (lo, hi float64) {
	if len(x) < 2 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(x))
	m, ss := 0.0, 0.0
	for i := range x {
		m += y[i] - x[i]
	}
	m /= n
	for i := range x {
		d := y[i] - x[i] - m
		ss += d * d
	}
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975) * math.Sqrt(ss/(n-1)/n)
	return m - half, m + half
}

// sameComparison is == with NaN equal to NaN.
func sameComparison(a, b RecoveryComparison) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	ok := same(a.Diff, b.Diff) && same(a.Lo, b.Lo) && same(a.Hi, b.Hi)
	a.Diff, a.Lo, a.Hi, b.Diff, b.Lo, b.Hi = 0, 0, 0, 0, 0, 0
	return ok && a == b
}
