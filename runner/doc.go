// Package runner runs many simulations on a pool of workers and hands their
// outcomes back in job order, whatever order they finish in, so that the
// same jobs give byte-identical output on any number of workers. It bounds
// what is in flight (a window of jobs, and their weight in bytes) and stops
// runs in progress when told to.
//
// It stands third in the pipeline (config → grid of cells → simulator runs
// → Parquet → aggregates → plots / markdown): jobs are grid runs, each run
// by sim. It reads no file.
package runner
