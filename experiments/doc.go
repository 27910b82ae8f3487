// Package experiments turns configuration into validated cells: it reads
// sweeps.toml and expands each named sweep into the cartesian product of
// its axes, as grid cells with the seeds each runs with (Sweep).
//
// It stands second in the pipeline (config → grid of cells → simulator runs
// → Parquet → aggregates → plots / markdown), and only the command imports
// it: the cells, runs and keys every later stage reads are grid's. It knows
// sim's and grid's types and the config bytes it is given; it opens no file.
//
// Every bound on a value lives in the Validate of the sim type that owns the
// field; the loader reports sim's errors at the config's line and key, in
// its words (grid.KeyWords). Sizes (cells, runs, list lengths, a run's
// memory against Limits) are checked before anything is expanded or
// allocated.
package experiments
