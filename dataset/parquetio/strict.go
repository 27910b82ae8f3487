package parquetio

import (
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
)

// ReadRunsStrict reads every row of a runs file as ReadRuns does, after
// reading it every other way a reader of the dataset does: ScanRuns over
// every column (row group by row group, in batches), ReadRunKeys (one
// column across row groups) and FindRunsOf for every cell (the cell keys
// as a dictionary, the results by row group). The Parquet library decodes
// a damaged file differently along these paths (a page header's count
// read in batches or whole): a file any of them refuses is refused here,
// so that `sweep check` passes no part a reader refuses. A sealed part
// whose checksum holds (Verify) needs only ReadRuns: it is the file the
// writer wrote.
func ReadRunsStrict(r parquet.ReaderAtSeeker) ([]dataset.Record, dataset.Meta, error) {
	r = keepOpen{r} // each reader closes what it reads
	recs, meta, err := ReadRuns(r)
	if err != nil {
		return nil, meta, err
	}
	var all []string
	for _, f := range runsFields() {
		all = append(all, f.Name)
	}
	if _, err := ScanRuns(r, all, func(dataset.Batch) error { return nil }); err != nil {
		return nil, meta, err
	}
	if _, _, err := ReadRunKeys(r); err != nil {
		return nil, meta, err
	}
	cells := map[string]grid.Cell{}
	for _, rec := range recs {
		cells[rec.CellKey] = rec.Cell
	}
	if _, _, _, err := FindRunsOf(r, dataset.Want{Cells: cells}); err != nil {
		return nil, meta, err
	}
	return recs, meta, nil
}

// keepOpen hides the Close of a file read more than once: the Parquet
// library closes its source when it is done with it.
type keepOpen struct{ parquet.ReaderAtSeeker }
