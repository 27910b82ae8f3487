package analysis

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// relTol bounds the difference between Welford's running summaries (in
// read order; compare's paired differences use them) and Summarize's
// (gonum's two-pass mean and variance, in seed order), relative to the
// values' magnitude (max(1, |mean|)): both are
// backward stable, so over n values their means and standard deviations
// differ by a few n·ε·|mean| — the standard deviation's error scales with
// the mean, not with itself (values of 10⁸ ± 1 lose 8 of its digits in
// either method). n ≤ 200 here gives ≲ 10⁻¹³, and 1e-9 leaves room without
// hiding a wrong formula (a missing n−1 is off by 1/n ≥ 5·10⁻³ of the SD,
// which the tests' data keep well above 10⁻⁹ of the mean).
const relTol = 1e-9

func near(a, b, scale float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= relTol*math.Max(1, scale)
}

func sameSummary(a, b Summary) bool {
	scale := math.Abs(b.Mean)
	return a.N == b.N && a.Unfinished == b.Unfinished && near(a.Mean, b.Mean, scale) && near(a.SD, b.SD, scale) &&
		near(a.Lo, b.Lo, scale) && near(a.Hi, b.Hi, scale) &&
		(a.Min == b.Min || math.IsNaN(a.Min) && math.IsNaN(b.Min)) && (a.Max == b.Max || math.IsNaN(a.Max) && math.IsNaN(b.Max))
}

func samePerSeed(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// The running summaries equal Summarize's on random inputs: values of
// every magnitude, with an offset that defeats the naive sum of squares.
func TestWelfordMatchesSummarize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n := rng.IntN(200)
		offset := math.Pow(10, float64(rng.IntN(9)))
		scale := math.Pow(10, float64(rng.IntN(7)-3))
		xs := make([]float64, n)
		var w welford
		for i := range xs {
			xs[i] = offset + scale*rng.NormFloat64()
			w.add(xs[i])
		}
		w.unfinished = trial % 3
		if got, want := w.summary(), Summarize(xs, trial%3); !sameSummary(got, want) {
			t.Fatalf("trial %d (n %d): running %+v, Summarize %+v", trial, n, got, want)
		}
	}
}

// realDataset simulates small cells (some never finish, some clients give
// up) and writes them as parts the way sweep run does, with a run stored
// twice in one sweep and runs shared by two sweeps, seeds out of order.
func realDataset(t testing.TB) fstest.MapFS {
	t.Helper()
	var cells []grid.Cell
	for _, capacity := range []float64{20, 60} {
		for _, pol := range []sim.Policy{
			sim.DefaultPolicy(sim.Decorrelated),
			sim.DefaultPolicy(sim.FullJitter),
			{Kind: sim.Fixed, Base: 2 * time.Second, MaxAttempts: 4},
			{Kind: sim.Exponential, Base: time.Second, Multiplier: 2, Cap: 300 * time.Second},
		} {
			sc := smallScenario(capacity, 300)
			sc.Horizon = sc.RecoverAt + 40*time.Second // short: some runs never finish
			cells = append(cells, grid.Cell{Scenario: sc, Policy: pol.Normalize()})
		}
	}
	var runs []grid.Run
	for _, seed := range []uint32{7, 3, 12, 1, 5, 9, 2, 30} {
		for _, c := range cells {
			runs = append(runs, grid.Run{Cell: c, Seed: seed})
		}
	}
	recs, err := simulate(context.Background(), runs)
	if err != nil {
		t.Fatal(err)
	}
	part := func(idx ...int) []byte {
		var b bytes.Buffer
		w := parquetio.NewRunsWriter(&b, dataset.Meta{Sim: sim.Version, Tool: "test"})
		for _, i := range idx {
			w.Append(runs[i], recs[i].Result)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	span := func(from, to int) []int {
		var xs []int
		for i := from; i < to; i++ {
			xs = append(xs, i)
		}
		return xs
	}
	n := len(runs)
	return fstest.MapFS{
		"runs/sweep=a/part-1.parquet": {Data: part(span(0, n/2)...)},
		"runs/sweep=a/part-2.parquet": {Data: part(append(span(n/2, 3*n/4), 3, 0)...)},  // two runs again
		"runs/sweep=b/part-1.parquet": {Data: part(append(span(3*n/4, n), 5, 6, 7)...)}, // three shared with a
	}
}

// identical reports whether two summaries are equal bit for bit (NaN
// equal to NaN).
func identical(a, b Summary) bool {
	f := func(x, y float64) bool {
		return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
	}
	return a.N == b.N && a.Unfinished == b.Unfinished && f(a.Mean, b.Mean) && f(a.SD, b.SD) &&
		f(a.Lo, b.Lo) && f(a.Hi, b.Hi) && f(a.Min, b.Min) && f(a.Max, b.Max)
}

// Scan's aggregates are Load and Aggregates', field by field, bit for bit.
func TestScanMatchesLoadAndAggregates(t *testing.T) {
	t.Parallel()
	fsys := realDataset(t)
	ds, err := Load(parquet(fsys))
	if err != nil {
		t.Fatal(err)
	}
	want := Aggregates(ds.Records)
	keep := func(ck string) bool { return ck == want[1].CellKey || ck == want[4].CellKey }
	got, err := Scan(parquet(fsys), ScanOptions{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	if got.Files != ds.Files || got.Repeated != ds.Repeated || got.Shared != ds.Shared || got.Runs != len(ds.Records) ||
		!reflect.DeepEqual(got.Warnings, ds.Warnings) || !reflect.DeepEqual(got.Metas, ds.Metas) {
		t.Errorf("Scan: files %d, repeated %d, shared %d, runs %d, warnings %q; Load: %d, %d, %d, %d, %q",
			got.Files, got.Repeated, got.Shared, got.Runs, got.Warnings, ds.Files, ds.Repeated, ds.Shared, len(ds.Records), ds.Warnings)
	}
	if ds.Repeated != 2 || ds.Shared != 3 {
		t.Fatalf("the test dataset should repeat 2 runs and share 3: %d, %d", ds.Repeated, ds.Shared)
	}
	if len(got.Aggregates) != len(want) {
		t.Fatalf("%d aggregates, want %d", len(got.Aggregates), len(want))
	}
	unfinished, gaveUp := 0, 0
	for i, w := range want {
		g := got.Aggregates[i]
		if g.CellKey != w.CellKey || g.Label != w.Label || !reflect.DeepEqual(g.Cell, w.Cell) ||
			!reflect.DeepEqual(g.Sweeps, w.Sweeps) || !reflect.DeepEqual(g.Seeds, w.Seeds) || !reflect.DeepEqual(g.Warnings, w.Warnings) {
			t.Errorf("cell %d: got %s %q sweeps %v seeds %v warnings %q\nwant %s %q sweeps %v seeds %v warnings %q",
				i, g.CellKey, g.Label, g.Sweeps, g.Seeds, g.Warnings, w.CellKey, w.Label, w.Sweeps, w.Seeds, w.Warnings)
		}
		for _, m := range Metrics {
			if !sameSummary(g.Summary(m), w.Summary(m)) || !identical(g.Summary(m), w.Summary(m)) {
				t.Errorf("cell %d %s: summary %+v, want %+v", i, m.Key, g.Summary(m), w.Summary(m))
			}
			if !samePerSeed(g.PerSeed(m), w.PerSeed(m)) {
				t.Errorf("cell %d %s: per seed %v, want %v", i, m.Key, g.PerSeed(m), w.PerSeed(m))
			}
		}
		unfinished += w.Summary(T99).Unfinished
		if w.Summary(GaveUp).Max > 0 {
			gaveUp++
		}
	}
	if unfinished == 0 || gaveUp == 0 {
		t.Errorf("the test dataset should have unfinished runs and clients giving up: %d, %d", unfinished, gaveUp)
	}
	var kept []Record
	for _, r := range ds.Records {
		if keep(r.CellKey) {
			kept = append(kept, r)
		}
	}
	if !reflect.DeepEqual(got.Records, kept) {
		t.Errorf("kept %d records, want the %d Load gives of those cells", len(got.Records), len(kept))
	}
	var sweeps []string
	for _, s := range got.Sweeps {
		sweeps = append(sweeps, s.Sweep)
		if !slices.IsSorted(s.Seeds) {
			t.Errorf("sweep %s: seeds %v not ascending", s.Sweep, s.Seeds)
		}
	}
	if !reflect.DeepEqual(sweeps, []string{"a", "b"}) || !reflect.DeepEqual(got.Sweeps[0].Seeds, []uint32{1, 3, 5, 7, 9, 12}) {
		t.Errorf("sweeps %+v", got.Sweeps)
	}
}

// Scan refuses what Load refuses, naming the file.
func TestScanErrors(t *testing.T) {
	t.Parallel()
	var tl bytes.Buffer
	tw := parquetio.NewTimelineWriter(&tl, dataset.Meta{})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"empty":        {"runs/sweep=a/readme.txt": {Data: []byte("x")}},
		"corrupt":      {"runs/sweep=a/part-00000.parquet": {Data: []byte("PAR1garbagePAR1")}},
		"other schema": {"runs/sweep=a/part-00000.parquet": {Data: tl.Bytes()}},
	} {
		_, lerr := Load(parquet(fsys))
		_, serr := Scan(parquet(fsys), ScanOptions{})
		if lerr == nil || serr == nil || lerr.Error() != serr.Error() {
			t.Errorf("%s: Scan: %v; Load: %v", name, serr, lerr)
		}
	}
}

// BenchmarkScan aggregates a small simulated dataset (3 parts, 69 rows):
// the per-part cost of a scan (opening, checking every column chunk, the
// cells' second pass); scripts/bench-scale.sh measures a million runs.
func BenchmarkScan(b *testing.B) {
	fsys := realDataset(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(parquet(fsys), ScanOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// What Scan keeps of each run is a few bytes: the seed, in one list shared
// by the cells that ran the same seeds, and each metric packed (1–2 bytes
// for whole ticks and counts, not 8), so that 10,000,000 runs fit in a few
// hundred megabytes. Seeds here come in order, as a sweep writes them (the
// path without a map of seeds); the values must still be Load's, bit for
// bit.
func TestScanKeepsFewBytesPerRun(t *testing.T) {
	t.Parallel()
	perRun := map[int]float64{}
	for _, seeds := range []int{30, 90} {
		var runs []grid.Run
		for _, capacity := range []float64{20, 60} {
			sc := smallScenario(capacity, 300)
			c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.FullJitter).Normalize()}
			for s := range seeds {
				runs = append(runs, grid.Run{Cell: c, Seed: uint32(s + 1)})
			}
		}
		recs, err := simulate(context.Background(), runs)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		w := parquetio.NewRunsWriter(&b, dataset.Meta{Sim: sim.Version, Tool: "test"})
		for i := range runs {
			w.Append(runs[i], recs[i].Result)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fsys := fstest.MapFS{"runs/sweep=a/part-1.parquet": {Data: b.Bytes()}}
		got, err := Scan(parquet(fsys), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := Load(parquet(fsys))
		if err != nil {
			t.Fatal(err)
		}
		want := Aggregates(ds.Records)
		if len(got.Aggregates) != 2 || len(want) != 2 {
			t.Fatalf("%d and %d aggregates, want 2", len(got.Aggregates), len(want))
		}
		for i, a := range got.Aggregates {
			for _, m := range Metrics {
				if !samePerSeed(a.PerSeed(m), want[i].PerSeed(m)) || !identical(a.Summary(m), want[i].Summary(m)) {
					t.Errorf("%d seeds, cell %d %s: %v %+v, want %v %+v", seeds, i, m.Key, a.PerSeed(m), a.Summary(m), want[i].PerSeed(m), want[i].Summary(m))
				}
			}
		}
		a0, a1 := got.Aggregates[0], got.Aggregates[1]
		if &a0.Seeds[0] != &a1.Seeds[0] {
			t.Errorf("%d seeds: two cells of the same seeds hold two lists", seeds)
		}
		bytes := 4 * cap(a0.Seeds)
		for _, a := range got.Aggregates {
			if a.perSeed != nil {
				t.Errorf("%d seeds: per-seed values kept as float64", seeds)
			}
			for _, m := range Metrics {
				bytes += a.packed[m.Key].bytes()
			}
		}
		perRun[seeds] = float64(bytes) / float64(len(runs))
		// Asked for every metric (as assert, compare and cells ask), the
		// counting server's cells keep nothing more.
		all, err := Scan(parquet(fsys), ScanOptions{Metrics: AllMetrics()})
		if err != nil {
			t.Fatal(err)
		}
		allBytes := 4 * cap(all.Aggregates[0].Seeds)
		for _, a := range all.Aggregates {
			for _, p := range a.packed {
				allBytes += p.bytes()
			}
		}
		if allBytes != bytes {
			t.Errorf("%d seeds: %d bytes kept scanning every metric, %d scanning the counting ones", seeds, allBytes, bytes)
		}
		// 7 metrics: times in 10 ms ticks within 327 s of the first in 2
		// bytes, the peak and the counts of 300 clients in 1 or 2; the
		// shared seed list 2 bytes a run here; append's headroom clipped.
		if perRun[seeds] > 7*2+2+1 {
			t.Errorf("%d seeds: %.1f bytes kept per run, want ≤ 17 (as float64: 56 for the values alone)", seeds, perRun[seeds])
		}
	}
	t.Logf("bytes per run: %v", perRun)
	if perRun[90] > perRun[30]+1 {
		t.Errorf("bytes kept per run grow with the seeds: %.1f at 30 seeds, %.1f at 90", perRun[30], perRun[90])
	}
}
