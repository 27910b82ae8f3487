package analysis

import (
	"slices"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/sim"
)

// A brownout (sim/brownout.go) is judged on what every run has: the share
// of its logical requests (the cohort's clients and the open-loop
// requests) that succeeded by the horizon, and the load amplification,
// attempts sent per logical request. Both are computed from the runs'
// counts (succeeded, offered_succeeded, sent, clients, offered) by the
// functions sim.Result's methods use, so that a part written before the
// dataset stored success_rate and amplification reads the same values.
var (
	// SuccessRate is sim.Result.SuccessRate: a share, with a proportion's
	// interval (dataset.IsShare).
	SuccessRate = Metric{Key: dataset.ColSuccessRate, Title: "success rate", Unit: "share of logical requests",
		get: func(r *dataset.Record) (float64, bool) {
			return successRate(int64(r.Result.Succeeded), r.Result.OfferedSucceeded, int64(r.Cell.Scenario.Clients), r.Result.Offered)
		},
		reads: []string{dataset.ColSucceeded, dataset.ColOfferedSucceeded, dataset.ColOffered},
		cols:  []string{dataset.ColSucceeded, dataset.ColOfferedSucceeded, paramClients, dataset.ColOffered},
		row: func(b dataset.Batch, i int) (float64, bool) {
			return successRate(b.Int64s(dataset.ColSucceeded).Value(i), b.Int64s(dataset.ColOfferedSucceeded).Value(i),
				b.Int64s(paramClients).Value(i), b.Int64s(dataset.ColOffered).Value(i))
		}, applies: inBrownout}
	// Amplification is sim.Result.Amplification.
	Amplification = Metric{Key: dataset.ColAmplification, Title: "load amplification", Unit: "attempts per logical request",
		get: func(r *dataset.Record) (float64, bool) {
			return amplification(r.Result.Sent, int64(r.Cell.Scenario.Clients), r.Result.Offered)
		},
		reads: []string{dataset.ColSent, dataset.ColOffered},
		cols:  []string{dataset.ColSent, paramClients, dataset.ColOffered},
		row: func(b dataset.Batch, i int) (float64, bool) {
			return amplification(b.Int64s(dataset.ColSent).Value(i), b.Int64s(paramClients).Value(i), b.Int64s(dataset.ColOffered).Value(i))
		}, applies: inBrownout}
)

// inBrownout says which cells `sweep assert`, `compare` and `cells` hold
// the brownout's metrics for (Metric.applies): those whose server fails a
// share of what it serves. BrownoutAggregates summarises them for every
// cell it is given (a brownout's share-0 cells too).
func inBrownout(sc sim.Scenario) bool { return sc.FailShare > 0 }

// BrownoutMetrics are the success rate and the load amplification, which
// every run has; AllMetrics holds them after QueueMetrics, for the cells in
// a brownout (inBrownout).
var BrownoutMetrics = []Metric{SuccessRate, Amplification}

func successRate(succeeded, offeredSucceeded, clients, offered int64) (float64, bool) {
	r := sim.Result{Clients: int(clients), Succeeded: int(succeeded), OfferedSucceeded: offeredSucceeded, Offered: offered}
	return r.SuccessRate(), r.Logical() > 0
}

func amplification(sent, clients, offered int64) (float64, bool) {
	r := sim.Result{Clients: int(clients), Sent: sent, Offered: offered}
	return r.Amplification(), r.Logical() > 0
}

// BrownoutAggregates groups the runs as Aggregates does, summarised on
// Metrics and BrownoutMetrics.
func BrownoutAggregates(recs []Record) []*Aggregate {
	ps := make([]*Record, len(recs))
	for i := range recs {
		ps[i] = &recs[i]
	}
	return aggregatesOf(ps, append(Metrics[:len(Metrics):len(Metrics)], BrownoutMetrics...))
}

// BrownoutScenario is one server measured under brownouts of several
// failure shares: the cells of each policy at each share. A cell without
// a brownout (FailShare 0) of the same scenario belongs to it: the
// share 0 of its axis.
type BrownoutScenario struct {
	Scenario sim.Scenario   // the scenario with FailShare 0
	Shares   []float64      // ascending
	Policies []sim.Policy   // in the order first met
	Cells    [][]*Aggregate // Cells[i][j]: Policies[i] at Shares[j]; nil where not measured
}

// brownoutKey is a cell's scenario without its failure share: the
// scenario a brownout sweep varies the share of.
func brownoutKey(sc sim.Scenario) sim.Scenario {
	sc.FailShare = 0
	return sc
}

// IsBrownout reports which of aggs belong to a BrownoutScenario: single-
// policy cells without a chain (a chain's failure share is its section's:
// LayerScenarios) whose scenario, but for its failure share, is that of a
// cell with a FailShare > 0.
func IsBrownout(aggs []*Aggregate) func(*Aggregate) bool {
	keys := map[sim.Scenario]bool{}
	for _, a := range aggs {
		if sc := a.Cell.Scenario; sc.FailShare > 0 && !a.Cell.Mixed() && !a.Cell.Chained() {
			keys[brownoutKey(sc)] = true
		}
	}
	return func(a *Aggregate) bool {
		return !a.Cell.Mixed() && !a.Cell.Chained() && keys[brownoutKey(a.Cell.Scenario)]
	}
}

// Brownouts groups the brownout cells of aggs (IsBrownout; summarised on
// BrownoutMetrics: BrownoutAggregates) by scenario, in the order first
// met.
func Brownouts(aggs []*Aggregate) []BrownoutScenario {
	in := IsBrownout(aggs)
	var out []BrownoutScenario
	at := map[sim.Scenario]int{}
	for _, a := range aggs {
		if !in(a) {
			continue
		}
		k := brownoutKey(a.Cell.Scenario)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, BrownoutScenario{Scenario: k})
		}
		b := &out[i]
		if !slices.Contains(b.Shares, a.Cell.Scenario.FailShare) {
			b.Shares = append(b.Shares, a.Cell.Scenario.FailShare)
		}
		if !slices.Contains(b.Policies, a.Cell.Policy) {
			b.Policies = append(b.Policies, a.Cell.Policy)
		}
	}
	for i := range out {
		b := &out[i]
		slices.Sort(b.Shares)
		b.Cells = make([][]*Aggregate, len(b.Policies))
		for pi := range b.Cells {
			b.Cells[pi] = make([]*Aggregate, len(b.Shares))
		}
	}
	for _, a := range aggs {
		if !in(a) {
			continue
		}
		b := &out[at[brownoutKey(a.Cell.Scenario)]]
		b.Cells[slices.Index(b.Policies, a.Cell.Policy)][slices.Index(b.Shares, a.Cell.Scenario.FailShare)] = a
	}
	return out
}

// NoRetries reports whether p never retries: at most one attempt, the
// baseline a brownout's policies are held to.
func NoRetries(p sim.Policy) bool { return p.MaxAttempts == 1 }

// Baseline is the index of b's policy that never retries (NoRetries), or
// -1 when b has none.
func (b BrownoutScenario) Baseline() int {
	return slices.IndexFunc(b.Policies, NoRetries)
}

// BrownoutVerdict is what the data says of one policy of a brownout
// scenario.
type BrownoutVerdict struct {
	Policy int // index in BrownoutScenario.Policies
	// Below is the index of the least share at which the policy's success
	// rate is below the baseline's (NoRetries) in every seed, its best
	// seed below the baseline's worst: retrying then does worse than not
	// retrying. -1: at no share measured, or no baseline.
	Below int
	// MaxAmp is the policy's greatest mean load amplification over the
	// shares, at index MaxAt.
	MaxAmp float64
	MaxAt  int
}

// Verdicts judges each policy of b but the baseline, in b's order.
func (b BrownoutScenario) Verdicts() []BrownoutVerdict {
	base := b.Baseline()
	var out []BrownoutVerdict
	for i := range b.Policies {
		if i == base {
			continue
		}
		v := BrownoutVerdict{Policy: i, Below: -1, MaxAt: -1}
		for j, a := range b.Cells[i] {
			if a == nil {
				continue
			}
			if m := a.Summary(Amplification).Mean; v.MaxAt < 0 || m > v.MaxAmp {
				v.MaxAmp, v.MaxAt = m, j
			}
			if base < 0 || v.Below >= 0 || b.Cells[base][j] == nil {
				continue
			}
			if s, o := a.Summary(SuccessRate), b.Cells[base][j].Summary(SuccessRate); s.N > 0 && o.N > 0 && s.Max < o.Min {
				v.Below = j
			}
		}
		out = append(out, v)
	}
	return out
}
