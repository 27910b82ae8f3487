// Package grid is the vocabulary every stage of herdsweep shares: a Cell
// (one point of a grid: a scenario and the policy its clients run, without
// its seed), a Run (a cell with one seed), the Params that name a cell's
// parameters once for sweeps.toml, the dataset's columns and the keys, and
// the policy-spec language, written (Cell.PolicySpec) and read
// (ParsePolicy) side by side. It also holds recommend's candidate space
// (CandidateSpace) and what a run of a cell takes in memory.
//
// It stands between the simulator and everything built on it (config →
// grid of cells → simulator runs → Parquet → aggregates → plots /
// markdown): it imports sim only and reads no file, so that reading a
// dataset never depends on the config loader (experiments).
//
// Cells and runs have stable keys: hashes of every parameter (and the seed
// and sim.Version), so that a dataset can tell which runs it already holds.
// Two cells that behave the same (after sim.Policy.Normalize) have the same
// key.
package grid
