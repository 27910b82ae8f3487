package analysis

import (
	"io/fs"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/parquetio"
)

// parquet is the dataset in fsys read as Parquet, as cmd/sweep reads it.
func parquet(fsys fs.FS) dataset.Folder {
	return dataset.Folder{FS: fsys, Format: parquetio.Format{}}
}
