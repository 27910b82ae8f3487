package parquetio

import "github.com/herdsweep/herdsweep/dataset"

// Format is the dataset.Format of herdsweep's Parquet files: a program
// that reads datasets passes it in with each folder (dataset.Folder).
type Format struct{}

func (Format) ScanRuns(r dataset.File, columns []string, fn func(dataset.Batch) error) (dataset.Meta, error) {
	return ScanRuns(r, columns, fn)
}
func (Format) ReadRuns(r dataset.File) ([]dataset.Record, dataset.Meta, error) { return ReadRuns(r) }
func (Format) ReadRunKeys(r dataset.File) ([]string, dataset.Meta, error)      { return ReadRunKeys(r) }
func (Format) ReadGroups(r dataset.File) ([]dataset.GroupRow, dataset.Meta, error) {
	return ReadGroups(r)
}
func (Format) ReadTimelinesOf(r dataset.File, keys map[string]bool) ([]dataset.TimelineRow, dataset.Meta, error) {
	return ReadTimelinesOf(r, keys)
}
func (Format) FindRunsOf(r dataset.File, want dataset.Want) (*dataset.Found, dataset.Meta, dataset.Selected, error) {
	return FindRunsOf(r, want)
}

var _ dataset.Format = Format{}
