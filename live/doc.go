// Package live checks the simulator against real clients and a real server.
//
// It stands beside the pipeline, not in it (config → grid of cells →
// simulator runs → Parquet → aggregates → plots / markdown): a live run
// starts an HTTP server on the loopback interface that is down until the
// scenario's recovery time and then serves floor(capacity × tick) requests
// per tick, as sim's server does, and N clients, each a goroutine with its
// own net/http client driven by a real retry library (cenkalti/backoff v4
// and v5, hashicorp/go-retryablehttp, aws-sdk-go-v2's standard retryer,
// grpc-go's backoff formula) or, for sim:NAME, by the simulator itself: a
// sim.Driven run of preset NAME stepped at each close of the server's
// ticks, which replays sim's run of the seed wherever the machine keeps
// time (simdriver.go; it checks the harness). The run takes real time. Its
// measurements (arrivals per tick, requests sent, each client's success
// tick) are then set against the simulator's prediction for the same
// scenario and preset over many seeds: the live value's percentile rank in
// the simulated distribution, and the per-tick arrivals as a 5th–95th
// percentile band (Compare).
//
// A comparison ends in one Verdict (verdict.go): agrees, disagrees, or
// inconclusive when the run's evidence does not hold (Measurement.Degraded:
// requests whose tick the harness set were counted in another, or a
// library's ticks were answered late), whatever its metrics say. The text,
// the JSON, the figure and `sweep live`'s exit status all say that value.
//
// Unlike sim, this package does I/O, starts goroutines and reads the clock.
// It listens on 127.0.0.1 only; every client loop is bounded in attempts
// and in time; a run stops by itself at its horizon or when every client
// is done, and cleans up when its context is cancelled.
package live
