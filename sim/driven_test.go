package sim

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// drive runs sc under p through a Driven whose caller serves as sim's
// counting server does, and returns the run's timeline and metrics as a
// run counts them.
func drive(t *testing.T, sc Scenario, p Policy, seed uint32, ra time.Duration) (Timeline, Result) {
	t.Helper()
	d, err := NewDriven(sc, p, seed)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tl := Timeline{Tick: sc.Tick}
	r := Result{Clients: sc.Clients}
	budget := sc.budget()
	ok, gave := 0, 0
	last := -1 // the last tick with any event
	for k := range d.Ticks() {
		sent := d.Send(k)
		up := time.Duration(k)*sc.Tick >= sc.RecoverAt
		served := make([]bool, len(sent))
		ns := 0
		for j := range sent {
			if up && j < budget {
				served[j] = true
				ns++
			}
		}
		gaveUp, _ := d.Answer(k, served, ra)
		tl.Arrivals = append(tl.Arrivals, int32(len(sent)))
		tl.Served = append(tl.Served, int32(ns))
		tl.GaveUp = append(tl.GaveUp, int32(len(gaveUp)))
		if len(sent) > 0 || len(gaveUp) > 0 {
			last = k
		}
		r.Sent += int64(len(sent))
		if up {
			r.SentAfterRecovery += int64(len(sent))
			r.PeakArrivals = max(r.PeakArrivals, len(sent))
		}
		ok += ns
		gave += len(gaveUp)
		if ns > 0 {
			at := time.Duration(k) * sc.Tick
			mark(&r.T50, float64(ok) >= float64(sc.Clients)*0.5, at)
			mark(&r.T90, float64(ok) >= float64(sc.Clients)*0.9, at)
			mark(&r.T99, float64(ok) >= float64(sc.Clients)*0.99, at)
			mark(&r.AllDone, ok == sc.Clients, at)
		}
	}
	r.Succeeded, r.GaveUp, r.Pending = ok, gave, sc.Clients-ok-gave
	tl.Arrivals, tl.Served, tl.GaveUp = trimZeros(tl.Arrivals[:last+1], tl.Served[:last+1], tl.GaveUp[:last+1])
	return tl, r
}

// randomScenario is a small counting-server scenario: a live run's kind.
func randomScenario(rng *Mulberry32) Scenario {
	tick := time.Duration(10+int(rng.Float64()*490)) * time.Millisecond
	sc := Scenario{
		Clients:   1 + int(rng.Float64()*300),
		Tick:      tick,
		RecoverAt: time.Duration(rng.Float64()*20000) * time.Millisecond,
		Spread:    time.Duration(rng.Float64()*3000) * time.Millisecond,
	}
	sc.Capacity = math.Ceil(1000/float64(tick.Milliseconds())) * (1 + math.Floor(rng.Float64()*40))
	sc.Horizon = sc.RecoverAt + time.Duration(1+int(rng.Float64()*400))*tick
	if rng.Float64() < 0.5 {
		sc.RetryAfter = time.Duration(1+int(rng.Float64()*4)) * time.Second
	}
	return sc
}

// A Driven whose caller serves as sim's server does replays sim's run of
// the seed, tick by tick: every preset (its delays, retry_on, limits and
// client components), random scenarios and seeds. The per-tick arrivals,
// served and given up, and every metric, are the run's.
func TestDrivenReplaysRun(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(22)
	for _, pr := range append(Presets(), componentVariants()...) {
		for c := range 6 {
			sc := randomScenario(rng)
			seed := uint32(rng.Float64() * 1e9)
			t.Run(fmt.Sprintf("%s/%d", pr.Name, c), func(t *testing.T) {
				var s Sim
				var want Timeline
				wr, err := s.Run(sc, pr.Policy, NewMulberry32(seed), &want)
				if err != nil {
					t.Fatal(err)
				}
				got, gr := drive(t, sc, pr.Policy, seed, sc.RetryAfter)
				want.Arrivals, want.Served, want.GaveUp = trimZeros(want.Arrivals, want.Served, want.GaveUp)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%+v seed %d: timeline (-run +driven):\n%s", sc, seed, diff)
				}
				wr.PeakRPS, wr.End, wr.LocalRejections = 0, 0, 0
				if diff := cmp.Diff(wr, gr); diff != "" {
					t.Errorf("%+v seed %d: result (-run +driven):\n%s", sc, seed, diff)
				}
			})
		}
	}
}

// componentVariants are policies whose client components bite in small
// fleets: shared by the fleet or by processes of a few clients, with low
// thresholds, and reading the Retry-After.
func componentVariants() []Preset {
	get := func(name string) Policy {
		pr, _ := PresetByName(name)
		return pr.Policy
	}
	grpcShared := get("grpc-retry-throttled")
	grpcShared.ClientsPerProcess = 0
	breaker := get("ms-resilience-standard")
	breaker.ClientsPerProcess, breaker.BreakerMinThroughput, breaker.MaxElapsed = 0, 10, 0
	breakerRA := Policy{Kind: HTTPRetry, Base: 200 * time.Millisecond, Multiplier: 2, Cap: 5 * time.Second, MaxAttempts: 20, HonorRetryAfter: true,
		BreakerRatio: 0.5, BreakerMinThroughput: 5, BreakerWindow: 2 * time.Second, BreakerBreak: time.Second, ClientsPerProcess: 7}
	adaptive := get("aws-sdk-go-v2-adaptive")
	adaptive.ClientsPerProcess, adaptive.MaxAttempts = 0, 10
	capped := get("envoy-retry-cap")
	capped.ClientsPerProcess, capped.RetryOn, capped.MaxAttempts = 10, RetryOnAny, 5
	throttle := Policy{Kind: FullJitter, Base: 100 * time.Millisecond, Cap: 5 * time.Second, Multiplier: 2, ThrottleK: 2, ThrottleWindow: 10 * time.Second}
	budget := Policy{Kind: Decorrelated, Base: 100 * time.Millisecond, Cap: 10 * time.Second, RetryBudget: 0.2, BudgetMinRPS: 2}
	budgetPer := budget
	budgetPer.ClientsPerProcess = 5
	pushback := Policy{Kind: GRPC, Base: 100 * time.Millisecond, Multiplier: 2, Cap: 5 * time.Second, Width: 0.2, MaxAttempts: 12, Pushback: true}
	var out []Preset
	for i, p := range []Policy{grpcShared, breaker, breakerRA, adaptive, capped, throttle, budget, budgetPer, pushback} {
		out = append(out, Preset{Name: fmt.Sprintf("variant-%d", i), Policy: p})
	}
	return out
}

// The rejections carry the Retry-After the caller's server sent, not the
// scenario's: a server that refused connections sent none. Such a run is
// sim's run of the scenario without one.
func TestDrivenTakesTheCallersRetryAfter(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(9)
	for _, name := range []string{"urllib3-backoff", "client-go-rest", "go-retryablehttp", "aws-sdk-go-v2"} {
		pr, _ := PresetByName(name)
		for range 4 {
			sc := randomScenario(rng)
			sc.RetryAfter = 2 * time.Second
			seed := uint32(rng.Float64() * 1e9)
			none := sc
			none.RetryAfter = 0
			var s Sim
			var want Timeline
			if _, err := s.Run(none, pr.Policy, NewMulberry32(seed), &want); err != nil {
				t.Fatal(err)
			}
			got, _ := drive(t, sc, pr.Policy, seed, 0)
			want.Arrivals, want.Served, want.GaveUp = trimZeros(want.Arrivals, want.Served, want.GaveUp)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%s %+v seed %d: (-run without Retry-After +driven with none sent):\n%s", name, sc, seed, diff)
			}
		}
	}
}

// trimZeros drops the trailing ticks where nothing happened.
func trimZeros(a, s, g []int32) ([]int32, []int32, []int32) {
	n := len(a)
	if n == 0 {
		return nil, nil, nil
	}
	for n > 0 && a[n-1] == 0 && g[n-1] == 0 {
		n--
	}
	return a[:n], s[:n], g[:n]
}

// A caller whose server serves other clients than the first of a tick,
// and fewer or more than sim's would (a real server that took them in
// another order), is answered as it says: the served never come back,
// every other client does.
func TestDrivenServedInAnyOrder(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 50, Tick: 100 * time.Millisecond, Capacity: 100, Horizon: 10 * time.Second}
	pr, _ := PresetByName("go-retryablehttp")
	for _, every := range []int{7, 3} { // 8 served (sim: 10), then 17
		d, err := NewDriven(sc, pr.Policy, 1)
		if err != nil {
			t.Fatal(err)
		}
		sent := d.Send(0)
		if len(sent) != 50 {
			t.Fatalf("tick 0: %d clients send, want all 50 (no spread)", len(sent))
		}
		served := make([]bool, len(sent))
		want := map[int32]bool{}
		for j := range served {
			if j%every == 3 {
				served[j] = true
			} else {
				want[sent[j]] = true
			}
		}
		if gave, lost := d.Answer(0, served, 0); len(gave)+len(lost) != 0 {
			t.Fatalf("gave up %v, lost %v", gave, lost)
		}
		back := map[int32]bool{}
		for k := 1; k < d.Ticks(); k++ {
			sent := d.Send(k)
			for _, i := range sent {
				back[i] = true
			}
			d.Answer(k, make([]bool, len(sent)), 0)
		}
		d.Close()
		if len(back) != len(want) {
			t.Errorf("served every %d: %d clients came back, want the %d not served", every, len(back), len(want))
		}
		for i := range back {
			if !want[i] {
				t.Errorf("served every %d: client %d was served at tick 0 and came back", every, i)
			}
		}
	}
}
