package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// assertCells: two cells at capacity 300, one of them with a run that never
// reached t99; one at capacity 120.
func assertCells() []*Aggregate {
	var recs []Record
	add := func(p sim.Policy, capacity float64, t99s ...float64) {
		c := grid.Cell{Scenario: sim.Article(), Policy: p}
		c.Scenario.Capacity = capacity
		for i, t := range t99s {
			res := sim.Result{}
			if !math.IsInf(t, 1) {
				res.T99 = sim.Milestone{At: c.Scenario.RecoverAt + time.Duration(t*float64(time.Second)), Reached: true}
			}
			r := grid.Run{Cell: c, Seed: uint32(i + 1)}
			recs = append(recs, Record{Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Label: c.Label(), Cell: c, Result: res}})
		}
	}
	grpc, _ := sim.PresetByName("grpc")
	add(sim.DefaultPolicy(sim.Decorrelated), 300, 40, 50, 60)
	add(grpc.Policy, 300, 20, 30, math.Inf(1))
	add(sim.DefaultPolicy(sim.Decorrelated), 120, 90, 100, 110)
	return Aggregates(recs)
}

func TestAssertions(t *testing.T) {
	t.Parallel()
	aggs := assertCells()
	for _, tt := range []struct {
		line  string
		ok    bool
		cells int
		worst float64
	}{
		{`t99_after_s max <= 60 where policy_spec="decorrelated base_s=1 cap_s=60" capacity_rps=300`, true, 1, 60},
		{`t99_after_s max < 60 where policy=decorrelated capacity_rps=300`, false, 1, 60},
		{`t99_after_s mean <= 50 where capacity_rps=300`, false, 2, math.Inf(1)}, // grpc has an unfinished run: never within
		{`t99_after_s min <= 20 where policy_spec=grpc`, true, 1, 20},            // min reads the finished runs
		{`t99_after_s max <= 1000 where policy=grpc-go`, false, 1, math.Inf(1)},  // the grpc preset is of the grpc-go family
		{`t99_after_s max <= 1000 where preset=grpc`, false, 1, math.Inf(1)},
		{`t99_after_s mean >= 100 where policy=decorrelated capacity_rps=120`, true, 1, 100},
		{`t99_after_s max <= 60 where capacity_rps=250`, false, 0, 0}, // no cell: fails
		{`t99_after_s hi <= 1000 where policy=decorrelated`, true, 2, 0},
	} {
		a, err := ParseAssertion(tt.line)
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		c := a.Check(aggs, nil)
		if c.OK() != tt.ok || c.Cells != tt.cells {
			t.Errorf("%s: ok %v over %d cells, want %v over %d", tt.line, c.OK(), c.Cells, tt.ok, tt.cells)
		}
		if tt.worst != 0 && (c.Worst == nil || c.Worst.Value != tt.worst) {
			t.Errorf("%s: worst %+v, want %g", tt.line, c.Worst, tt.worst)
		}
	}
	for _, tt := range []struct{ line, want string }{
		{`t99 max <= 60`, `metric "t99" (did you mean "t99_after_s"?): want one of t99_after_s, `},
		{`t99_after_s median <= 60`, `statistic "median": want one of mean, lo, hi, min, max`},
		{`t99_after_s max == 60`, `comparison "==": want one of <= < >= >`},
		{`t99_after_s max <= soon`, `bound "soon": want a number, in s after recovery`},
		{`t99_after_s max <= 60 capacity_rps=300`, `want where COLUMN=VALUE`},
		{`t99_after_s max <= 60 where capacity=300`, `column "capacity" (did you mean "capacity_rps"?): want a parameter's column`},
		{`t99_after_s max <= 60 where polcy_spec=grpc`, `column "polcy_spec" (did you mean "policy_spec"?)`},
		{`t99_after_s max <= 60 where clients=many`, `clients=many: want a whole number`},
		{`t99_after_s max <= 60 where policy_spec="grpc`, `a quote is not closed`},
		{`t99_after_s max`, `want METRIC STAT OP BOUND`},
		// A preset's name as its policy matches nothing: policy holds families.
		{`recovered_after_s max <= 60 where policy=aws-sdk-go-v2`, `policy=aws-sdk-go-v2: want a family: aws-sdk-go-v2 is a preset, whose rows hold its family (aws-2026); name it with policy_spec=aws-sdk-go-v2 or preset=aws-sdk-go-v2`},
		{`t99_after_s max <= 60 where policy=cenkalti-backoff`, `cenkalti-backoff is a preset, whose rows hold its family (grpc)`},
	} {
		_, err := ParseAssertion(tt.line)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.line, err, tt.want)
		}
	}
}
