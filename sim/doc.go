// Package sim is herdsweep's simulator: N clients that all failed during an
// outage retry against a server that recovers at a given time with a given
// capacity, in discrete ticks.
//
// It stands first in the pipeline (config → grid of cells → simulator runs →
// Parquet → aggregates → plots / markdown) and imports nothing of the project.
// It does no I/O, starts no goroutines, reads no clock and keeps no globals:
// the caller drives it and hands it the random source (Mulberry32, the PRNG of
// the article whose tables herdsweep reproduces).
//
// The default semantics are those of the article's herd.mjs, exactly:
//
//   - each client first sends at U(0, Spread), one draw per client in index order;
//   - a client arrives at the first tick t (t = k·Tick) with next <= t;
//   - arrivals of one tick are served in client-index order while the tick's
//     budget lasts: floor(Capacity × Tick) whole requests, no carry-over, and
//     none before RecoverAt;
//   - each rejected client draws its next delay d from its policy and is
//     rescheduled at t + d;
//   - one Mulberry32 stream per run, shared by the initial spread and every
//     delay draw, consumed in that order;
//   - the run ends when no client is pending or at the Horizon.
//
// Internally times are float64 milliseconds, because that is how herd.mjs
// computes them and the article's figures depend on every bit of them. The
// public types carry time.Duration. Every bit is the same on every CPU: the
// formulas convert their products with float64() so that Go never fuses a
// multiply and an add (fmath.go says why), as JavaScript never does.
//
// Driven (driven.go) runs a run's loop with the caller as its server, a
// tick at a time: sweep live's sim:NAME clients against a real server. Its
// loop is a coroutine (iter.Pull) that takes turns with the caller, never
// running at once with it.
//
// A caller on another goroutine stops a long run with Sim.Stop, a flag the
// run reads every StopEvery units of work (clients started, ticks,
// arrivals); Scenario.Footprint estimates a run's memory, by kind of
// storage, before it is run.
//
// A run is start → step per tick → finish (step.go): start picks the pieces
// once — the server model, the clients' delayer (a policy wrapped in its
// limits), the calendar's mode (a dense bitmap, or chains of blocks above
// 16 MiB of bitmap), the fleet, the timeline — and one loop runs the ticks
// of that kind: loopDense (the article's runs), loopList (a sparse
// calendar, a trace or a mixed fleet) or loopQueue. Every rejected client
// goes through one rule, Sim.reject (which, for a fixed delay without
// limits on a dense calendar, calendar.moveColumn applies to a whole tick
// at once).
//
// Beside the counting server, a queueing server (Scenario.Concurrency > 0,
// queue.go) serves first come, first served with a number of workers and
// drawn service times, bounds its queue by length or wait, can shed load
// CoDel-style, and its clients time out (the server still does the work);
// open-loop traffic (Scenario.ArrivalRate) adds new requests throughout the
// run. It is checked against M/M/1, M/M/c, M/D/1 and M/M/c/K, and with
// retrying clients against an M/M/c/K retrial queue, a Markov chain solved
// exactly (ctmc_test.go). Its draws give the same bits on every CPU
// (expdraw.go's ziggurat, fmath.go's log, exp and erf⁻¹). With open-loop
// traffic a run has a steady state to return to, and recovery.go owns the
// time back to it (Result.Recovered, Result.BackAfter, BackRule).
//
// Either server may be in a brownout (brownout.go): up, but failing a share
// of what it serves whatever the load (Scenario.FailShare, FailCurve), a
// queueing server also answering late (AddedLatency). A failed request is
// served, then answered with a 503; its draw comes from the run's stream,
// and a scenario without a brownout draws nothing more. Checked against
// the closed forms of success, 1 − p^(N+1), and load amplification,
// (1 − p^(N+1))/(1 − p), with no capacity limit (brownout_test.go).
//
// The cost of a run grows with the number of requests sent, not with
// clients × ticks: pending clients sit in per-tick intrusive lists, and the
// inner loop allocates nothing.
package sim
