// Package experiments turns configuration into validated cells: it reads
// sweeps.toml, expands each named sweep into the cartesian product of its
// axes, and holds the article's tables as built-in experiments together with
// their published figures. It also runs a list of runs on a pool of workers,
// handing back results in run order whatever the order they finish in.
//
// It stands second in the pipeline (config → grid of cells → simulator runs
// → Parquet → aggregates → plots / markdown). It knows sim's types and the
// config bytes it is given; it opens no file.
//
// Every bound on a value lives in the Validate of the sim type that owns the
// field; the loader reports sim's errors at the config's line and key, in
// its words. Sizes (cells, runs, list lengths, a run's memory against
// Limits) are checked before anything is expanded or allocated.
//
// A cell is one point of a grid, without its seed; a run is a cell with one
// seed. Both have stable keys: hashes of every parameter (and the seed and
// sim.Version), so that a dataset can tell which runs it already holds.
package experiments
