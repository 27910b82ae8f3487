package live

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/herdsweep/herdsweep/sim"
)

// The ways CompareRuns judges runs.
const (
	// SameSeed: the model draws no jitter (or the client is sim's own,
	// sim:NAME, drawing from sim's stream of the seed), so each run must be
	// sim's run of its seed (the seed of its first send times), tick for
	// tick.
	SameSeed = "same seed"
	// Distribution: the library draws its jitter from a generator of its
	// own, which no seed of ours reaches, so the runs are a sample, set
	// against sim's runs over other seeds by a permutation test.
	Distribution = "distribution"
)

// MetricArrivals is the per-tick arrivals, judged as one more quantity by
// the same-seed method.
const MetricArrivals = "arrivals per tick"

// More metrics CompareRuns judges: a virtual run keeps sim's clock during
// the outage too, so the requests sent before recovery are evidence as
// well (a retryer that gives up within the outage sends nothing after it).
const (
	MSentAll  = "sent in all"
	MMeanSend = "mean send time"
)

// runMetrics are the quantities CompareRuns judges, in their order:
// metrics, then the whole run's requests and their mean tick time.
var runMetrics = append(slices.Clip(metrics),
	metric{MSentAll, "requests", func(_ sim.Scenario, r sim.Result) float64 { return float64(r.Sent) }},
	metric{MMeanSend, "s", nil}) // from the arrivals: runValues

// runValues are a run's runMetrics, from its result and its arrivals per
// tick.
func runValues[T int | int32](sc sim.Scenario, r sim.Result, arrivals []T) []float64 {
	v := make([]float64, 0, len(runMetrics))
	for _, mt := range runMetrics[:len(runMetrics)-1] {
		v = append(v, mt.f(sc, r))
	}
	n, sum := 0.0, 0.0
	for k, a := range arrivals {
		n += float64(a)
		sum += float64(a) * float64(k)
	}
	mean := math.Inf(1)
	if n > 0 {
		mean = sum / n * sc.Tick.Seconds()
	}
	return append(v, mean)
}

// RunsMetric is one quantity over the runs and over the simulated seeds.
type RunsMetric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Live: the smallest, median and largest value over the runs. Sim: the
	// 5th, 50th and 95th percentiles over the simulated runs
	// (Distribution), or the smallest, median and largest over the
	// simulated runs of the runs' own seeds (SameSeed). Never is +Inf
	// (null in JSON). None for the arrivals per tick, a curve.
	Live *Band `json:"live,omitempty"`
	Sim  *Band `json:"simulated,omitempty"`
	// D is the distance between the runs and the simulated runs
	// (Distribution): for a quantity, the Kolmogorov–Smirnov distance (the
	// largest gap between their empirical distribution functions, 0 to
	// 1); for the arrivals per tick, the weighted distance between the two
	// mean curves (curveDistance).
	D float64 `json:"distance,omitempty"`
	// P is D's own p-value in the permutation test (Distribution), before
	// the test combines the quantities.
	P float64 `json:"p_value,omitempty"`
	// Differ counts the runs whose value is not sim's for their seed
	// (SameSeed).
	Differ int `json:"runs_differing,omitempty"`
}

// RunsComparison is several virtual runs of one driver on one scenario set
// against the simulator, with one verdict by the rule a single live run is
// judged by (decide): inconclusive when a run's evidence does not hold,
// else disagrees when a quantity differs, else agrees.
type RunsComparison struct {
	Driver   string   `json:"driver"`
	Module   string   `json:"module"`
	Name     string   `json:"name"`
	Policy   string   `json:"policy"`
	Scenario string   `json:"scenario"`
	Down     DownMode `json:"down"`
	Method   string   `json:"method"`
	Runs     int      `json:"runs"`
	// Seeds: the simulated runs the sample is set against (Distribution).
	Seeds int `json:"simulated_seeds,omitempty"`
	// Alpha is the test's false-alarm rate: an exact model is called
	// different with probability at most Alpha (Distribution).
	Alpha        float64      `json:"alpha,omitempty"`
	Permutations int          `json:"permutations,omitempty"`
	P            float64      `json:"p_value,omitempty"`
	Metrics      []RunsMetric `json:"metrics"`
	Disagree     []string     `json:"disagree"`
	Degraded     []string     `json:"inconclusive_because,omitempty"`
	Verdict      Verdict      `json:"verdict"`
}

// DistributionTest is how a Distribution comparison decides.
type DistributionTest struct {
	// Seeds: the simulated seeds the runs are set against; none of them
	// may be a run's own seed.
	Seeds []uint32
	// Alpha: the false-alarm rate (0.001: one exact model in 1,000 is
	// called different).
	Alpha float64
	// Permutations: how many relabellings the p-value counts; at least
	// 1/Alpha − 1, so that a p-value as small as Alpha can be seen.
	Permutations int
}

// CompareRuns sets the virtual runs ms (one driver, one scenario and down
// mode, each run its own Config.Seed) against p: seed for seed when p
// draws no jitter or the driver is sim's own (SameSeed), else as a
// distribution (test).
func CompareRuns(ms []*Measurement, p sim.Policy, test DistributionTest) (*RunsComparison, error) {
	if len(ms) == 0 {
		return nil, errors.New("live: no runs to compare")
	}
	cfg := ms[0].Config
	for _, m := range ms[1:] {
		if m.Config.Scenario != cfg.Scenario || m.Config.Driver.Name != cfg.Driver.Name || m.Config.Down != cfg.Down {
			return nil, errors.New("live: runs of different drivers or scenarios")
		}
	}
	c := &RunsComparison{Driver: cfg.Driver.Name, Module: cfg.Driver.Module, Name: modelName(p), Policy: p.String(),
		Scenario: describe(cfg.Scenario), Down: cfg.Down, Runs: len(ms), Disagree: []string{}}
	c.Degraded = degradedBySeeds(ms)
	var err error
	if !cfg.Driver.stepped && (p.Jittered() || cfg.Scenario.Server() == sim.QueueingServer) {
		c.Method = Distribution
		err = c.distribution(ms, p, test)
	} else {
		c.Method = SameSeed
		err = c.sameSeed(ms, p)
	}
	if err != nil {
		return nil, err
	}
	c.Verdict = decide(c.Degraded, c.Disagree)
	return c, nil
}

// modelName is the short name of p: its preset, family:KIND for a
// family's defaults, else its spec.
func modelName(p sim.Policy) string {
	switch {
	case p.Preset != "":
		return p.Preset
	case reflect.DeepEqual(p.Normalize(), sim.DefaultPolicy(p.Kind).Normalize()):
		return "family:" + string(p.Kind)
	}
	return p.String()
}

// span is the smallest, median and largest of xs.
func span(xs []float64) *Band {
	s := slices.Sorted(slices.Values(xs))
	return &Band{Lo: s[0], Mid: quantile(s, 0.5), Hi: s[len(s)-1]}
}

// sameSeed sets each run against sim's run of its seed: every metric and
// the arrivals of every tick must be equal.
func (c *RunsComparison) sameSeed(ms []*Measurement, p sim.Policy) error {
	sc := ms[0].Config.Scenario
	var live, simv [][]float64
	differ := make([]int, len(runMetrics)+1)
	var s sim.Sim
	var tl sim.Timeline
	for _, m := range ms {
		r, err := s.Run(sc, p, sim.NewMulberry32(m.Config.Seed), &tl)
		if err != nil {
			return err
		}
		a, b := runValues(sc, m.Result, m.Arrivals), runValues(sc, r, tl.Arrivals)
		live, simv = append(live, a), append(simv, b)
		for j := range a {
			if a[j] != b[j] {
				differ[j]++
			}
		}
		if !sameArrivals(m.Arrivals, tl.Arrivals) {
			differ[len(runMetrics)]++
		}
	}
	for j, mt := range runMetrics {
		c.Metrics = append(c.Metrics, RunsMetric{Name: mt.name, Unit: mt.unit, Live: span(column(live, j)), Sim: span(column(simv, j)), Differ: differ[j]})
	}
	c.Metrics = append(c.Metrics, RunsMetric{Name: MetricArrivals, Unit: "runs", Differ: differ[len(runMetrics)]})
	for _, mt := range c.Metrics {
		if mt.Differ > 0 {
			c.Disagree = append(c.Disagree, mt.Name)
		}
	}
	return nil
}

// sameArrivals reports whether a run's arrivals per tick are sim's, the
// ticks past either's end counting as none.
func sameArrivals(live []int, simulated []int32) bool {
	for k := range max(len(live), len(simulated)) {
		a, b := 0, 0
		if k < len(live) {
			a = live[k]
		}
		if k < len(simulated) {
			b = int(simulated[k])
		}
		if a != b {
			return false
		}
	}
	return true
}

// distribution sets the runs against sim's over test.Seeds by a
// permutation test of the largest Kolmogorov–Smirnov distance over the
// metrics (permutationTest).
func (c *RunsComparison) distribution(ms []*Measurement, p sim.Policy, test DistributionTest) error {
	if err := test.validate(ms); err != nil {
		return err
	}
	sc := ms[0].Config.Scenario
	var live sample
	for _, m := range ms {
		live.values = append(live.values, runValues(sc, m.Result, m.Arrivals))
		live.curves = append(live.curves, floats(m.Arrivals))
	}
	ref, err := simulatedSample(sc, p, test.Seeds)
	if err != nil {
		return err
	}
	pt := permutationTest(live, ref, test.Permutations, permutationSeed)
	c.Seeds, c.Alpha, c.Permutations, c.P = len(test.Seeds), test.Alpha, test.Permutations, pt.p
	for j, mt := range runMetrics {
		simBand := band(column(ref.values, j), 0.05)
		c.Metrics = append(c.Metrics, RunsMetric{Name: mt.name, Unit: mt.unit, Live: span(column(live.values, j)), Sim: &simBand, D: pt.stat[j], P: pt.statP[j]})
	}
	c.Metrics = append(c.Metrics, RunsMetric{Name: MetricArrivals, Unit: "weighted squared requests", D: pt.curveD, P: pt.statP[len(runMetrics)]})
	if pt.p <= test.Alpha {
		for _, mt := range c.Metrics {
			if mt.P <= test.Alpha {
				c.Disagree = append(c.Disagree, mt.Name)
			}
		}
		if len(c.Disagree) == 0 { // the combination rejects, no statistic alone: name the strongest
			i := slices.IndexFunc(c.Metrics, func(m RunsMetric) bool { return m.P == slices.Min(pt.statP) })
			c.Disagree = append(c.Disagree, c.Metrics[i].Name)
		}
	}
	return nil
}

// permutationSeed seeds the relabellings: the same runs get the same
// p-value.
const permutationSeed = 0x5eed

func (t DistributionTest) validate(ms []*Measurement) error {
	if len(t.Seeds) < 2 {
		return fmt.Errorf("live: %d simulated seeds: want at least 2", len(t.Seeds))
	}
	if !(t.Alpha > 0 && t.Alpha < 1) {
		return fmt.Errorf("live: false-alarm rate %g: want one in (0, 1)", t.Alpha)
	}
	if need := int(math.Ceil(1/t.Alpha)) - 1; t.Permutations < need {
		return fmt.Errorf("live: %d permutations cannot show a p-value of %g: want at least %d", t.Permutations, t.Alpha, need)
	}
	if n := t.MinRuns(); len(ms) < n {
		return fmt.Errorf("live: %d runs against %d simulated seeds can never show a p-value of %g (too few ways to split them): want at least %d runs, or more seeds, or a larger --alpha", len(ms), len(t.Seeds), t.Alpha, n)
	}
	own := map[uint32]bool{}
	for _, m := range ms {
		own[m.Config.Seed] = true
	}
	for _, s := range t.Seeds {
		if own[s] {
			return fmt.Errorf("live: simulated seed %d is also a run's seed: the sample and the reference must be independent", s)
		}
	}
	return nil
}

// simulatedSample is sim's runs of sc under p over seeds.
func simulatedSample(sc sim.Scenario, p sim.Policy, seeds []uint32) (sample, error) {
	var out sample
	var s sim.Sim
	var tl sim.Timeline
	for _, seed := range seeds {
		r, err := s.Run(sc, p, sim.NewMulberry32(seed), &tl)
		if err != nil {
			return sample{}, err
		}
		out.values = append(out.values, runValues(sc, r, tl.Arrivals))
		out.curves = append(out.curves, floats(tl.Arrivals))
	}
	return out, nil
}

func floats[T int | int32](xs []T) []float64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return f
}

// RunMetricNames names the quantities CompareRuns judges, in order.
func RunMetricNames() []string {
	n := make([]string, len(runMetrics))
	for j, mt := range runMetrics {
		n[j] = mt.name
	}
	return n
}

func column(rows [][]float64, j int) []float64 {
	c := make([]float64, len(rows))
	for i, r := range rows {
		c[i] = r[j]
	}
	return c
}

// MinRuns is the fewest runs the test can call different at its level
// against its seeds: with R runs and S seeds there are C(R+S, R) ways to
// split the pool; samples apart in everything reach each statistic's
// extreme, which about two splits reach too, and the smallest p-value of
// the statistics (one per quantity and the curve's) reaches its own
// extreme on about twice as many splits as there are statistics. A
// p-value as small as Alpha then needs C(R+S, R) ≥ 4·statistics/Alpha
// (half of Alpha from the relabellings' count, half from those ties).
func (t DistributionTest) MinRuns() int {
	need := math.Log(4 * float64(len(runMetrics)+1) / t.Alpha)
	s := float64(len(t.Seeds))
	for r := 1; ; r++ {
		lc, _ := math.Lgamma(float64(r) + s + 1)
		a, _ := math.Lgamma(float64(r) + 1)
		b, _ := math.Lgamma(s + 1)
		if lc-a-b >= need {
			return r
		}
	}
}

// degradedBySeeds is why the runs' evidence does not hold, each reason once
// with the seeds it holds for.
func degradedBySeeds(ms []*Measurement) []string {
	var order []string
	seeds := map[string][]uint32{}
	for _, m := range ms {
		for _, why := range m.Degraded() {
			if _, ok := seeds[why]; !ok {
				order = append(order, why)
			}
			seeds[why] = append(seeds[why], m.Config.Seed)
		}
	}
	out := make([]string, len(order))
	for i, why := range order {
		label := "seed"
		if len(seeds[why]) > 1 {
			label = "seeds"
		}
		out[i] = fmt.Sprintf("%s %s: %s", label, seedSpan(seeds[why]), why)
	}
	return out
}
