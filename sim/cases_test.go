package sim

import "testing"

// cases is how many random cases a property test draws: n, or short under
// -short. .ci/run's race step and its cross-CPU steps (x86-64-v3, arm64
// under qemu-user) run -short: the race detector finds no race in a loop
// without goroutines however many cases it draws (and slows the simulator
// 5 to 20 times), and the logic the cases exercise is the same on every
// CPU, whose bits those steps check; the full counts run in the plain
// go test step. The short cases are the first of the
// full run's, drawn from the same seeds: a shortened test is the start of
// the long one, never another test.
func cases(n, short int) int {
	if testing.Short() {
		return short
	}
	return n
}
