package experiments

import (
	"fmt"
	"strconv"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Limits is a command's memory limit and how it is spent, so that every
// allocation that grows with the input is counted before it is made. The
// zero value sets no limit (Load).
//
// Of the limit (Total):
//   - five eighths go to the simulations: each of the Workers' simulator
//     grows to the largest storage of each kind its runs needed
//     (sim.Footprint, Max over a sweep's cells) and holds the timeline of
//     the run in hand (RunBytes);
//   - an eighth to the config's grid: its cells while it is loaded, counted
//     before equal cells are merged, and the lists of a sweep's runs
//     (GridBytes: CellBytes a cell, RunListBytes a run);
//   - a quarter to results waiting to be written (HeldBytes): the outcomes
//     the workers finished ahead of the writer (WindowBytes, a twentieth),
//     the part filling, the part waiting for the committer and the part
//     being encoded (PartBytes each, a twentieth) and its Parquet bytes
//     (another twentieth); for recommend, the records of the candidates'
//     runs.
//
// A cell whose run needs more than a share is an error at the key that
// makes it large, saying what --memory would take it.
type Limits struct {
	Total   int64  // bytes; 0: no limit
	Workers int    // simulations at once
	From    string // where Total comes from, for messages: "--memory", "HERDSWEEP_MEMORY" …
}

// RunBytes is the most one worker's simulator may hold: its Sim's storage
// and the timeline of its run (sim.Footprint).
func (l Limits) RunBytes() int64 { return l.Total / 8 * 5 / int64(max(l.Workers, 1)) }

// GridBytes is the most the config's cells and a sweep's run lists may take.
func (l Limits) GridBytes() int64 { return l.Total / 8 }

// HeldBytes is the most results waiting to be written may take.
func (l Limits) HeldBytes() int64 { return l.Total / 4 }

// WindowBytes is the most the outcomes finished ahead of the writer may
// hold (ExecuteWithin).
func (l Limits) WindowBytes() int64 { return l.Total / 20 }

// PartBytes is the most the rows of one part may take in memory before it
// is written: a part is committed when the next run's rows would pass it.
func (l Limits) PartBytes() int64 { return l.Total / 20 }

// Why says what the limit is, for messages: "the memory limit 4.0 GiB
// (--memory) over 2 workers".
func (l Limits) Why() string {
	return fmt.Sprintf("the memory limit %s (%s) over %d workers", Bytes(l.Total), l.From, max(l.Workers, 1))
}

// MinRunBytes is the least a worker's simulations may take: a limit that
// gives less is too small for anything (Limits.Check).
const MinRunBytes = 1 << 20

// Minimum is the smallest limit for workers: MinRunBytes each.
func Minimum(workers int) int64 {
	l := Limits{Workers: workers}
	return l.Would(Limits.RunBytes, MinRunBytes)
}

// Check refuses a limit too small for any run, saying what it would take.
func (l Limits) Check() error {
	if l.Total <= 0 || l.RunBytes() < MinRunBytes {
		return fmt.Errorf("%s is too small for any run: %d workers need at least %s (%s for each worker's simulations, five eighths of the limit): want at least %s, or fewer workers",
			Bytes(l.Total), max(l.Workers, 1), Bytes(Minimum(l.Workers)), Bytes(MinRunBytes), Bytes(Minimum(l.Workers)))
	}
	return nil
}

// On reports whether l sets a limit.
func (l Limits) On() bool { return l.Total > 0 }

// Would is the smallest limit under which share gives need bytes: the
// answer to "what would it take".
func (l Limits) Would(share func(Limits) int64, need int64) int64 {
	lo, hi := int64(1), int64(1)
	for share(Limits{Total: hi, Workers: l.Workers}) < need {
		if hi > 1<<61 {
			return hi
		}
		lo, hi = hi, hi*2
	}
	for lo < hi { // the least Total with share ≥ need
		mid := lo + (hi-lo)/2
		if share(Limits{Total: mid, Workers: l.Workers}) >= need {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return roundUp(hi)
}

// roundUp rounds n up to a size a person types: three significant binary
// digits (1.25 GiB, 768 MiB).
func roundUp(n int64) int64 {
	step := int64(1)
	for step*8 <= n {
		step *= 2
	}
	return (n + step - 1) / step * step
}

// What a config's grid and recommend's records take in memory, measured on
// loaded configs (experiments TestCellBytesBoundALoadedGrid) and on
// recommend's records: upper bounds, with the slack of builders that double
// as they grow. A run's rows and outcome are grid's (grid.RunRowBytes …).
const (
	// CellBytes is a cell while the config is loaded.
	CellBytes = 3072
	// RunListBytes is a run in the lists a sweep keeps: its index among
	// the runs to do and its key among those stored.
	RunListBytes = 80
	// RolledRunBytes is a run of rolling seeds (sweep run --add-seeds) in
	// the list of those a night adds: a cell and a seed, twice over while
	// the list grows.
	RolledRunBytes = 2560
	// RecordBytes is a run's record in recommend (the run, its result and
	// its place in the aggregates).
	RecordBytes = 4096
)

// memory reports a cell whose run would take more than a share of the
// limit, at the key that makes it large: clients, clients_per_process for
// many small processes, or window_s for a long run or timeline.
func (l *loader) memory(c grid.Cell, timeline bool, used map[string][]string) error {
	if !l.lim.On() {
		return nil
	}
	f := c.Footprint(timeline)
	type need struct {
		bytes int64
		share func(Limits) int64
		what  string
	}
	for i, n := range []need{
		{f.Bytes(), Limits.RunBytes, "a run of this size needs an estimated %s of memory, more than the %s each run may take under %s"},
		{c.WaitBytes(timeline), Limits.WindowBytes, "a finished run of this size holds an estimated %s (its timeline) until it is written, more than the %s the runs waiting to be written may hold under %s"},
		{c.RowBytes(timeline), Limits.PartBytes, "a run of this size takes an estimated %s in a part (its rows, a timeline's a tick) until the part is written, more than the %s a part may take under %s"},
	} {
		if n.bytes <= n.share(l.lim) {
			continue
		}
		field, v, want := sim.FieldClients, any(c.Scenario.Clients), "a smaller value"
		one := c.Scenario
		one.Clients = 1
		// the ticks: the longer of the outage and the window after it
		ticksField, ticksValue := sim.FieldWindow, any(c.Scenario.Horizon-c.Scenario.RecoverAt)
		if c.Scenario.RecoverAt > c.Scenario.Horizon-c.Scenario.RecoverAt {
			ticksField, ticksValue = sim.FieldRecoverAt, c.Scenario.RecoverAt
		}
		switch {
		case i > 0 && timeline: // the timeline's ticks
			field, v = ticksField, ticksValue
		case i > 0:
		case 2*f.Components > f.Bytes(): // one state per process for many small processes
			field, v, want = sim.FieldClientsPerProcess, c.Policy.ClientsPerProcess, "a larger value (fewer processes)"
		case 2*one.MemoryBytes(timeline) > f.Bytes(): // the ticks take most of it
			field, v = ticksField, ticksValue
		}
		return &sim.FieldError{Field: field, Value: v, Want: fmt.Sprintf("%s: "+n.what+" (--memory %s would take it)", want,
			Bytes(n.bytes), Bytes(n.share(l.lim)), l.lim.Why(), Bytes(l.lim.Would(n.share, n.bytes)))}
	}
	return nil
}

// envelope reports a sweep whose cells together need more than a worker's
// share: a simulator keeps the largest storage of each kind its runs
// needed.
func (l *loader) envelope(s *Sweep) {
	if !l.lim.On() || len(s.Cells) == 0 {
		return
	}
	if need := grid.Envelope(s.Cells, s.TimelineSeeds > 0).Bytes(); need > l.lim.RunBytes() {
		l.fail([]string{"sweep", s.Name}, "its cells together need an estimated %s a worker (a simulator keeps the largest storage of each kind its runs needed: the most clients of one cell, the longest window of another), more than the %s each worker may take under %s (--memory %s would take it); split the sweep",
			Bytes(need), Bytes(l.lim.RunBytes()), l.lim.Why(), Bytes(l.lim.Would(Limits.RunBytes, need)))
	}
}

// gridOK counts a sweep's cells and runs in the grid's share before they
// are built (every sweep's cells stay loaded; a command lists the runs of
// one sweep at a time) and reports a grid over it.
func (l *loader) gridOK(path []string, cells, runs int) bool {
	if !l.lim.On() {
		return true
	}
	need := (l.cells+int64(cells))*CellBytes + max(l.runs, int64(runs))*RunListBytes
	if need <= l.lim.GridBytes() {
		l.cells += int64(cells)
		l.runs = max(l.runs, int64(runs))
		return true
	}
	l.fail(path, "%d cells × %d seeds = %d runs take an estimated %s while they are loaded and listed (%s a cell, %d bytes a run, with the cells of the sweeps before), more than the %s the config may take under %s (--memory %s would take it); split the sweep",
		cells, runs/max(cells, 1), runs, Bytes(need), Bytes(CellBytes), RunListBytes, Bytes(l.lim.GridBytes()), l.lim.Why(), Bytes(l.lim.Would(Limits.GridBytes, need)))
	return false
}

// Bytes formats n as KiB, MiB or GiB.
func Bytes(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
