package experiments

import (
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// A sweep's layers: a list of service tables is one chain, a list of such
// lists an axis, [] the server alone; fanout is an axis of its own (and
// the server's failure share is fail_share's); each chained cell runs its
// chain.
func TestLayersAxis(t *testing.T) {
	t.Parallel()
	cfg, err := Load("t.toml", []byte(base+`
[sweep.s]
policy = {kind = "fixed", base_s = 0.1, max_attempts = 3}
recover_s = 5
window_s = 5
clients = 100
layers = [[],
          [{capacity_rps = 0, policy = "fixed base_s=0.1 max_attempts=3"}, {policy = "none"}],
          [{capacity_rps = 1000, outage_start_s = 1, recover_s = 2, policy = "grpc"}]]
fanout = [0, 2]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sweeps[0]
	if len(s.Cells) != 5 { // the server alone once: fanout needs layers
		t.Fatalf("%d cells, want 5", len(s.Cells))
	}
	var chained int
	for _, c := range s.Cells {
		if !c.Chained() {
			continue
		}
		chained++
		ch, err := c.Chain()
		if err != nil {
			t.Fatal(err)
		}
		var sm sim.Sim
		r, err := c.Simulate(&sm, sim.NewMulberry32(1), nil)
		if err != nil || r.NLayers != ch.N+1 {
			t.Errorf("%s: %v, %d layers", c.Layers, err, r.NLayers)
		}
	}
	if chained != 4 {
		t.Errorf("%d chained cells, want 4", chained)
	}
}

func TestLayersErrors(t *testing.T) {
	t.Parallel()
	const head = base + "[sweep.s]\npolicy = \"fixed\"\n"
	for _, tt := range []struct{ name, src, want string }{
		{"unknown key", head + "layers = [{capacity = 5}]\n", "t.toml:6: sweep.s.layers[0].capacity: unknown key in a service (did you mean \"capacity_rps\"?): want capacity_rps, outage_start_s, recover_s, policy"},
		{"bad policy", head + "layers = [{policy = \"expo\"}]\n", "t.toml:6: sweep.s.layers[0].policy: \"expo\": want a family (fixed"},
		{"policy type", head + "layers = [{policy = 3}]\n", "t.toml:6: sweep.s.layers[0].policy: 3: want a family's or preset's name"},
		{"capacity", head + "layers = [{capacity_rps = -1}]\n", "t.toml:6: sweep.s.layers[0].capacity_rps: -1: want 0 (no limit) or requests/s ≤ 1e9"},
		{"sub-ms", head + "layers = [{recover_s = 0.0001}]\n", "t.toml:6: sweep.s.layers[0].recover_s: 0.0001: want a time ≥ 0 in s"},
		{"too many", head + "layers = [{}, {}, {}, {}]\n", "t.toml:6: sweep.s.layers: 4 services: want at most 3 in front of the server"},
		{"not a list", head + "layers = 3\n", "t.toml:6: sweep.s.layers: 3: want a list of service tables"},
		{"components", head + "layers = [{policy = \"decorrelated breaker_ratio=0.5\"}]\n", "t.toml:6: sweep.s.layers[0].policy: \"decorrelated breaker_ratio=0.5\": a service's policy has no client components"},
		// ranges sim judges, reported at the key that set them
		{"under a tick", head + "layers = [{capacity_rps = 5}]\n", "t.toml:6: sweep.s.layers: service 1 capacity_rps 5: want 0 (no limit) or at least one request a 100ms tick (≥ 10)"},
		{"recovers early", head + "layers = [{outage_start_s = 5, recover_s = 2}]\n", "t.toml:6: sweep.s.layers: service 1 recover_s 2: want at least its outage_start_s (5)"},
		{"fanout", head + "layers = [{}]\nfanout = 9\n", "t.toml:7: sweep.s.fanout: 9: want 0 or 1 (one copy) to 8 copies of the deepest service, with layers"},
		{"fail curve", head + "layers = [{}]\nfail_share = 0.5\nfail_curve = \"1 0\"\n", "t.toml:8: sweep.s.fail_curve: 1 0: want none with layers"},
		{"fanout alone", head + "fanout = 3\n", "t.toml:6: sweep.s.fanout: 3: want layers beside it"},
		{"old key", head + "layers = [{}]\nlayers_fail_share = 0.5\n", "t.toml:7: sweep.s.layers_fail_share: unknown key (did you mean \"fail_share\"?"},
		{"queueing", head + "layers = [{}]\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.1\nqueue_wait_s = 1\n", "t.toml:6: sweep.s.layers: in front of a queueing server with queue_wait_s: want a queueing server with concurrency, a fixed or exponential service, queue_limit and timeout_s only"},
		{"service", head + "layers = [{concurrency = 2, service = \"slow\", service_s = 0.1}]\n", "t.toml:6: sweep.s.layers[0].service: \"slow\": want \"fixed\" or \"exponential\""},
		{"concurrency", head + "layers = [{concurrency = 2.5}]\n", "t.toml:6: sweep.s.layers[0].concurrency: 2.5: want a whole number from 0 (a counting service) to 1048576"},
		{"too many workers", head + "layers = [{concurrency = 1e9, service = \"fixed\", service_s = 0.1}]\n", "t.toml:6: sweep.s.layers[0].concurrency: 1e+09: want a whole number from 0 (a counting service) to 1048576"},
		{"a long queue", head + "layers = [{concurrency = 2, service = \"fixed\", service_s = 0.1, queue_limit = 1e9}]\n", "t.toml:6: sweep.s.layers[0].queue_limit: 1e+09: want a whole number from 0 (no limit) to 16777216"},
		{"timeout", head + "layers = [{timeout_s = -1}]\n", "t.toml:6: sweep.s.layers[0].timeout_s: -1: want a time ≥ 0 in s"},
		{"no service time", head + "layers = [{concurrency = 2, service = \"fixed\"}]\n", "t.toml:6: sweep.s.layers: service 1 service_s 0: want a whole number of milliseconds ≥ 1 ms"},
		{"service without workers", head + "layers = [{service_s = 0.1}]\n", "t.toml:6: sweep.s.layers: service 1 service_s 0.1: want 0 without concurrency"},
		{"queued fanout", head + "layers = [{timeout_s = 1}]\nfanout = 2\n", "t.toml:7: sweep.s.fanout: 2: want 0 or 1 with queueing services or timeouts"},
		{"mixed", head + "layers = [{}]\nmix = [{share = 0.1, kind = \"fixed\"}]\n", "sweep.s.layers"},
	} {
		_, err := Load("t.toml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error\n%v\nwant it to contain\n%s", tt.name, err, tt.want)
		}
	}
}

// A layers value over several lines has each service's mistake at its
// own line, in either form (one chain, or an axis of chains).
func TestLayersErrorLines(t *testing.T) {
	t.Parallel()
	src := base + `[sweep.s]
policy = "fixed"
layers = [{policy = "none"},   # A: the { in this comment is not a service
          {speed = 3}]
[sweep.t]
policy = "fixed"
layers = [[{policy = "none"}],
          [{policy = "none # not a comment {"},
           {capacity_rps = "x"}]]
`
	_, err := Load("t.toml", []byte(src))
	for _, want := range []string{"t.toml:7: sweep.s.layers[1].speed: unknown key", "t.toml:12: sweep.t.layers[1][1].capacity_rps: \"x\": want a number",
		"t.toml:11: sweep.t.layers[1][0].policy"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\nwant it to contain\n%s", err, want)
		}
	}
}

// A service's queue_limit goes up to the queueing server's (sim's
// MaxQueueLimit), not its workers' bound: 2,000,000 waiting attempts.
func TestLayersQueueLimitBound(t *testing.T) {
	t.Parallel()
	cfg, err := Load("t.toml", []byte(base+`
[sweep.s]
policy = "decorrelated"
recover_s = 5
window_s = 5
clients = 10
layers = [{concurrency = 2, service = "fixed", service_s = 0.1, queue_limit = 2000000}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := cfg.Sweeps[0].Cells[0].Chain()
	if err != nil || ch.Front[0].QueueLimit != 2000000 {
		t.Errorf("%+v, %v; want a queue limit of 2,000,000", ch.Front[0], err)
	}
}
