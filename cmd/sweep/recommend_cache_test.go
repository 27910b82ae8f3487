package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/s3test"
	"github.com/herdsweep/herdsweep/sim"
)

// The same question gets the same answer whatever is cached: recommend
// with no dataset, with a dataset that holds every run it asks for, and
// with random subsets of that dataset's parts gives the same document
// (but its note on what was simulated and read); with the whole dataset
// it simulates nothing, and a dataset of other scenarios is not read
// beyond its footers.
func TestRecommendSameAnswerWhateverIsCached(t *testing.T) {
	args := []string{"recommend", "--server", "free", "--capacity", "40", "--clients", "300", "--outage", "10s", "--seeds", "4", "--max-seeds", "8", "--library", "grpc", "--json"}
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt = 40, 300, 10*time.Second
	sc.Horizon = sc.RecoverAt + 20*time.Minute
	grpc, _ := sim.PresetByName("grpc")
	cells := append(grid.CandidateSpace(sc), grid.Cell{Scenario: sc, Policy: grpc.Policy.Normalize()})
	for _, c := range grid.CandidateSpace(sc) { // the closest built-in settings recommend judges beside its answer
		cells = append(cells, grid.ClosestCells(sc, c.Policy)...)
	}
	other := sc // a scenario the query does not ask about, stored beside it
	other.Capacity = 80
	cells = append(cells, grid.CandidateSpace(other)[:10]...)
	m := &measurer{stderr: io.Discard}
	recs, err := m.measure(context.Background(), analysis.Runs(cells, 1, 8))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 0))
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	const nparts = 8
	parts := make([][]byte, nparts)
	for p := range parts {
		var buf bytes.Buffer
		w := parquetio.NewRunsWriter(&buf, dataset.Meta{Tool: "test", Sim: sim.Version, Sweep: "cache"})
		for _, r := range recs[p*len(recs)/nparts : (p+1)*len(recs)/nparts] {
			w.Append(grid.Run{Cell: r.Cell, Seed: r.Seed}, r.Result)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		parts[p] = buf.Bytes()
	}
	// folder writes a dataset of the parts named.
	folder := func(which []int) string {
		dir := t.TempDir()
		sw := filepath.Join(dir, "runs", "sweep=cache")
		if err := os.MkdirAll(sw, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range which {
			if err := os.WriteFile(filepath.Join(sw, fmt.Sprintf("part-%d.parquet", p)), parts[p], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	note := regexp.MustCompile(`"notes": \[[^\]]*\]`)
	answer := func(out string) string { return note.ReplaceAllString(out, `"notes": […]`) }
	plain := mustRun(t, args...) // no dataset: the default out/ does not exist here
	if !json.Valid([]byte(plain)) {
		t.Fatalf("not JSON:\n%s", plain)
	}
	all := mustRun(t, append(args, "--results", folder([]int{0, 1, 2, 3, 4, 5, 6, 7}))...)
	if diff := cmp.Diff(answer(plain), answer(all)); diff != "" {
		t.Errorf("the whole dataset changed the answer (-without +with):\n%s", diff)
	}
	if !regexp.MustCompile(`"0 runs simulated, [0-9]+ reused`).MatchString(all) {
		t.Errorf("with every run cached, recommend still simulated:\n%s", note.FindString(all))
	}
	for trial := range 4 {
		var which []int
		for p := range nparts {
			if rng.IntN(2) == 0 {
				which = append(which, p)
			}
		}
		got := mustRun(t, append(args, "--results", folder(which))...)
		if diff := cmp.Diff(answer(plain), answer(got)); diff != "" {
			t.Errorf("trial %d, parts %v: the answer changed (-without +with):\n%s", trial, which, diff)
		}
	}
	// The whole dataset in a bucket: the same answer, nothing simulated.
	s3test.Start(t, s3test.Options{})
	for p := range parts {
		putObject(t, fmt.Sprintf("cache/runs/sweep=cache/part-%d.parquet", p), parts[p])
	}
	inBucket := mustRun(t, append(args, "--results", "s3://"+s3test.Bucket+"/cache")...)
	if diff := cmp.Diff(answer(plain), answer(inBucket)); diff != "" || !regexp.MustCompile(`"0 runs simulated, [0-9]+ reused`).MatchString(inBucket) {
		t.Errorf("the dataset in a bucket (-without +with):\n%s\n%s", diff, note.FindString(inBucket))
	}
	// A dataset of another scenario only: every row group ruled out by
	// its statistics, nothing read but footers.
	far := mustRun(t, "recommend", "--server", "free", "--capacity", "100", "--clients", "300", "--outage", "10s", "--seeds", "2", "--max-seeds", "2", "--json", "--results", folder([]int{0, 1}))
	if !regexp.MustCompile(`0 reused from the dataset in [^ ]+ \(0 of its 2 row groups read, 2 ruled out by their statistics`).MatchString(far) {
		t.Errorf("a dataset that cannot hold the scenario was read:\n%s", note.FindString(far))
	}
}
