package live

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Band is a simulated percentile band (Comparison.BandPct) and the median
// of one quantity over seeds.
type Band struct {
	Lo  float64 `json:"lo"`
	Mid float64 `json:"median"`
	Hi  float64 `json:"hi"`
}

// MarshalJSON writes the band with null for "never" (+Inf), which JSON
// has no number for.
func (b Band) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Lo  *float64 `json:"lo"`
		Mid *float64 `json:"median"`
		Hi  *float64 `json:"hi"`
	}{finite(b.Lo), finite(b.Mid), finite(b.Hi)})
}

// finite is x, or nil for a value JSON cannot hold (never: +Inf).
func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

// MetricCheck is one metric: the live value against the simulated
// distribution. Unreached milestones count as +Inf (never).
type MetricCheck struct {
	Name string  `json:"name"`
	Unit string  `json:"unit"`
	Live float64 `json:"live"`
	Band Band    `json:"simulated"`
	Rank float64 `json:"rank_pct"` // the live value's percentile rank among the seeds (mid-rank, 0–100)
	// SameSeed is sim's value on the seed whose first send times the live
	// run used: a library without jitter should give it again.
	SameSeed float64 `json:"same_seed"`
	Agree    bool    `json:"agree"` // Lo ≤ live ≤ Hi
}

// MarshalJSON writes the check with null for "never" (+Inf).
func (c MetricCheck) MarshalJSON() ([]byte, error) {
	type plain MetricCheck // without this method
	return json.Marshal(struct {
		plain
		Live     *float64 `json:"live"`
		SameSeed *float64 `json:"same_seed"`
	}{plain(c), finite(c.Live), finite(c.SameSeed)})
}

// Comparison is one live run set against the simulator.
type Comparison struct {
	Driver   string        `json:"driver"`
	Module   string        `json:"module"`
	Name     string        `json:"name"`   // the simulated policy, short: its preset or family:KIND
	Policy   string        `json:"policy"` // the simulated policy with its parameters
	Scenario string        `json:"scenario"`
	Recover  string        `json:"recover"`
	Down     DownMode      `json:"down"`
	Seeds    int           `json:"seeds"`
	BandPct  [2]float64    `json:"band_pct"` // the band's percentiles, e.g. 5 and 95
	Metrics  []MetricCheck `json:"metrics"`
	// Arrivals: per tick, the live count and the simulated band.
	Ticks     []TickBand `json:"ticks"`
	Outside   int        `json:"ticks_outside_band"` // ticks after recovery whose live arrivals lie outside the band
	TicksUp   int        `json:"ticks_after_recovery"`
	Succeeded int        `json:"succeeded"`
	GaveUp    int        `json:"gave_up"`
	Pending   int        `json:"pending"`
	// Disagree names the metrics whose live value lies outside the band
	// (what the metrics alone say, also when the verdict is inconclusive).
	Disagree []string `json:"disagree"`
	// Degraded says why the run's evidence does not hold
	// (Measurement.Degraded); then the verdict is inconclusive.
	Degraded []string `json:"inconclusive_because,omitempty"`
	Verdict  Verdict  `json:"verdict"`
	seed     uint32   // the run's
}

// TickBand is one tick of the arrivals figure.
type TickBand struct {
	T    float64 `json:"t_s"`
	Live int     `json:"live"`
	Band
}

// Metric names, as Comparison.Metrics and Disagree give them.
const (
	MT50  = "t50 after recovery"
	MT99  = "t99 after recovery"
	MSent = "sent after recovery"
	MPeak = "peak arrivals after recovery"
)

// metric is one quantity a comparison judges, read off a run's Result.
type metric struct {
	name, unit string
	f          func(sc sim.Scenario, r sim.Result) float64
}

// metrics are the quantities a live run is judged on, in their order.
var metrics = []metric{
	{MT50, "s", func(sc sim.Scenario, r sim.Result) float64 { return sinceRecovery(sc, r.T50) }},
	{MT99, "s", func(sc sim.Scenario, r sim.Result) float64 { return sinceRecovery(sc, r.T99) }},
	{MSent, "requests", func(_ sim.Scenario, r sim.Result) float64 { return float64(r.SentAfterRecovery) }},
	{MPeak, "per tick", func(_ sim.Scenario, r sim.Result) float64 { return float64(r.PeakArrivals) }},
}

// sinceRecovery is a milestone in seconds after recovery; +Inf (never) when
// it was not reached.
func sinceRecovery(sc sim.Scenario, ms sim.Milestone) float64 {
	if !ms.Reached {
		return math.Inf(1)
	}
	return (ms.At - sc.RecoverAt).Seconds()
}

// Compare simulates m's scenario under p on each seed and sets m against
// it: a metric agrees when its live value lies within the simulated
// band from the tail-th to the (100 − tail)-th percentile. Even an exact
// model puts a single live run of a jittered library outside that band
// 2·tail % of the time for each metric.
func Compare(m *Measurement, p sim.Policy, seeds []uint32, tail float64) (*Comparison, error) {
	sc := m.Config.Scenario
	if len(seeds) < 2 {
		return nil, fmt.Errorf("%d seeds: want at least 2", len(seeds))
	}
	if !(tail >= 0 && tail < 50) {
		return nil, fmt.Errorf("band tail %g %%: want a percentage in [0, 50)", tail)
	}
	q := tail / 100
	var s sim.Sim
	var tl sim.Timeline
	results := make([]sim.Result, len(seeds))
	var perTick [][]float64 // [tick][seed]
	for i, seed := range seeds {
		r, err := s.Run(sc, p, sim.NewMulberry32(seed), &tl)
		if err != nil {
			return nil, err
		}
		results[i] = r
		for len(perTick) < len(tl.Arrivals) {
			perTick = append(perTick, make([]float64, len(seeds)))
		}
		for k, a := range tl.Arrivals {
			perTick[k][i] = float64(a)
		}
	}
	same, err := s.Run(sc, p, sim.NewMulberry32(m.Config.Seed), nil)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Driver: m.Config.Driver.Name, Module: m.Config.Driver.Module, Name: modelName(p), Policy: p.String(),
		Scenario: describe(sc), Recover: sc.RecoverAt.String(), Down: m.Config.Down, Seeds: len(seeds), BandPct: [2]float64{tail, 100 - tail},
		Succeeded: m.Result.Succeeded, GaveUp: m.Result.GaveUp, Pending: m.Result.Pending, seed: m.Config.Seed}
	for _, mt := range metrics {
		xs := make([]float64, len(results))
		for i, r := range results {
			xs[i] = mt.f(sc, r)
		}
		mc := check(mt.name, mt.unit, mt.f(sc, m.Result), xs, q)
		mc.SameSeed = mt.f(sc, same)
		c.Metrics = append(c.Metrics, mc)
		if !mc.Agree {
			c.Disagree = append(c.Disagree, mc.Name)
		}
	}
	c.Degraded = m.Degraded()
	c.Verdict = decide(c.Degraded, c.Disagree)
	firstUp := int((sc.RecoverAt + sc.Tick - 1) / sc.Tick)
	n := max(len(perTick), len(m.Arrivals))
	for k := range n {
		tb := TickBand{T: (time.Duration(k) * sc.Tick).Seconds()}
		if k < len(m.Arrivals) {
			tb.Live = m.Arrivals[k]
		}
		if k < len(perTick) {
			tb.Band = band(perTick[k], q)
		}
		if k >= firstUp && (tb.Live != 0 || tb.Hi != 0) {
			c.TicksUp++
			if float64(tb.Live) < tb.Lo || float64(tb.Live) > tb.Hi {
				c.Outside++
			}
		}
		c.Ticks = append(c.Ticks, tb)
	}
	return c, nil
}

// check places live among xs.
func check(name, unit string, live float64, xs []float64, q float64) MetricCheck {
	s := slices.Sorted(slices.Values(xs))
	b := Band{quantile(s, q), quantile(s, 0.5), quantile(s, 1-q)}
	return MetricCheck{Name: name, Unit: unit, Live: live, Band: b, Rank: rank(live, s), Agree: live >= b.Lo && live <= b.Hi}
}

// rank is x's percentile rank among sorted (mid-rank: ties count half).
func rank(x float64, sorted []float64) float64 {
	below, _ := slices.BinarySearch(sorted, x)                             // the first ≥ x
	upto, _ := slices.BinarySearchFunc(sorted, x, func(e, t float64) int { // the first > x
		if e <= t {
			return -1
		}
		return 1
	})
	return 100 * (float64(below) + 0.5*float64(upto-below)) / float64(len(sorted))
}

// band is the q-th, 50th and (1−q)-th quantiles of xs (linear between order
// statistics; +Inf stays +Inf).
func band(xs []float64, q float64) Band {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Band{quantile(s, q), quantile(s, 0.5), quantile(s, 1-q)}
}

func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, len(sorted)-1)
	a, b := sorted[lo], sorted[hi]
	if a == b || math.IsInf(b, 1) {
		if h == float64(lo) {
			return a
		}
		return b
	}
	return a + (h-float64(lo))*(b-a)
}

func describe(sc sim.Scenario) string {
	server := fmt.Sprintf("capacity %g/s (%d per tick)", sc.Capacity, int(math.Floor(sc.Capacity*sc.Tick.Seconds())))
	if sc.Server() == sim.QueueingServer {
		wait := "for ever"
		if sc.Timeout > 0 {
			wait = sc.Timeout.String()
		}
		server = fmt.Sprintf("a queueing server of %d workers, %s service of %v mean, clients waiting %s", sc.Concurrency, sc.Service, sc.ServiceTime, wait)
	}
	s := fmt.Sprintf("%d clients, tick %v, recovery at %v, %s, spread %v, horizon %v",
		sc.Clients, sc.Tick, sc.RecoverAt, server, sc.Spread, sc.Horizon)
	if sc.RetryAfter > 0 {
		s += fmt.Sprintf(", Retry-After %v", sc.RetryAfter)
	}
	return s
}
