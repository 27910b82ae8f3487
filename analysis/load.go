package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"

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
}

var hiveSweep = regexp.MustCompile(`^sweep=(.+)$`)

// Load reads every runs part of a results folder: runs/sweep=NAME/*.parquet
// in fsys. Files are read in name order, so the same folder gives the same
// records. A folder without parts, a file that is not Parquet and a file
// from another schema version are errors naming the file.
func Load(fsys fs.FS) (*Dataset, error) {
	files, err := parquetFiles(fsys, "runs")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Parquet files under runs/: run `sweep run` first, or point --results at a dataset")
	}
	ds := &Dataset{Files: len(files)}
	for _, p := range files {
		sweep := ""
		if m := hiveSweep.FindStringSubmatch(path.Base(path.Dir(p))); m != nil {
			sweep = m[1]
		}
		recs, meta, err := readParquet(fsys, p, dataset.ReadRuns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		ds.Metas = append(ds.Metas, meta)
		for _, r := range recs {
			ds.Records = append(ds.Records, Record{Record: r, Sweep: sweep})
		}
	}
	return ds, nil
}

func readParquet[T any](fsys fs.FS, p string, read func(parquet.ReaderAtSeeker) ([]T, dataset.Meta, error)) ([]T, dataset.Meta, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, dataset.Meta{}, err
	}
	defer f.Close()
	ra, ok := f.(parquet.ReaderAtSeeker)
	if !ok {
		return nil, dataset.Meta{}, fmt.Errorf("cannot seek in %s", p)
	}
	return read(ra)
}

// Timelines reads the timelines of the given runs from fsys's timelines/
// folders; runs without one are left out.
func Timelines(fsys fs.FS, runKeys map[string]bool) (map[string][]dataset.TimelineRow, error) {
	out := map[string][]dataset.TimelineRow{}
	files, err := parquetFiles(fsys, "timelines")
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		rows, _, err := readParquet(fsys, p, func(r parquet.ReaderAtSeeker) ([]dataset.TimelineRow, dataset.Meta, error) {
			return dataset.ReadTimelinesOf(r, runKeys)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, r := range rows {
			if runKeys[r.RunKey] {
				out[r.RunKey] = append(out[r.RunKey], r)
			}
		}
	}
	return out, nil
}

// GroupRows reads every row of fsys's groups/ folders (mixed fleets); none
// when there are none.
func GroupRows(fsys fs.FS) ([]dataset.GroupRow, error) {
	files, err := parquetFiles(fsys, "groups")
	if err != nil {
		return nil, err
	}
	var out []dataset.GroupRow
	for _, p := range files {
		rows, _, err := readParquet(fsys, p, dataset.ReadGroups)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// parquetFiles lists the committed part files under dir, in name order:
// hidden files (a part being written) are not data. A missing dir has none.
func parquetFiles(fsys fs.FS, dir string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	sort.Strings(files)
	return files, err
}
