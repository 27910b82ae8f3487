package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/herdsweep/herdsweep/analysis"
)

func cmdDiff(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("diff", "A B   (two dataset folders)", stderr)
	limit := fs.Int("n", 20, "differences to list")
	if err := fs.Parse(args); err != nil {
		return usageError{err: err}
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usagef("diff: want two dataset folders, got %d arguments", fs.NArg())
	}
	a, b := fs.Arg(0), fs.Arg(1)
	da, err := analysis.Load(os.DirFS(a))
	if err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	db, err := analysis.Load(os.DirFS(b))
	if err != nil {
		return fmt.Errorf("%s: %w", b, err)
	}
	index := func(ds *analysis.Dataset) (map[string]analysis.Record, []string) {
		m := map[string]analysis.Record{}
		var order []string
		for _, r := range ds.Records {
			k := r.Sweep + "/" + r.RunKey
			if _, ok := m[k]; !ok {
				order = append(order, k)
			}
			m[k] = r
		}
		return m, order
	}
	ma, oa := index(da)
	mb, ob := index(db)
	onlyA, onlyB, differ, same := 0, 0, 0, 0
	shown := 0
	show := func(format string, args ...any) {
		if shown < *limit {
			fmt.Fprintf(stdout, format, args...)
		}
		shown++
	}
	for _, k := range oa {
		ra := ma[k]
		rb, ok := mb[k]
		switch {
		case !ok:
			onlyA++
			show("only in %s: %s seed %d (%s)\n", a, ra.Label, ra.Seed, ra.Sweep)
		case ra.Result != rb.Result:
			differ++
			show("differs: %s seed %d (%s):\n  %s: %+v\n  %s: %+v\n", ra.Label, ra.Seed, ra.Sweep, a, ra.Result, b, rb.Result)
		default:
			same++
		}
	}
	for _, k := range ob {
		if _, ok := ma[k]; !ok {
			onlyB++
			rb := mb[k]
			show("only in %s: %s seed %d (%s)\n", b, rb.Label, rb.Seed, rb.Sweep)
		}
	}
	if shown > *limit {
		fmt.Fprintf(stdout, "… %d more\n", shown-*limit)
	}
	fmt.Fprintf(stdout, "%d runs identical, %d differ, %d only in %s, %d only in %s\n", same, differ, onlyA, a, onlyB, b)
	if differ+onlyA+onlyB > 0 {
		return fmt.Errorf("datasets differ")
	}
	return nil
}
