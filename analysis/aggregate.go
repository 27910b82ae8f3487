package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// Metric is a per-run number the analysis summarises.
type Metric struct {
	Key   string // the dataset's column
	Title string
	Unit  string
	get   func(r *dataset.Record) (float64, bool) // false: the run has no value (not finished)
	reads []string                                // the runs columns get reads of a record (Key for the counts, the milestone from the start for times)
	// A metric derived from several columns (its Key names no column, or
	// its column alone does not say): the columns Scan reads for it and
	// its value at a row, computed by the same function as get. nil: the
	// column Key, a null no value.
	cols []string
	row  func(b dataset.Batch, i int) (float64, bool)
	// applies says which cells have the metric (nil: every cell); a cell
	// it does not apply to has no Summary of it (Has) and is left out of
	// assertions, comparisons and the cells table's values of it. It reads
	// only the parameters appliesParams names (Scan reads no other).
	applies func(sc sim.Scenario) bool
}

// metric is a metric of one column for every cell.
func metric(key, title, unit string, get func(r *dataset.Record) (float64, bool), reads string) Metric {
	return Metric{Key: key, Title: title, Unit: unit, get: get, reads: []string{reads}}
}

// Share reports whether m is a share, a proportion in [0, 1], as its
// column's name says (dataset.IsShare: goodput_share): its interval is a
// proportion's (SummarizeShare), never beyond 0 or 1.
func (m Metric) Share() bool { return dataset.IsShare(m.Key) }

// summarize summarises m's values over a cell's seeds: SummarizeShare for
// a share, else Summarize.
func (m Metric) summarize(xs []float64, unfinished int) Summary {
	if m.Share() {
		return SummarizeShare(xs, unfinished)
	}
	return Summarize(xs, unfinished)
}

// For reports whether cells of scenario sc have metric m.
func (m Metric) For(sc sim.Scenario) bool { return m.applies == nil || m.applies(sc) }

// AllMetrics are the metrics `sweep assert`, `sweep compare` and `sweep
// cells` know: Metrics, then QueueMetrics (which only queueing cells have),
// then BrownoutMetrics (which only cells in a brownout have).
func AllMetrics() []Metric { return slices.Concat(Metrics, QueueMetrics, BrownoutMetrics) }

// MetricByKey is the metric of AllMetrics with the given column, and
// whether there is one.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range AllMetrics() {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// scanColumns are the columns Scan reads for m.
func (m Metric) scanColumns() []string {
	if m.cols != nil {
		return m.cols
	}
	return []string{m.Key}
}

// scan is m's value at row i of a batch holding its scanColumns; NaN: no
// value.
func (m Metric) scan(b dataset.Batch, i int) float64 {
	if m.row == nil {
		v, _ := metricValue(b.Column(m.Key), i)
		return v
	}
	if v, ok := m.row(b, i); ok {
		return v
	}
	return math.NaN()
}

// afterRecovery is a milestone counted from the moment the server is back:
// the time a user waits once the outage is over, the same quantity
// whatever the outage's length.
func afterRecovery(pick func(*sim.Result) sim.Milestone) func(r *dataset.Record) (float64, bool) {
	return func(r *dataset.Record) (float64, bool) {
		m := pick(&r.Result)
		return (m.At - r.Cell.Scenario.RecoverAt).Seconds(), m.Reached
	}
}

// The metrics summarised for every cell. Every time is counted from
// recovery; the article's comparison (article.go) alone reads times from
// the start, as the article printed them.
var (
	T99     = metric(dataset.ColT99After, "t99", "s after recovery", afterRecovery(func(r *sim.Result) sim.Milestone { return r.T99 }), dataset.ColT99)
	T50     = metric(dataset.ColT50After, "t50", "s after recovery", afterRecovery(func(r *sim.Result) sim.Milestone { return r.T50 }), dataset.ColT50)
	T90     = metric(dataset.ColT90After, "t90", "s after recovery", afterRecovery(func(r *sim.Result) sim.Milestone { return r.T90 }), dataset.ColT90)
	AllDone = metric(dataset.ColAllDoneAfter, "all done", "s after recovery", afterRecovery(func(r *sim.Result) sim.Milestone { return r.AllDone }), dataset.ColAllDone)
	// Peak is the peak arrival rate after recovery.
	Peak = metric(dataset.ColPeakRPS, "peak", "requests/s", func(r *dataset.Record) (float64, bool) { return r.Result.PeakRPS, true }, dataset.ColPeakRPS)
	// Sent is the requests sent at or after recovery.
	Sent   = metric(dataset.ColSentAfterRecovery, "sent after recovery", "requests", func(r *dataset.Record) (float64, bool) { return float64(r.Result.SentAfterRecovery), true }, dataset.ColSentAfterRecovery)
	GaveUp = metric(dataset.ColGaveUp, "gave up", "clients", func(r *dataset.Record) (float64, bool) { return float64(r.Result.GaveUp), true }, dataset.ColGaveUp)
)

// Metrics lists the summarised metrics in report order.
var Metrics = []Metric{T99, T50, T90, AllDone, Peak, Sent, GaveUp}

// recordColumns are the runs columns the metrics read of a record: all
// Aggregates needs of a run beside its cell and seed.
func recordColumns(metrics []Metric) []string {
	var cols []string
	for _, m := range metrics {
		for _, c := range m.reads {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

// Aggregate is a cell over its seeds.
type Aggregate struct {
	CellKey  string
	Cell     grid.Cell
	Label    string
	Sweeps   []string
	Seeds    []uint32 // ascending
	summary  map[string]Summary
	perSeed  map[string][]float64 // aligned with Seeds; NaN where a run has no value
	packed   map[string]*packed   // instead of perSeed, in Scan's aggregates: the same values in a few bytes each
	Warnings []string
}

// Summary returns the summary of metric m.
func (a *Aggregate) Summary(m Metric) Summary { return a.summary[m.Key] }

// Has reports whether a was summarised on m: Scan leaves out a metric
// that does not apply to the cell (Metric.For), as it does the metrics it
// was not asked for.
func (a *Aggregate) Has(m Metric) bool {
	_, ok := a.summary[m.Key]
	return ok
}

// Clamped reports whether one of a's intervals is printed clamped at 0
// (Summary.Bounds).
func (a *Aggregate) Clamped() bool {
	for _, m := range Metrics {
		if _, _, c := a.Summary(m).Bounds(); c {
			return true
		}
	}
	return false
}

// PerSeed returns metric m for each seed, aligned with Seeds; NaN where the
// run has no value.
// Scan's aggregates hold them packed: each call decodes them into a new
// slice.
func (a *Aggregate) PerSeed(m Metric) []float64 {
	if p := a.packed[m.Key]; p != nil {
		return p.Values()
	}
	return a.perSeed[m.Key]
}

// Aggregates groups records by cell (every parameter but the seed) and
// summarises each metric. A (cell, seed) present twice, as when two sweeps
// share a cell, counts once. Aggregates come in the order their cells first
// appear in recs.
func Aggregates(recs []Record) []*Aggregate {
	ps := make([]*Record, len(recs))
	for i := range recs {
		ps[i] = &recs[i]
	}
	return aggregates(ps)
}

// aggregates is Aggregates over records held wherever they are: records
// are large (a cell and a result each), so they are grouped by pointer,
// never copied.
func aggregates(recs []*Record) []*Aggregate { return aggregatesOf(recs, Metrics) }

// aggregatesOf is aggregates summarised on the given metrics.
func aggregatesOf(recs []*Record, metrics []Metric) []*Aggregate {
	var order []string
	groups := map[string][]*Record{}
	sweeps := map[string][]string{}
	for _, r := range recs {
		g, ok := groups[r.CellKey]
		if !ok {
			order = append(order, r.CellKey)
		}
		if !slices.Contains(sweeps[r.CellKey], r.Sweep) {
			sweeps[r.CellKey] = append(sweeps[r.CellKey], r.Sweep)
		}
		if slices.ContainsFunc(g, func(x *Record) bool { return x.Seed == r.Seed }) {
			continue
		}
		groups[r.CellKey] = append(g, r)
	}
	out := make([]*Aggregate, 0, len(order))
	var xs []float64 // reused: Summarize keeps no reference to it
	for _, k := range order {
		g := groups[k]
		slices.SortFunc(g, func(x, y *Record) int { return cmp.Compare(x.Seed, y.Seed) }) // seeds are distinct
		first := g[0]
		a := &Aggregate{CellKey: k, Cell: first.Cell, Label: first.Label, Sweeps: sweeps[k],
			summary: make(map[string]Summary, len(metrics)), perSeed: make(map[string][]float64, len(metrics)),
			Seeds: make([]uint32, len(g))}
		for i, r := range g {
			a.Seeds[i] = r.Seed
		}
		per := make([]float64, len(metrics)*len(g)) // one allocation for every metric's values
		for mi, m := range metrics {
			per := per[mi*len(g) : (mi+1)*len(g) : (mi+1)*len(g)]
			xs = xs[:0]
			unfinished := 0
			for i, r := range g {
				v, ok := m.get(&r.Record)
				if !ok {
					unfinished++
					per[i] = math.NaN()
					continue
				}
				xs = append(xs, v)
				per[i] = v
			}
			a.summary[m.Key] = m.summarize(xs, unfinished)
			a.perSeed[m.Key] = per
		}
		a.Warnings = warnings(a)
		out = append(out, a)
	}
	return out
}

func warnings(a *Aggregate) []string {
	var w []string
	if n := len(a.Seeds); n < MinSeedsForInterval {
		w = append(w, fmt.Sprintf("%s: too few for a 95 %% interval", num.Plural(n, "seed")))
	}
	if s := a.Summary(T99); s.Unfinished > 0 {
		w = append(w, fmt.Sprintf("%d of %s did not reach 99 %% within the horizon", s.Unfinished, num.Plural(s.N+s.Unfinished, "run")))
	}
	if s := a.Summary(GaveUp); s.Max > 0 {
		w = append(w, fmt.Sprintf("clients gave up (up to %.0f per run)", s.Max))
	}
	return w
}

// firstSeeds is a over its seeds 1…n (a's seeds are ascending): the
// same summaries, per-seed values and warnings as a cell measured on
// those seeds alone.
func (a *Aggregate) firstSeeds(n int) *Aggregate {
	k := 0
	for k < len(a.Seeds) && int(a.Seeds[k]) <= n {
		k++
	}
	if k == len(a.Seeds) {
		return a
	}
	b := &Aggregate{CellKey: a.CellKey, Cell: a.Cell, Label: a.Label, Sweeps: a.Sweeps, Seeds: a.Seeds[:k:k],
		summary: map[string]Summary{}, perSeed: map[string][]float64{}}
	for _, m := range AllMetrics() {
		if !a.Has(m) {
			continue
		}
		per := a.PerSeed(m)[:k:k]
		var xs []float64
		unfinished := 0
		for _, x := range per {
			if math.IsNaN(x) {
				unfinished++
			} else {
				xs = append(xs, x)
			}
		}
		b.summary[m.Key] = m.summarize(xs, unfinished)
		b.perSeed[m.Key] = per
	}
	b.Warnings = warnings(b)
	return b
}
