package sim

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLimiterTrace holds limiter.go's port to Netflix concurrency-limits'
// own classes: testdata/limiter/trace.txt (rtt, in flight, dropped; busy,
// latency climbing, drops, answers slower than AIMD's timeout, an
// app-limited stretch, busy again) fed to AIMDLimit and Gradient2Limit,
// defaults and set parameters, gives the limits in
// testdata/limiter/netflix.txt after every sample; those were printed by
// the Java classes themselves (testdata/limiter/regen.sh compiles them at
// commit 78a74b9 with NetflixTrace.java). Ours must give the same limit
// at every step. The trace's times are ns, as Java's; a run's are ms (the
// formulas are ratios and a timeout, scaled here).
func TestLimiterTrace(t *testing.T) {
	type sample struct {
		rtt      float64
		inflight int
		drop     bool
	}
	var trace []sample
	for _, line := range readLines(t, "testdata/limiter/trace.txt") {
		f := strings.Fields(line)
		rtt, _ := strconv.ParseFloat(f[0], 64)
		n, _ := strconv.Atoi(f[1])
		trace = append(trace, sample{rtt, n, f[2] == "1"})
	}
	want := map[string][]string{}
	for _, line := range readLines(t, "testdata/limiter/netflix.txt") {
		f := strings.Fields(line)
		want[f[0]] = f[1:]
	}
	aimd := Scenario{Limiter: "aimd", LimitInitial: 20, LimitMin: 5, LimitMax: 60, LimitBackoff: 0.75, LimitTimeout: 5 * time.Second}
	grad := Scenario{Limiter: "gradient2", LimitInitial: 20, LimitMin: 5, LimitMax: 60, LimitSmoothing: 0.3}
	for name, sc := range map[string]Scenario{"aimd-default": {Limiter: "aimd"}, "aimd": aimd,
		"gradient2-default": {Limiter: "gradient2"}, "gradient2": grad} {
		w := want[name]
		if len(w) != len(trace) {
			t.Fatalf("%s: %d limits in netflix.txt for %d samples", name, len(w), len(trace))
		}
		a := newLimitAlgo(sc)
		a.timeout *= 1e6 // ms → ns
		for i, s := range trace {
			a.sample(s.rtt, s.inflight, s.drop)
			if got := strconv.Itoa(a.limit); got != w[i] {
				t.Errorf("%s: sample %d (rtt %g ns, %d in flight, dropped %v): limit %s, Netflix's %s", name, i+1, s.rtt, s.inflight, s.drop, got, w[i])
				break
			}
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestLimiterAdmission works the limiter's bookkeeping by hand: AIMD with
// limit 2 in [1, 3]. Two requests in flight (answered at 10 and 20 ms)
// fill it: one at 2 ms is rejected. At 10 ms the first is answered (rtt
// 10, 1 in flight at its admission: 1 × 2 ≥ 2, so the limit grows to 3)
// before the arrival at 10 ms is judged: admitted. A request whose client
// gives up at 50 ms after its arrival at 10 ms (answered at 100) is a drop
// at 60 ms: int(3 × 0.9) = 2.
func TestLimiterAdmission(t *testing.T) {
	var l limiter
	l.reset(Scenario{Limiter: "aimd", LimitInitial: 2, LimitMin: 1, LimitMax: 3})
	l.hold(0, 10, 0)
	l.hold(1, 20, 0)
	if !l.full(2) || l.rejected != 1 {
		t.Fatalf("at 2 ms with 2 of 2 in flight: full %v, %d rejected; want full, 1", l.full(2), l.rejected)
	}
	if l.full(10) || l.algo.limit != 3 || len(l.held) != 1 {
		t.Fatalf("at 10 ms: limit %d, %d in flight; want 3 and 1 (and admitted)", l.algo.limit, len(l.held))
	}
	l.hold(10, 100, 50)
	if l.held[1].at != 60 || !l.held[1].drop || l.held[1].inflight != 2 {
		t.Fatalf("a request its client gives up on: %+v; want released at 60 ms, dropped, 2 in flight", l.held[1])
	}
	l.settle(60)
	// at 20: rtt 19, 2 in flight at admission: 4 ≥ 3, limit 3 (its max); at 60 the drop: 2.
	if l.algo.limit != 2 || l.algo.lowest != 2 || l.algo.highest != 3 || len(l.held) != 0 {
		t.Errorf("after 60 ms: limit %d (lowest %d, highest %d), %d in flight; want 2 (2, 3), 0", l.algo.limit, l.algo.lowest, l.algo.highest, len(l.held))
	}
}

// TestLimiterBoundsInFlight: at 150 % load with fixed 10 ms service on 2
// workers, an unbounded queue grows for the whole run; a limiter keeps
// at most LimitMax = 10 in flight, so no request waits more than 4
// services (10 in flight on 2 workers: 5 rounds, the last its own
// service): latency ≤ 50 ms, within the histogram's 0.8 % + 1 ms. It
// rejects the excess itself, its limit stays in [LimitMin, LimitMax], and
// a reused Sim gives the same result.
func TestLimiterBoundsInFlight(t *testing.T) {
	t.Parallel()
	sc := openLoop(2, "fixed", 10*time.Millisecond, 300, 0)
	sc.Horizon = 100 * time.Second
	never := Policy{Kind: Fixed, Base: time.Second, MaxAttempts: 1}
	for _, lim := range []string{"aimd", "gradient2"} {
		sc.Limiter, sc.LimitInitial, sc.LimitMin, sc.LimitMax = lim, 4, 2, 10
		r, err := Run(sc, never, 3)
		if err != nil {
			t.Fatal(err)
		}
		if r.LatencyP99 > 50*1.008+1 || r.LimiterRejected == 0 || r.LimiterRejected != r.Rejected ||
			r.LimitLowest < 2 || r.LimitFinal > 10 || r.LimitFinal < r.LimitLowest {
			t.Errorf("%s: p99 %g ms, %d of %d rejected by the limiter, limit %d (lowest %d); want p99 ≤ 50 ms, all rejections its own, limits in [2, 10]",
				lim, r.LatencyP99, r.LimiterRejected, r.Rejected, r.LimitFinal, r.LimitLowest)
		}
		var s Sim
		rng := NewMulberry32(3)
		again, _ := s.Run(sc, never, rng, nil)
		rng.Seed(3)
		third, _ := s.Run(sc, never, rng, nil)
		if again != r || third != r {
			t.Errorf("%s: a reused Sim gives another result", lim)
		}
	}
}

// TestLimiterAllocatesNothing: a limiter adds no allocation to a run on a
// reused Sim once its storage has grown (a run's few fixed ones aside).
func TestLimiterAllocatesNothing(t *testing.T) {
	sc := openLoop(2, "exponential", 10*time.Millisecond, 300, 0)
	sc.Horizon, sc.Timeout = 20*time.Second, 200*time.Millisecond
	p := DefaultPolicy(FullJitter)
	allocs := func(sc Scenario) float64 {
		var s Sim
		rng := NewMulberry32(1)
		if _, err := s.Run(sc, p, rng, nil); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() { rng.Seed(1); _, _ = s.Run(sc, p, rng, nil) })
	}
	without := allocs(sc)
	for _, lim := range Limiters {
		sc.Limiter, sc.LimitMin, sc.LimitMax = lim, 2, 40
		if n := allocs(sc); n != without {
			t.Errorf("%s: %v allocations a run, %v without a limiter", lim, n, without)
		}
	}
}
