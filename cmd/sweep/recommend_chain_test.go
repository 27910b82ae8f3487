package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A server behind services is not the server alone, in a dataset too:
// recommend behind A gives the same answer with no dataset, with one that
// holds every run it asks for (then it simulates nothing), and with one
// that holds those runs on the same scenario without A (then it reuses
// only the runs it asks for on the server alone, the closest built-in
// settings', and simulates every run behind A): a cell's key holds its
// chain.
func TestRecommendBehindLayersIsNotTheServerAlone(t *testing.T) {
	args := []string{"recommend", "--capacity", "200", "--clients", "1000", "--window", "5m", "--json",
		"--server", `layers=policy="exponential base_s=1 max_attempts=4"`}
	fs, o := recommendFlags(io.Discard)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatal(err)
	}
	req, err := o.request()
	if err != nil {
		t.Fatal(err)
	}
	// Every run the answer asks for, as it asks.
	m := &measurer{stderr: io.Discard}
	var asked []grid.Run
	var behind []analysis.Record
	_, err = analysis.Answer(context.Background(), req, func(ctx context.Context, runs []grid.Run) ([]analysis.Record, error) {
		asked = append(asked, runs...)
		recs, err := m.measure(ctx, runs)
		behind = append(behind, recs...)
		return recs, err
	})
	if err != nil {
		t.Fatal(err)
	}
	chained := 0
	alone := make([]grid.Run, len(asked))
	for i, r := range asked {
		if r.Cell.Chained() {
			chained++
		}
		alone[i] = r
		alone[i].Cell.Layers, alone[i].Cell.Fanout = "", 0
	}
	if chained == 0 || chained == len(asked) {
		t.Fatalf("%d of %d runs behind services: the test no longer tests anything", chained, len(asked))
	}
	aloneRecs, err := m.measure(context.Background(), alone)
	if err != nil {
		t.Fatal(err)
	}
	folder := func(recs []analysis.Record) string {
		dir := t.TempDir()
		sw := filepath.Join(dir, "runs", "sweep=chain")
		var buf bytes.Buffer
		w := parquetio.NewRunsWriter(&buf, dataset.Meta{Tool: "test", Sim: sim.Version, Sweep: "chain"})
		for _, r := range recs {
			w.Append(grid.Run{Cell: r.Cell, Seed: r.Seed}, r.Result)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(sw, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sw, "part-0.parquet"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	note := regexp.MustCompile(`"(\d+) runs simulated, (no dataset|(\d+) reused)[^"]*"`)
	answer := func(out string) string { return note.ReplaceAllString(out, `"…"`) }
	counts := func(out string) (simulated, reused int) {
		g := note.FindStringSubmatch(out)
		if g == nil {
			t.Fatalf("no note on the runs in:\n%s", out)
		}
		simulated, _ = strconv.Atoi(g[1])
		reused, _ = strconv.Atoi(g[3])
		return simulated, reused
	}
	none := mustRun(t, args...)
	if s, _ := counts(none); s != len(asked) {
		t.Errorf("no dataset: %d runs simulated; the answer asked for %d", s, len(asked))
	}
	for _, c := range []struct {
		name              string
		recs              []analysis.Record
		simulated, reused int
	}{
		{"every run behind A", behind, 0, len(asked)},
		{"the same runs without A", aloneRecs, chained, len(asked) - chained},
	} {
		got := mustRun(t, append(args, "--results", folder(c.recs))...)
		if diff := cmp.Diff(answer(none), answer(got)); diff != "" {
			t.Errorf("%s: the answer changed (-without a dataset +with):\n%s", c.name, diff)
		}
		if s, r := counts(got); s != c.simulated || r != c.reused {
			t.Errorf("%s: %d simulated, %d reused; want %d and %d", c.name, s, r, c.simulated, c.reused)
		}
	}
}

// A bad chain in --server, or a chain with a range, is bad input: exit 2,
// an error that names the key, and no answer.
func TestRecommendBehindLayersBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--capacity", "200", "--server", `layers=policy="bogus"`}, `--server "layers=policy=\"bogus\"": layers=policy="bogus": service 1: policy "bogus"`},
		{[]string{"--capacity", "200", "--server", "fanout=2"}, "fanout=2: want it with layers"},
		{[]string{"--capacity", "200", "--retry-after", "5s", "--server", "layers=policy=none"}, "layers=in front of this server: want a server without Retry-After"},
		{[]string{"--capacity", "100..200", "--server", "layers=policy=none"}, "a range answers on one counting server without services in front of it"},
	} {
		stdout, stderr, code := sweep(t, append([]string{"recommend"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("recommend %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
}

// --mine with a client component behind services is not judged there,
// and its verdict says so and why, rather than "not back".
func TestRecommendBehindLayersSaysWhatItCannotJudge(t *testing.T) {
	out := mustRun(t, "recommend", "--capacity", "200", "--clients", "1000", "--window", "5m",
		"--server", `layers=policy="exponential base_s=1 max_attempts=4"`, "--mine", "grpc base_s=0.2 cap_s=1 multiplier=2 width=0.2 breaker_ratio=0.5")
	for _, want := range []string{
		"6 of the 162 candidates, whose client components a chain of services does not model (budget 0.1/100; tokens 10/100); the answer there is the best of the other 156",
		"not judged on counting, 429s free, behind A no limit, exponential backoff, no jitter, base 1s, no cap, ×2, at most 4 attempts (not modelled behind services: its client components (breaker 0.5)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("recommend behind layers with --mine and a breaker: want %q in:\n%s", want, out)
		}
	}
}
