package analysis

import (
	"strings"
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// --server reads a chain (layers, fanout) through grid's own text, writes
// it back in Spec, and names it in the label: two servers that differ
// only in their chain are labelled apart, and the envelope's line names
// them.
func TestServerBehindLayers(t *testing.T) {
	t.Parallel()
	base := sim.Article()
	spec := `fanout=2 fail_share=0.1 layers=policy="exponential base_s=1 max_attempts=4" | capacity_rps=500  policy=none`
	s, err := ParseServer(spec, base)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Chained() || s.Fanout != 2 || s.FailShare != 0.1 || !strings.Contains(s.Layers, "capacity_rps=500") {
		t.Fatalf("ParseServer(%q) = %+v", spec, s)
	}
	c := s.Cell(base, sim.Policy{})
	if ch, err := c.Chain(); err != nil || ch.N != 2 || ch.Fanout != 2 || ch.Front[1].Capacity != 500 {
		t.Errorf("its cell's chain: %+v, %v", ch, err)
	}
	if back, err := ParseServer(s.Spec(base), base); err != nil || back != s {
		t.Errorf("ParseServer(%q) = %+v, %v; want %+v", s.Spec(base), back, err, s)
	}
	labels := map[string]string{}
	for _, sp := range []string{"free", "fail_share=0.1",
		`layers=policy="exponential base_s=1 max_attempts=4"`, `layers=policy="exponential base_s=1 max_attempts=3"`,
		`layers=capacity_rps=100 policy="exponential base_s=1 max_attempts=4"`,
		`fanout=2 layers=policy="exponential base_s=1 max_attempts=4"`,
		`layers=policy=none | policy="exponential base_s=1 max_attempts=4"`, spec} {
		s, err := ParseServer(sp, base)
		if err != nil {
			t.Fatalf("%q: %v", sp, err)
		}
		l := s.Label()
		if other, ok := labels[l]; ok {
			t.Errorf("%q and %q are both labelled %q", sp, other, l)
		}
		labels[l] = sp
		if d := DescribeEnvelope([]Server{s}); s.Chained() && !strings.Contains(d, l) {
			t.Errorf("DescribeEnvelope = %q: want %q in it", d, l)
		}
	}
}

// A bad chain in --server is an error that names its key and says what
// it takes; nothing is read past it.
func TestServerBehindLayersErrors(t *testing.T) {
	t.Parallel()
	base := sim.Article()
	for spec, want := range map[string]string{
		`layers=`:                            "layers=: no services: want services from the one the clients call",
		`layers=policy="bogus"`:              `layers=policy="bogus": service 1: policy "bogus"`,
		`layers=capacity_rps=abc`:            `service 1: capacity_rps "abc": want a number`,
		`layers=policy=none fail_share=0.1`:  `unknown key "fail_share"`,
		`fanout=2`:                           "fanout=2: want it with layers",
		`fanout=99 layers=policy=none`:       "fanout=99: want 0 or 1 (one copy) to 8 copies",
		`reject_cost=0.2 layers=policy=none`: "layers=in front of this server: want a server without Retry-After, ramp or reject cost",
		`service=exponential service_s=0.02 layers=policy=none`:                      "layers=in front of this server: want a counting server",
		`fail_curve=0,1 layers=policy=none`:                                          "fail_curve=0,1: want none with layers",
		`layers=policy=none | policy=none | policy=none | policy=none`:               "layers=4 services: want 1 to 3 services in front of the server",
		`layers=capacity_rps=-1 policy=none`:                                         "layers=service 1 capacity_rps -1: want 0 (no limit) or requests/s",
		`layers=policy="exponential base_s=1 breaker_ratio=0.5 breaker_window_s=10"`: "no client components",
	} {
		_, err := ParseServer(spec, base)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseServer(%q) = %v; want an error with %q", spec, err, want)
		}
	}
	withRetryAfter := base
	withRetryAfter.RetryAfter = 5e9
	if _, err := ParseServer("layers=policy=none", withRetryAfter); err == nil || !strings.Contains(err.Error(), "without Retry-After") {
		t.Errorf("behind layers with the question's Retry-After: %v", err)
	}
}
