package dataset

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A column's Ints and Floats get what its Get gets, row after row: on
// random rows of every table (every number of a result random, extremes,
// NaN and -0 among them; milestones reached or not), in batches of random
// sizes appended after values already there. Floats reports false, and
// leaves dst as it was, exactly when Get finds a null in the batch; each
// is set only on a column of its type; and every kind of column the
// tables are made of has them (a kind left out would be got row by row).
func TestBatchesAreGet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 27))
	runs := make([]RunRow, 200)
	cells := make([]CellColumns, 3)
	for i := range cells {
		cells[i].RecoverAt = time.Duration(rng.Int64N(int64(time.Hour)))
	}
	for i := range runs {
		res := new(sim.Result)
		randomize(rng, reflect.ValueOf(res).Elem())
		runs[i] = RunRow{Key: "k", Seed: rng.Uint32(), Result: res, Cell: &cells[rng.IntN(len(cells))]}
	}
	timelines := make([]TimelineRow, 200)
	groups := make([]GroupRow, 200)
	for i := range timelines {
		randomize(rng, reflect.ValueOf(&timelines[i]).Elem())
		randomize(rng, reflect.ValueOf(&groups[i]).Elem())
	}
	n := checkBatches(t, rng, RunsTable(), runs) + checkBatches(t, rng, TimelineTable(), timelines) + checkBatches(t, rng, GroupsTable(), groups)
	if n < 40 {
		t.Errorf("%d columns with batches: a kind of column has none", n)
	}
}

func checkBatches[W, R any](t *testing.T, rng *rand.Rand, cols []TableColumn[W, R], rows []W) (batched int) {
	t.Helper()
	for _, c := range cols {
		if c.Ints == nil && c.Floats == nil {
			if c.Type == Int64 || c.Type == Float64 {
				if _, lifted := liftedKinds[c.Name]; lifted {
					t.Errorf("%s: no batches", c.Name)
				}
			}
			continue
		}
		batched++
		if c.Ints != nil && c.Type != Int64 || c.Floats != nil && c.Type != Float64 || c.Ints != nil && c.Floats != nil {
			t.Errorf("%s (%s): Ints %v, Floats %v", c.Name, c.Type, c.Ints != nil, c.Floats != nil)
			continue
		}
		for range 20 {
			lo := rng.IntN(len(rows))
			batch := rows[lo : lo+rng.IntN(len(rows)-lo+1)]
			var want []Value
			null := false
			for i := range batch {
				var v Value
				c.Get(&batch[i], &v)
				want, null = append(want, v), null || v.Null
			}
			before := rng.IntN(3)
			if c.Ints != nil {
				dst := c.Ints(batch, make([]int64, before, before+rng.IntN(4)))
				for i, v := range want {
					if len(dst) != before+len(want) || dst[before+i] != v.Int || v.Null {
						t.Fatalf("%s row %d: Ints %v after %d, Get %+v", c.Name, i, dst, before, v)
					}
				}
				continue
			}
			dst, ok := c.Floats(batch, make([]float64, before, before+rng.IntN(4)))
			if ok == null || !ok && len(dst) != before {
				t.Fatalf("%s: Floats reports %v with %d values after %d, a null among Get's: %v", c.Name, ok, len(dst), before, null)
			}
			if !ok {
				continue
			}
			for i, v := range want {
				if len(dst) != before+len(want) || math.Float64bits(dst[before+i]) != math.Float64bits(v.Float) {
					t.Fatalf("%s row %d: Floats %v, Get %+v", c.Name, i, dst[before+i], v)
				}
			}
		}
	}
	return batched
}

// liftedKinds are columns whose kind has batches: a column of these
// names without them was built another way.
var liftedKinds = map[string]bool{ColSeed: true, ColSent: true, ColPeakArrivals: true, ColPeakRPS: true, ColT50: true,
	ColT99After: true, ColEnd: true, ColSuccessRate: true, ColTick: true, ColTime: true, ColShare: true, ColGoodput: true, ColBusy: true}

// randomize sets the numbers, booleans and milestones of v (a struct)
// at random, some to extremes, NaN or -0; pointers, strings and slices
// are left alone.
func randomize(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if m, ok := v.Addr().Interface().(*sim.Milestone); ok {
			*m = sim.Milestone{At: time.Duration(rng.Int64N(int64(2 * time.Hour))), Reached: rng.IntN(8) != 0}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				randomize(rng, v.Field(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			randomize(rng, v.Index(i))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := rng.Int64() >> rng.IntN(64)
		if rng.IntN(2) == 0 {
			x = -x
		}
		if v.OverflowInt(x) {
			x = int64(rng.IntN(100))
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := rng.Uint64() >> rng.IntN(64)
		if v.OverflowUint(x) {
			x = uint64(rng.IntN(100))
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		x := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.MaxFloat64, 5e-324}[rng.IntN(6)]
		if rng.IntN(2) == 0 {
			x = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
		}
		v.SetFloat(x)
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	}
}
