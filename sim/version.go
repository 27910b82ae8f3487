package sim

// Version names the simulator's semantics. It is part of every run's key:
// change it whenever the same scenario, policy and seed could give a
// different result, so that stored results are recomputed, not mixed.
const Version = "herd-4" // herd-3: a run lasts window_s after recovery, not a fixed horizon from the start; herd-4: the grpc preset waits exactly base on its first retry (grpc-go family)
