// Package parquetio is the Parquet IO of herdsweep's datasets: the Arrow
// schema of each table, and the writers (RunsWriter, TimelineWriter,
// GroupsWriter, CellsWriter) and readers, each built from the dataset
// package's column list of its table (dataset.RunsTable, …), which names
// every column once: ReadRuns, ReadTimelines, ReadGroups,
// ReadRunsOf/FindRunsOf with row-group pruning, and the streaming scan
// (ScanRuns). Format is its dataset.Format, which cmd/sweep
// passes to the analysis with each folder (dataset.Folder). It is the only
// package that imports Arrow and Parquet.
//
// Writers write to an io.Writer and readers read from an io.ReaderAt.
// Readers check every column's type before use and turn a panic of the
// Parquet library on a corrupt file into an error: a user's file never
// panics the program.
package parquetio
