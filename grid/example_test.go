package grid_test

import (
	"fmt"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A policy spec is one line of text: a family and its parameters, or a
// preset's name. ParsePolicy reads it; Cell.PolicySpec writes a policy
// back in the same words, as the dataset's policy_spec column holds it.
func ExampleParsePolicy() {
	for _, spec := range []string{
		"decorrelated base_s=1 cap_s=30",
		"exponential base=500ms cap=10s jitter=full", // the shorter names people write
		"grpc", // a preset: a library's defaults
	} {
		p, err := grid.ParsePolicy(spec)
		if err != nil {
			panic(err)
		}
		c := grid.Cell{Policy: p}
		fmt.Printf("%s\n  spec: %s\n  %s\n", spec, c.PolicySpec(), p.Plain())
	}
	// Output:
	// decorrelated base_s=1 cap_s=30
	//   spec: decorrelated base_s=1 cap_s=30
	//   decorrelated jitter: first retry after U(1s, 3s), then each delay drawn from U(1s, max(2s, 3 × the previous delay)), at most 30s, no attempt limit
	// exponential base=500ms cap=10s jitter=full
	//   spec: full-jitter base_s=0.5 cap_s=10 multiplier=2
	//   exponential backoff with full jitter: first retry after U(0, 1s), the range ×2 per attempt, at most 10s, no attempt limit
	// grpc
	//   spec: grpc
	//   grpc's defaults (connection backoff, not call retries): exponential backoff: first retry after exactly 1s, then ×1.6 per attempt, at most 2m0s, uniform jitter ±20 % from the second retry, no attempt limit
}

// A spec's mistakes say what would be accepted.
func ExampleParsePolicy_errors() {
	for _, spec := range []string{"fixed bsae_s=1", "fixed base_s=-1", "fixed base_s=1 clients=10"} {
		_, err := grid.ParsePolicy(spec)
		fmt.Printf("%s\n  %v\n", spec, err)
	}
	// Output:
	// fixed bsae_s=1
	//   unknown key "bsae_s" (did you mean "base_s"?): want base, cap, multiplier, jitter, width, attempts, max_elapsed, honor_retry_after or a policy parameter of sweeps.toml (`sweep schema`: retry_on, breaker_ratio …)
	// fixed base_s=-1
	//   base_s=-1: want a positive duration
	// fixed base_s=1 clients=10
	//   clients=10: a parameter of the scenario, not of the policy
}

// A cell is a scenario and the policy its clients run; its key is a hash
// of every parameter (and the simulator's version), the same for two cells
// that behave the same. A run is a cell with one seed.
func ExampleCell_Key() {
	a := grid.Cell{Scenario: sim.Article(), Policy: grid.PolicyNamed("full-jitter")}
	b := a
	b.Policy, _ = grid.ParsePolicy(a.PolicySpec()) // written and read back
	c := a
	c.Scenario.Clients = 5000
	fmt.Println("written and read back, same key:", a.Key() == b.Key())
	fmt.Println("more clients, same key:", a.Key() == c.Key())
	run := grid.Run{Cell: a, Seed: 206}
	fmt.Println("a run's key is not its cell's:", run.Key() != a.Key())
	// Output:
	// written and read back, same key: true
	// more clients, same key: false
	// a run's key is not its cell's: true
}

// Params name a cell's parameters once: sweeps.toml's keys, the dataset's
// columns and the errors that point at a key.
func ExampleParamByKey() {
	for _, key := range []string{"recover_s", "capacity_rps", "cap_s"} {
		p := grid.ParamByKey(key)
		fmt.Printf("%s: %s, sets %s (a parameter of the policy: %v)\n", p.Key, p.Type, p.Field, p.Policy)
	}
	// Output:
	// recover_s: a number, sets RecoverAt (a parameter of the policy: false)
	// capacity_rps: a number, sets Capacity (a parameter of the policy: false)
	// cap_s: a number, sets Cap (a parameter of the policy: true)
}
