package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
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
		c := experiments.Cell{Scenario: sc, Policy: p}
		mode := rng.IntN(6) // 0: never back, 1: back in some seeds, else every seed
		level := 10 * float64(rng.IntN(8))
		grid := rng.IntN(2) == 0
		from := uint32(1)
		if rng.IntN(5) == 0 {
			from = 1 + uint32(rng.IntN(3))
		}
		goodput := 0.1 + 0.9*rng.Float64()
		for s := from; s <= uint32(seeds); s++ {
			r := experiments.Run{Cell: c, Seed: s}
			offered := int64(80000)
			res := sim.Result{Clients: 1, Offered: offered, Goodput: int64(goodput * float64(offered)), Sent: 2 * offered, TimedOut: offered / 4, BusyMS: 1e6, WastedMS: 1e6 * rng.Float64()}
			back := mode >= 2 || (mode == 1 && rng.IntN(2) == 0)
			if back {
				v := level + 10*float64(rng.IntN(3))
				if !grid {
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
// policies back in different shares of seeds are apart exactly when
// Fisher's exact test says so.
func TestQueueTiesFollowTheInterval(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	pairs, tied, apart := 0, 0, 0
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
					if want := FinishApart(a.Summary(Recovered), b.Summary(Recovered)); v.Apart != want {
						t.Fatalf("%s vs %s: %d/%d and %d/%d back, Apart %d, Fisher %d", a.Cell.Policy, b.Cell.Policy, ba, na, bb, nb, v.Apart, want)
					}
				}
			}
		}
	}
	if tied == 0 || apart == 0 {
		t.Fatalf("the random cells exercise too little: %d pairs, %d tied, %d apart", pairs, tied, apart)
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
