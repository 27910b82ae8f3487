package sim

// Version names the simulator's semantics. It is part of every run's key:
// change it whenever the same scenario, policy and seed could give a
// different result, so that stored results are recomputed, not mixed.
const Version = "herd-3"
