package dataset

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// zeroCells are cells of every kind a column's Zero tells apart: the
// counting server alone, behind chains of one to three services (one a
// queueing service with a timeout), a queueing server behind a service,
// and alone with and without an adaptive limiter, a brownout.
func zeroCells() []grid.Cell {
	counting := sim.Article()
	counting.Clients, counting.Capacity, counting.RecoverAt = 300, 60, 10*time.Second
	p := sim.DefaultPolicy(sim.Decorrelated)
	cells := []grid.Cell{{Scenario: counting, Policy: p}}
	for _, layers := range []string{
		`policy="exponential base_s=0.5 max_attempts=3"`,
		`capacity_rps=200 policy="exponential base_s=0.5 max_attempts=2" | policy=none`,
		`policy=none | policy="exponential base_s=0.2 max_attempts=3" | capacity_rps=500 policy=none`,
		`concurrency=4 service=fixed service_s=0.05 timeout_s=0.5 policy="exponential base_s=0.2 max_attempts=3"`,
	} {
		cells = append(cells, grid.Cell{Scenario: counting, Policy: sim.Policy{Kind: sim.Exponential, Base: time.Second, MaxAttempts: 4}, Layers: layers})
	}
	q := counting
	q.Concurrency, q.Service, q.ServiceTime, q.Timeout = 6, "fixed", 50*time.Millisecond, time.Second
	cells = append(cells, grid.Cell{Scenario: q, Policy: sim.Policy{Kind: sim.Exponential, Base: time.Second, MaxAttempts: 4},
		Layers: `timeout_s=2 policy="exponential base_s=0.2 max_attempts=2"`}) // a queued chain's server
	q.Service, q.ArrivalRate = "exponential", 40
	cells = append(cells, grid.Cell{Scenario: q, Policy: p})
	q.Limiter, q.LimitMax = "gradient2", 200
	cells = append(cells, grid.Cell{Scenario: q, Policy: p})
	b := counting
	b.FailShare = 0.3 // a brownout
	return append(cells, grid.Cell{Scenario: b, Policy: sim.Policy{Kind: sim.Exponential, Base: time.Second, MaxAttempts: 4}})
}

// A column whose Zero says so is zero in every run of the cell, on cells
// of every kind and several seeds; and each such column is live (not
// Zero) on some cell, so that the test sees it written.
func TestZeroColumnsAreZero(t *testing.T) {
	t.Parallel()
	live := map[string]bool{}
	var s sim.Sim
	for _, c := range zeroCells() {
		c = c.Normalize()
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", c.Label(), err)
		}
		var cc CellColumns
		cc.Of(&c)
		for seed := range uint32(3) {
			res, err := c.Simulate(&s, sim.NewMulberry32(seed+1), nil)
			if err != nil {
				t.Fatalf("%s: %v", c.Label(), err)
			}
			w := &RunRow{Seed: seed + 1, Result: &res, Cell: &cc}
			for _, col := range RunsTable() {
				if col.Zero == nil {
					continue
				}
				if !col.Zero(w) {
					live[col.Name] = true
					continue
				}
				var v Value
				col.Get(w, &v)
				if v != (Value{}) || math.Signbit(v.Float) {
					t.Errorf("%s seed %d: %s is %+v, but its Zero says zero", c.Label(), seed+1, col.Name, v)
				}
			}
		}
	}
	for _, col := range RunsTable() {
		if col.Zero != nil && !live[col.Name] && !strings.HasPrefix(col.Name, "layer4_") { // no cell here has four services
			t.Errorf("%s: zero on every cell of the test: it never sees the column written", col.Name)
		}
	}
}
