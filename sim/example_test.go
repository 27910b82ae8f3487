package sim_test

import (
	"fmt"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// The article's first table, first row: 2,000 clients retrying every 5 s.
func ExampleRun() {
	p := sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}
	r, err := sim.Run(sim.Article(), p, 206)
	if err != nil {
		panic(err)
	}
	fmt.Printf("sent after recovery %d, peak %g req/s, t50 %v, t99 %v\n",
		r.SentAfterRecovery, r.PeakRPS, r.T50.At, r.T99.At)
	// Output: sent after recovery 9412, peak 1140 req/s, t50 50.4s, t99 1m12s
}

// A Sim reuses its storage: give one to each worker and run many cells.
func ExampleSim_Run() {
	var s sim.Sim
	var tl sim.Timeline
	rng := sim.NewMulberry32(1)
	sc := sim.Article()
	sc.Clients = 100
	r, err := s.Run(sc, sim.DefaultPolicy(sim.Decorrelated), rng, &tl)
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Succeeded, len(tl.Arrivals) > 0)
	// Output: 100 true
}

func ExamplePolicy_Delays() {
	p := sim.Policy{Kind: sim.WatchDog, Base: time.Second, Multiplier: 2, Cap: time.Minute}
	d, _ := p.Delays(1, 8, 0, true)
	fmt.Println(d)
	// Output: [1000 2000 4000 8000 16000 32000 60000 60000]
}
