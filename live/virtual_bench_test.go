package live

import (
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// BenchmarkVirtualRun is one virtual run of each real library on the
// article's scenario (2,000 clients, 30 s outage, 120 requests/s, 2 s
// spread), seed 1. It reports the cost per client per simulated second
// (ns/client-s: the run's time over its clients and the simulated seconds
// it lasted, to its last request) and per request (ns/request).
func BenchmarkVirtualRun(b *testing.B) {
	for _, d := range Drivers() {
		if d.stepped {
			continue
		}
		b.Run(d.Name, func(b *testing.B) {
			cfg := Config{Scenario: sim.Article(), Driver: d, Down: Down503, Seed: 1, MaxAttempts: DefaultMax}
			var simulated float64
			var requests int64
			for b.Loop() {
				var m *Measurement
				err := InProcess(func(bb Bubble) error {
					var err error
					m, err = RunVirtual(bb, cfg)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				simulated += m.Result.End.Seconds()
				requests += m.Result.Sent
			}
			ns := float64(b.Elapsed().Nanoseconds())
			b.ReportMetric(ns/(simulated*float64(cfg.Scenario.Clients)), "ns/client-s")
			b.ReportMetric(ns/float64(requests), "ns/request")
			b.ReportMetric(simulated/float64(b.N), "simulated-s")
		})
	}
}
