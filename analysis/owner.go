package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The server's owner can change what no client policy can: bound the
// queue, shed load, send a Retry-After. The owner's view measures, on
// one server, how each such change shortens the recovery of a fleet of
// today's library defaults (and of the answer).

// OwnerFleet are the library presets whose defaults the owner's view
// measures: the defaults most fleets run today.
var OwnerFleet = []string{"grpc", "aws-sdk-go-v2", "go-retryablehttp", "cenkalti-backoff", "polly-v8", "urllib3-default", "resilience4j"}

// ownerFleet is OwnerFleet's presets' policies.
func ownerFleet() []sim.Policy {
	var fleet []sim.Policy
	for _, name := range OwnerFleet {
		if p, ok := sim.PresetByName(name); ok {
			fleet = append(fleet, p.Policy)
		}
	}
	return fleet
}

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
	v := &OwnerView{Server: s, Options: OwnerOptions(s), Best: -1, Seeds: seeds, Fleet: ownerFleet()}
	if answer.Kind != "" {
		v.Fleet = append(v.Fleet, answer)
	}
	j := &judger{ctx: ctx, q: q, measure: measure, memo: map[string]*Record{}}
	bestBack, bestTime := 0, math.Inf(1)
	for i, o := range v.Options {
		rs, err := j.recoveries(o.Server.Cell(base, sim.Policy{}), v.Fleet, seeds)
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

// StoredOwner is an owner's view whose runs a dataset holds: the view,
// and the question (on the counting server) it was asked for.
type StoredOwner struct {
	View *OwnerView
	Base sim.Scenario
}

// StoredOwners finds the owner's views recs hold whole, as the report
// shows them: for each queueing server with open-loop traffic, as it is
// (no queue bound, shedding or Retry-After), whose every option
// (OwnerOptions) the runs hold for every policy of OwnerFleet on seeds
// 1…DefaultOwnerSeeds, the view Owner gives over those runs, with the one
// other policy measured under every option as the answer (none when there
// are several or none). It is the table `sweep recommend` prints for that
// server, measured on the same runs.
func StoredOwners(recs []Record) ([]StoredOwner, error) {
	byRun := make(map[string]*Record, len(recs))
	var servers []sim.Scenario
	for i := range recs {
		r := &recs[i]
		byRun[r.RunKey] = r
		if sc := r.Cell.Scenario; asItIs(sc) && !slices.Contains(servers, sc) {
			servers = append(servers, sc)
		}
	}
	has := func(c grid.Cell) bool {
		for seed := 1; seed <= DefaultOwnerSeeds; seed++ {
			if byRun[grid.Run{Cell: c, Seed: uint32(seed)}.Key()] == nil {
				return false
			}
		}
		return true
	}
	stored := func(_ context.Context, runs []grid.Run) ([]Record, error) {
		out := make([]Record, len(runs))
		for i, r := range runs {
			rec := byRun[r.Key()]
			if rec == nil {
				return nil, fmt.Errorf("owner's view: run %s not in the dataset", r.Key())
			}
			out[i] = *rec
		}
		return out, nil
	}
	var out []StoredOwner
	for _, sc := range servers {
		s := Server{Service: sc.Service, ServiceTime: sc.ServiceTime, ServiceP99: sc.ServiceP99, Workers: sc.Concurrency, Timeout: sc.Timeout, Arrival: sc.ArrivalRate}
		base := sc
		base.RecoverAt, base.Horizon = sc.RecoverAt-SteadyLead, sc.Horizon-SteadyLead
		base.OutageStart, base.Service, base.ServiceTime, base.ServiceP99, base.Concurrency, base.Timeout, base.ArrivalRate = 0, "", 0, 0, 0, 0, 0
		if s.Scenario(base) != sc {
			continue // not a server recommend's owner's view asks about
		}
		fleet := ownerFleet()
		opts := OwnerOptions(s)
		whole := func(p sim.Policy) bool {
			for _, o := range opts {
				if !has(o.Server.Cell(base, p)) {
					return false
				}
			}
			return true
		}
		if !allOf(fleet, whole) {
			continue
		}
		var answer sim.Policy
		var others []sim.Policy
		for _, r := range recs {
			if p := r.Cell.Policy; r.Cell.Scenario == sc && !slices.Contains(fleet, p) && !slices.Contains(others, p) && whole(p) {
				others = append(others, p)
			}
		}
		if len(others) == 1 {
			answer = others[0]
		}
		v, _, err := Owner(context.Background(), base, s, answer, Query{Capacity: base.Capacity}, DefaultOwnerSeeds, stored)
		if err != nil {
			return nil, err
		}
		out = append(out, StoredOwner{View: v, Base: base})
	}
	return out, nil
}

// asItIs reports whether sc is a queueing server with open-loop traffic
// that the owner has not changed: no queue bound, shedding or
// Retry-After, constant traffic after a steady lead.
func asItIs(sc sim.Scenario) bool {
	return sc.Concurrency > 0 && sc.ArrivalRate > 0 && sc.ArrivalCurve == "" && sc.OutageStart == SteadyLead &&
		sc.QueueLimit == 0 && sc.QueueWait == 0 && sc.ShedTarget == 0 && sc.RetryAfter == 0 && sc.RetryAfterMax == 0
}

func allOf[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if !f(x) {
			return false
		}
	}
	return true
}
