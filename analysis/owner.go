package analysis

import (
	"context"
	"math"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// The server's owner can change what no client policy can: bound the
// queue, shed load, send a Retry-After. The owner's view measures, on
// one server, how each such change shortens the recovery of a fleet of
// today's library defaults (and of the answer).

// OwnerFleet are the library presets whose defaults the owner's view
// measures: the defaults most fleets run today.
var OwnerFleet = []string{"grpc", "aws-sdk-go-v2", "go-retryablehttp", "cenkalti-backoff", "polly-v8", "urllib3-default", "resilience4j"}

// OwnerOption is one change the server's owner can make.
type OwnerOption struct {
	Name   string // in words: "turn away what would wait over 500ms"
	Key    string // the sweeps.toml keys that say it: "queue_wait_s = 0.5"
	Server Server
}

// OwnerOptions are the changes the owner's view tries on server s: none,
// a bound on the wait (half a second), a bound on the queue (half a
// second of work), CoDel-style shedding (5 ms target), and a Retry-After
// of 5 s, alone and spread over 5–30 s.
func OwnerOptions(s Server) []OwnerOption {
	with := func(f func(*Server)) Server { x := s; f(&x); return x }
	out := []OwnerOption{{Name: "as it is", Server: s}}
	if s.Queueing() {
		out = append(out,
			OwnerOption{Name: "turn away a request that would wait over 500ms", Key: "queue_wait_s = 0.5",
				Server: with(func(x *Server) { x.QueueWait, x.QueueLimit, x.ShedTarget = 500*time.Millisecond, 0, 0 })},
			OwnerOption{Name: "shed load while the queue's delay stays above 5ms (CoDel)", Key: "shed_target_s = 0.005",
				Server: with(func(x *Server) { x.ShedTarget, x.QueueWait, x.QueueLimit = 5*time.Millisecond, 0, 0 })},
			OwnerOption{Name: "turn away a request that would wait over 500ms, with Retry-After 5s", Key: "queue_wait_s = 0.5, retry_after_s = 5",
				Server: with(func(x *Server) { x.QueueWait, x.RetryAfter, x.RetryAfterMax = 500*time.Millisecond, 5*time.Second, 0 })},
			OwnerOption{Name: "turn away a request that would wait over 500ms, with Retry-After drawn from U(5s, 30s)", Key: "queue_wait_s = 0.5, retry_after_s = 5, retry_after_max_s = 30",
				Server: with(func(x *Server) {
					x.QueueWait, x.RetryAfter, x.RetryAfterMax = 500*time.Millisecond, 5*time.Second, 30*time.Second
				})},
		)
		return out
	}
	return append(out,
		OwnerOption{Name: "send Retry-After 5s", Key: "retry_after_s = 5",
			Server: with(func(x *Server) { x.RetryAfter, x.RetryAfterMax = 5*time.Second, 0 })},
		OwnerOption{Name: "send Retry-After drawn from U(5s, 30s)", Key: "retry_after_s = 5, retry_after_max_s = 30",
			Server: with(func(x *Server) { x.RetryAfter, x.RetryAfterMax = 5*time.Second, 30*time.Second })},
	)
}

// OwnerView is the owner's view on one server: for each option, each
// fleet policy's recovery there.
type OwnerView struct {
	Server  Server
	Options []OwnerOption
	Fleet   []sim.Policy // the presets of OwnerFleet, then the answer (when there is one)
	Back    [][]Recovery // [option][fleet policy]
	// Best is the option that brings the most of the fleet back, then
	// with the least mean time over those it brings back; -1 when none
	// brings any back.
	Best  int
	Seeds int
}

// Owner measures the owner's view of server s for base over seeds
// 1…seeds: the fleet of today's library defaults, and answer (zero
// when none), under each of OwnerOptions(s).
func Owner(ctx context.Context, base sim.Scenario, s Server, answer sim.Policy, q Query, seeds int, measure Measure) (*OwnerView, int, error) {
	v := &OwnerView{Server: s, Options: OwnerOptions(s), Best: -1, Seeds: seeds}
	for _, name := range OwnerFleet {
		if p, ok := sim.PresetByName(name); ok {
			v.Fleet = append(v.Fleet, p.Policy)
		}
	}
	if answer.Kind != "" {
		v.Fleet = append(v.Fleet, answer)
	}
	j := &judger{ctx: ctx, q: q, measure: measure, memo: map[string]*Record{}}
	bestBack, bestTime := 0, math.Inf(1)
	for i, o := range v.Options {
		rs, err := j.recoveries(o.Server.Scenario(base), v.Fleet, seeds)
		if err != nil {
			return nil, j.runs, err
		}
		v.Back = append(v.Back, rs)
		back, sum := 0, 0.0
		for _, r := range rs {
			if r.Recovers() {
				back++
				sum += r.Time
			}
		}
		if back == 0 {
			continue
		}
		if mean := sum / float64(back); back > bestBack || (back == bestBack && mean < bestTime) {
			v.Best, bestBack, bestTime = i, back, mean
		}
	}
	return v, j.runs, nil
}
