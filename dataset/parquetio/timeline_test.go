package parquetio

import (
	"bytes"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// The stored timelines of every kind of server sum to their runs' totals:
// arrivals to sent, served (with the answers after the last tick) to the
// clients served on the counting server and to goodput on a queueing
// server, gave_up to the clients that gave up. Before, ticks without
// arrivals were not written and the answers and give-ups in them went too:
// a queueing server's served summed to 20,221 against a goodput of 65,855.
func TestStoredTimelinesSumToTotals(t *testing.T) {
	t.Parallel()
	counting := sim.Article()
	counting.Clients = 500
	queue := counting
	queue.Concurrency, queue.Service, queue.ServiceTime, queue.Timeout = 4, "exponential", 40*time.Millisecond, time.Second
	open := queue
	open.Clients, open.Spread, open.ArrivalRate, open.Horizon = 1, 0, 80, 3*time.Minute // 80 % load
	open.OutageStart, open.RecoverAt = 20*time.Second, 50*time.Second
	bounded := open
	bounded.QueueLimit, bounded.ServiceTime = 8, 50*time.Millisecond // 100 % load: turned away
	fine := open
	fine.Tick, fine.Capacity = time.Millisecond, 1000 // most ticks without an arrival, answers in them
	curve := open
	curve.ArrivalCurve, curve.ArrivalClock = "1 0 2", 7*time.Hour+59*time.Minute // 2 minutes of nothing from 08:00
	breaker := sim.Policy{BreakerRatio: 0.1, ClientsPerProcess: 50}
	capped := sim.DefaultPolicy(sim.FullJitter)
	capped.MaxAttempts = 6
	for _, tc := range []struct {
		name string
		sc   sim.Scenario
		p    sim.Policy
	}{
		{"counting", counting, capped},
		{"counting, a breaker refusing locally", counting, withBreaker(capped, breaker)},
		{"queueing, a cohort", queue, capped},
		{"queueing, open loop", open, capped},
		{"queueing, open loop, 1 ms ticks", fine, capped},
		{"queueing, open loop, a breaker", open, withBreaker(capped, breaker)},
		{"queueing, open loop, a bounded queue", bounded, capped},
		{"queueing, open loop, a daily curve", curve, capped},
	} {
		if err := tc.sc.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		run := grid.Run{Cell: grid.Cell{Scenario: tc.sc, Policy: tc.p.Normalize()}, Seed: 3}
		var s sim.Sim
		var tl sim.Timeline
		res, err := s.Run(run.Cell.Scenario, run.Cell.Policy, sim.NewMulberry32(run.Seed), &tl)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var buf bytes.Buffer
		w := NewTimelineWriter(&buf, meta)
		w.Append(run, &tl)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		rows, _, err := ReadTimelines(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var arrivals, served, gaveUp int64
		for _, r := range rows {
			arrivals += int64(r.Arrivals)
			served += int64(r.Served)
			gaveUp += int64(r.GaveUp)
		}
		wantServed := int64(res.Succeeded)
		if tc.sc.Concurrency > 0 {
			wantServed = res.Goodput - tl.ServedAfter
		}
		if arrivals != res.Sent || served != wantServed || gaveUp != int64(res.GaveUp)+res.OfferedGaveUp || served == 0 || gaveUp == 0 {
			t.Errorf("%s: stored timeline sums to arrivals %d, served %d, gave up %d; want %d, %d, %d (%d answered after the last tick), none 0",
				tc.name, arrivals, served, gaveUp, res.Sent, wantServed, int64(res.GaveUp)+res.OfferedGaveUp, tl.ServedAfter)
		}
		if tl.ServedAfter < 0 || (tc.sc.ArrivalRate == 0 && tl.ServedAfter != 0) {
			t.Errorf("%s: %d answered after the last tick", tc.name, tl.ServedAfter)
		}
	}
}

func withBreaker(p, c sim.Policy) sim.Policy {
	p.BreakerRatio, p.ClientsPerProcess = c.BreakerRatio, c.ClientsPerProcess
	return p
}
