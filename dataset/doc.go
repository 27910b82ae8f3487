// Package dataset owns the schema of herdsweep's Parquet files: the runs
// table (one row per run: every parameter, the seed, every metric), the
// timelines table (one row per tick of the runs that asked for one) and the
// groups table (one row per policy group of a mixed fleet). Writer and
// reader stand side by side here, so that a column is named once.
//
// It stands between the simulator runs and the analysis in the pipeline
// (config → grid of cells → simulator runs → Parquet → aggregates → plots /
// markdown). It writes to an io.Writer and reads from an io.ReaderAt; List
// reads the folder layout (Hive-style sweep=NAME folders of part files)
// from an fs.FS and says which parts are data. Writing parts into that
// layout, the commit protocol of many writers, is cmd/sweep's.
//
// Readers check every column's type before use and turn a panic of the
// Parquet library on a corrupt file into an error: a user's file never
// panics the program.
//
// Parameter columns are named by experiments.Params; units are in the names
// (cap_s, capacity_rps, t99_s). "Not finished" is a null, never a number.
package dataset
