package experiments

import (
	"testing"
)

// The limiter's and the queue order's keys, added after queueing runs were
// stored, leave the keys of cells that do not set them as they were (the
// key below was computed on the commit before they existed), and
// queue_order = "fifo" is the default under its name: the same cell.
func TestLimiterKeepsKeys(t *testing.T) {
	t.Parallel()
	const q = base + "[sweep.s]\npolicy = \"decorrelated\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\ntimeout_s = 0.4\narrival_rps = 100\noutage_start_s = 10\nrecover_s = 15\n"
	keys := map[string]string{}
	for name, extra := range map[string]string{"none": "", "fifo": "queue_order = \"fifo\"\n", "lifo": "queue_order = \"lifo\"\n", "aimd": "limiter = \"aimd\"\n"} {
		cfg, err := Load("t.toml", []byte(q+extra))
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = cfg.Sweep("s").Cells[0].Key()
		if c := cfg.Sweep("s").Cells[0]; name == "lifo" && c.Scenario.QueueOrder != "lifo" || name == "aimd" && c.Scenario.Limiter != "aimd" {
			t.Errorf("%s: scenario %+v", name, c.Scenario)
		}
	}
	if keys["none"] != "2672990372ea9864" || keys["fifo"] != keys["none"] || keys["lifo"] == keys["none"] || keys["aimd"] == keys["none"] {
		t.Errorf("keys %v; want none = fifo = 2672990372ea9864, lifo and aimd others", keys)
	}
}
