// Package dataset owns the schema of herdsweep's Parquet files: the runs
// table (one row per run: every parameter, the seed, every metric) and the
// timelines table (one row per tick of the runs that asked for one). Writer
// and reader stand side by side here, so that a column is named once.
//
// It stands between the simulator runs and the analysis in the pipeline
// (config → grid of cells → simulator runs → Parquet → aggregates → plots /
// markdown). It writes to an io.Writer and reads from an io.ReaderAt: the
// folder layout (Hive-style sweep=NAME folders of part files, written
// atomically) is cmd/sweep's.
//
// Parameter columns are named by experiments.Params; units are in the names
// (cap_s, capacity_rps, t99_s). "Not finished" is a null, never a number.
package dataset
