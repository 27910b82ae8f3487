package parquetio

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A column kept a value per run of rows (byRun) is written with the same
// bytes as the same column kept a value per row: for random runs of every
// kind (NaN, ±0, equal neighbours, nulls and "" in a nullable string
// column, runs too short to be a dictionary) cut into random row groups.
// Both files are then read by both readers alike (compareReaders).
func TestByRunEncodesAsRows(t *testing.T) {
	t.Parallel()
	kinds := []arrow.Field{
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "fn", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "in", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "sn", Type: arrow.BinaryTypes.String, Nullable: true},
	}
	floats := []float64{math.NaN(), math.Copysign(0, -1), 0, 1.5, math.Inf(-1)}
	strs := []string{"", "a", "bb", "a longer value"}
	rng := rand.New(rand.NewPCG(7, 11))
	flattened := 0
	for trial := range 300 {
		f := kinds[trial%len(kinds)]
		runs := 1 + rng.IntN(60)
		maxRun := []int{1, 3, 40}[rng.IntN(3)] // 1 and 3: too short for a dictionary
		var vals []dataset.Value
		var ns []int
		for range runs {
			v := dataset.Value{Float: floats[rng.IntN(len(floats))], Int: int64(rng.IntN(4)) - 1, Str: strs[rng.IntN(len(strs))]}
			v.Null = f.Nullable && rng.IntN(4) == 0
			vals, ns = append(vals, v), append(ns, 1+rng.IntN(maxRun))
		}
		rows := 0
		for _, n := range ns {
			rows += n
		}
		group := rows // one row group in a third of the trials, which compareReaders reads
		if trial%3 > 0 {
			group = 1 + rng.IntN(rows)
		}
		// by rows, by runs, and row by row into a column that starts by
		// runs and turns into rows when they are short (adaptive)
		write := func(mode int) []byte {
			var buf bytes.Buffer
			w := newWriter(&buf, []arrow.Field{f}, fileMetadata(meta, dataset.RunsSchema))
			w.groupRows = group
			c := &w.cols[0]
			c.byRun, c.adaptive = mode > 0, mode == 2
			c.reserve(rows)
			for k, v := range vals {
				switch mode {
				case 0:
					c.appendN(&v, ns[k])
				case 1:
					c.appendRun(&v, ns[k])
				default:
					for range ns[k] {
						c.append(&v)
					}
				}
			}
			w.rows = rows
			if mode == 2 && !c.byRun {
				flattened++ // the adaptive column turned into rows
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		want, got := write(0), write(1)
		if !bytes.Equal(got, want) {
			t.Fatalf("trial %d (%s, %d rows in runs %v of %v, row groups of %d): by runs %d bytes, by rows %d, differ",
				trial, f.Name, rows, ns, vals, group, len(got), len(want))
		}
		if a := write(2); !bytes.Equal(a, want) {
			t.Fatalf("trial %d (%s, %d rows in runs %v of %v, row groups of %d): row by row %d bytes, by rows %d, differ",
				trial, f.Name, rows, ns, vals, group, len(a), len(want))
		}
		if group == rows { // both readers, and the statistics of its one chunk
			compareReaders(t, fmt.Sprintf("trial %d", trial), got)
		}
		// parquet-go reads each row group's chunk with the first's codec
		var expect []dataset.Value
		for k, v := range vals {
			for range ns[k] {
				expect = append(expect, v)
			}
		}
		for r, row := range parquetGoRows(t, fmt.Sprintf("trial %d", trial), got) {
			v, g := expect[r], row[0]
			v.Null = v.Null || f.Nullable && f.Type.ID() == arrow.STRING && v.Str == ""
			if !readAsWritten(g, v, f.Type.ID()) {
				t.Fatalf("trial %d row %d: parquet-go read %v, wrote %+v", trial, r, g, v)
			}
		}
	}
	if flattened < 10 {
		t.Errorf("%d trials had an adaptive column turn into rows, want 10 or more", flattened)
	}
}

// A runs part is the same file whether the writer gets the columns whose
// Zero says so row by row or appends them as zeros: real runs of cells
// of every kind (dataset's TestZeroColumnsAreZero holds Zero to the
// results), a cell's seeds in a row and one seed of a cell between.
func TestZeroColumnsWriteAsRows(t *testing.T) {
	t.Parallel()
	counting := sim.Article()
	counting.Clients, counting.Capacity, counting.RecoverAt = 200, 60, 10*time.Second
	q := counting
	q.Concurrency, q.Service, q.ServiceTime, q.Timeout, q.Limiter, q.LimitMax = 6, "exponential", 50*time.Millisecond, time.Second, "aimd", 100
	cells := []grid.Cell{
		{Scenario: counting, Policy: sim.DefaultPolicy(sim.Decorrelated)},
		{Scenario: counting, Policy: sim.Policy{Kind: sim.Exponential, Base: time.Second, MaxAttempts: 3}, Layers: `capacity_rps=100 policy="exponential base_s=0.5 max_attempts=2" | policy=none`},
		{Scenario: q, Policy: sim.DefaultPolicy(sim.FullJitter)},
	}
	var s sim.Sim
	var runs []grid.Run
	var results []sim.Result
	for i, c := range append(cells, cells[0], cells[2], cells[1]) {
		for seed := range uint32(1 + 40*(i%2)) {
			r := grid.Run{Cell: c.Normalize(), Seed: seed + 1}
			res, err := r.Cell.Simulate(&s, sim.NewMulberry32(r.Seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			runs, results = append(runs, r), append(results, res)
		}
	}
	write := func(ignoreZero bool) []byte {
		var b bytes.Buffer
		w := NewRunsWriter(&b, meta)
		w.rw.ignoreZero = ignoreZero
		for i, r := range runs {
			w.Append(r, results[i])
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	got, want := write(false), write(true)
	if !bytes.Equal(got, want) {
		t.Fatalf("with zero columns appended as zeros: %d bytes, got row by row: %d, differ", len(got), len(want))
	}
	compareReaders(t, "zero columns", got)
}

// A part is the same file whether its runs' cells are numbered
// (AppendOf, grid.LastCell) or compared: numbered as a sweep numbers
// them, and with one cell's runs under two numbers.
func TestNumberedCellsWriteAlike(t *testing.T) {
	t.Parallel()
	runs, res, _ := sampleRuns(t)
	write := func(number func(i, cell int) int) []byte {
		var b bytes.Buffer
		w := NewRunsWriter(&b, meta)
		for i := range 300 {
			cell := (i / 25) % len(runs)
			w.AppendOf(number(i, cell), grid.Run{Cell: runs[cell].Cell, Seed: uint32(i + 1)}, &res[i%len(res)])
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	want := write(func(int, int) int { return 0 })
	for name, number := range map[string]func(i, cell int) int{
		"as a sweep":   func(_, cell int) int { return 1 + cell },
		"two a cell":   func(i, cell int) int { return 1 + cell + 100*((i/10)%2) },
		"numbers once": func(i, cell int) int { return 1 + i },
	} {
		if got := write(number); !bytes.Equal(got, want) {
			t.Errorf("numbered %s: %d bytes, compared: %d, differ", name, len(got), len(want))
		}
	}
}

// A part is the same file whether its numeric columns are got a batch at
// a time (TableColumn.Ints, Floats) or row by row (Get): runs of cells
// whose milestones are reached or not (nulls in a batch, in some batches
// only), tiny runs whose metrics repeat (columns kept by runs) and vary,
// and their timelines.
func TestBatchesWriteAsRows(t *testing.T) {
	t.Parallel()
	runs, res, tls := sampleRuns(t)
	tiny := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.FullJitter)}
	tiny.Scenario.Clients, tiny.Scenario.RecoverAt = 20, 5*time.Second
	var s sim.Sim
	for seed := range uint32(150) {
		r, err := tiny.Simulate(&s, sim.NewMulberry32(seed+1), nil)
		if err != nil {
			t.Fatal(err)
		}
		runs, res, tls = append(runs, grid.Run{Cell: tiny, Seed: seed + 1}), append(res, r), append(tls, tls[seed%6])
	}
	write := func(noBatches bool) (runsPart, timelinesPart []byte) {
		var b, tb bytes.Buffer
		w, tw := NewRunsWriter(&b, meta), NewTimelineWriter(&tb, meta)
		w.rw.noBatches, tw.rw.noBatches = noBatches, noBatches
		for i := range 700 {
			j := 6 + i%(len(runs)-6) // the tiny runs: columns of rows, no null
			if i >= 300 {
				j = i % len(runs) // then nulls come
			}
			w.Append(grid.Run{Cell: runs[j].Cell, Seed: uint32(i + 1)}, res[j])
			if i%50 == 0 {
				tw.Append(runs[j], tls[j])
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), tb.Bytes()
	}
	got, gotTL := write(false)
	want, wantTL := write(true)
	if !bytes.Equal(got, want) {
		t.Errorf("runs part with batches: %d bytes, row by row: %d, differ", len(got), len(want))
	}
	if !bytes.Equal(gotTL, wantTL) {
		t.Errorf("timelines part with batches: %d bytes, row by row: %d, differ", len(gotTL), len(wantTL))
	}
	compareReaders(t, "batches", got)
}
