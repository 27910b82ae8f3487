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
// server counted as back. queue-4: recovered_after_s is the time back to the
// run's own steady state (sim/recovery.go: the clients the outage left
// waiting answered or given up, the queue at its ordinary length by Erlang
// C, no later window answering more late than in time), not goodput within
// 5 % of demand in every 10 s window to the horizon, which ordinary
// fluctuation tripped (late or never back without an outage, later with a
// longer horizon, never for a steady state losing over 5 %).
const QueueVersion = "queue-4"

// PolicyVersion names, apart from Version, the semantics of the policies
// that issue 22 held against their libraries' source, so that only their
// runs are redone: the keys of a cell any of whose policies is Revised
// include it, every other cell keeps its key. policy-1: polly-v2 with
// honor_retry_after draws and moves its state on every retry, a
// Retry-After only replacing the delay (ms-resilience-standard, which also
// gives up on an open breaker: retry_on transient); a retry budget takes a
// deposit per original request, not per request sent (Finagle); the
// resilience4j-random family draws from [lo, hi + 1) ms, at least 1 ms, and
// draws at width 0 too. (urllib3 and client-go-rest changed parameters,
// which move their keys by themselves.)
const PolicyVersion = "policy-1"

// Revised reports whether p's runs changed with PolicyVersion: a key of a
// cell with such a policy, in any group, includes it.
func (p Policy) Revised() bool {
	return (p.Kind == PollyV2 && p.HonorRetryAfter) || p.Kind == Resilience4j || p.RetryBudget > 0 ||
		p.RetryOn == RetryOnTransient || p.RetryOn == RetryOnRetryAfterOnly
}
