package sim

import (
	"testing"
	"time"
)

// benchRun runs sc under p once per iteration on seeds 206…210 in turn and
// reports ns per run and ns per request event (an arrival at the server).
func benchRun(b *testing.B, sc Scenario, p Policy) {
	b.Helper()
	var s Sim
	rng := NewMulberry32(0)
	var events int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		rng.Seed(206 + uint32(i%5))
		r, err := s.Run(sc, p, rng, nil)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Sent
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(float64(s.footprint())/float64(sc.Clients), "bytes/client")
}

// BenchmarkTable1 is the article's table 1 row by row (and the other
// families on the same scenario), the unit the README compares with herd.mjs.
func BenchmarkTable1(b *testing.B) {
	sc := Article()
	for _, tc := range []struct {
		name string
		p    Policy
		ra   time.Duration
	}{
		{"fixed-5s", Policy{Kind: Fixed, Base: 5 * time.Second}, 0},
		{"exponential", DefaultPolicy(Exponential), 0},
		{"full-jitter", DefaultPolicy(FullJitter), 0},
		{"equal-jitter", DefaultPolicy(EqualJitter), 0},
		{"decorrelated", DefaultPolicy(Decorrelated), 0},
	} {
		b.Run(tc.name, func(b *testing.B) { benchRun(b, sc, tc.p) })
	}
}

// BenchmarkFamilies covers every family once, on the article's scenario
// with Retry-After 30 s.
func BenchmarkFamilies(b *testing.B) {
	sc := Article()
	sc.RetryAfter = 30 * time.Second
	for _, k := range Kinds() {
		p := DefaultPolicy(k)
		if k == WidthJitter {
			p.Width = 0.25
		}
		if k == WatchDog || k == HTTPRetry {
			p.Cap, p.Width = time.Minute, 0.2
		}
		b.Run(string(k), func(b *testing.B) { benchRun(b, sc, p) })
	}
}

// BenchmarkMillionClients: 1,000,000 clients, capacity scaled to 60,000
// requests/s, full jitter. bytes/client is the storage the Sim holds.
func BenchmarkMillionClients(b *testing.B) {
	sc := Article()
	sc.Clients = 1_000_000
	sc.Capacity = 60_000
	benchRun(b, sc, DefaultPolicy(FullJitter))
}

// BenchmarkQueue is the article's table 1 on a queueing server of the same
// capacity (12 workers × 100 ms = 120 requests/s), which rejects what would
// wait more than a tick: ns/event beside BenchmarkTable1's counting server.
// "open-loop" adds 100 requests/s of new traffic with 1 s timeouts.
func BenchmarkQueue(b *testing.B) {
	sc := Article()
	sc.Concurrency, sc.Service, sc.ServiceTime, sc.QueueWait = 12, "exponential", 100*time.Millisecond, 100*time.Millisecond
	for _, tc := range []struct {
		name string
		p    Policy
	}{
		{"fixed-5s", Policy{Kind: Fixed, Base: 5 * time.Second}},
		{"decorrelated", DefaultPolicy(Decorrelated)},
	} {
		b.Run(tc.name, func(b *testing.B) { benchRun(b, sc, tc.p) })
	}
	open := sc
	open.ArrivalRate, open.Timeout, open.Concurrency = 100, time.Second, 20
	b.Run("open-loop", func(b *testing.B) { benchRun(b, open, DefaultPolicy(FullJitter)) })
}

// BenchmarkComponents is decorrelated jitter on the article's scenario
// alone and with each client component, per process of 100 clients: what a
// component costs per request event.
func BenchmarkComponents(b *testing.B) {
	sc := Article()
	for _, tc := range []struct {
		name string
		p    Policy
	}{
		{"none", Policy{}},
		{"breaker", Policy{BreakerRatio: 0.1, ClientsPerProcess: 100}},
		{"throttle", Policy{ThrottleK: 2, ClientsPerProcess: 100}},
		{"aws-rate", Policy{AWSAdaptive: true, ClientsPerProcess: 100}},
		{"retry-cap", Policy{RetryCap: 3}},
	} {
		p := withComponents(DefaultPolicy(Decorrelated), tc.p).Normalize()
		b.Run(tc.name, func(b *testing.B) { benchRun(b, sc, p) })
	}
}
