package analysis

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A Margin is how far along one axis of the server an answer still
// recovers: the harshest value at which it recovers (Inside) and the
// next one, at the bisection's resolution, at which it does not
// (Outside), on the same seeds, found by bisection on the simulator, and
// the candidate to switch to past it.
type Margin struct {
	Axis   MarginAxis
	Inside float64 // the axis' value (MarginAxis.Unit) at which the answer recovers
	// Outside is the value just past Inside at which it does not; NaN
	// when it recovers over the whole range (Inside is then the range's
	// end).
	Outside float64
	// At is the server just outside the margin (just inside when Outside
	// is NaN), Time the answer's time back just inside.
	At       Server
	Time     float64
	Seeds    int
	SwitchTo *Candidate // the best candidate that recovers at Outside; nil when none does or there is no outside
	Tried    int        // candidates tried at Outside
}

// A MarginAxis is one axis of the server along which an answer's margin
// is measured: from a reference server, one parameter made harsher until
// the answer no longer recovers.
type MarginAxis struct {
	Key, Title, Unit string
	// From and To bound the search; the answer is known to recover at
	// From. Harsher is larger when To > From.
	From, To   float64
	Resolution float64
	server     func(x float64) Server
}

// MarginAxes are the axes of an answer's margins on env, each from a
// server of env the answer recovers on: the rejection cost on the
// counting server (from the highest cost it recovers at); the client
// timeout and the background load on the queueing server it recovers on
// with the highest load (then the shortest timeout), shortening its
// timeout and raising its load. An axis without such a server is left
// out, as are servers behind services (a chain models neither).
func MarginAxes(env []Server, recovers func(i int) bool) []MarginAxis {
	cost := math.NaN()
	ref := -1
	for i, s := range env {
		if !recovers(i) || s.Chained() { // a chain's server has free rejections and no queue
			continue
		}
		if !s.Queueing() {
			if math.IsNaN(cost) || s.RejectCost > cost {
				cost = s.RejectCost
			}
			continue
		}
		if s.Timeout == 0 || s.Arrival > 0 {
			continue // a timeout to shorten, a load to raise as a share
		}
		if r := ref; r < 0 || s.Load > env[r].Load || (s.Load == env[r].Load && s.Timeout < env[r].Timeout) {
			ref = i
		}
	}
	var axes []MarginAxis
	if !math.IsNaN(cost) {
		axes = append(axes, MarginAxis{Key: "reject_cost", Title: "rejection cost", Unit: "share of a request", From: cost, To: 0.99, Resolution: 0.01,
			server: func(x float64) Server { return Server{RejectCost: x} }})
	}
	if ref >= 0 {
		q := env[ref]
		axes = append(axes,
			MarginAxis{Key: "timeout_s", Title: "client timeout", Unit: "s", From: q.Timeout.Seconds(), To: 0.05, Resolution: 0.01,
				server: func(x float64) Server {
					s := q
					s.Timeout = time.Duration(math.Round(x*1000)) * time.Millisecond
					return s
				}},
			MarginAxis{Key: "load", Title: "background load", Unit: "share of capacity", From: q.Load, To: 0.95, Resolution: 0.01,
				server: func(x float64) Server {
					s := q
					s.Load = x
					return s
				}})
	}
	return axes
}

// Margins measures the winner's margin along each axis, by bisection on
// the simulator over seeds 1…seeds: the harshest value at which it
// recovers, the next (at the axis' resolution) at which it does not, and
// there the best candidate of space that recovers. A bisection assumes
// that the answer recovers on a gentler server whenever it does on a
// harsher one; the two ends it reports are measured, so "recovers just
// inside, not just outside" holds of what it prints
// (TestMarginsHoldJustInsideNotOutside).
func Margins(ctx context.Context, base sim.Scenario, winner sim.Policy, axes []MarginAxis, space []sim.Policy, q Query, seeds int, measure Measure) ([]Margin, int, error) {
	j := &judger{ctx: ctx, q: q, measure: measure, memo: map[string]*Record{}}
	var out []Margin
	for _, ax := range axes {
		m := Margin{Axis: ax, Seeds: seeds, Outside: math.NaN()}
		in, err := j.recovery(ax.server(ax.From).Cell(base, sim.Policy{}), winner, seeds)
		if err != nil {
			return nil, j.runs, err
		}
		if !in.Recovers() { // the reference itself: no margin along this axis
			m.Inside, m.Outside, m.At = math.NaN(), ax.From, ax.server(ax.From)
			out = append(out, m)
			continue
		}
		lo, hi := ax.From, ax.To // recovers at lo; unknown at hi
		m.Time = in.Time
		end, err := j.recovery(ax.server(hi).Cell(base, sim.Policy{}), winner, seeds)
		if err != nil {
			return nil, j.runs, err
		}
		if end.Recovers() {
			m.Inside, m.At, m.Time = hi, ax.server(hi), end.Time
			out = append(out, m)
			continue
		}
		for math.Abs(hi-lo) > ax.Resolution*(1+1e-9) {
			mid := math.Round((lo+hi)/2/ax.Resolution) * ax.Resolution
			if mid == lo || mid == hi {
				break
			}
			r, err := j.recovery(ax.server(mid).Cell(base, sim.Policy{}), winner, seeds)
			if err != nil {
				return nil, j.runs, err
			}
			if r.Recovers() {
				lo, m.Time = mid, r.Time
			} else {
				hi = mid
			}
		}
		m.Inside, m.Outside, m.At = lo, hi, ax.server(hi)
		// The candidate to switch to past the margin: the answer's own
		// search (SearchEnvelope) over the other candidates on that one
		// server.
		var others []sim.Policy
		for _, p := range space {
			if p != winner {
				others = append(others, p)
			}
		}
		m.Tried = len(others)
		sw, err := searchEnvelope(j, base, []Server{m.At}, others, EnvelopeSeeding{Screen: 1, Final: seeds})
		if err != nil {
			return nil, j.runs, err
		}
		if w := sw.Winner; w != nil && w.On[0].Recovers() {
			m.SwitchTo = &Candidate{Policy: w.Policy, On: w.On, Score: w.Score}
		}
		out = append(out, m)
	}
	return out, j.runs, nil
}

// judger measures one policy on one scenario over seeds 1…n, each run
// once, and judges its recovery.
type judger struct {
	ctx     context.Context
	q       Query
	measure Measure
	memo    map[string]*Record
	runs    int
}

func (j *judger) recovery(at grid.Cell, p sim.Policy, n int) (Recovery, error) {
	rs, err := j.recoveries(at, []sim.Policy{p}, n)
	if err != nil {
		return Recovery{}, err
	}
	return rs[0], nil
}

// recoveries judges each of ps on the server of cell at (its scenario and
// chain; Server.Cell) over seeds 1…n, measuring in one batch what the
// memo lacks (sim.Hopeless settles a run without one, and a policy the
// chain cannot run is judged without one: NotModelled).
func (j *judger) recoveries(at grid.Cell, ps []sim.Policy, n int) ([]Recovery, error) {
	sc := at.Scenario
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	out := make([]Recovery, len(ps))
	var want []grid.Run
	for i, p := range ps {
		cell := at
		cell.Policy = p
		if r, ok := unmodelled(cell); ok {
			out[i] = r
			continue
		}
		if sim.Hopeless(sc, p) {
			out[i] = Recovery{Ideal: Ideal(sc), Time: math.NaN(), Regret: math.Inf(1), Why: hopelessWhy}
			continue
		}
		for seed := 1; seed <= n; seed++ {
			r := grid.Run{Cell: cell, Seed: uint32(seed)}
			if _, ok := j.memo[r.Key()]; !ok {
				want = append(want, r)
			}
		}
	}
	if len(want) > 0 {
		got, err := j.measure(j.ctx, want)
		if err != nil {
			return nil, err
		}
		j.runs += len(want)
		for i := range got {
			j.memo[want[i].Key()] = &got[i]
		}
	}
	for i, p := range ps {
		if out[i].Why != "" {
			continue
		}
		cell := at
		cell.Policy = p
		recs := make([]*Record, 0, n)
		for seed := 1; seed <= n; seed++ {
			recs = append(recs, j.memo[grid.Run{Cell: cell, Seed: uint32(seed)}.Key()])
		}
		out[i] = j.q.Recovery(aggregatesOf(recs, envelopeMetrics(sc))[0])
	}
	return out, nil
}

// hopelessWhy is the reason given for a run sim.Hopeless settles.
const hopelessWhy = "stuck from recovery: the clients the outage leaves waiting bring more work than the workers can do before their timeout (sim.Hopeless; not simulated)"
