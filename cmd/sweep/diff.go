package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/internal/num"
)

// diffTable is one table of a dataset as diff sees it: every row by its
// key (run_key; with the tick or the group for side tables), the first
// copy read, and how many rows repeated a key.
type diffTable struct {
	rows  map[string]string // key → the row, printed
	where map[string]string // key → what to call it in a message
	order []string          // keys in read order
	dups  int
}

func (t *diffTable) add(key, row, where string) {
	if _, ok := t.rows[key]; ok {
		t.dups++
		return
	}
	t.rows[key] = row
	t.where[key] = where
	t.order = append(t.order, key)
}

// loadDiffTables reads every visible part of every table of a dataset.
func loadDiffTables(dir string) (map[string]*diffTable, error) {
	if err := store.Stat(dir); err != nil {
		return nil, err
	}
	l, err := dataset.List(store.FS(dir))
	if err != nil {
		return nil, err
	}
	if len(l.Runs) == 0 {
		return nil, fmt.Errorf("%s: no Parquet files under runs/: not a dataset", dir)
	}
	out := map[string]*diffTable{}
	for _, table := range dataset.Tables {
		t := &diffTable{rows: map[string]string{}, where: map[string]string{}}
		out[table] = t
		parts := l.Runs
		if table != dataset.RunsDir {
			parts = l.Side[table]
		}
		for _, p := range parts {
			path := store.Join(dir, p.Path())
			f, err := store.OpenFile(path)
			if err != nil {
				return nil, err
			}
			switch table {
			case dataset.RunsDir:
				var recs []dataset.Record
				recs, _, err = parquetio.ReadRuns(f)
				for _, r := range recs {
					t.add(r.RunKey, fmt.Sprintf("%+v", r), fmt.Sprintf("%s seed %d (%s)", r.Label, r.Seed, p.Sweep))
				}
			case dataset.TimelinesDir:
				var rows []dataset.TimelineRow
				rows, _, err = parquetio.ReadTimelines(f)
				for _, r := range rows {
					t.add(r.RunKey+"/"+strconv.Itoa(r.Tick), fmt.Sprintf("%+v", r), fmt.Sprintf("run %s tick %d (%s)", r.RunKey, r.Tick, p.Sweep))
				}
			default:
				var rows []dataset.GroupRow
				rows, _, err = parquetio.ReadGroups(f)
				for _, r := range rows {
					t.add(r.RunKey+"/"+strconv.Itoa(r.Group), fmt.Sprintf("%+v", r), fmt.Sprintf("run %s group %d (%s)", r.RunKey, r.Group, p.Sweep))
				}
			}
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	return out, nil
}

// diffCounts is one table's line of `sweep diff`: its keys are --json's.
type diffCounts struct {
	Table      string `json:"table"`
	Identical  int    `json:"identical"`
	Differ     int    `json:"differ"`
	OnlyA      int    `json:"only_in_a"`
	OnlyB      int    `json:"only_in_b"`
	DuplicateA int    `json:"stored_twice_in_a"`
	DuplicateB int    `json:"stored_twice_in_b"`
}

// different says whether the table differs between the datasets.
func (c diffCounts) different() bool {
	return c.Differ+c.OnlyA+c.OnlyB+c.DuplicateA+c.DuplicateB > 0
}

// line is the table's summary line.
func (c diffCounts) line(a, b string) string {
	line := fmt.Sprintf("%s: %d rows identical, %d differ, %d only in %s, %d only in %s", c.Table, c.Identical, c.Differ, c.OnlyA, a, c.OnlyB, b)
	if c.DuplicateA+c.DuplicateB > 0 {
		line += fmt.Sprintf("; rows stored more than once: %d in %s, %d in %s", c.DuplicateA, a, c.DuplicateB, b)
	}
	return line
}

// diffTables compares one table of datasets a and b, row by row, and
// shows each difference.
func diffTables(table string, x, y *diffTable, a, b string, show func(format string, args ...any)) diffCounts {
	c := diffCounts{Table: table, DuplicateA: x.dups, DuplicateB: y.dups}
	for _, k := range x.order {
		ry, ok := y.rows[k]
		switch {
		case !ok:
			c.OnlyA++
			show("%s: only in %s: %s\n", table, a, x.where[k])
		case x.rows[k] != ry:
			c.Differ++
			show("%s: differs: %s:\n  %s: %s\n  %s: %s\n", table, x.where[k], a, x.rows[k], b, ry)
		default:
			c.Identical++
		}
	}
	for _, k := range y.order {
		if _, ok := x.rows[k]; !ok {
			c.OnlyB++
			show("%s: only in %s: %s\n", table, b, y.where[k])
		}
	}
	return c
}

func cmdDiff(_ context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlags("diff", "A B   (two dataset folders)", stderr)
	limit := flags.Int("n", 20, "differences to list")
	asJSON := flags.Bool("json", false, "print the counts per table as one JSON document (no listing)")
	pos, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("diff: want two dataset folders, got %s", num.Plural(len(pos), "argument"))
	}
	a, err := location("diff", "dataset", pos[0])
	if err != nil {
		return err
	}
	b, err := location("diff", "dataset", pos[1])
	if err != nil {
		return err
	}
	// Exit codes: 0 same, 1 different, 2 error (either dataset unreadable).
	ta, err := loadDiffTables(a)
	if err != nil {
		return usagef("diff: %s: %v", a, err)
	}
	tb, err := loadDiffTables(b)
	if err != nil {
		return usagef("diff: %s: %v", b, err)
	}
	shown := 0
	show := func(format string, args ...any) {
		if shown < *limit && !*asJSON {
			fmt.Fprintf(stdout, format, args...)
		}
		shown++
	}
	different := false
	var doc []diffCounts
	for _, table := range dataset.Tables {
		c := diffTables(string(table), ta[table], tb[table], a, b, show)
		doc = append(doc, c)
		different = different || c.different()
	}
	if *asJSON {
		if err := writeJSON(stdout, map[string]any{"a": a, "b": b, "same": !different, "tables": doc}); err != nil {
			return err
		}
	} else {
		if shown > *limit {
			fmt.Fprintf(stdout, "… %d more\n", shown-*limit)
		}
		for _, c := range doc {
			fmt.Fprintln(stdout, c.line(a, b))
		}
	}
	if different {
		return fmt.Errorf("datasets differ")
	}
	return nil
}
