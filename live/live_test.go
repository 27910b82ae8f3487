package live

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// The live tests run real libraries against a real loopback server, in
// real time (about 20 s in all). Their scenarios keep timer jitter out of
// the verdicts: a 333 ms tick puts go-retryablehttp's 1, 2, 4 and 8 s and
// grpc-go's 1 s just past a tick boundary (1 s = 3 ticks + 1 ms), so that a
// request up to ~330 ms late still counts in the tick sim gives it; with a
// 100 ms tick they would fall exactly on boundaries, where any latency at
// all moves them a tick later than sim's zero-latency clients (see
// NOTES-live.md).

// liveScenario: 200 clients, down 2 s, then 40 requests per tick.
func liveScenario() sim.Scenario {
	return sim.Scenario{Clients: 200, Tick: 333 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 120,
		Spread: time.Second, Horizon: time.Minute}
}

func seedsUpTo(n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(i + 1)
	}
	return s
}

// runLive runs cfg. A run during which the machine stalled the server's
// tick closes, or a client's first request, for longer than maxStall is
// run again, at most three times:
// a stall shorter than that moves no request of these scenarios to another
// tick (the 333 ms ticks leave deterministic delays about 330 ms of room), a
// longer one may, and then the measurement says more about the machine than
// about the library. Three stalled runs fail the test, but with the race
// detector on, which may slow the harness past any tick: then the last
// run is returned with held false, and its verdicts are logged, not
// asserted. held is true whenever the run kept its ticks, with the
// detector on or not.
//
// With the detector on, a run also counts as stalled when the harness's
// own evidence does not hold (Degraded: a request it placed counted in
// another tick, ticks answered late): the detector slows what the bounds
// above do not see, such as 200 gRPC channels connecting at once (a run
// with first requests 125 ms late had 199 of 200 of them counted a tick
// off, and its verdict was inconclusive).
func runLive(t *testing.T, cfg Config) (m *Measurement, held bool) {
	t.Helper()
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 1000
	}
	if err := cfg.Validate(0); err != nil {
		t.Fatal(err)
	}
	maxStall := cfg.Scenario.Tick * 3 / 4
	var stalls []time.Duration
	var last *Measurement
	for range 3 {
		m, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		last = m
		t.Logf("%s: %v, %d served, %d gave up, %d pending; ticks closed up to %v late, first requests up to %v", cfg.Driver.Name, m.Wall.Round(time.Millisecond),
			m.Result.Succeeded, m.Result.GaveUp, m.Result.Pending, m.CloseLateMax.Round(time.Millisecond), m.FirstLateMax.Round(time.Millisecond))
		// A first request meant for time 0 (no spread) has only the grace.
		firstRoom := maxStall
		if cfg.Scenario.Spread == 0 {
			firstRoom = cfg.Grace
		}
		if m.CloseLateMax <= maxStall && m.FirstLateMax <= firstRoom && !(raceEnabled && len(m.Degraded()) > 0) {
			return m, true
		}
		if raceEnabled {
			t.Logf("race detector on, run again: %v", m.Degraded())
		}
		stalls = append(stalls, max(m.CloseLateMax, m.FirstLateMax))
	}
	if raceEnabled {
		t.Logf("race detector on: stalls %v", stalls)
		return last, false
	}
	t.Fatalf("the machine stalled the server for more than %v in each of 3 runs (%v): too busy for a live comparison", maxStall, stalls)
	return nil, false
}

// verdictf reports a verdict that failed: an error when the run held its
// timing, else (only with the race detector on: runLive and runPlaced
// fail the test otherwise) a log line.
func verdictf(t *testing.T, held bool, format string, args ...any) {
	t.Helper()
	if !held {
		t.Logf("race detector on, timing not held: "+format, args...)
		return
	}
	t.Errorf(format, args...)
}

func logComparison(t *testing.T, c *Comparison) {
	t.Helper()
	var b bytes.Buffer
	c.WriteText(&b)
	t.Logf("live %s (%s), %s\n%s", c.Driver, c.Module, c.Scenario, b.String())
}

func metricOf(c *Comparison, name string) MetricCheck {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m
		}
	}
	panic("live: no metric " + name)
}

// go-retryablehttp has no jitter: the live run, whose clients first send
// at sim's draws for a seed, replays sim's run of that seed. On the seed
// nearest the median its t99 and sent lie inside the 5–95 % band.
func TestLiveRetryableHTTP(t *testing.T) {
	d, _ := DriverByName("go-retryablehttp")
	pr, _ := sim.PresetByName(d.Preset)
	sc := liveScenario()
	seeds := seedsUpTo(200)
	seed, err := MedianSeed(sc, pr.Policy, seeds)
	if err != nil {
		t.Fatal(err)
	}
	m, held := runLive(t, Config{Scenario: sc, Driver: d, Down: Down503, Grace: 10 * time.Millisecond, Seed: seed})
	c, err := Compare(m, pr.Policy, seeds, 5)
	if err != nil {
		t.Fatal(err)
	}
	logComparison(t, c)
	for _, name := range []string{MT99, MSent} {
		if mt := metricOf(c, name); !mt.Agree {
			verdictf(t, held, "%s: live %v outside the simulated 5–95 %% band [%v, %v] (rank %.1f; sim on seed %d: %v)", name, mt.Live, mt.Band.Lo, mt.Band.Hi, mt.Rank, seed, mt.SameSeed)
		}
	}
}

// The jittered libraries on real sockets and timers: cenkalti/backoff and
// a real gRPC channel with a retry policy serve every client, and the run
// keeps its ticks (runLive). One run of a library whose jitter no seed
// reaches is one draw: whether it is its model's is judged on virtual time
// over many runs (TestVirtualDistribution), not here, where a band wide
// enough for one draw on a loaded machine tells little.
func TestLiveJitteredOnRealSockets(t *testing.T) {
	for _, name := range []string{"cenkalti-backoff", "grpc-go-retry"} {
		d, _ := DriverByName(name)
		m, held := runLive(t, Config{Scenario: liveScenario(), Driver: d, Down: Down503, Grace: 10 * time.Millisecond, Seed: 1})
		n, r := liveScenario().Clients, m.Result
		// cenkalti retries for 15 min: all served; a gRPC retry policy
		// makes 5 attempts: some clients give up on 429s, as sim's do.
		done := r.Succeeded == n || (name == "grpc-go-retry" && r.Succeeded > 0 && r.Succeeded+r.GaveUp == n)
		if !done {
			verdictf(t, held, "%s on real sockets: %d served, %d gave up, %d pending of %d (errors %v)", name, r.Succeeded, r.GaveUp, r.Pending, n, m.Errors)
		}
	}
}

// grpc-go waits exactly 1 s after the first failure. With every client
// failing at once (no spread) they all come back in one tick; a first
// retry jittered ±20 %, as the grpc preset had it (the grpc family's
// defaults are that old preset), spreads them over two: 900 ms ticks put
// 1 s into tick 2 (0.9–1.8 s], with 800 ms of room for latency on a busy
// machine (450 ms ticks left 350 ms, and one request in 200 slipped a tick
// at load 11), and 0.8–1.2 s across ticks 1 and 2. The server recovers at
// 1 s, so only tick 2 counts after recovery. The live run must flag the old
// preset on the peak and agree with the fixed one on every metric.
func TestLiveGRPCFirstRetry(t *testing.T) {
	d, _ := DriverByName("grpc-go")
	sc := sim.Scenario{Clients: 200, Tick: 900 * time.Millisecond, RecoverAt: time.Second, Capacity: 1200, Horizon: 30 * time.Second}
	// A grace of 200 ms: 200 clients starting at once may take a while to
	// get their first request out on a busy machine.
	m, held := runLive(t, Config{Scenario: sc, Driver: d, Down: Down503, Grace: 200 * time.Millisecond, Seed: 1})
	seeds := seedsUpTo(1000)
	old := sim.DefaultPolicy(sim.GRPC)
	if want, _ := sim.PresetByName("grpc"); old.Base != want.Policy.Base || old.Width != want.Policy.Width || old.Multiplier != want.Policy.Multiplier || old.Cap != want.Policy.Cap {
		t.Fatalf("the grpc family's defaults %v are no longer the old grpc preset's numbers %v", old, want.Policy)
	}
	unfixed, err := Compare(m, old, seeds, 5)
	if err != nil {
		t.Fatal(err)
	}
	logComparison(t, unfixed)
	if !slices.Contains(unfixed.Disagree, MPeak) {
		verdictf(t, held, "live grpc-go against the old preset (first retry 1 s ± 20 %%): disagreements %v, want the peak among them", unfixed.Disagree)
	}
	pr, _ := sim.PresetByName("grpc")
	fixed, err := Compare(m, pr.Policy, seeds, 5)
	if err != nil {
		t.Fatal(err)
	}
	logComparison(t, fixed)
	if len(fixed.Disagree) != 0 {
		verdictf(t, held, "live grpc-go against the grpc preset: disagreements %v, want none", fixed.Disagree)
	}
}
