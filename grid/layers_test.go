package grid

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A chain's services written as the layers parameter read back as they
// were, and a chained cell keys its chain and sim.ChainVersion; a cell
// without one keeps the key it had (TestKeysOfCountingCellsAreStable).
func TestLayersRoundTripAndKey(t *testing.T) {
	t.Parallel()
	exp, err := ParsePolicy("exponential base_s=0.1 cap_s=5 multiplier=2 max_attempts=3 retry_budget=0.1")
	if err != nil {
		t.Fatal(err)
	}
	grpc, _ := sim.PresetByName("grpc")
	ls := []sim.Layer{{Capacity: 500, Policy: exp}, {OutageStart: 2 * time.Second, RecoverAt: 90500 * time.Millisecond}, {Capacity: 1e4, Policy: grpc.Policy}}
	text := EncodeLayers(ls)
	back, err := DecodeLayers(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(ls) {
		t.Fatalf("%d services back from %s", len(back), text)
	}
	for i := range ls {
		if back[i] != ls[i] {
			t.Errorf("service %d: %+v back as %+v from %s", i+1, ls[i], back[i], text)
		}
	}
	c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: text, Fanout: 2}
	c.Scenario.FailShare = 0.1
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	can := c.Canonical()
	if !strings.Contains(can, `layers="capacity_rps=500 outage_start_s=0 recover_s=0 policy=\"exponential`) || !strings.HasSuffix(can, "fanout=2") || !strings.Contains(can, " fail_share=0.1 ") {
		t.Errorf("canonical %s", can)
	}
	h := sha256.Sum256([]byte(sim.Version + "+" + sim.ChainVersion + "\x00" + can))
	if c.Key() != hex.EncodeToString(h[:8]) {
		t.Errorf("chained cell key %s: want the hash with %s", c.Key(), sim.ChainVersion)
	}
	if keyVersion(can) != versionOf(c) || (Run{Cell: c, Seed: 7}).Key() != RunKey(can, 7) {
		t.Errorf("the canonical form keys %q, the cell %q", keyVersion(can), versionOf(c))
	}
	var read Cell
	for i := range Params {
		Params[i].Set(&read, Params[i].Get(c))
	}
	if read.Key() != c.Key() {
		t.Errorf("read back as %s", read.Canonical())
	}
}

func TestLayersErrors(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		`capacity_rps=x policy="none"`:         "want a number",
		`capacity_rps=1 speed=3`:               "unknown key",
		`policy="nosuch"`:                      "want a family",
		`recover_s=0.0005`:                     "whole number of milliseconds",
		`capacity_rps=5 policy="none"`:         "at least one request",
		"policy=\"none\" |  | policy=\"none\"": "is empty",
	} {
		c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: text}
		err := c.Validate()
		fes := sim.FieldErrors(err)
		if len(fes) == 0 || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a FieldError saying %q", text, err, want)
			continue
		}
		if key, _ := KeyWords(fes[0]); key != "layers" {
			t.Errorf("%s: reported at %s", text, key)
		}
	}
}

// A queueing service's keys and a caller's timeout round-trip, after the
// keys a counting service has always written, and a service without them
// keeps its text (and so its cells' keys) as it was before them.
func TestQueueingLayersRoundTrip(t *testing.T) {
	t.Parallel()
	counting := sim.Layer{Capacity: 500, RecoverAt: 90500 * time.Millisecond}
	const before = `capacity_rps=500 outage_start_s=0 recover_s=90.5 policy="none"`
	if got := EncodeLayers([]sim.Layer{counting}); got != before {
		t.Errorf("a counting service reads %s; want %s as before the queueing keys", got, before)
	}
	ls := []sim.Layer{
		{Concurrency: 8, Service: "exponential", ServiceTime: 20 * time.Millisecond, QueueLimit: 50, Timeout: 1500 * time.Millisecond},
		{Capacity: 100, Timeout: time.Second},
	}
	text := EncodeLayers(ls)
	if want := `capacity_rps=0 outage_start_s=0 recover_s=0 policy="none" concurrency=8 service="exponential" service_s=0.02 queue_limit=50 timeout_s=1.5 | ` +
		`capacity_rps=100 outage_start_s=0 recover_s=0 policy="none" timeout_s=1`; text != want {
		t.Errorf("text %s\nwant %s", text, want)
	}
	back, err := DecodeLayers(text)
	if err != nil || len(back) != 2 || back[0] != ls[0] || back[1] != ls[1] {
		t.Errorf("%s back as %+v, %v", text, back, err)
	}
	c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: text}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	for text, want := range map[string]string{
		`concurrency=x`:                               "want a whole number",
		`concurrency=2 service="fixed"`:               "service_s",
		`concurrency=2 service="slow" service_s=0.01`: "fixed or exponential",
		`service_s=0.01`:                              "without concurrency",
		`timeout_s=0.0005`:                            "whole number of milliseconds",
		`capacity_rps=100 concurrency=2 service="fixed" service_s=0.01`: "capacity_rps",
	} {
		c := Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated), Layers: text}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", text, err, want)
		}
	}
}
