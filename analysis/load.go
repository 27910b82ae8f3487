package analysis

import (
	"fmt"
	"io/fs"

	"github.com/herdsweep/herdsweep/dataset"
)

// Record is one run of the dataset, with the sweep whose folder holds it.
type Record struct {
	dataset.Record
	Sweep string
}

// Dataset is every run read from a results folder.
type Dataset struct {
	Records []Record
	Metas   []dataset.Meta // one per part, in read order
	Files   int
	// Duplicates counts the rows left out because their run was already
	// read: Repeated within one sweep's folder (a storage fault; `sweep
	// check` names them), Shared between sweeps (a run two sweeps ask for).
	Repeated, Shared int
	Warnings         []string // about the storage, for the report
}

// Load reads every committed runs part of a results folder
// (runs/sweep=NAME/*.parquet in d.FS, read with d.Format), in sweep and name order, so the same
// folder gives the same records. A run stored more than once counts once:
// the first copy read is kept and a warning says how many were left out.
// A folder without parts, a file that is not Parquet and a file from
// another schema version are errors naming the file.
func Load(d dataset.Folder) (*Dataset, error) {
	fsys, format := d.FS, formatOf(d)
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	if len(l.Runs) == 0 {
		return nil, fmt.Errorf("no Parquet files under runs/: run `sweep run` first, or point --results at a dataset")
	}
	ds := &Dataset{Files: len(l.Runs)}
	seen := map[string]string{} // run key → the sweep of the copy kept
	example := ""
	for _, part := range l.Runs {
		p := part.Path()
		recs, meta, err := readParquet(fsys, p, format.ReadRuns)
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		ds.Metas = append(ds.Metas, meta)
		for _, r := range recs {
			if sw, ok := seen[r.RunKey]; ok {
				if sw == part.Sweep {
					ds.Repeated++
					if example == "" {
						example = fmt.Sprintf(" (run %s again in %s)", r.RunKey, p)
					}
				} else {
					ds.Shared++
				}
				continue
			}
			seen[r.RunKey] = part.Sweep
			ds.Records = append(ds.Records, Record{Record: r, Sweep: part.Sweep})
		}
	}
	if ds.Repeated > 0 {
		ds.Warnings = append(ds.Warnings, fmt.Sprintf("%d rows repeat a run already stored in the same sweep%s: each run counted once; `sweep check` lists them", ds.Repeated, example))
	}
	if ds.Shared > 0 {
		ds.Warnings = append(ds.Warnings, fmt.Sprintf("%d runs are stored in more than one sweep's folder: each counted once", ds.Shared))
	}
	return ds, nil
}

// formatOf is d's Format; a Folder without one is a programmer's error.
func formatOf(d dataset.Folder) dataset.Format {
	if d.Format == nil {
		panic("analysis: a dataset.Folder without a Format")
	}
	return d.Format
}

// FileError is an error reading one file of a dataset.
type FileError struct {
	Path string // in the dataset's fs.FS
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

func readParquet[T any](fsys fs.FS, p string, read func(dataset.File) ([]T, dataset.Meta, error)) ([]T, dataset.Meta, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, dataset.Meta{}, err
	}
	defer f.Close()
	ra, ok := f.(dataset.File)
	if !ok {
		return nil, dataset.Meta{}, fmt.Errorf("cannot seek in %s", p)
	}
	return read(ra)
}

// sideRows reads the visible parts of a side table; a run's rows come from
// the first part that holds it, so a run stored twice counts once.
func sideRows[T any](fsys fs.FS, table string, read func(dataset.File) ([]T, dataset.Meta, error), key func(T) string) ([]T, error) {
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	from := map[string]string{} // run key → the part its rows come from
	var out []T
	for _, part := range l.Side[table] {
		p := part.Path()
		rows, _, err := readParquet(fsys, p, read)
		if err != nil {
			return nil, &FileError{Path: p, Err: err}
		}
		for _, r := range rows {
			k := key(r)
			if f, ok := from[k]; ok && f != p {
				continue
			}
			from[k] = p
			out = append(out, r)
		}
	}
	return out, nil
}

// Timelines reads the timelines of the given runs from d's timelines/
// folders; runs without one are left out.
func Timelines(d dataset.Folder, runKeys map[string]bool) (map[string][]dataset.TimelineRow, error) {
	format := formatOf(d)
	rows, err := sideRows(d.FS, dataset.TimelinesDir, func(r dataset.File) ([]dataset.TimelineRow, dataset.Meta, error) {
		return format.ReadTimelinesOf(r, runKeys)
	}, func(r dataset.TimelineRow) string { return r.RunKey })
	if err != nil {
		return nil, err
	}
	out := map[string][]dataset.TimelineRow{}
	for _, r := range rows {
		if runKeys[r.RunKey] {
			out[r.RunKey] = append(out[r.RunKey], r)
		}
	}
	return out, nil
}

// GroupRows reads every row of d's groups/ folders (mixed fleets); none
// when there are none.
func GroupRows(d dataset.Folder) ([]dataset.GroupRow, error) {
	return sideRows(d.FS, dataset.GroupsDir, formatOf(d).ReadGroups, func(r dataset.GroupRow) string { return r.RunKey })
}
