package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A server spec is read as sweeps.toml writes it, or refused with words
// naming what is wrong: never read as another server. A queueing key
// alone (whatever its value) asks for a queueing server, which needs
// service and service_s; before, concurrency=-8 alone was answered on the
// counting server with free rejections.
func TestParseServerRefusesWhatItCannotRead(t *testing.T) {
	base := sim.Article()
	base.Capacity, base.Clients, base.RecoverAt = 50, 800, 30*time.Second
	base.Horizon = base.RecoverAt + 20*time.Minute
	for _, tc := range []struct{ spec, want string }{
		{"concurrency=-8", "needs service and service_s"},
		{"timeout_s=-1", "needs service and service_s"},
		{"arrival_rps=-5", "needs service and service_s"},
		{"service=exponential", "needs service and service_s"},
		{"service_s=0.02", "needs service and service_s"},
		{"concurrency=-8 service=exponential service_s=0.05", "concurrency=-8"},
		{"reject_cost=2", "reject_cost"},
		{"reject_cost=0.1 reject_cost=0.2", "given twice"},
		{"rejectcost=0.1", "unknown key"},
		{"reject_cost", "want key=value"},
		{"", "empty"},
	} {
		if _, err := ParseServer(tc.spec, base); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.spec, err, tc.want)
		}
	}
	for _, tc := range []struct {
		spec string
		want Server
	}{
		{"free", Server{}},
		{"reject_cost=0.25", Server{RejectCost: 0.25}},
	} {
		got, err := ParseServer(tc.spec, base)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}
	q, err := ParseServer("concurrency=8 service=exponential service_s=0.05 timeout_s=1", base)
	if err != nil || !q.Queueing() || q.Workers != 8 || q.Timeout != time.Second {
		t.Errorf("a queueing server: %+v, %v", q, err)
	}
}

// One server is one server, and a server without a client timeout says so
// rather than "timeouts 0s".
func TestDescribeOneServer(t *testing.T) {
	got := DescribeEnvelope([]Server{{Service: "exponential", ServiceTime: 50 * time.Millisecond, Workers: 8}})
	for _, want := range []string{"1 server: 1 queueing server (", "timeouts none"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// Spec writes a server as --server reads it: parsed back, it asks for
// the same scenario, for random servers of every kind.
func TestServerSpecParsesBack(t *testing.T) {
	t.Parallel()
	rng := sim.NewMulberry32(5)
	pick := func(xs ...float64) float64 { return xs[int(rng.Float64()*float64(len(xs)))] }
	base := Request{Outage: 2 * time.Minute, Window: 20 * time.Minute}.Scenario(800, 2000)
	for i := range 200 {
		var s Server
		if rng.Float64() < 0.3 {
			s = Server{RejectCost: pick(0, 0.1, 0.5)}
		} else {
			s = Server{Service: []string{"exponential", "fixed"}[int(rng.Float64()*2)], ServiceTime: time.Duration(pick(20, 100)) * time.Millisecond,
				Workers: int(pick(0, 16, 80)), Timeout: time.Duration(pick(0, 1, 2.5)*1000) * time.Millisecond,
				QueueWait: time.Duration(pick(0, 500)) * time.Millisecond, Arrival: pick(0, 560), Load: pick(0, 0.5)}
			if s.Arrival > 0 {
				s.Load = 0
			}
		}
		if rng.Float64() < 0.3 {
			s.RetryAfter = 5 * time.Second
		}
		spec := s.Spec(base)
		got, err := ParseServer(spec, base)
		if err != nil {
			t.Fatalf("case %d: %+v: Spec %q does not parse: %v", i, s, spec, err)
		}
		if got.Scenario(base) != s.Scenario(base) {
			t.Fatalf("case %d: %+v: Spec %q asks for another scenario:\n got %+v\nwant %+v", i, s, spec, got.Scenario(base), s.Scenario(base))
		}
	}
}
