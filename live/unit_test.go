package live

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	grpcbackoff "google.golang.org/grpc/backoff"

	"github.com/herdsweep/herdsweep/sim"
)

// tickOf puts t in the tick whose window ((k−1)·tick + grace, k·tick + grace]
// holds it: the tick the server counts it in.
func TestTickOf(t *testing.T) {
	t.Parallel()
	const tick, grace = 100 * time.Millisecond, 10 * time.Millisecond
	rng := sim.NewMulberry32(7)
	for range 10000 {
		at := time.Duration(rng.Float64() * float64(10*time.Second))
		k := tickOf(at, tick, grace)
		lo, hi := time.Duration(k-1)*tick+grace, time.Duration(k)*tick+grace
		if k < 0 || (k > 0 && at <= lo) || at > hi {
			t.Fatalf("tickOf(%v) = %d: window (%v, %v]", at, k, lo, hi)
		}
	}
	for _, tt := range []struct {
		at   time.Duration
		want int
	}{{0, 0}, {grace, 0}, {grace + 1, 1}, {tick + grace, 1}, {tick + grace + 1, 2}} {
		if got := tickOf(tt.at, tick, grace); got != tt.want {
			t.Errorf("tickOf(%v) = %d, want %d", tt.at, got, tt.want)
		}
	}
}

// A first send lands in sim's tick ceil(x/tick) with a tick of room for a
// late timer.
func TestFirstSend(t *testing.T) {
	t.Parallel()
	const tick, grace = 100 * time.Millisecond, 10 * time.Millisecond
	rng := sim.NewMulberry32(3)
	for range 10000 {
		x := rng.Float64() * 5000
		want := int(math.Ceil(x / 100))
		k, at := firstSend(x, 100, tick, grace)
		if k != want {
			t.Fatalf("x = %v ms: tick %d, want %d", x, k, want)
		}
		for _, late := range []time.Duration{0, 50 * time.Millisecond, tick - 2*time.Millisecond} {
			if got := tickOf(at+late, tick, grace); got != want {
				t.Fatalf("x = %v ms sent at %v, %v late: tick %d, want %d", x, at, late, got, want)
			}
		}
	}
	if k, at := firstSend(0, 100, tick, grace); k != 0 || at != 0 {
		t.Errorf("x = 0: tick %d, sent at %v, want tick 0 at once", k, at)
	}
}

// The server serves a batch in client-index order up to its budget, and
// nothing while down, as sim does.
func TestDecide(t *testing.T) {
	t.Parallel()
	s := &server{tick: 100 * time.Millisecond, recoverAt: time.Second, budget: 2}
	down := &batch{k: 9, client: []int32{5, 1, 3}}
	s.decide(down)
	up := &batch{k: 10, client: []int32{5, 1, 3, 0}}
	s.decide(up)
	if diff := cmp.Diff([]bool{false, false, false}, down.served); diff != "" {
		t.Errorf("down (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true, false, true}, up.served); diff != "" {
		t.Errorf("up (-want +got):\n%s", diff)
	}
	if s.arrivals[9] != 3 || s.served[9] != 0 || s.arrivals[10] != 4 || s.served[10] != 2 {
		t.Errorf("arrivals %v served %v", s.arrivals, s.served)
	}
}

// grpc-go's Backoff(retries), written down from internal/backoff/backoff.go:
// BaseDelay exactly at 0 retries, else min(base·1.6^retries, 120 s)·(1 ± 0.2).
func TestGRPCBackoff(t *testing.T) {
	t.Parallel()
	cfg := grpcbackoff.DefaultConfig
	for range 100 {
		if d := grpcBackoff(cfg, 0); d != time.Second {
			t.Fatalf("Backoff(0) = %v, want exactly 1s", d)
		}
	}
	for retries := 1; retries < 20; retries++ {
		mid := math.Min(float64(time.Second)*math.Pow(1.6, float64(retries)), float64(120*time.Second))
		for range 100 {
			d := float64(grpcBackoff(cfg, retries))
			if d < mid*0.8-1 || d > mid*1.2+1 {
				t.Fatalf("Backoff(%d) = %v: want within ±20 %% of %v", retries, time.Duration(d), time.Duration(mid))
			}
		}
	}
}

func TestBandAndRank(t *testing.T) {
	t.Parallel()
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	b := band(xs, 0.05)
	if b.Lo != 2 || b.Mid != 11 || b.Hi != 20 {
		t.Errorf("band = %+v, want 2, 11, 20", b)
	}
	c := check("m", "s", 11, xs, 0.05)
	if c.Rank != 100*(10+0.5)/21 || !c.Agree {
		t.Errorf("check(11) = %+v", c)
	}
	if c := check("m", "s", 1, xs, 0.05); c.Agree || c.Rank != 100*0.5/21 {
		t.Errorf("check(1) = %+v: want outside, rank of a tie at the bottom", c)
	}
	inf := math.Inf(1)
	if c := check("m", "s", inf, []float64{inf, inf, inf}, 0.05); !c.Agree || c.Rank != 50 {
		t.Errorf("never against never: %+v", c)
	}
	if c := check("m", "s", inf, []float64{1, 2, 3, 4}, 0.05); c.Agree {
		t.Errorf("never against finished runs: %+v", c)
	}
}

// A measurement that is sim's own run of a seed agrees with sim on that
// seed, metric by metric: Compare reads a measurement as sim reads a run.
func TestCompareReadsARunAsSimDoes(t *testing.T) {
	t.Parallel()
	sc := sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 100, Spread: 2 * time.Second, Horizon: 5 * time.Minute}
	for _, name := range []string{"cenkalti-backoff", "go-retryablehttp", "grpc"} {
		pr, _ := sim.PresetByName(name)
		for seed := uint32(1); seed <= 5; seed++ {
			var s sim.Sim
			var tl sim.Timeline
			r, err := s.Run(sc, pr.Policy, sim.NewMulberry32(seed), &tl)
			if err != nil {
				t.Fatal(err)
			}
			m := &Measurement{Config: Config{Scenario: sc, Seed: seed, Driver: Driver{Name: "sim"}}, Result: r}
			for _, a := range tl.Arrivals {
				m.Arrivals = append(m.Arrivals, int(a))
			}
			c, err := Compare(m, pr.Policy, []uint32{1, 2, 3, 4, 5, 6, 7, 8}, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, mt := range c.Metrics {
				if mt.Live != mt.SameSeed {
					t.Errorf("%s seed %d: %s live %v, same seed %v", name, seed, mt.Name, mt.Live, mt.SameSeed)
				}
			}
			if c.Verdict == Inconclusive {
				t.Errorf("%s seed %d: a run without tick lateness is inconclusive: %v", name, seed, c.Degraded)
			}
			m.CloseLateP99 = 11 * time.Millisecond // over a tenth of the 100 ms tick
			if late, _ := Compare(m, pr.Policy, []uint32{1, 2}, 5); late.Verdict != Inconclusive {
				t.Errorf("%s seed %d: ticks closed 11 ms late: %s, want inconclusive", name, seed, late.Verdict)
			}
			for _, tb := range c.Ticks {
				if float64(tb.Live) < tb.Lo && tb.Lo == tb.Hi {
					t.Errorf("%s seed %d: tick %v below a band every seed agrees on", name, seed, tb.T)
				}
			}
		}
	}
}

// TestValidateFirstFault pins which error Validate returns for a
// configuration with several faults: the first one, in the order it
// checks them (scale, scenario, server, driver, attempts), word for word.
func TestValidateFirstFault(t *testing.T) {
	t.Parallel()
	named := func(name string) Driver {
		d, err := DriverByName(name)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	grpcGo, v4, grpcRetry := named("grpc-go"), named("cenkalti-backoff-v4"), named("grpc-go-retry")
	pr, _ := sim.PresetByName("grpc")
	stepped := simDriver(pr)
	tests := []struct {
		name string
		fds  uint64
		edit func(c *Config)
		want string
	}{
		{"scale out of range before the clients", 0, func(c *Config) { c.Scale, c.Scenario.Clients = 0.5, 0 }, "Scale: 0.5: want 1 (real time) to 100"},
		{"a scaled system clock before the Retry-After", 0, func(c *Config) { c.Scale, c.Scenario.RetryAfter = 2, time.Second }, "Scale: 2: want 1: grpc-go takes its time from the system clock, which cannot be scaled without changing what is under test: it runs in real time only"},
		{"a scaled Retry-After before the tick", 0, func(c *Config) {
			c.Driver, c.Scale, c.Scenario.RetryAfter, c.Scenario.Tick = v4, 2, time.Second, 10*time.Millisecond
		}, "Scale: 2: want 1 with a Retry-After: cenkalti-backoff-v4 reads it in real seconds, so it runs in real time only"},
		{"a scaled Retry-After is fine stepped", 0, func(c *Config) { c.Driver, c.Scale, c.Scenario.RetryAfter, c.MaxAttempts = stepped, 2, time.Second, 0 }, "MaxAttempts: 0: want at least 1"},
		{"the tick before the clients", 0, func(c *Config) { c.Scenario.Tick, c.Scenario.Clients = 5*time.Millisecond, 0 }, "Tick: 5ms: want at least 10ms of real time for a live run (timers and HTTP take milliseconds; 5ms at scale 1)"},
		{"the tick at scale", 0, func(c *Config) { c.Driver, c.Scale, c.Scenario.Clients = v4, 20, 0 }, "Tick: 100ms: want at least 10ms of real time for a live run (timers and HTTP take milliseconds; 5ms at scale 20)"},
		{"the clients before the scenario", 0, func(c *Config) { c.Scenario.Clients, c.Scenario.Capacity = MaxClients+1, math.NaN() }, "Clients: 5001: want a whole number in [1, 5000] for a live run"},
		{"the scenario before the file descriptors", 256, func(c *Config) { c.Scenario.Capacity = math.NaN() }, "Capacity: NaN: want a finite number of requests/s"},
		{"the file descriptors before the horizon", 256, func(c *Config) { c.Scenario.Horizon = 3 * time.Hour }, "Clients: 300: want at most 96: it needs about 664 file descriptors (2 per client and 64 spare), and `ulimit -n` allows 256: use at most 96 clients or raise the limit yourself"},
		{"the horizon before the Retry-After", 0, func(c *Config) { c.Scenario.Horizon, c.Scenario.RetryAfter = 3*time.Hour, 1500*time.Millisecond }, "Horizon: 3h0m0s: want at most 2h0m0s of real time (3h0m0s at scale 1)"},
		{"the horizon at scale", 0, func(c *Config) { c.Driver, c.Scale, c.Scenario.Horizon, c.Grace = v4, 2, 5*time.Hour, time.Millisecond }, "Horizon: 5h0m0s: want at most 2h0m0s of real time (2h30m0s at scale 2)"},
		{"whole seconds of Retry-After before the server", 0, func(c *Config) { c.Scenario.RetryAfter, c.Scenario.RampUp = 1500*time.Millisecond, time.Second }, "RetryAfter: 1.5s: want whole seconds (the header's unit)"},
		{"a counting server before the down mode", 0, func(c *Config) { c.Scenario.RejectCost, c.Down = 0.5, "closed" }, "a live server counts only: no Retry-After ranges or backlog, ramps, rejection costs or queues"},
		{"a queueing server", 0, func(c *Config) {
			c.Scenario.Concurrency, c.Scenario.Service, c.Scenario.ServiceTime = 2, "fixed", 10*time.Millisecond
		}, "a live server counts only: no Retry-After ranges or backlog, ramps, rejection costs or queues"},
		{"a brownout", 0, func(c *Config) { c.Scenario.FailShare = 0.2 }, "a live server has no brownout: fail_share, fail_curve and added_latency_s are the simulator's"},
		{"the down mode before the grace", 0, func(c *Config) { c.Down, c.Grace = "closed", 60*time.Millisecond }, "Down: \"closed\": want 503 or refused"},
		{"the grace before the driver", 0, func(c *Config) { c.Grace, c.Driver = -time.Millisecond, Driver{} }, "Grace: -1ms: want at least 0 and less than half the tick (50ms of real time)"},
		{"no driver before the attempts", 0, func(c *Config) { c.Driver, c.MaxAttempts = Driver{}, 0 }, "live: no driver"},
		{"gRPC refused before the attempts", 0, func(c *Config) { c.Driver, c.Down, c.MaxAttempts = grpcRetry, DownRefused, 0 }, "Down: \"refused\": want 503 (UNAVAILABLE): the gRPC driver grpc-go-retry retries RPCs, not connections"},
		{"the attempts", 0, func(c *Config) { c.Driver, c.MaxAttempts = grpcGo, 0 }, "MaxAttempts: 0: want at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Config{Scenario: sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 100, Horizon: time.Minute},
				Driver: grpcGo, Down: Down503, Grace: 10 * time.Millisecond, MaxAttempts: 100}
			tt.edit(&c)
			err := c.Validate(tt.fds)
			if err == nil {
				t.Fatalf("valid, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	d, err := DriverByName("grpc-go")
	if err != nil {
		t.Fatal(err)
	}
	good := Config{Scenario: sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, RecoverAt: 3 * time.Second, Capacity: 100, Horizon: time.Minute},
		Driver: d, Down: Down503, Grace: 10 * time.Millisecond, MaxAttempts: 100}
	if err := good.Validate(1024); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		fds  uint64
		edit func(c *Config)
		want string
	}{
		{"file descriptors", 256, func(*Config) {}, "`ulimit -n` allows 256: use at most 96 clients"},
		{"too many clients", 0, func(c *Config) { c.Scenario.Clients = MaxClients + 1 }, "want a whole number in [1, 5000]"},
		{"tick", 0, func(c *Config) { c.Scenario.Tick = 5 * time.Millisecond }, "want at least 10ms"},
		{"retry-after", 0, func(c *Config) { c.Scenario.RetryAfter = 1500 * time.Millisecond }, "whole seconds"},
		{"down", 0, func(c *Config) { c.Down = "closed" }, `Down: "closed": want 503 or refused`},
		{"grace", 0, func(c *Config) { c.Grace = 60 * time.Millisecond }, "less than half the tick"},
		{"horizon", 0, func(c *Config) { c.Scenario.Horizon = 3 * time.Hour }, "at most 2h0m0s"},
		{"ramp", 0, func(c *Config) { c.Scenario.RampUp = time.Second }, "counts only"},
		{"scale a system clock", 0, func(c *Config) { c.Scale = 2 }, "grpc-go takes its time from the system clock"},
		{"scale", 0, func(c *Config) { c.Scale = 0.5 }, "want 1 (real time) to 100"},
	}
	for _, tt := range tests {
		c := good
		tt.edit(&c)
		err := c.Validate(tt.fds)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	v4, _ := DriverByName("cenkalti-backoff-v4")
	c4 := good
	c4.Driver, c4.Scale, c4.Grace = v4, 5, 5*time.Millisecond
	if err := c4.Validate(0); err != nil {
		t.Errorf("cenkalti v4 at scale 5: %v", err)
	}
	c4.Scale = 20
	if err := c4.Validate(0); err == nil || !strings.Contains(err.Error(), "want at least 10ms of real time") {
		t.Errorf("cenkalti v4 at scale 20 (5 ms ticks): %v", err)
	}
	g, _ := DriverByName("grpc-go-retry")
	c := good
	c.Driver, c.Down = g, DownRefused
	if err := c.Validate(0); err == nil || !strings.Contains(err.Error(), "retries RPCs, not connections") {
		t.Errorf("gRPC driver with refused connections: %v", err)
	}
	for _, d := range Drivers() {
		if _, err := d.Policy(); err != nil || d.Module == "" || d.Source == "" || (d.Do == nil) != d.stepped {
			t.Errorf("driver %s: model %v, module %q, source %q", d.Name, err, d.Module, d.Source)
		}
	}
	if _, err := DriverByName("polly"); err == nil || !strings.Contains(err.Error(), "cenkalti-backoff") {
		t.Errorf("unknown driver: %v", err)
	}
}
