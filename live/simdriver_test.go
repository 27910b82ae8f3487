package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/sim"
)

// simScenario is a small fleet and a short outage, a live run of a second
// or two at scale 5 (100 ms ticks of real time): 20 clients, down 2 s,
// then 10 requests per 500 ms tick, so that rejections come both before
// recovery (503) and after it (429). Presets that retry only a response
// with a Retry-After get one of 1 s.
func simScenario(p sim.Policy) sim.Scenario {
	sc := sim.Scenario{Clients: 20, Tick: 500 * time.Millisecond, RecoverAt: 2 * time.Second, Capacity: 20, Spread: time.Second, Horizon: time.Minute}
	if p.RetryOn != sim.RetryOnAny {
		sc.RetryAfter = time.Second
	}
	return sc
}

// runPlaced runs cfg until a run places every request in sim's tick, at
// most three times: a run that misplaced some is inconclusive (the machine
// stalled the harness), and three of them fail the test, but with the race
// detector on (see runLive), where the last is returned with held false.
func runPlaced(t *testing.T, cfg Config) (m *Measurement, held bool) {
	t.Helper()
	var last *Measurement
	for range 3 {
		m, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		last = m
		if len(m.Degraded()) == 0 {
			return m, true
		}
		t.Logf("%s: %v: run again", cfg.Driver.Name, m.Degraded())
	}
	if raceEnabled {
		t.Logf("race detector on, timing not held: %v", last.Degraded())
		return last, false
	}
	t.Fatalf("%s: the machine misplaced requests in each of 3 runs: too busy for a live run", cfg.Driver.Name)
	return nil, false
}

// Each sim:NAME client runs its preset as the simulator does: over real
// sockets and timers, a small fleet with a short outage replays sim's run
// of the seed exactly (every tick's arrivals, served, given up and
// pending) and agrees with its preset on every metric. Among them
// sim:urllib3 (retry_on, Retry-After), sim:urllib3-backoff,
// sim:client-go-rest, sim:envoy-retry-cap (a retry cap shared by the
// fleet), sim:aws-sdk-go-v2 (separate 503 and 429 bases, token bucket) and
// sim:aws-sdk-go-v2-adaptive (a rate limiter), which a loop over the
// preset's delays ran wrong (sim:urllib3 sent 1,723 requests against its
// own preset's band [124, 153]).
func TestSimDriversReplayTheirPresets(t *testing.T) {
	seeds := seedsUpTo(200)
	for _, pr := range sim.Presets() {
		t.Run(pr.Name, func(t *testing.T) {
			d, err := DriverByName("sim:" + pr.Name)
			if err != nil {
				t.Fatal(err)
			}
			sc := simScenario(pr.Policy)
			seed, err := MedianSeed(sc, pr.Policy, seeds)
			if err != nil {
				t.Fatal(err)
			}
			m, held := runPlaced(t, Config{Scenario: sc, Driver: d, Down: Down503, Grace: 10 * time.Millisecond, Seed: seed, MaxAttempts: 1000, Scale: 5})
			var s sim.Sim
			var tl sim.Timeline
			want, err := s.Run(sc, pr.Policy, sim.NewMulberry32(seed), &tl)
			if err != nil {
				t.Fatal(err)
			}
			var wantArr []int
			for _, a := range tl.Arrivals {
				wantArr = append(wantArr, int(a))
			}
			got := m.Arrivals
			for len(got) < len(wantArr) {
				got = append(got, 0)
			}
			for len(wantArr) < len(got) && got[len(wantArr)] == 0 {
				wantArr = append(wantArr, 0)
			}
			if diff := cmp.Diff(wantArr, got); diff != "" {
				verdictf(t, held, "seed %d: arrivals per tick (-sim +live):\n%s", seed, diff)
			}
			type counts struct {
				Sent, SentAfter                  int64
				Peak, Succeeded, GaveUp, Pending int
				T50, T99                         sim.Milestone
			}
			w := counts{want.Sent, want.SentAfterRecovery, want.PeakArrivals, want.Succeeded, want.GaveUp, want.Pending, want.T50, want.T99}
			g := counts{m.Result.Sent, m.Result.SentAfterRecovery, m.Result.PeakArrivals, m.Result.Succeeded, m.Result.GaveUp, m.Result.Pending, m.Result.T50, m.Result.T99}
			if diff := cmp.Diff(w, g); diff != "" {
				verdictf(t, held, "seed %d: metrics (-sim +live):\n%s", seed, diff)
			}
			c, err := Compare(m, pr.Policy, seeds, 5)
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != Agrees {
				logComparison(t, c)
				verdictf(t, held, "sim:%s against its own preset: %s (outside %v; %v)", pr.Name, c.Verdict, c.Disagree, c.Degraded)
			}
		})
	}
}

// lateClock's waits end lag late: every tick the server closes, every
// first send and every request of a sim: client, as on a machine too busy
// to keep time.
type lateClock struct{ lag time.Duration }

func (lateClock) Now() time.Time { return time.Now() }

func (c lateClock) Sleep(ctx context.Context, d time.Duration) error {
	return sleep(ctx, max(d, 0)+c.lag)
}

// A run on a clock whose waits end late never agrees: not against its own
// preset (which it would agree with on time), not against a planted wrong
// model. A sim: client's requests land in later ticks than sim's; a
// library's server answers its ticks late. Both are inconclusive.
func TestLateTicksAreInconclusive(t *testing.T) {
	for _, tt := range []struct {
		library, wrong string
	}{
		{"sim:go-retryablehttp", "failsafe-go"},
		{"go-retryablehttp", "failsafe-go"},
	} {
		t.Run(tt.library, func(t *testing.T) {
			d, _ := DriverByName(tt.library)
			right, _ := d.Policy()
			wrong, _ := sim.PresetByName(tt.wrong)
			sc := sim.Scenario{Clients: 20, Tick: 200 * time.Millisecond, RecoverAt: time.Second, Capacity: 40, Spread: 500 * time.Millisecond, Horizon: 8 * time.Second}
			cfg := Config{Scenario: sc, Driver: d, Down: Down503, Grace: 10 * time.Millisecond, Seed: 1, MaxAttempts: 100,
				Clock: lateClock{lag: 150 * time.Millisecond}} // three quarters of a tick
			m, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, model := range []sim.Policy{right, wrong.Policy} {
				c, err := Compare(m, model, seedsUpTo(50), 5)
				if err != nil {
					t.Fatal(err)
				}
				if c.Verdict != Inconclusive {
					logComparison(t, c)
					t.Errorf("%s against %s on late ticks: %s, want inconclusive", tt.library, c.Name, c.Verdict)
				}
			}
			if v := fmt.Sprint(m.Degraded()); m.CloseLateP99 < 150*time.Millisecond {
				t.Errorf("ticks closed %v late at the 99th percentile with a clock 150ms late (%s)", m.CloseLateP99, v)
			}
		})
	}
}
