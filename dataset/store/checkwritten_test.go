package store

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/dataset"
)

// The end-of-run check of what a writer wrote (CheckWritten) compares each
// part with what the writer kept of it, and still finds what can go wrong
// after the commit: a part gone, one whose bytes changed, one replaced by
// another sealed part, a side part gone, runs stored again in the sweep's
// folder or another sweep's; a clean dataset has no problem, and its
// counts are Check's.
func TestCheckWrittenFindsWhatChangedSinceTheCommit(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, paths, kept := writeKept(t, root, Shard{}, sweepRuns(4), 2)
	if len(kept) != len(paths) || len(paths) != 4 {
		t.Fatalf("%d parts kept of %d committed", len(kept), len(paths))
	}
	written := map[string][]Written{"s": kept}
	rep, err := CheckWritten(root, written)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Check(root, map[string][]string{"s": namesOf(kept)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 || len(rep.Notes) != 0 || !cmp.Equal(rep.Tables, full.Tables) {
		t.Fatalf("check of what was just written: %+v, Check's tables %+v", rep, full.Tables)
	}

	rel := func(p string) string { r, _ := filepath.Rel(root, p); return filepath.ToSlash(r) }
	side := func(runsPart, table string) string {
		return filepath.Join(root, table, "sweep=s", filepath.Base(runsPart))
	}
	// paths[0]: a byte changed; paths[1]: replaced by paths[2], sealed as
	// it was written; paths[2]: its timelines gone; the last: gone; a
	// copy of paths[2] in sweep t, stored again.
	b, _ := os.ReadFile(paths[0])
	b[len(b)/3] ^= 1
	os.WriteFile(paths[0], b, 0o644)
	other, _ := os.ReadFile(paths[2])
	os.WriteFile(paths[1], other, 0o644)
	os.Remove(side(paths[2], dataset.TimelinesDir))
	last := paths[len(paths)-1]
	os.Remove(last)
	os.MkdirAll(filepath.Join(root, dataset.RunsDir, "sweep=t"), 0o755)
	copied := filepath.Join(root, dataset.RunsDir, "sweep=t", "part-copy.parquet")
	os.WriteFile(copied, other, 0o644)

	rep, err = CheckWritten(root, written)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.Problems {
		got = append(got, p.Kind+" "+p.Path)
		if p.Path == rel(last) && !strings.Contains(p.Message, "committed by this run, not there") {
			t.Errorf("lost part: %s", p.Message)
		}
	}
	want := []string{"corrupt " + rel(paths[0]), "corrupt " + rel(paths[1]), "incomplete " + rel(paths[2]),
		"missing " + rel(last), "duplicate " + rel(copied)}
	for _, table := range dataset.SideTables {
		if _, err := os.Stat(side(last, table)); err == nil {
			want = append(want, "orphan "+rel(side(last, table)))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems after the damage (-want +got):\n%s", diff)
	}
}

// A part set aside by a writer of another simulator version is not lost.
func TestCheckWrittenAcceptsAPartSetAside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	_, paths, kept := writeKept(t, root, Shard{}, sweepRuns(2), 2)
	for _, table := range dataset.Tables {
		p := filepath.Join(root, table, "sweep=s", filepath.Base(paths[0]))
		os.Rename(p, filepath.Join(filepath.Dir(p), dataset.StaleName(filepath.Base(p), "old")))
	}
	rep, err := CheckWritten(root, map[string][]Written{"s": kept})
	if err != nil || len(rep.Problems) != 0 {
		t.Errorf("check after a part was set aside: %v, %+v", err, rep.Problems)
	}
}

func namesOf(ws []Written) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

// A run a writer stored twice, in one part or two, is the duplicate the
// end-of-run check reports as Check does from the files: the check of
// what a fresh folder holds places the kept keys at once only when no two
// are alike (random runs written again, random part sizes).
func TestCheckWrittenFindsRunsStoredTwiceAsCheckDoes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 4))
	base := sweepRuns(3)
	for trial := range 6 {
		runs := slices.Clone(base)
		again := trial % 3 // trials 0 and 3 store every run once
		for range again {
			r := base[rng.IntN(len(base))]
			at := rng.IntN(len(runs) + 1)
			runs = slices.Insert(runs, at, r)
		}
		root := t.TempDir()
		_, _, kept := writeKept(t, root, Shard{}, runs, 1+rng.IntN(4))
		rep, err := CheckWritten(root, map[string][]Written{"s": kept})
		if err != nil {
			t.Fatal(err)
		}
		full, err := Check(root, map[string][]string{"s": namesOf(kept)})
		if err != nil {
			t.Fatal(err)
		}
		dups := 0
		for _, p := range full.Problems {
			if p.Kind == "duplicate" {
				dups++
			}
		}
		if (dups > 0) != (again > 0) {
			t.Fatalf("trial %d: %d runs stored again, Check finds %d duplicate problems: %+v", trial, again, dups, full.Problems)
		}
		if diff := cmp.Diff(full.Problems, rep.Problems); diff != "" {
			t.Errorf("trial %d (%d runs stored again): the end-of-run check's problems against Check's (-Check +end of run):\n%s", trial, again, diff)
		}
		// The side tables' runs are counted part by part (CheckWritten).
		tables := rep.Tables
		if again > 0 {
			tables = tables[:1]
		}
		if !cmp.Equal(tables, full.Tables[:len(tables)]) || tables[0].Table != dataset.RunsDir {
			t.Errorf("trial %d: tables %+v, Check's %+v", trial, rep.Tables, full.Tables)
		}
	}
}

// distinctKeys finds a key kept twice whatever the keys: random counts,
// parts and top bits (all alike, or a few values only), one duplicate
// planted anywhere or none; its count is the keys'.
func TestDistinctKeysAsAMapFindsThem(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 7))
	for trial := range 3000 {
		var parts []keptPart
		n := rng.IntN(50)
		if trial%100 == 0 {
			n = rng.IntN(20000)
		}
		mask := ^uint64(0) >> rng.IntN(65) // small masks: keys alike in their top bits, and few values
		seen, dup := map[uint64]bool{}, false
		for left := n; left > 0; {
			m := 1 + rng.IntN(left)
			w := &Written{}
			for range m {
				h := rng.Uint64() & mask
				if len(seen) > 0 && rng.IntN(n+1) == 0 { // a key again
					for k := range seen {
						h = k
						break
					}
				}
				dup = dup || seen[h]
				seen[h] = true
				w.keys = append(w.keys, h)
			}
			parts = append(parts, keptPart{w: w})
			left -= m
		}
		got, ok := distinctKeys(parts)
		if ok == dup || ok && got != n {
			t.Fatalf("trial %d: %d keys, duplicate %v: distinctKeys = %d, %v", trial, n, dup, got, ok)
		}
	}
}
