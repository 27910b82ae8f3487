package parquetio

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pq "github.com/parquet-go/parquet-go"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

func sampleRuns(t testing.TB) ([]grid.Run, []sim.Result, []*sim.Timeline) {
	t.Helper()
	sc := sim.Article()
	sc.Clients = 300
	var runs []grid.Run
	var res []sim.Result
	var tls []*sim.Timeline
	for i, p := range []sim.Policy{sim.DefaultPolicy(sim.Decorrelated), sim.DefaultPolicy(sim.FullJitter),
		{Kind: sim.Exponential, Base: time.Second, Cap: 5 * time.Minute, Multiplier: 2}} {
		c := grid.Cell{Scenario: sc, Policy: p}
		if i == 2 {
			c.Scenario.Clients = 2000 // does not finish: null milestones
			c.Scenario.Horizon = 3 * time.Minute
		}
		for seed := uint32(1); seed <= 2; seed++ {
			var s sim.Sim
			var tl sim.Timeline
			r, err := s.Run(c.Scenario, c.Policy, sim.NewMulberry32(seed), &tl)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, grid.Run{Cell: c, Seed: seed})
			res = append(res, r)
			tls = append(tls, &tl)
		}
	}
	return runs, res, tls
}

var meta = dataset.Meta{Tool: "test", Sim: sim.Version, ConfigHash: "abc", Command: "sweep run", Created: "2026-01-01T00:00:00Z", Sweep: "s"}

func TestRunsRoundTrip(t *testing.T) {
	t.Parallel()
	runs, res, _ := sampleRuns(t)
	var buf bytes.Buffer
	w := NewRunsWriter(&buf, meta)
	for i := range runs {
		w.Append(runs[i], res[i])
	}
	w.Manifest(1234, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, got, err := ReadRuns(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want := meta
	want.Schema = dataset.RunsSchema
	want.TimelineRows, want.GroupRows = 1234, 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	if len(recs) != len(runs) {
		t.Fatalf("%d rows, want %d", len(recs), len(runs))
	}
	for i, r := range recs {
		if r.Cell != runs[i].Cell || r.Seed != runs[i].Seed || r.RunKey != runs[i].Key() || r.CellKey != runs[i].Cell.Key() {
			t.Errorf("row %d: %+v, want run %+v", i, r, runs[i])
		}
		if diff := cmp.Diff(res[i], r.Result); diff != "" {
			t.Errorf("row %d result (-want +got):\n%s", i, diff)
		}
	}
	if res[4].T99.Reached {
		t.Fatal("sample lost its unfinished run")
	}
	keys, _, err := ReadRunKeys(bytes.NewReader(buf.Bytes()))
	if err != nil || len(keys) != len(runs) || keys[0] != runs[0].Key() {
		t.Errorf("ReadRunKeys = %v, %v", keys, err)
	}
}

// An independent Parquet implementation reads the same rows, nulls and sums.
func TestRunsReadByParquetGo(t *testing.T) {
	t.Parallel()
	runs, res, _ := sampleRuns(t)
	var buf bytes.Buffer
	w := NewRunsWriter(&buf, meta)
	for i := range runs {
		w.Append(runs[i], res[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(len(runs)) {
		t.Errorf("parquet-go: %d rows, want %d", f.NumRows(), len(runs))
	}
	if v, ok := f.Lookup(dataset.KeySchema); !ok || v != dataset.RunsSchema {
		t.Errorf("parquet-go: %s = %q, want %q", dataset.KeySchema, v, dataset.RunsSchema)
	}
	type row struct {
		Sent  int64    `parquet:"sent_after_recovery"`
		T99   *float64 `parquet:"t99_s,optional"`
		CapS  float64  `parquet:"cap_s"`
		Label string   `parquet:"label"`
	}
	rows, err := pq.Read[row](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var sum, wantSum int64
	nulls, wantNulls := 0, 0
	for i, r := range rows {
		sum += r.Sent
		wantSum += res[i].SentAfterRecovery
		if r.T99 == nil {
			nulls++
		} else if *r.T99 != res[i].T99.At.Seconds() {
			t.Errorf("row %d: t99_s %v, want %v", i, *r.T99, res[i].T99.At.Seconds())
		}
		if !res[i].T99.Reached {
			wantNulls++
		}
		if r.CapS != runs[i].Policy.Cap.Seconds() || r.Label != runs[i].Cell.Label() {
			t.Errorf("row %d: cap_s %v label %q", i, r.CapS, r.Label)
		}
	}
	if sum != wantSum || nulls != wantNulls || nulls == 0 {
		t.Errorf("parquet-go: sum %d nulls %d, want %d and %d (> 0)", sum, nulls, wantSum, wantNulls)
	}
}

func TestTimelinesRoundTrip(t *testing.T) {
	t.Parallel()
	runs, _, tls := sampleRuns(t)
	var buf bytes.Buffer
	w := NewTimelineWriter(&buf, meta)
	total := 0
	for i := range runs[:2] {
		w.Append(runs[i], tls[i])
		for _, a := range tls[i].Arrivals {
			if a > 0 {
				total++
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadTimelines(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != total {
		t.Fatalf("%d rows, want %d", len(rows), total)
	}
	next := 0 // rows are the ticks with arrivals, in order
	for k, a := range tls[0].Arrivals {
		if a == 0 {
			continue
		}
		r := rows[next]
		next++
		if r.Tick != k || r.Arrivals != int(a) || r.Served != int(tls[0].Served[k]) || r.RunKey != runs[0].Key() || r.T != float64(k)/10 {
			t.Fatalf("tick %d: %+v", k, r)
		}
	}
	// Only the rows of the runs asked for.
	some, _, err := ReadTimelinesOf(bytes.NewReader(buf.Bytes()), map[string]bool{runs[1].Key(): true})
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != total-next || some[0].RunKey != runs[1].Key() {
		t.Errorf("ReadTimelinesOf: %d rows (first %+v), want %d of run 1", len(some), some[0], total-next)
	}
	// A timelines file is not a runs file.
	if _, _, err := ReadRuns(bytes.NewReader(buf.Bytes())); err == nil || !strings.Contains(err.Error(), `schema "timelines/1": want "`+dataset.RunsSchema+`"`) {
		t.Errorf("ReadRuns(timelines) = %v", err)
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	t.Parallel()
	if _, _, err := ReadRuns(bytes.NewReader([]byte("PAR1 not really"))); err == nil || !strings.Contains(err.Error(), "not a Parquet file") {
		t.Errorf("ReadRuns(garbage) = %v", err)
	}
}

func TestGroupsRoundTrip(t *testing.T) {
	t.Parallel()
	sc := sim.Article()
	sc.Clients = 500
	c := grid.Cell{Scenario: sc, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	c.Mix[0] = sim.Group{Share: 0.2, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
	var s sim.Sim
	res, err := c.Simulate(&s, sim.NewMulberry32(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := grid.Run{Cell: c, Seed: 3}
	var buf bytes.Buffer
	w := NewGroupsWriter(&buf, meta)
	w.Append(run, res)
	w.Append(grid.Run{Cell: grid.Cell{Scenario: sc, Policy: c.Policy}, Seed: 1}, sim.Result{}) // one policy: no rows
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadGroups(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Share != 0.2 || rows[1].Policy != "fixed" || rows[0].RunKey != run.Key() {
		t.Fatalf("rows %+v", rows)
	}
	for g, r := range rows {
		if diff := cmp.Diff(res.Groups[g], r.Result); diff != "" {
			t.Errorf("group %d (-want +got):\n%s", g, diff)
		}
	}
}
