package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/internal/num"
)

// writeCheck writes the report of `sweep check DIR` as text: what each
// table holds, the problems and notes, and a last line.
func writeCheck(w io.Writer, dir string, rep *store.Report) {
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "%s: %s, %s, %s\n", t.Table, num.Plural(t.Parts, "part"), num.Plural(t.Rows, "row"), num.Plural(t.Runs, "run"))
	}
	writeCheckText(w, rep)
	switch {
	case len(rep.Problems) == 0 && len(rep.Notes) > 0:
		fmt.Fprintf(w, "%s: no problems (%s)\n", dir, num.Plural(len(rep.Notes), "note"))
	case len(rep.Problems) == 0:
		fmt.Fprintf(w, "%s: no problems\n", dir)
	default:
		fmt.Fprintf(w, "%s: %s\n", dir, num.Plural(len(rep.Problems), "problem"))
	}
}

// writeCheckText writes a check's problems and notes, a line each.
func writeCheckText(w io.Writer, r *store.Report) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: %s: %s\n", p.Kind, filepath.Join(r.Dir, filepath.FromSlash(p.Path)), p.Message)
	}
	for _, p := range r.Notes {
		fmt.Fprintf(w, "note: %s: %s: %s\n", p.Kind, filepath.Join(r.Dir, filepath.FromSlash(p.Path)), p.Message)
	}
}

const checkHelp = `Is the dataset whole and readable? check reads every part as strictly as
any reader does (and against the checksum it was sealed with when
written), and reports:
  corrupt, foreign   a part a reader refuses, or one changed since it was written
  stale              a part of another simulator version
  duplicate          runs stored twice (readers count each once)
  incomplete         side-table rows a runs part commits that are not there
  missing            runs that a run recorded it would write (its intent) and
                     that are not there: a shard that never ran or died, with
                     the command that finishes it
  orphan             a side-table part whose runs part is not there: herdsweep's
                     readers skip it, a direct reader (DuckDB) would not
  temporary, lock    a writer at work: the dataset is not finished
  special, unknown   files that are not a dataset's
Notes, which do not fail it, name leftovers no reader sees (the temporary
files and locks of writers that are gone): the next "sweep run" of their
sweep removes them, and nothing else.

Exit codes: 0 no problem, 1 problems, 2 not a dataset.
`

func cmdCheck(_ context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagsDoc("check", "[--json] DIR   (a dataset folder)", checkHelp, stderr)
	asJSON := flags.Bool("json", false, "print the report as JSON")
	pos, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("check: want one dataset folder, got %s", num.Plural(len(pos), "argument"))
	}
	dir, err := location("check", "dataset", pos[0])
	if err != nil {
		return err
	}
	if err := store.Stat(dir); err != nil {
		return usagef("check: %s: %v", dir, err)
	}
	if err := store.Stat(store.Join(dir, dataset.RunsDir)); err != nil {
		return usagef("check: %s: no runs/ folder: not a dataset (want the --out of `sweep run`)", dir)
	}
	rep, err := store.Check(dir, nil)
	if err != nil {
		return usagef("check: %s: %v", dir, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeCheck(stdout, dir, rep)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%s: %s", dir, num.Plural(len(rep.Problems), "problem"))
	}
	return nil
}
