package sim

// Version names the simulator's semantics. It is part of every run's key:
// change it whenever the same scenario, policy and seed could give a
// different result, so that stored results are recomputed, not mixed.
const Version = "herd-4" // herd-3: a run lasts window_s after recovery, not a fixed horizon from the start; herd-4: the grpc preset waits exactly base on its first retry (grpc-go family)

// QueueVersion names the queueing server's semantics (Scenario.Concurrency
// > 0) apart from Version, so that a change to it reruns queueing runs only:
// the keys of queueing cells include it, the counting server's keep theirs.
// queue-2: exponential draws by a ziggurat, lognormal ones and the tables
// with CPU-independent math (before: math.Log, math.Exp, math.Erfinv,
// whose bits depend on the CPU). queue-3: recovered_after_s passes over
// windows without new requests (a daily curve's zero slots), where a stuck
// server counted as back.
const QueueVersion = "queue-3"
