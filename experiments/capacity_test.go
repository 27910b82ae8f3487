package experiments

import (
	"strings"
	"testing"
)

// capacity_rps is the counting server's: a queueing sweep on fine ticks
// loads whatever capacity it inherits (issue 22: 120 requests/s was
// refused at 5 ms ticks for a server that does not read it), and a value
// that is no number of requests/s is still refused, at its line, saying
// that a queueing server does not read it and what it would accept.
func TestCapacityIsTheCountingServers(t *testing.T) {
	t.Parallel()
	const queue = `[sweep.q]
clients = 1
spread_s = 0
tick_ms = 5
recover_s = 5
window_s = 10
concurrency = 4
service = "exponential"
service_s = 0.02
arrival_rps = 100
policy = "decorrelated"
seeds = [1]
`
	c, err := Load("q.toml", []byte(queue))
	if err != nil {
		t.Fatalf("a queueing sweep at 5 ms ticks with the default capacity_rps (120): %v; want loaded", err)
	}
	if cells := c.Sweep("q").Cells; len(cells) != 1 || cells[0].Scenario.Capacity != 120 {
		t.Errorf("cells %+v: want one, with the default capacity kept in its key", cells)
	}
	_, err = Load("q.toml", []byte(strings.Replace(queue, "tick_ms = 5\n", "tick_ms = 5\ncapacity_rps = -3\n", 1)))
	if err == nil || !strings.Contains(err.Error(), "q.toml:5: sweep.q.capacity_rps: -3: want a number of requests/s ≥ 0; a queueing server (concurrency > 0) does not read it") {
		t.Errorf("capacity_rps = -3 for a queueing server: %v", err)
	}
	// The counting server reads it: one request a tick at least.
	counting := "[sweep.c]\ntick_ms = 5\npolicy = \"decorrelated\"\nseeds = [1]\n"
	if _, err := Load("c.toml", []byte(counting)); err == nil || !strings.Contains(err.Error(), "capacity_rps: 120: want a finite number of requests/s that serves at least one request per 5ms tick (≥ 200)") {
		t.Errorf("counting server at 5 ms ticks, 120 requests/s: %v, want refused", err)
	}
}
