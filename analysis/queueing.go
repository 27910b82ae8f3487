package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/sim"
)

// A queueing server (Scenario.Concurrency > 0) is judged on its own terms:
// not on when 99 % of a cohort is served (its cohort may be one client) but
// on when the whole system, open-loop traffic included, is back to its
// steady state, and on what the server did meanwhile.

// The metrics of a queueing server's runs, defined once here: the report,
// `sweep assert`, `sweep compare`, `sweep cells` and their tests ask for
// them by these values. A metric of several columns computes its value by
// one function, from a record (get) or from a scanned row (row).
var (
	// Recovered is the time after recovery until the run is back to its
	// own steady state (sim.Result.BackAfter, defined in sim/recovery.go:
	// the clients the outage left waiting answered or given up, the queue
	// at its ordinary length, not stuck); a run that never gets there has
	// no value (not finished). Only cells with a steady state to return to
	// have it (SteadyState).
	Recovered = Metric{Key: dataset.ColRecoveredAfter, Title: "back to steady state", Unit: "s after recovery",
		get:   afterRecovery(func(r *sim.Result) sim.Milestone { return r.Recovered }),
		reads: []string{dataset.ColRecoveredAfter}, applies: func(sc sim.Scenario) bool { return queueing(sc) && SteadyState(sc) }}
	// GoodputShare is the requests answered within their client's timeout
	// over the demand: the new requests, open-loop and the cohort's.
	GoodputShare = Metric{Key: "goodput_share", Title: "goodput", Unit: "share of demand",
		get: func(r *dataset.Record) (float64, bool) {
			return goodputShare(r.Result.Goodput, r.Result.Offered, int64(r.Cell.Scenario.Clients))
		},
		reads: []string{dataset.ColGoodput, dataset.ColOffered}, cols: []string{dataset.ColGoodput, dataset.ColOffered, paramClients},
		row: func(b dataset.Batch, i int) (float64, bool) {
			return goodputShare(b.Int64s(dataset.ColGoodput).Value(i), b.Int64s(dataset.ColOffered).Value(i), b.Int64s(paramClients).Value(i))
		}, applies: queueing}
	// TimedOutShare is the share of the requests sent that were answered
	// after their client had stopped waiting.
	TimedOutShare = Metric{Key: "timed_out_share", Title: "timed out", Unit: "share of requests sent",
		get:   func(r *dataset.Record) (float64, bool) { return timedOutShare(r.Result.TimedOut, r.Result.Sent) },
		reads: []string{dataset.ColTimedOut, dataset.ColSent}, cols: []string{dataset.ColTimedOut, dataset.ColSent},
		row: func(b dataset.Batch, i int) (float64, bool) {
			return timedOutShare(b.Int64s(dataset.ColTimedOut).Value(i), b.Int64s(dataset.ColSent).Value(i))
		}, applies: queueing}
	// WastedShare is the share of the server's time spent on requests
	// whose client had stopped waiting (sim.Result.WastedFraction).
	WastedShare = Metric{Key: "wasted_share", Title: "wasted work", Unit: "share of server time",
		get:   func(r *dataset.Record) (float64, bool) { return r.Result.WastedFraction(), true },
		reads: []string{dataset.ColWasted, dataset.ColBusy}, cols: []string{dataset.ColWasted, dataset.ColBusy},
		row: func(b dataset.Batch, i int) (float64, bool) {
			res := sim.Result{WastedMS: b.Float64s(dataset.ColWasted).Value(i), BusyMS: b.Float64s(dataset.ColBusy).Value(i)}
			return res.WastedFraction(), true
		}, applies: queueing}
	// LatencyP99 is the 99th percentile latency of the requests answered
	// in time; no value when none was.
	LatencyP99 = Metric{Key: dataset.ColLatencyP99, Title: "p99 latency", Unit: "ms, requests answered in time",
		get:   func(r *dataset.Record) (float64, bool) { return latencyOf(r.Result.LatencyP99, r.Result.Goodput) },
		reads: []string{dataset.ColLatencyP99, dataset.ColGoodput}, cols: []string{dataset.ColLatencyP99, dataset.ColGoodput},
		row: func(b dataset.Batch, i int) (float64, bool) {
			return latencyOf(b.Float64s(dataset.ColLatencyP99).Value(i), b.Int64s(dataset.ColGoodput).Value(i))
		}, applies: queueing}
)

// paramClients is the clients parameter's column: the cohort, part of a
// queueing server's demand.
const paramClients = "clients"

// appliesParams are the parameter columns Metric.applies reads: Scan
// reads them for a cell's first run, to know which metrics it has.
var appliesParams = []string{"concurrency", "arrival_rps", "fail_share"}

func goodputShare(goodput, offered, clients int64) (float64, bool) {
	d := offered + clients
	if d == 0 {
		return 0, false
	}
	return float64(goodput) / float64(d), true
}

func timedOutShare(timedOut, sent int64) (float64, bool) {
	if sent == 0 {
		return 0, true
	}
	return float64(timedOut) / float64(sent), true
}

// latencyOf is a latency of the requests answered in time: none when none
// was.
func latencyOf(ms float64, goodput int64) (float64, bool) { return ms, goodput > 0 }

// QueueMetrics are the metrics a queueing cell is summarised on besides
// Metrics, in report order; only queueing cells have them (Metric.For).
var QueueMetrics = []Metric{Recovered, GoodputShare, TimedOutShare, WastedShare, LatencyP99}

// queueing reports whether sc's server is a queueing server.
func queueing(sc sim.Scenario) bool { return sc.Server() == sim.QueueingServer }

// Queueing reports whether a cell's server is a queueing server.
func Queueing(a *Aggregate) bool { return queueing(a.Cell.Scenario) }

// QueueAggregates groups the runs of queueing cells as Aggregates does,
// summarised on Metrics and QueueMetrics; other cells' runs are left out.
func QueueAggregates(recs []Record) []*Aggregate {
	var ps []*Record
	for i := range recs {
		if queueing(recs[i].Cell.Scenario) {
			ps = append(ps, &recs[i])
		}
	}
	return aggregatesOf(ps, slices.Concat(Metrics, QueueMetrics))
}

// LoadRunsOf reads whole the runs of the given cells, from the parts of the
// given sweeps only (a cell's aggregate says which sweeps hold it), each
// (cell, seed) once as Scan counts it.
func LoadRunsOf(d dataset.Folder, sweeps []string, cells map[string]bool) ([]Record, error) {
	fsys, format := d.FS, formatOf(d)
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	var out []Record
	seen := map[runID]bool{} // a run is its cell and seed, as in LoadCells
	for _, part := range l.Runs {
		if !slices.Contains(sweeps, part.Sweep) {
			continue
		}
		p := part.Path()
		recs, _, err := readParquet(fsys, p, format.ReadRuns)
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		for _, r := range recs {
			k := runID{r.CellKey, r.Seed}
			if !cells[r.CellKey] || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, Record{Record: r, Sweep: part.Sweep})
		}
	}
	return out, nil
}

// QueueCapacity is a queueing server's capacity, Concurrency over the mean
// service time (sim.Scenario.MeanService: a lognormal's is its median's
// e^(σ²/2)), in requests/s; false when the server only counts.
func QueueCapacity(sc sim.Scenario) (float64, bool) {
	m := sc.MeanService()
	if m <= 0 {
		return 0, false
	}
	return float64(sc.Concurrency) / m.Seconds(), true
}

// QueueLoad is the share of a queueing server's capacity its open-loop
// traffic asks for, the least and the most during the run (they differ
// only with a daily curve: sim.Scenario.ArrivalRates); false when
// QueueCapacity has none.
func QueueLoad(sc sim.Scenario) (lo, hi float64, ok bool) {
	c, ok := QueueCapacity(sc)
	if !ok {
		return 0, 0, false
	}
	rlo, rhi := sc.ArrivalRates()
	return rlo / c, rhi / c, true
}

// Back counts the seeds in which a's runs returned to steady state, of all
// its seeds.
func Back(a *Aggregate) (back, of int) {
	s := a.Summary(Recovered)
	return s.N, s.N + s.Unfinished
}

// RecoveryComparison is how two policies of one queueing scenario stand on
// the return to steady state.
type RecoveryComparison struct {
	// Apart is +1 when A returns measurably sooner than B (or in clearly
	// more seeds), −1 when later (or in clearly fewer), 0 when the data
	// cannot tell them apart.
	Apart int
	// BySeeds: the seeds that came back differ, judged by FinishApart
	// (Fisher's exact test); else, both back in every seed, by the 95 %
	// interval of B − A in seconds, paired by seed when they share seeds
	// (as `sweep compare` pairs), else Welch's: Diff, Lo, Hi.
	BySeeds bool
	// Censored: the seeds back differ, Fisher's test cannot tell them
	// apart, and one of the two came back in every seed: the times decide
	// too (Diff, Lo, Hi), each seed of the other not back counted as back at
	// the horizon, the soonest it could have been. Only the one back in
	// every seed can come out sooner: the other's seeds not back have no
	// time to bound it from above. (4 of 5 seeds back at 290 s is thus
	// apart from 5 of 5 at 0 s, though Fisher's p is 1.)
	Censored   bool
	Paired     bool
	Diff       float64
	Lo, Hi     float64 // NaN without an interval (fewer than 2 seeds)
	BothNever  bool    // neither came back in any seed
	PartlyBack bool    // the same seeds back, not all of them: times of some seeds alone are not compared
}

// CompareRecovery compares a and b, two policies of one scenario. It reads
// a and b alone: whatever else was measured, the answer is the same.
func CompareRecovery(a, b *Aggregate) RecoveryComparison {
	c := RecoveryComparison{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	sa, sb := a.Summary(Recovered), b.Summary(Recovered)
	switch {
	case sa.N == 0 && sb.N == 0:
		c.BothNever = true
		return c
	case sa.Unfinished > 0 || sb.Unfinished > 0:
		c.BySeeds = true
		if sa.Unfinished*(sb.N+sb.Unfinished) == sb.Unfinished*(sa.N+sa.Unfinished) {
			c.PartlyBack = true // the same share back
			return c
		}
		if c.Apart = FinishApart(sa, sb); c.Apart != 0 || sa.Unfinished > 0 && sb.Unfinished > 0 {
			return c
		}
		c.Censored = true
		ch := censoredChange(a, b)
		ch.interval(0.975, 0)
		c.Paired, c.Diff, c.Lo, c.Hi = ch.Paired, ch.Diff, ch.Lo, ch.Hi
		if ch.Significant && (ch.Diff > 0) == (sa.Unfinished == 0) { // the one back in every seed is sooner
			c.Apart = +1
			if ch.Diff < 0 {
				c.Apart = -1
			}
		}
		return c
	}
	ia, ib := sharedSeeds(a.Seeds, b.Seeds)
	ch := change(a, b, Recovered, ia, ib)
	ch.interval(0.975, 0)
	c.Paired, c.Diff, c.Lo, c.Hi = ch.Paired, ch.Diff, ch.Lo, ch.Hi
	if ch.Significant {
		c.Apart = +1
		if ch.Diff < 0 {
			c.Apart = -1
		}
	}
	// The order (QueueLess) is by the means over every seed; paired over a
	// subset of seeds the interval could point the other way. The data
	// then do not say which is sooner.
	if c.Apart != 0 && (c.Apart > 0) != queueLess(a, b) {
		c.Apart = 0
	}
	return c
}

// censoredChange is the change in time back from a to b (two policies of
// one scenario) with every seed not back counted as back at the horizon
// (the window after recovery): paired by seed as change pairs, else
// Welch's.
func censoredChange(a, b *Aggregate) Change {
	w := (a.Cell.Scenario.Horizon - a.Cell.Scenario.RecoverAt).Seconds()
	at := func(x []float64) []float64 {
		for i, v := range x {
			if math.IsNaN(v) {
				x[i] = w
			}
		}
		return x
	}
	xa, xb := at(slices.Clone(a.PerSeed(Recovered))), at(slices.Clone(b.PerSeed(Recovered)))
	ch := Change{Old: a, New: b, Metric: Recovered, Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	ia, ib := sharedSeeds(a.Seeds, b.Seeds)
	ch.Shared = len(ia)
	ch.Paired = len(a.Seeds)+len(b.Seeds) == 2*len(ia) || len(ia) >= MinPairedSeeds
	var wa, wb, d welford
	if ch.Paired {
		for j := range ia {
			wa.add(xa[ia[j]])
			wb.add(xb[ib[j]])
			d.add(xb[ib[j]] - xa[ia[j]])
		}
		ch.N = d.n
		if d.n > 0 {
			ch.OldMean, ch.NewMean, ch.Diff = wa.mean, wb.mean, d.mean
			ch.se = math.Sqrt(d.m2 / math.Max(float64(d.n-1), 1) / float64(d.n))
			ch.df = float64(d.n - 1)
		}
		return ch
	}
	for _, v := range xa {
		wa.add(v)
	}
	for _, v := range xb {
		wb.add(v)
	}
	ch.N = min(wa.n, wb.n)
	ch.OldMean, ch.NewMean, ch.Diff = wa.mean, wb.mean, wb.mean-wa.mean
	if wa.n >= 2 && wb.n >= 2 {
		va, vb := wa.m2/float64(wa.n-1)/float64(wa.n), wb.m2/float64(wb.n-1)/float64(wb.n)
		ch.se = math.Sqrt(va + vb)
		if va+vb > 0 {
			ch.df = (va + vb) * (va + vb) / (va*va/float64(wa.n-1) + vb*vb/float64(wb.n-1))
		}
	}
	return ch
}

// queueLess orders two policies of one queueing scenario by what each did
// alone: the share of seeds back to steady state (more first), the mean time
// back over the seeds that came back, goodput (more first), wasted work,
// then the cell's parameters. A policy never back therefore never comes
// before one back in some seed, and the order of two policies does not
// depend on a third.
func queueLess(a, b *Aggregate) bool {
	ba, na := Back(a)
	bb, nb := Back(b)
	if x, y := ba*nb, bb*na; x != y {
		return x > y
	}
	for _, k := range []struct {
		m    Metric
		desc bool
	}{{Recovered, false}, {GoodputShare, true}, {WastedShare, false}} {
		x, y := a.Summary(k.m).Mean, b.Summary(k.m).Mean
		if x != y && !math.IsNaN(x) && !math.IsNaN(y) {
			return (x < y) != k.desc
		}
	}
	return a.Cell.Canonical() < b.Cell.Canonical()
}

// QueueScenario is one queueing scenario (every parameter but the policy)
// with its policies in order (QueueLess) and every pair compared.
type QueueScenario struct {
	Scenario sim.Scenario
	Ranked   []*Aggregate
	// Versus[i][j] compares Ranked[i] with Ranked[j].
	Versus [][]RecoveryComparison
}

// First lists the policies no other is measurably sooner back than: the
// first in order and those back in some seed that the data cannot tell
// apart from it. A policy never back is never among them. Empty when none
// came back in any seed.
func (q *QueueScenario) First() []*Aggregate {
	if len(q.Ranked) == 0 {
		return nil
	}
	if b, _ := Back(q.Ranked[0]); b == 0 {
		return nil
	}
	out := []*Aggregate{q.Ranked[0]}
	for j := 1; j < len(q.Ranked); j++ {
		if b, _ := Back(q.Ranked[j]); b > 0 && q.Versus[0][j].Apart == 0 {
			out = append(out, q.Ranked[j])
		}
	}
	return out
}

// Tied lists the positions of the policies the data cannot tell apart from
// Ranked[i] on the return to steady state.
func (q *QueueScenario) Tied(i int) []int {
	var out []int
	for j := range q.Ranked {
		if j != i && q.Versus[i][j].Apart == 0 {
			out = append(out, j)
		}
	}
	return out
}

// SteadyState reports whether a queueing scenario has a steady state to
// return to: open-loop traffic (sim.HasSteadyState). Without it
// recovered_after_s is never set.
func SteadyState(sc sim.Scenario) bool { return sim.HasSteadyState(sc) }

// RankQueueing groups queueing aggregates by scenario and ranks each
// scenario's policies; cells without a steady state (SteadyState) are left
// out. Scenarios come grouped by server (SameServer), then
// by load (arrival rate), then by outage length.
func RankQueueing(aggs []*Aggregate) []QueueScenario {
	var out []QueueScenario
	for _, a := range aggs {
		if !Queueing(a) || a.Cell.Mixed() || !SteadyState(a.Cell.Scenario) {
			continue
		}
		i := slices.IndexFunc(out, func(q QueueScenario) bool { return q.Scenario == a.Cell.Scenario })
		if i < 0 {
			out = append(out, QueueScenario{Scenario: a.Cell.Scenario})
			i = len(out) - 1
		}
		out[i].Ranked = append(out[i].Ranked, a)
	}
	for i := range out {
		q := &out[i]
		slices.SortStableFunc(q.Ranked, func(a, b *Aggregate) int {
			switch {
			case queueLess(a, b):
				return -1
			case queueLess(b, a):
				return 1
			}
			return 0
		})
		q.Versus = make([][]RecoveryComparison, len(q.Ranked))
		for x, a := range q.Ranked {
			q.Versus[x] = make([]RecoveryComparison, len(q.Ranked))
			for y, b := range q.Ranked {
				if x != y {
					q.Versus[x][y] = CompareRecovery(a, b)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b QueueScenario) int {
		x, y := a.Scenario, b.Scenario
		if c := strings.Compare(serverKey(x), serverKey(y)); c != 0 {
			return c
		}
		if x.ArrivalRate != y.ArrivalRate {
			return cmp.Compare(x.ArrivalRate, y.ArrivalRate)
		}
		return cmp.Compare(x.RecoverAt-x.OutageStart, y.RecoverAt-y.OutageStart)
	})
	return out
}

// serverKey is a queueing scenario without its load and outage: the
// server, the clients' timeout and the window after recovery.
func serverKey(sc sim.Scenario) string {
	w := sc.Horizon - sc.RecoverAt
	sc.ArrivalRate, sc.OutageStart, sc.RecoverAt, sc.Horizon = 0, 0, 0, w
	return fmt.Sprintf("%+v", sc)
}

// SameServer reports whether two queueing scenarios differ only in their
// load and outage.
func SameServer(a, b sim.Scenario) bool { return serverKey(a) == serverKey(b) }
