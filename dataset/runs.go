package dataset

import (
	"slices"
	"sync"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// RunRow is a row of the runs table as its writer builds it: the run's
// key (grid.Run.Key), seed and result, and its cell's columns
// (CellColumns), worked out once per cell: a sweep hands out a cell's
// seeds in a row.
type RunRow struct {
	Key    string
	Seed   uint32
	Result *sim.Result
	Cell   *CellColumns
}

// CellColumns are what a runs row holds of its cell alone.
type CellColumns struct {
	Canonical, Key, Label, PolicySpec string
	Keyer                             *grid.Keyer   // the run keys of its seeds
	RecoverAt                         time.Duration // when the outage ends: the times counted from recovery
	Params                            []any         // by grid.Params, as Param.Of gives them
	// Services: its chain's services, the server included (sim.Chain);
	// 0 without a chain. Queueing: its server is a queueing one; Limiter:
	// with an adaptive limit; Brownout: failing a share of requests
	// (fail_share, fail_curve).
	Services                    int
	Queueing, Limiter, Brownout bool
}

// Of sets cc to cell c's columns, reusing cc's Params.
func (cc *CellColumns) Of(c *grid.Cell) {
	cc.Canonical = c.Canonical()
	cc.Keyer = grid.NewKeyer(cc.Canonical)
	cc.Key, cc.Label, cc.PolicySpec = c.Key(), c.Label(), c.PolicySpec()
	cc.RecoverAt = c.Scenario.RecoverAt
	cc.Services, cc.Queueing, cc.Limiter = 0, c.Scenario.Server() != sim.CountingServer, c.Scenario.Limiter != ""
	cc.Brownout = c.Scenario.FailShare != 0 || c.Scenario.FailCurve != ""
	if c.Chained() {
		if ch, err := c.Chain(); err == nil {
			cc.Services = ch.Services()
		}
	}
	cc.Params = cc.Params[:0]
	for pi := range grid.Params {
		cc.Params = append(cc.Params, grid.Params[pi].Of(c))
	}
}

// RunsColumn is a column of the runs table: written from a RunRow, read
// into a Record (whose cell's parameters come before its results, so that
// a time counted from recovery is read back with the cell's outage).
type RunsColumn = TableColumn[RunRow, Record]

// runsKeyColumns are the runs table's columns before the parameters.
var runsKeyColumns = []RunsColumn{
	{Field: Field{Name: ColRunKey, Type: Utf8}, Doc: "hash of sim version, every parameter and the seed: the run's identity",
		Get: func(w *RunRow, out *Value) { *out = Value{Str: w.Key} },
		Set: func(r *Record, v Value) error { r.RunKey = v.Str; return nil }},
	{Field: Field{Name: ColCellKey, Type: Utf8}, Doc: "hash of sim version and every parameter: groups a cell's seeds", OfCell: true,
		Get: func(w *RunRow, out *Value) { *out = Value{Str: w.Cell.Key} },
		Set: func(r *Record, v Value) error { r.CellKey = v.Str; return nil }},
	{Field: Field{Name: ColSeed, Type: Int64}, Doc: "the Mulberry32 seed of the run",
		Get: func(w *RunRow, out *Value) { *out = Value{Int: int64(w.Seed)} },
		Ints: func(rows []RunRow, dst []int64) []int64 {
			for i := range rows {
				dst = append(dst, int64(rows[i].Seed))
			}
			return dst
		},
		Set: func(r *Record, v Value) (err error) { r.Seed, err = Seed(v.Int); return err }},
	{Field: Field{Name: ColLabel, Type: Utf8}, Doc: "the policy in words, and scenario parameters that differ from the article's", OfCell: true,
		Get: func(w *RunRow, out *Value) { *out = Value{Str: w.Cell.Label} },
		Set: func(r *Record, v Value) error { r.Label = v.Str; return nil }},
	{Field: Field{Name: ColPolicySpec, Type: Utf8}, Doc: "exactly the policy that ran (the first group's, for a mixed fleet): a preset's name (`grpc`, `cenkalti-backoff`), else the family and its non-zero parameters, `grpc base_s=1 cap_s=30 multiplier=2 width=0.2`; filter on this, not on `policy` (a family, which its presets share); absent (null) in parts written before it",
		Optional: true, OfCell: true, // derived from the parameters; added after runs/3 parts were written
		Get: func(w *RunRow, out *Value) { *out = Value{Str: w.Cell.PolicySpec} }},
}

// paramColumn is the runs table's column of parameter grid.Params[i]. A
// parameter left out of the keys at its zero (OmitZero) was added after
// runs/3 parts were written: optional.
func paramColumn(i int) RunsColumn {
	p := &grid.Params[i]
	return RunsColumn{Field: Field{Name: p.Key, Type: paramType(p.Type), Nullable: p.NullZero}, Doc: p.Doc,
		Optional: p.OmitZero, OfCell: true,
		Get: func(w *RunRow, out *Value) { *out = valueOf(w.Cell.Params[i]) },
		Set: func(r *Record, v Value) error { p.Set(&r.Cell, v.of(p.Type)); return nil }}
}

// valueOf is a parameter's value (int64, float64, string or bool) as a
// Value.
func valueOf(x any) Value {
	switch x := x.(type) {
	case int64:
		return Value{Int: x}
	case float64:
		return Value{Float: x}
	case string:
		return Value{Str: x}
	case bool:
		return Value{Bool: x}
	}
	panic("dataset: a parameter of another type")
}

// of is v as a parameter of type t takes it.
func (v Value) of(t grid.Type) any {
	switch t {
	case grid.Int:
		return v.Int
	case grid.Float:
		return v.Float
	case grid.String:
		return v.Str
	}
	return v.Bool
}

// metric is a column of the runs table from a column of sim.Result.
func metric(c TableColumn[sim.Result, sim.Result]) RunsColumn {
	m := RunsColumn{Field: c.Field, Doc: c.Doc, Optional: c.Optional,
		Get: func(w *RunRow, out *Value) { c.Get(w.Result, out) },
		Set: func(r *Record, v Value) error { return c.Set(&r.Result, v) }}
	m.Ints, m.Floats = batches(c.at, resultOf)
	return m
}

// resultOf is a runs row's result.
func resultOf(w *RunRow) *sim.Result { return w.Result }

// afterRecovery is a milestone counted from recovery: derived from the
// milestone and recover_s (not read back) unless readBack, when the
// reader adds the cell's recover_s back.
func afterRecovery(name, doc string, readBack bool, f func(*sim.Result) *sim.Milestone) RunsColumn {
	c := RunsColumn{Field: Field{Name: name, Type: Float64, Nullable: true}, Doc: doc,
		Get: func(w *RunRow, out *Value) {
			m := *f(w.Result)
			*out = milestoneValue(sim.Milestone{At: m.At - w.Cell.RecoverAt, Reached: m.Reached})
		},
		Floats: func(rows []RunRow, dst []float64) ([]float64, bool) {
			n := len(dst)
			for i := range rows {
				m := f(rows[i].Result)
				if !m.Reached {
					return dst[:n], false
				}
				dst = append(dst, (m.At - rows[i].Cell.RecoverAt).Seconds())
			}
			return dst, true
		}}
	if readBack {
		c.Set = func(r *Record, v Value) error {
			m := milestoneOf(v)
			if m.Reached {
				m.At += r.Cell.Scenario.RecoverAt
			}
			*f(&r.Result) = m
			return nil
		}
	}
	return c
}

func milestoneValue(m sim.Milestone) Value {
	if !m.Reached {
		return Value{Null: true}
	}
	return Value{Float: m.At.Seconds()}
}

func milestoneOf(v Value) sim.Milestone {
	if v.Null {
		return sim.Milestone{}
	}
	return sim.Milestone{At: Seconds(v.Float), Reached: true}
}

// milestoneCol is a milestone: its time in seconds, null when never
// reached.
func milestoneCol[R any](name, doc string, f func(*R) *sim.Milestone) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: name, Type: Float64, Nullable: true}, Doc: doc,
		Get: func(r *R, out *Value) { *out = milestoneValue(*f(r)) },
		Set: func(r *R, v Value) error { *f(r) = milestoneOf(v); return nil },
		at:  fieldOf[R]{milestone: f}})
}

// secondsCol is a duration in seconds.
func secondsCol[R any](name, doc string, f func(*R) *time.Duration) TableColumn[R, R] {
	return withBatches(TableColumn[R, R]{Field: Field{Name: name, Type: Float64}, Doc: doc,
		Get: func(r *R, out *Value) { *out = Value{Float: f(r).Seconds()} },
		Set: func(r *R, v Value) error { *f(r) = Seconds(v.Float); return nil },
		at:  fieldOf[R]{seconds: f}})
}

// optional marks a column added after parts of its table were written.
func optional[W, R any](c TableColumn[W, R]) TableColumn[W, R] {
	c.Optional = true
	return c
}

type res = sim.Result

// queueingOnly is an optional column of a queueing server's, zero on a
// counting one.
func queueingOnly(c RunsColumn) RunsColumn {
	c = optional(c)
	c.Zero = func(w *RunRow) bool { return !w.Cell.Queueing }
	return c
}

// brownoutOnly is an optional column of a brownout's, zero without one.
func brownoutOnly(c RunsColumn) RunsColumn {
	c = optional(c)
	c.Zero = func(w *RunRow) bool { return !w.Cell.Brownout }
	return c
}

// limiterOnly is an optional column of a limiter's, zero without one.
func limiterOnly(c RunsColumn) RunsColumn {
	c = optional(c)
	c.Zero = func(w *RunRow) bool { return !w.Cell.Limiter }
	return c
}

// runsMetricColumns are the runs table's results, after its parameters.
// The queueing server's (zero for the counting server) and the client
// components' were added after runs/3 parts were first written: a part
// without them reads them as zero or null, which is what those runs had.
// A chain's per-service columns follow them (layers.go).
var runsMetricColumns = []RunsColumn{
	metric(int64Col(ColSent, "requests sent during the whole run", func(r *res) *int64 { return &r.Sent })),
	metric(int64Col(ColSentAfterRecovery, "requests that arrived at or after recovery (the article's \"sent\")", func(r *res) *int64 { return &r.SentAfterRecovery })),
	metric(intCol(ColPeakArrivals, "most arrivals in one tick at or after recovery", func(r *res) *int { return &r.PeakArrivals })),
	metric(floatCol(ColPeakRPS, "peak_arrivals as requests/s (the article's \"peak\")", func(r *res) *float64 { return &r.PeakRPS })),
	metric(milestoneCol(ColT50, "first tick time at which 50 % of clients had succeeded, s; null = never", func(r *res) *sim.Milestone { return &r.T50 })),
	metric(milestoneCol(ColT90, "the same for 90 %, s; null = never", func(r *res) *sim.Milestone { return &r.T90 })),
	metric(milestoneCol(ColT99, "the same for 99 %, s; null = not finished within the horizon", func(r *res) *sim.Milestone { return &r.T99 })),
	metric(milestoneCol(ColAllDone, "the same for 100 %, s; null = never", func(r *res) *sim.Milestone { return &r.AllDone })),
	// The same milestones counted from recovery: what a user acts on.
	afterRecovery(ColT50After, "t50_s − recover_s: time after the server is back, s; null = never", false, func(r *res) *sim.Milestone { return &r.T50 }),
	afterRecovery(ColT90After, "t90_s − recover_s, s; null = never", false, func(r *res) *sim.Milestone { return &r.T90 }),
	afterRecovery(ColT99After, "t99_s − recover_s: how long after recovery 99 % of clients were back, s; null = not within window_s", false, func(r *res) *sim.Milestone { return &r.T99 }),
	afterRecovery(ColAllDoneAfter, "all_done_s − recover_s, s; null = never", false, func(r *res) *sim.Milestone { return &r.AllDone }),
	metric(intCol(ColSucceeded, "clients served", func(r *res) *int { return &r.Succeeded })),
	metric(intCol(ColGaveUp, "clients that reached max_attempts", func(r *res) *int { return &r.GaveUp })),
	metric(intCol(ColPending, "clients neither served nor given up at the end", func(r *res) *int { return &r.Pending })),
	metric(secondsCol(ColEnd, "the last tick simulated, s", func(r *res) *time.Duration { return &r.End })),

	queueingOnly(metric(int64Col(ColGoodput, "queueing server: requests answered within their client's timeout (cohort and open loop)", func(r *res) *int64 { return &r.Goodput }))),
	queueingOnly(metric(int64Col(ColTimedOut, "queueing server: requests answered after their client had stopped waiting", func(r *res) *int64 { return &r.TimedOut }))),
	queueingOnly(metric(int64Col(ColRejected, "queueing server: requests refused at once (down, queue full, waited too long, shed)", func(r *res) *int64 { return &r.Rejected }))),
	queueingOnly(metric(int64Col(ColOffered, "queueing server: open-loop requests that arrived new", func(r *res) *int64 { return &r.Offered }))),
	queueingOnly(metric(int64Col(ColOfferedGaveUp, "queueing server: open-loop clients that gave up", func(r *res) *int64 { return &r.OfferedGaveUp }))),
	queueingOnly(metric(floatCol(ColBusy, "queueing server: worker time spent serving, ms", func(r *res) *float64 { return &r.BusyMS }))),
	queueingOnly(metric(floatCol(ColWasted, "queueing server: of which on requests whose client had timed out (wasted_ms / busy_ms: the share wasted), ms", func(r *res) *float64 { return &r.WastedMS }))),
	queueingOnly(metric(floatCol(ColLatencyMean, "queueing server: mean latency of requests answered in time, ms; 0 = none", func(r *res) *float64 { return &r.LatencyMean }))),
	queueingOnly(metric(floatCol(ColLatencyP50, "the same, median (within 0.8 %), ms", func(r *res) *float64 { return &r.LatencyP50 }))),
	queueingOnly(metric(floatCol(ColLatencyP90, "the same, 90th percentile, ms", func(r *res) *float64 { return &r.LatencyP90 }))),
	queueingOnly(metric(floatCol(ColLatencyP99, "the same, 99th percentile, ms", func(r *res) *float64 { return &r.LatencyP99 }))),
	optional(afterRecovery(ColRecoveredAfter, "open loop: time after recovery until back to its own steady state (the clients the outage left waiting answered or given up, the queue at its ordinary length, no later window answering more requests late than in time), in whole 10 s windows, s; null = no open loop, or not back by the horizon", true, func(r *res) *sim.Milestone { return &r.Recovered })),
	optional(metric(int64Col(ColLocalRejections, "client components: requests refused before they were sent (an open circuit breaker, adaptive throttling); not in sent", func(r *res) *int64 { return &r.LocalRejections }))),
	limiterOnly(metric(intCol(ColLimitFinal, "limiter: its concurrency limit at the horizon; 0 = no limiter", func(r *res) *int { return &r.LimitFinal }))),
	limiterOnly(metric(intCol(ColLimitLowest, "limiter: the lowest limit it reached; 0 = no limiter", func(r *res) *int { return &r.LimitLowest }))),
	limiterOnly(metric(int64Col(ColLimiterRejected, "limiter: requests it rejected at once (429) for as many in flight as its limit; in rejected", func(r *res) *int64 { return &r.LimiterRejected }))),
	brownoutOnly(metric(int64Col(ColFailed, "brownout: requests served and then failed whatever the load (fail_share), answered with a 503; in sent, not in succeeded or goodput", func(r *res) *int64 { return &r.Failed }))),
	queueingOnly(metric(int64Col(ColOfferedSucceeded, "queueing server: open-loop requests answered in time by the horizon", func(r *res) *int64 { return &r.OfferedSucceeded }))),
	derived(ColSuccessRate, "share of the logical requests (clients + offered) that succeeded by the horizon: (succeeded + offered_succeeded) / (clients + offered); not read back: derived from those", (*sim.Result).SuccessRate),
	derived(ColAmplification, "load amplification: sent / (clients + offered), attempts that reached the server per logical request; not read back: derived from those", (*sim.Result).Amplification),
}

// derived is a metric the writer computes from the result's other columns
// (a method of sim.Result): stored for readers of the files, never read
// back, so that parts written before it read the same value from the
// columns it is made of.
func derived(name, doc string, f func(*sim.Result) float64) RunsColumn {
	return RunsColumn{Field: Field{Name: name, Type: Float64}, Doc: doc, Optional: true,
		Get: func(w *RunRow, out *Value) { *out = Value{Float: f(w.Result)} },
		Floats: func(rows []RunRow, dst []float64) ([]float64, bool) {
			for i := range rows {
				dst = append(dst, f(rows[i].Result))
			}
			return dst, true
		}}
}

// RunsTable is the runs table's one column list: its key columns, a
// column per parameter (grid.Params), and its results.
func RunsTable() []RunsColumn { return slices.Clone(runsTable()) }

var runsTable = sync.OnceValue(func() []RunsColumn {
	cols := make([]RunsColumn, 0, len(runsKeyColumns)+len(grid.Params)+len(runsMetricColumns))
	cols = append(cols, runsKeyColumns...)
	for i := range grid.Params {
		cols = append(cols, paramColumn(i))
	}
	return append(cols, runsMetricColumns...)
})

// RunsFields are the runs table's columns, in order.
func RunsFields() []Field { return fieldsOf(runsTable()) }

// RunsColumns documents the runs table, column by column. The parameters'
// and results' types are shown as Arrow names them (utf8), as they always
// were.
func RunsColumns() []Column {
	cols := docsOf(runsKeyColumns)
	for _, c := range runsTable()[len(runsKeyColumns):] {
		t := string(c.Type)
		if c.Nullable {
			t += " (null)"
		}
		cols = append(cols, Column{c.Name, t, c.Doc})
	}
	return cols
}

// IsMetric reports whether the runs table's column is a metric (a result
// of the run, not its key, seed or parameters).
func IsMetric(name string) bool {
	for _, m := range runsMetricColumns {
		if m.Name == name {
			return true
		}
	}
	return false
}

// OptionalColumn reports whether a runs part may lack the column: one
// added after parts were written, whose zero value is what those runs had
// (TableColumn.Optional).
func OptionalColumn(name string) bool { return optionalRuns()[name] }

var optionalRuns = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range runsTable() {
		if c.Optional {
			m[c.Name] = true
		}
	}
	return m
})
