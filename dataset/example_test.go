package dataset_test

import (
	"fmt"
	"testing/fstest"

	"github.com/herdsweep/herdsweep/dataset"
)

// A dataset is a folder of Parquet parts, one folder per table and sweep.
// List says which files are data: a runs part commits the side-table parts
// of the same name; everything else (a part being written, a writer's lock,
// a side part whose runs part is not there yet) is listed apart, never read.
func ExampleList() {
	fsys := fstest.MapFS{
		"runs/sweep=main/part-00001-a1.parquet":      {},
		"runs/sweep=main/part-00002-a1.parquet":      {},
		"timelines/sweep=main/part-00001-a1.parquet": {},
		"timelines/sweep=main/part-00003-b7.parquet": {}, // its runs part is not there: not committed
		"runs/sweep=main/.part-00003-b7.parquet.tmp": {}, // being written
		"runs/sweep=main/_lock.b7":                   {},
	}
	l, err := dataset.List(fsys)
	if err != nil {
		panic(err)
	}
	for _, p := range l.Runs {
		fmt.Println("runs:", p.Path())
	}
	for _, p := range l.Side[dataset.TimelinesDir] {
		fmt.Println("timelines:", p.Path())
	}
	for _, e := range l.Other {
		fmt.Printf("not data (%s): %s\n", e.Kind, e.Path)
	}
	// Output:
	// runs: runs/sweep=main/part-00001-a1.parquet
	// runs: runs/sweep=main/part-00002-a1.parquet
	// timelines: timelines/sweep=main/part-00001-a1.parquet
	// not data (temporary): runs/sweep=main/.part-00003-b7.parquet.tmp
	// not data (lock): runs/sweep=main/_lock.b7
	// not data (orphan): timelines/sweep=main/part-00003-b7.parquet
}

// Each table has one column list, from which the file format's schema, its
// writers and readers, and the docs (`sweep schema`) are built. Units are
// in the names; a milestone never reached is a null.
func ExampleRunsFields() {
	for _, f := range dataset.RunsFields() {
		switch f.Name {
		case "run_key", "seed", "policy_spec", "recover_s", "t99_s", "t99_after_s", "sent_after_recovery":
			fmt.Printf("%s %s nullable=%v\n", f.Name, f.Type, f.Nullable)
		}
	}
	// Output:
	// run_key utf8 nullable=false
	// seed int64 nullable=false
	// policy_spec utf8 nullable=false
	// recover_s float64 nullable=false
	// sent_after_recovery int64 nullable=false
	// t99_s float64 nullable=true
	// t99_after_s float64 nullable=true
}

// The seeds of a cell are written as ranges, in the intents and the
// cells table.
func ExampleFormatSeeds() {
	s := dataset.FormatSeeds([]uint32{1, 2, 3, 4, 5, 9, 11, 12})
	back, err := dataset.ParseSeeds(s)
	fmt.Println(s, back, err)
	// Output: 1-5,9,11-12 [1 2 3 4 5 9 11 12] <nil>
}
