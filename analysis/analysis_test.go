package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	// 1…10: mean 5.5, sd 3.02765; t(0.975, 9) = 2.262157 (any t table).
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	s := Summarize(xs, 2)
	const tol = 1e-5 // the t quantile is printed to 6 digits
	half := 2.262157 * 3.0276504 / math.Sqrt(10)
	if s.N != 10 || s.Unfinished != 2 || s.Mean != 5.5 || math.Abs(s.SD-3.0276504) > tol ||
		math.Abs(s.Lo-(5.5-half)) > tol || math.Abs(s.Hi-(5.5+half)) > tol || s.Min != 1 || s.Max != 10 {
		t.Errorf("Summarize(1…10) = %+v", s)
	}
	if s.Finished() {
		t.Error("a summary with unfinished runs says Finished")
	}
	one := Summarize([]float64{4}, 0)
	if !math.IsNaN(one.Lo) || one.Mean != 4 || one.SD != 0 {
		t.Errorf("Summarize(one value) = %+v, want no interval", one)
	}
	if none := Summarize(nil, 3); none.N != 0 || !math.IsNaN(none.Mean) || none.Finished() {
		t.Errorf("Summarize(nothing) = %+v", none)
	}
}

// synthetic builds records for policies whose per-seed metrics are given,
// so that the right recommendation is known by construction.
type synth struct {
	kind       sim.Kind
	width      float64
	t99        []float64 // NaN: not finished
	peak, sent float64
}

func records(capacity float64, ps []synth) []Record {
	var recs []Record
	for _, p := range ps {
		pol := sim.DefaultPolicy(p.kind)
		pol.Width = p.width
		sc := sim.Article()
		sc.Capacity = capacity
		c := grid.Cell{Scenario: sc, Policy: pol.Normalize()}
		for i, v := range p.t99 {
			r := grid.Run{Cell: c, Seed: uint32(i + 1)}
			res := sim.Result{Clients: 2000, PeakRPS: p.peak, SentAfterRecovery: int64(p.sent)}
			if !math.IsNaN(v) {
				res.T99 = sim.Milestone{At: sc.RecoverAt + time.Duration(v*1e9), Reached: true} // v: after recovery
			}
			recs = append(recs, Record{Sweep: "s", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Label: c.Label(), Cell: c, Result: res}})
		}
	}
	return recs
}

var nan = math.NaN()

func TestRecommendKnownAnswer(t *testing.T) {
	t.Parallel()
	aggs := Aggregates(records(100, []synth{
		{sim.FullJitter, 0, []float64{10, 10.2, 9.8, 10.1, 9.9}, 500, 3000},     // fastest
		{sim.Decorrelated, 0, []float64{10.1, 10.3, 9.7, 10.2, 9.8}, 510, 3100}, // as fast, within noise
		{sim.EqualJitter, 0, []float64{20, 20, 20, 20, 20}, 100, 2500},          // gentler, slower
		{sim.Exponential, 0, []float64{nan, 500, nan, nan, nan}, 50, 1000},      // gentlest, never done: infeasible
		{sim.WidthJitter, 0.5, []float64{25, 25.5, 24.5, 25, 25}, 600, 4000},    // dominated by full jitter
	}))
	if len(aggs) != 5 {
		t.Fatalf("%d aggregates, want 5", len(aggs))
	}
	rk, err := Recommend(aggs, Query{Capacity: 100, Objective: ByT99})
	if err != nil {
		t.Fatal(err)
	}
	if rk.Best.Cell.Policy.Kind != sim.FullJitter || rk.Feasible != 4 {
		t.Errorf("best by t99: %s of %d feasible, want full-jitter of 4", rk.Best.Label, rk.Feasible)
	}
	if len(rk.Ties) != 1 || rk.Ties[0].Other.Cell.Policy.Kind != sim.Decorrelated || rk.Separated() {
		t.Errorf("ties: %+v, want decorrelated alone", rk.Ties)
	}
	if last := rk.Ranked[len(rk.Ranked)-1]; last.Cell.Policy.Kind != sim.Exponential || !strings.Contains(rk.Why[last.CellKey], "4 of 5 runs did not bring 99 %") {
		t.Errorf("last: %s (%q), want the unfinished exponential, infeasible", last.Label, rk.Why[last.CellKey])
	}
	front := map[sim.Kind]bool{}
	for _, a := range rk.Pareto {
		front[a.Cell.Policy.Kind] = true
	}
	if !front[sim.FullJitter] || !front[sim.EqualJitter] || front[sim.Exponential] || front[sim.WidthJitter] {
		t.Errorf("Pareto front %v: want full-jitter and equal-jitter, not the infeasible exponential nor width-jitter", labels(rk.Pareto))
	}
	if !strings.Contains(strings.Join(rk.Warnings, "\n"), "winner changes between seeds") {
		t.Errorf("warnings %q: want the t99 winner to change between seeds (decorrelated wins seeds 3 and 5)", rk.Warnings)
	}
	byPeak, _ := Recommend(aggs, Query{Capacity: 100, Objective: ByPeak})
	if byPeak.Best.Cell.Policy.Kind != sim.EqualJitter {
		t.Errorf("best by peak: %s, want equal-jitter (the gentler exponential never finishes)", byPeak.Best.Label)
	}
	if _, err := Recommend(aggs, Query{Capacity: 300, Objective: ByT99}); err == nil || !strings.Contains(err.Error(), "no cells with capacity 300") {
		t.Errorf("Recommend(300) = %v", err)
	}
	if _, err := Recommend(aggs, Query{Capacity: 100, Objective: "fast"}); err == nil {
		t.Error("Recommend with an unknown objective: no error")
	}
}

func labels(as []*Aggregate) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Label)
	}
	return out
}

func TestTable5FromData(t *testing.T) {
	t.Parallel()
	aggs := Aggregates(records(120, []synth{
		{sim.Fixed, 0, []float64{40, 40, 40}, 2000, 17000},      // fast by hammering (8.5 requests per client): not feasible
		{sim.FullJitter, 0, []float64{84, 85, 84}, 152, 2011},   // lowest peak
		{sim.Decorrelated, 0, []float64{70, 71, 70}, 264, 2324}, // fastest among the gentle
		{sim.WidthJitter, 0.1, []float64{129, 130, 129}, 706, 3754},
		{sim.WidthJitter, 0.25, []float64{73, 72.5, 73}, 370, 2554},
		{sim.WidthJitter, 0.5, []float64{74, 74, 74}, 300, 2400},
	}))
	got := Table5(aggs, Query{Capacity: 120})
	want := []struct{ situation, recommended string }{
		{"server has no spare capacity", "exponential backoff with full jitter"},
		{"fastest user recovery", "decorrelated jitter"},
		{"server can send Retry-After", "—"},
		{"smallest code change", "widen ±10 % jitter to ±25 % or more"},
	}
	for i, w := range want {
		if got[i].Situation != w.situation || !strings.HasPrefix(got[i].Recommended, w.recommended) {
			t.Errorf("row %d: %q → %q (%s), want %q → %q", i, got[i].Situation, got[i].Recommended, got[i].Reason, w.situation, w.recommended)
		}
	}
	if !strings.Contains(got[3].Reason, "129.3 s → 72.8 s") {
		t.Errorf("smallest change reason %q", got[3].Reason)
	}
}

// The article's rows without jitter come out to its printed digit on
// seeds 206–210: the simulator is the article's.
func TestArticleExactRows(t *testing.T) {
	t.Parallel()
	run := func(c grid.Cell) ([]sim.Result, []sim.Result) {
		var five []sim.Result
		for _, s := range article.Seeds {
			r, err := sim.Run(c.Scenario, c.Policy, s)
			if err != nil {
				t.Fatal(err)
			}
			five = append(five, r)
		}
		return five, nil
	}
	exact := map[string]bool{"fixed 5 s": true, "exponential, no jitter": true, "exponential, cap 60 s": true,
		"exponential, cap 300 s": true, "no jitter": true, "honour Retry-After exactly": true}
	for _, tbl := range CompareArticle(article.Tables(), run) {
		for _, r := range tbl.Compared {
			if exact[r.Label] && !r.Exact {
				t.Errorf("%s / %s: ours %v, published %v: want exact", tbl.ID, r.Label, r.Ours, r.Published)
			}
		}
	}
}

func TestArticleFigureRoundsLikeTheArticle(t *testing.T) {
	t.Parallel()
	rs := []sim.Result{{SentAfterRecovery: 9412, PeakRPS: 1140, T99: sim.Milestone{At: 72 * time.Second, Reached: true}},
		{SentAfterRecovery: 9435, PeakRPS: 1209, T99: sim.Milestone{At: 75500 * time.Millisecond, Reached: true}}}
	if f := ArticleFigure(article.Sent, rs); f.Value != 9424 { // 9423.5 rounds up, as Math.round does
		t.Errorf("sent %v, want 9424", f.Value)
	}
	if f := ArticleFigure(article.T99, rs); f.Value != 73.8 { // 73.75 → 73.8
		t.Errorf("t99 %v, want 73.8", f.Value)
	}
	rs[1].T99.Reached = false
	if f := ArticleFigure(article.T99, rs); !f.NotFinished {
		t.Errorf("t99 with an unfinished seed: %+v, want not finished", f)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	runsFile := func(m dataset.Meta) []byte {
		var b bytes.Buffer
		w := parquetio.NewRunsWriter(&b, m)
		recs := records(120, []synth{{sim.Decorrelated, 0, []float64{70}, 200, 2000}})
		w.Append(grid.Run{Cell: recs[0].Cell, Seed: 1}, recs[0].Result)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var tl bytes.Buffer
	tw := parquetio.NewTimelineWriter(&tl, dataset.Meta{})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fs   fstest.MapFS
		want string
	}{
		{"empty", fstest.MapFS{"runs/sweep=a/readme.txt": {Data: []byte("x")}}, "no Parquet files under runs/"},
		{"no folder", fstest.MapFS{}, "no Parquet files under runs/"},
		{"corrupt", fstest.MapFS{"runs/sweep=a/part-00000.parquet": {Data: []byte("PAR1garbagePAR1")}}, "runs/sweep=a/part-00000.parquet: not a Parquet file"},
		{"other schema", fstest.MapFS{"runs/sweep=a/part-00000.parquet": {Data: tl.Bytes()}}, `runs/sweep=a/part-00000.parquet: schema "timelines/1": want "` + dataset.RunsSchema + `"`},
	}
	for _, tt := range tests {
		if _, err := Load(parquet(tt.fs)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Load = %v, want %q", tt.name, err, tt.want)
		}
	}
	ds, err := Load(parquet(fstest.MapFS{"runs/sweep=a/part-00000.parquet": {Data: runsFile(dataset.Meta{Sim: sim.Version})},
		"runs/sweep=a/.part-00001.parquet.123.tmp": {Data: []byte("half written")}}))
	if err != nil || len(ds.Records) != 1 || ds.Records[0].Sweep != "a" {
		t.Errorf("Load of one part and a temporary file: %v, %v", ds, err)
	}
}

func TestLibraryVerdicts(t *testing.T) {
	t.Parallel()
	recs := records(120, []synth{
		{sim.Decorrelated, 0, []float64{40, 41, 40}, 260, 2300},
		{sim.FullJitter, 0, []float64{55, 54, 55}, 150, 2000},
	})
	add := func(p sim.Policy, t99 float64, gaveUp int) {
		sc := sim.Article()
		c := grid.Cell{Scenario: sc, Policy: p}
		for s := uint32(1); s <= 3; s++ {
			r := grid.Run{Cell: c, Seed: s}
			res := sim.Result{Clients: 2000, PeakRPS: 300, SentAfterRecovery: 2400, GaveUp: gaveUp, T99: sim.Milestone{At: sc.RecoverAt + time.Duration(t99*1e9), Reached: true}}
			recs = append(recs, Record{Sweep: "s", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: s, Cell: c, Result: res}})
		}
	}
	grpc, _ := sim.PresetByName("grpc")
	rh, _ := sim.PresetByName("go-retryablehttp")
	cb, _ := sim.PresetByName("cenkalti-backoff")
	add(grpc.Policy, 45, 0) // within 1.2× of 40 after recovery: fine
	add(rh.Policy, 300, 0)  // far off; the data has a better http-retry:
	add(cb.Policy, 30, 12)  // fastest, but clients give up: infeasible
	better := rh.Policy
	better.Preset, better.Width, better.Cap = "", 0.5, 60*time.Second
	add(better, 42, 0)
	vs := LibraryVerdicts(Aggregates(recs), Query{Capacity: 120, Objective: ByT99})
	if len(vs) != 3 {
		t.Fatalf("%d verdicts, want 3", len(vs))
	}
	byName := map[string]LibraryVerdict{}
	for _, v := range vs {
		byName[v.Preset.Cell.Policy.Preset] = v
	}
	if v := byName["grpc"]; !v.Fine || !strings.HasPrefix(v.Verdict, "fine here: t99 45.0 s after recovery, 1.12× the recommended policy's (40.3 s)") {
		t.Errorf("grpc: %+v", v)
	}
	if v := byName["go-retryablehttp"]; v.Fine || !strings.Contains(v.Verdict, "without jitter the clients that failed together stay in step") || !strings.Contains(v.Verdict, "set cap 30s → 1m0s, jitter none (±0 %) → ±25 %") {
		t.Errorf("go-retryablehttp: %q", v.Verdict)
	}
	if v := byName["cenkalti-backoff"]; v.Fine || !strings.Contains(v.Verdict, "clients give up") || !strings.Contains(v.Verdict, "switch to decorrelated jitter") {
		t.Errorf("cenkalti-backoff: %q", v.Verdict)
	}
}

// A policy that recovers fastest by multiplying the traffic is not the
// answer to "fastest without burying the server".
func TestRecommendDoesNotBuryTheServer(t *testing.T) {
	t.Parallel()
	aggs := Aggregates(records(120, []synth{
		{sim.Fixed, 0, []float64{10, 10, 10}, 2000, 17000},
		{sim.Decorrelated, 0, []float64{40, 41, 40}, 260, 2300},
	}))
	rk, err := Recommend(aggs, Query{Capacity: 120, Objective: ByT99})
	if err != nil {
		t.Fatal(err)
	}
	fixed := rk.Ranked[1]
	if rk.Best.Cell.Policy.Kind != sim.Decorrelated || !strings.Contains(rk.Why[fixed.CellKey], "sends 8.5 requests per client after recovery, above the budget of 4") {
		t.Errorf("best %s, why not fixed: %q", rk.Best.Label, rk.Why[fixed.CellKey])
	}
	loose, _ := Recommend(aggs, Query{Capacity: 120, Objective: ByT99, Budget: 9})
	if loose.Best.Cell.Policy.Kind != sim.Fixed {
		t.Errorf("with a budget of 9 requests per client: %s, want fixed", loose.Best.Label)
	}
}
