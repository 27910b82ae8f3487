package dataset

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// Seeds written as ranges read back as the same seeds, for random sets.
func TestSeedsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 500 {
		var seeds []uint32
		for s := uint32(rng.IntN(3)); len(seeds) < rng.IntN(40); s += 1 + uint32(rng.IntN(3)) {
			seeds = append(seeds, s)
		}
		got, err := ParseSeeds(FormatSeeds(seeds))
		if err != nil || !slices.Equal(got, seeds) {
			t.Fatalf("%v → %q → %v, %v", seeds, FormatSeeds(seeds), got, err)
		}
	}
	for _, bad := range []string{"3,2", "1-1", "5-3", "x", "1,,2", "-4", "1-2,2"} {
		if _, err := ParseSeeds(bad); err == nil {
			t.Errorf("%q read as seeds", bad)
		}
	}
}

// An intent is named by its content: the same plan, the same name; one
// byte changed, refused; and the plan of a dataset keeps only the intents
// that apply to it.
func TestIntentFilesAndPlan(t *testing.T) {
	in := Intent{Sweep: "c", Sim: "herd-9", Queue: "queue-9", Command: "sweep run --config m.toml --sweep c", Shards: 4, Runs: 5,
		Cells: []IntentCell{{Key: "aa", Label: "A", Params: "clients=1", Seeds: "1-3"}, {Key: "bb", Label: "B", Params: "clients=2", Seeds: "1,5"}}}
	name, b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	name2, b2, _ := in.Encode()
	if name != name2 || string(b) != string(b2) || !IsIntent(name) {
		t.Fatalf("two encodings: %s, %s", name, name2)
	}
	got, err := ParseIntent(name, b)
	in.Format = IntentFormat
	if err != nil || !cmp.Equal(in, got) {
		t.Fatalf("read back: %v\n%s", err, cmp.Diff(in, got))
	}
	for i := range b {
		m := slices.Clone(b)
		m[i] ^= 1
		if _, err := ParseIntent(name, m); err == nil {
			t.Fatalf("byte %d changed: read as an intent", i)
		}
	}
	bad := in
	bad.Runs = 6
	n3, b3, _ := bad.Encode()
	if _, err := ParseIntent(n3, b3); err == nil || !strings.Contains(err.Error(), "hold 5 runs, it says 6") {
		t.Errorf("runs that do not add up: %v", err)
	}

	other := in
	other.Sim, other.Cells = "herd-8", []IntentCell{{Key: "cc", Label: "C", Params: "clients=3", Seeds: "7"}}
	other.Runs = 1
	on, ob, _ := other.Encode()
	fsys := fstest.MapFS{
		"runs/sweep=c/" + name:             {Data: b},
		"runs/sweep=c/" + on:               {Data: ob},
		"runs/sweep=c/part-1.parquet":      {Data: []byte("x")},
		"runs/sweep=d/" + name:             {Data: b},
		"timelines/sweep=c/" + name:        {Data: b},
		"runs/sweep=c/_intent.x.json":      {Mode: os.ModeNamedPipe},
		"runs/sweep=c/part-fifo.parquet":   {Mode: os.ModeNamedPipe},
		"runs/sweep=c/part-socket.parquet": {Mode: os.ModeSocket},
	}
	l, err := List(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var intents, special []string
	for _, p := range l.Intents {
		intents = append(intents, p.Path())
	}
	for _, e := range l.Other {
		if e.Kind == Special {
			special = append(special, e.Path)
		}
	}
	if diff := cmp.Diff(sortedCopy([]string{"runs/sweep=c/" + on, "runs/sweep=c/" + name, "runs/sweep=d/" + name}), intents); diff != "" {
		t.Errorf("intents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"runs/sweep=c/_intent.x.json", "runs/sweep=c/part-fifo.parquet", "runs/sweep=c/part-socket.parquet"}, special); diff != "" {
		t.Errorf("special files (-want +got):\n%s", diff)
	}
	if len(l.Runs) != 1 {
		t.Errorf("runs parts: %v", l.Runs)
	}
	// Sweep c holds parts of herd-9: the herd-8 intent does not apply;
	// sweep d holds no part: its intent applies.
	p, err := ReadPlan(fsys, &Listing{Intents: l.Intents}, map[string][]string{"c": {"herd-9"}})
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, c := range p.Cells {
		cells = append(cells, c.Sweep+"/"+c.Label+" "+FormatSeeds(c.Seeds))
	}
	if diff := cmp.Diff([]string{"c/A 1-3", "c/B 1,5", "d/A 1-3", "d/B 1,5"}, cells); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	fsys["runs/sweep=d/"+name] = &fstest.MapFile{Data: append(slices.Clone(b), ' ')}
	if _, err := ReadPlan(fsys, &Listing{Intents: l.Intents}, nil); err == nil || !strings.Contains(err.Error(), "runs/sweep=d/"+name) {
		t.Errorf("a damaged intent: %v", err)
	}
}

func sortedCopy(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
