package reports

import "github.com/herdsweep/herdsweep/dataset"

// The tests read Parquet datasets, as cmd/sweep does.
func init() { dataset.SetFormat(dataset.Parquet{}) }
