package store

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// sweepRuns are the runs of a tiny sweep: a mixed fleet's cell (groups
// rows) and another's, seeds 1…n each.
func sweepRuns(n int) []grid.Run {
	plain := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	plain.Scenario.Clients = 50
	mixed := grid.Cell{Scenario: plain.Scenario, Policy: sim.DefaultPolicy(sim.FullJitter)}
	mixed.Mix[0] = sim.Group{Share: 0.5, Policy: sim.DefaultPolicy(sim.Fixed)}
	var runs []grid.Run
	for _, c := range []grid.Cell{plain, mixed} {
		for seed := range uint32(n) {
			runs = append(runs, grid.Run{Cell: c, Seed: seed + 1})
		}
	}
	return runs
}

// write writes runs as shard of sweep "s" of the dataset in root, in
// parts of partRows, through a Committer, each run with a timeline, and
// returns what the writer noted and the parts' paths.
func write(t *testing.T, root string, shard Shard, runs []grid.Run, partRows int) (notes, paths []string) {
	t.Helper()
	notes, paths, _ = writeKept(t, root, shard, runs, partRows)
	return notes, paths
}

// writeKept is write that also returns what the writer kept of its parts
// (Writer.Written).
func writeKept(t *testing.T, root string, shard Shard, runs []grid.Run, partRows int) (notes, paths []string, kept []Written) {
	t.Helper()
	w, err := Open(Options{Root: root, Sweep: "s", Shard: shard, Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	meta := dataset.Meta{Tool: "test", Sim: sim.Version, Command: "sweep run --sweep s", Sweep: "s"}
	if shard.N > 1 {
		meta.Command += " --shard " + shard.String()
	}
	if _, err := w.RecordIntent(IntentOf("s", slices.Values(sweepRuns(3)), meta, shard)); err != nil {
		t.Fatal(err)
	}
	c := w.Committer()
	p := NewPart(meta, partRows)
	for _, r := range runs {
		if shard.N > 1 && r.Shard(shard.N) != shard.I {
			continue
		}
		var s sim.Sim
		var tl sim.Timeline
		res, err := s.RunFleet(r.Cell.Scenario, r.Cell.Groups(), sim.NewMulberry32(r.Seed), &tl)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Cell.Mixed() {
			res.NGroups = 0
		}
		p.Add(r, res, &tl)
		if p.Len() == partRows {
			if err := c.Send(p); err != nil {
				t.Fatal(err)
			}
			p = NewPart(meta, partRows)
		}
	}
	if err := c.Send(p); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return notes, c.Committed(), w.Written()
}

// The store as a library: shards written side by side make a dataset
// Check finds whole; Resume says what is stored; what is damaged after
// (a side part deleted, a byte changed, a shard's runs missing) is a
// problem of the Report, named by its file, and nothing is printed.
func TestStoreWritesWhatCheckFindsWhole(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	runs := sweepRuns(3)
	var all []string
	for i := range 2 {
		notes, paths := write(t, root, Shard{I: i, N: 2}, runs, 2)
		if len(notes) > 0 {
			t.Errorf("shard %d noted %q, want nothing", i, notes)
		}
		all = append(all, paths...)
	}
	rep, err := Check(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || len(rep.Notes) != 0 || rep.Tables[0] != (TableCount{Table: dataset.RunsDir, Parts: len(all), Rows: len(runs), Runs: len(runs)}) {
		t.Fatalf("check of what the shards wrote: %+v", rep)
	}
	w, err := Open(Options{Root: root, Sweep: "s"})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := w.Resume()
	w.Close()
	if err != nil || len(stored) != len(runs) {
		t.Fatalf("Resume: %d runs, %v; want %d", len(stored), err, len(runs))
	}
	for _, r := range runs {
		if !stored[r.Key()] {
			t.Errorf("Resume lacks %s seed %d", r.Cell.Label(), r.Seed)
		}
	}

	// Damage: the first part's timelines gone, the second's runs part a
	// byte changed, the last part's runs part gone (its side parts are
	// orphans: their writer is gone).
	rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
	side := func(runsPart, table string) string {
		return filepath.Join(root, table, "sweep=s", filepath.Base(runsPart))
	}
	if err := os.Remove(side(all[0], dataset.TimelinesDir)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(all[1])
	b[len(b)/2] ^= 1
	os.WriteFile(all[1], b, 0o644)
	last := all[len(all)-1]
	os.Remove(last)
	want := []string{"corrupt " + rel(all[1]), "incomplete " + rel(all[0])}
	for _, table := range dataset.SideTables {
		if _, err := os.Stat(side(last, table)); err == nil {
			want = append(want, "orphan "+rel(side(last, table)))
		}
	}
	rep, err = Check(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.Kind+" "+p.Path)
	}
	intent := ""
	for _, p := range rep.Problems {
		if p.Kind == "missing" {
			intent = p.Path
			if !strings.Contains(p.Message, "shard 1/2 lacks") || !strings.Contains(p.Message, "`sweep run --sweep s --shard 1/2`") {
				t.Errorf("missing: %s", p.Message)
			}
		}
	}
	want = append(want, "missing "+intent)
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" || intent == "" {
		t.Errorf("problems of the damaged dataset (-want +got):\n%s", diff)
	}
}

// A writer of a sweep folder linked out of the dataset is refused with a
// *LinkError, and nothing is written through the link.
func TestOpenRefusesALinkOutOfTheRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root, elsewhere := filepath.Join(dir, "out"), filepath.Join(dir, "elsewhere")
	os.MkdirAll(filepath.Join(root, dataset.RunsDir), 0o755)
	os.MkdirAll(elsewhere, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(root, dataset.RunsDir, "sweep=s")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	_, err := Open(Options{Root: root, Sweep: "s"})
	le, ok := err.(*LinkError)
	if !ok || le.Target != elsewhere || err.Error() != fmt.Sprintf("%s is a symbolic link to %s, outside %s", le.Path, elsewhere, root) {
		t.Errorf("Open through a link: %v", err)
	}
	if es, _ := os.ReadDir(elsewhere); len(es) != 0 {
		t.Errorf("Open wrote %d files through the link", len(es))
	}
}

// The Committer reports the first failure and commits nothing after it.
func TestCommitterStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	commits := 0
	w, err := Open(Options{Root: root, Sweep: "s", BeforeCommit: func(w *Writer) {
		if commits++; commits == 2 {
			os.RemoveAll(w.Dir(dataset.TimelinesDir))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := w.Committer()
	tl := &sim.Timeline{Tick: time.Second, Arrivals: []int32{1}, Served: []int32{1}, GaveUp: []int32{0}}
	var sendErr error
	for _, r := range sweepRuns(3) {
		p := NewPart(dataset.Meta{Sim: sim.Version}, 1)
		p.Add(r, sim.Result{Clients: 50}, tl)
		if err := c.Send(p); err != nil {
			sendErr = err
			break
		}
	}
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "writing "+w.Dir(dataset.TimelinesDir)) || sendErr != nil && sendErr != err {
		t.Errorf("Close: %v (Send: %v), want the first failure, writing the timelines part", err, sendErr)
	}
	if n := len(c.Committed()); n != 1 || len(w.Own()) != 1 {
		t.Errorf("%d parts committed (%d own), want the one before the failure", n, len(w.Own()))
	}
}
