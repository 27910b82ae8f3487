package analysis

import (
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
)

// The tests read Parquet datasets, as cmd/sweep does.
func init() { dataset.SetFormat(parquetio.Format{}) }
