package sim

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// chainScenario is n clients behind a deepest service down for 60 s (or
// up from the start with a capacity no tick reaches, down false).
func chainScenario(n int, down bool) Scenario {
	sc := Scenario{Clients: n, Tick: 100 * time.Millisecond, Spread: time.Second, Capacity: 1e9}
	if down {
		sc.RecoverAt = 60 * time.Second
	}
	sc.Horizon = sc.RecoverAt + 60*time.Second
	return sc
}

// retrying is a policy that makes k retries 100 ms apart (the zero Policy,
// which never retries, for k = 0 at a service).
func retrying(k int) Policy {
	return Policy{Kind: Fixed, Base: 100 * time.Millisecond, MaxAttempts: k + 1}
}

// chainOf is a chain whose callers make ks[c] retries (ks[0]: the clients),
// every front service without a capacity limit, and the clients' policy.
func chainOf(ks []int) (Chain, Policy) {
	var ch Chain
	ch.N = len(ks) - 1
	for j, k := range ks[1:] {
		if k > 0 {
			ch.Front[j].Policy = retrying(k)
		}
	}
	return ch, retrying(ks[0])
}

func runChain(t *testing.T, sc Scenario, ch Chain, p Policy, seed uint32) Result {
	t.Helper()
	var s Sim
	r, err := s.RunChain(sc, ch, p, NewMulberry32(seed), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// While the deepest service is down and no service above it is
// saturated, a client's request makes Π(1+k_c) attempts at the deepest
// service, over the callers c down to it: (1+k)^L for equal k
// (ThomWright's retry-model), and each service s receives Π over the
// callers down to s. Every client gives up. Exact, not in expectation.
func TestChainAmplificationWhileDown(t *testing.T) {
	t.Parallel()
	const n = 500
	for _, tc := range []struct {
		ks     []int
		fanout int
	}{
		{[]int{2, 2}, 0}, {[]int{2, 2, 2}, 0}, {[]int{2, 2, 2, 2}, 0}, // (1+2)^L
		{[]int{3, 0, 1}, 0}, {[]int{0, 0, 4}, 0}, {[]int{1, 4, 0, 2}, 0}, {[]int{0, 0}, 0},
		{[]int{2, 1}, 3}, {[]int{1, 1, 1}, 8}, // a fan-out: every copy per attempt
	} {
		t.Run(fmt.Sprint(tc.ks, tc.fanout), func(t *testing.T) {
			ch, p := chainOf(tc.ks)
			ch.Fanout = tc.fanout
			r := runChain(t, chainScenario(n, true), ch, p, 7)
			if r.NLayers != len(tc.ks) {
				t.Fatalf("NLayers %d, want %d", r.NLayers, len(tc.ks))
			}
			want := int64(n)
			for s, k := range tc.ks {
				want *= int64(1 + k)
				w := want
				if s == len(tc.ks)-1 {
					w *= int64(ch.Copies())
				}
				if got := r.Layers[s].Attempts; got != w {
					t.Errorf("service %d: %d attempts, want %d (amplification %g, want %d)", s, got, w,
						r.Layers[s].Amplification(n), w/n)
				}
				if r.Layers[s].Served != 0 {
					t.Errorf("service %d served %d while its callee was down", s, r.Layers[s].Served)
				}
			}
			last := r.Layers[len(tc.ks)-1]
			if last.Rejected != last.Attempts {
				t.Errorf("the deepest service refused %d of %d attempts while down", last.Rejected, last.Attempts)
			}
			if r.GaveUp != n || r.Succeeded != 0 || r.Sent != r.Layers[0].Attempts {
				t.Errorf("gave up %d, served %d, sent %d: want %d, 0, %d", r.GaveUp, r.Succeeded, r.Sent, n, r.Layers[0].Attempts)
			}
		})
	}
}

// A saturated front service caps what reaches the deepest one: with the
// edge admitting 10 attempts a tick, far fewer than Π(1+k) reach it, and
// the edge's refusals are what the clients retry.
func TestChainSaturatedFrontCapsAmplification(t *testing.T) {
	t.Parallel()
	ch, p := chainOf([]int{2, 2, 2})
	ch.Front[0].Capacity = 100 // 10 a tick
	r := runChain(t, chainScenario(2000, true), ch, p, 7)
	if r.Layers[0].Rejected == 0 || r.Layers[2].Attempts >= 2000*27 {
		t.Errorf("edge refused %d, deepest got %d attempts: want refusals and fewer than %d", r.Layers[0].Rejected, r.Layers[2].Attempts, 2000*27)
	}
	if admitted := r.Layers[0].Attempts - r.Layers[0].Rejected; r.Layers[1].Attempts != admitted*3 {
		t.Errorf("B got %d attempts for the %d A admitted; want 3 each", r.Layers[1].Attempts, admitted)
	}
}

// leafAttempts is the exact distribution of the attempts one client
// request makes at the last service of a chain whose callers make ks[c]
// retries, each attempt at that service failing independently with
// probability p: fail[t], ok[t] are the probabilities that the request
// made t attempts there and failed, or succeeded.
func leafAttempts(ks []int, p float64) (fail, ok []float64) {
	fail, ok = []float64{0, p}, []float64{0, 1 - p} // one attempt at the last service
	for c := len(ks) - 1; c >= 0; c-- {
		// caller c's request: up to ks[c]+1 attempts, each an outcome
		// of (fail, ok), until one succeeds.
		run := []float64{1} // the attempts so far all failed
		var rf, rok []float64
		for range ks[c] + 1 {
			rok = addPoly(rok, mulPoly(run, ok))
			run = mulPoly(run, fail)
		}
		rf = run
		fail, ok = rf, rok
	}
	return fail, ok
}

func mulPoly(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

func addPoly(a, b []float64) []float64 {
	out := make([]float64, max(len(a), len(b)))
	for i, x := range a {
		out[i] += x
	}
	for i, x := range b {
		out[i] += x
	}
	return out
}

// moments returns the mean and variance of the attempts, and the
// probability of success.
func moments(fail, ok []float64) (mean, variance, success float64) {
	var m2 float64
	for t := range max(len(fail), len(ok)) {
		var pr float64
		if t < len(fail) {
			pr += fail[t]
		}
		if t < len(ok) {
			pr += ok[t]
			success += ok[t]
		}
		mean += float64(t) * pr
		m2 += float64(t*t) * pr
	}
	return mean, m2 - mean*mean, success
}

// expectedAttempts is the closed form: attempts at the last service per
// request with retries ks and an independent failure share p there, the
// geometric sum (1−p^(k+1))/(1−p) composed up the chain, each caller's
// attempt failing with q = its callee's p^(k+1).
func expectedAttempts(ks []int, p float64) (attempts, success float64) {
	attempts, q := 1.0, p
	for c := len(ks) - 1; c >= 0; c-- {
		k := float64(ks[c] + 1)
		if q == 1 {
			attempts *= k
		} else {
			attempts *= (1 - math.Pow(q, k)) / (1 - q)
		}
		q = math.Pow(q, k)
	}
	return attempts, 1 - q
}

// With the deepest service up, never saturated, and failing each attempt
// independently with probability p, each service s receives on average
// the closed form of the chain down to it, whose last service fails an
// attempt with the probability that its whole call fails, and the clients
// succeed with 1 − q₀. The run's means are held within 5 standard errors
// of the closed form, the standard deviation from the exact distribution
// (leafAttempts), which also checks the closed form. A fan-out of m
// copies fails an attempt with 1 − (1−p)^m and makes m attempts there.
func TestChainAmplificationWithFailureShare(t *testing.T) {
	t.Parallel()
	const n = 40000
	for _, tc := range []struct {
		ks     []int
		p      float64
		fanout int
	}{
		{[]int{2, 2, 2}, 0.5, 0}, {[]int{1, 3}, 0.3, 0}, {[]int{3, 0, 2, 1}, 0.6, 0}, {[]int{2, 2}, 0.9, 0},
		{[]int{1, 2}, 0.2, 3},
	} {
		t.Run(fmt.Sprint(tc.ks, tc.p, tc.fanout), func(t *testing.T) {
			ch, pol := chainOf(tc.ks)
			ch.Fanout = tc.fanout
			sc := chainScenario(n, false)
			sc.FailShare = tc.p
			r := runChain(t, sc, ch, pol, 11)
			m := float64(ch.Copies())
			q := 1 - math.Pow(1-tc.p, m) // an attempt of the last caller fails
			for s := range tc.ks {
				// the chain down to service s: its attempts fail when the rest of the chain does
				qs := q
				if s < len(tc.ks)-1 {
					_, succ := expectedAttempts(tc.ks[s+1:], q)
					qs = 1 - succ
				}
				want, _ := expectedAttempts(tc.ks[:s+1], qs)
				exact, variance, _ := moments(leafAttempts(tc.ks[:s+1], qs))
				if math.Abs(exact-want) > 1e-9*want {
					t.Fatalf("service %d: closed form %g, exact distribution %g", s, want, exact)
				}
				mult := 1.0
				if s == len(tc.ks)-1 {
					mult = m
				}
				got := float64(r.Layers[s].Attempts) / n / mult
				if se := math.Sqrt(variance / n); math.Abs(got-want) > 5*se {
					t.Errorf("service %d: %.4f attempts a request, want %.4f ± %.4f (5 s.e.)", s, got, want, 5*se)
				}
			}
			_, success := expectedAttempts(tc.ks, q)
			got := float64(r.Succeeded) / n
			if se := math.Sqrt(success * (1 - success) / n); math.Abs(got-success) > 5*se+1e-12 {
				t.Errorf("served %.4f of the clients, want %.4f ± %.4f", got, success, 5*se)
			}
			if r.Succeeded+r.GaveUp != n {
				t.Errorf("served %d + gave up %d ≠ %d clients", r.Succeeded, r.GaveUp, n)
			}
		})
	}
}

// The same inputs give the same run, and a Sim reused for other runs in
// between gives it too.
func TestChainIsDeterministic(t *testing.T) {
	t.Parallel()
	ch, p := chainOf([]int{2, 3, 1})
	ch.Front[0].Policy = DefaultPolicy(Decorrelated)
	ch.Front[0].Policy.MaxAttempts = 4
	sc := chainScenario(3000, true)
	sc.FailShare = 0.2
	sc.Capacity = 200
	var s Sim
	a, err := s.RunChain(sc, ch, p, NewMulberry32(5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(Article(), DefaultPolicy(FullJitter), NewMulberry32(1), nil); err != nil {
		t.Fatal(err)
	}
	b, _ := s.RunChain(sc, ch, p, NewMulberry32(5), nil)
	if a != b {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Succeeded == 0 || a.Succeeded+a.GaveUp+a.Pending != 3000 {
		t.Errorf("served %d, gave up %d, pending %d of 3000", a.Succeeded, a.GaveUp, a.Pending)
	}
}

// A retry budget at a service bounds its retries: with 10 % and no
// reserve, B's retries to the down service stay within 10 % of its
// originals (the attempts A sent it) plus the budget's rounding.
func TestChainRetryBudgetPerService(t *testing.T) {
	t.Parallel()
	ch, p := chainOf([]int{0, 0, 3})
	ch.Front[1].Policy.RetryBudget = 0.1
	r := runChain(t, chainScenario(2000, true), ch, p, 3)
	orig := r.Layers[1].Attempts
	retries := r.Layers[2].Attempts - orig
	if retries > int64(0.1*float64(orig))+1 || retries == 0 {
		t.Errorf("B made %d retries for %d originals; want ≤ 10 %% of them, and some", retries, orig)
	}
}

// A chain run allocates nothing once the Sim has grown.
func TestChainAllocatesNothing(t *testing.T) {
	ch, p := chainOf([]int{2, 2, 2})
	ch.Front[0].Policy = DefaultPolicy(FullJitter)
	ch.Front[0].Policy.MaxAttempts = 3
	sc := chainScenario(1000, true)
	sc.FailShare = 0.1
	sc.Capacity = 100
	var s Sim
	rng := NewMulberry32(1)
	if _, err := s.RunChain(sc, ch, p, rng, nil); err != nil {
		t.Fatal(err)
	}
	// the delayers are built once a run (as Sim.Run builds them): a few
	// allocations a run, none a request
	allocs := testing.AllocsPerRun(5, func() { rng.Seed(1); _, _ = s.RunChain(sc, ch, p, rng, nil) })
	if allocs > 8 {
		t.Errorf("%g allocations a run", allocs)
	}
}

func TestValidateChain(t *testing.T) {
	t.Parallel()
	sc := chainScenario(10, true)
	good, p := chainOf([]int{1, 1})
	if err := ValidateChain(sc, good, p); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*Chain, *Scenario){
		"no services":  func(c *Chain, _ *Scenario) { c.N = 0 },
		"too many":     func(c *Chain, _ *Scenario) { c.N = MaxLayers },
		"capacity":     func(c *Chain, _ *Scenario) { c.Front[0].Capacity = -1 },
		"under a tick": func(c *Chain, _ *Scenario) { c.Front[0].Capacity = 5 },
		"recovery":     func(c *Chain, _ *Scenario) { c.Front[0].OutageStart, c.Front[0].RecoverAt = 2e9, 1e9 },
		"policy":       func(c *Chain, _ *Scenario) { c.Front[0].Policy.MaxAttempts = -1 },
		"components":   func(c *Chain, _ *Scenario) { c.Front[0].Policy.BreakerRatio = 0.5 },
		"fanout":       func(c *Chain, _ *Scenario) { c.Fanout = MaxFanout + 1 },
		"fail curve":   func(_ *Chain, s *Scenario) { s.FailShare, s.FailCurve = 0.1, "1 0" },
		"beyond N":     func(c *Chain, _ *Scenario) { c.Front[2].Capacity = 5 },
		"queue wait": func(_ *Chain, s *Scenario) {
			s.Concurrency, s.Service, s.ServiceTime, s.QueueWait = 2, "fixed", time.Second, time.Second
		},
		"workers": func(c *Chain, _ *Scenario) { c.Front[0].Concurrency = -1 },
		"service": func(c *Chain, _ *Scenario) { c.Front[0].Concurrency, c.Front[0].ServiceTime = 2, time.Millisecond },
		"lognormal": func(c *Chain, _ *Scenario) {
			c.Front[0].Concurrency, c.Front[0].Service, c.Front[0].ServiceTime = 2, "lognormal", time.Millisecond
		},
		"service time": func(c *Chain, _ *Scenario) { c.Front[0].Concurrency, c.Front[0].Service = 2, "fixed" },
		"no workers":   func(c *Chain, _ *Scenario) { c.Front[0].ServiceTime = time.Second },
		"queue limit":  func(c *Chain, _ *Scenario) { c.Front[0].QueueLimit = 3 },
		"timeout":      func(c *Chain, _ *Scenario) { c.Front[0].Timeout = 1500 * time.Microsecond },
		"both": func(c *Chain, _ *Scenario) {
			c.Front[0].Concurrency, c.Front[0].Service, c.Front[0].ServiceTime, c.Front[0].Capacity = 2, "fixed", time.Millisecond, 100
		},
		"queued fanout":  func(c *Chain, _ *Scenario) { c.Fanout, c.Front[0].Timeout = 2, time.Second },
		"retry-after":    func(_ *Chain, s *Scenario) { s.RetryAfter = time.Second },
		"partial outage": func(c *Chain, _ *Scenario) { c.Front[0].OutageStart = 1500 * time.Microsecond },
	} {
		ch, s := good, sc
		f(&ch, &s)
		if err := ValidateChain(s, ch, p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkChain is three services, each retrying twice, in front of the
// article's server; ns/event is per attempt at any service.
func BenchmarkChain(b *testing.B) {
	ch, _ := chainOf([]int{0, 2, 2})
	benchChain(b, Article(), ch, DefaultPolicy(FullJitter))
}

// benchChain runs sc behind ch, clients on p, over five seeds in turn;
// ns/event is per attempt at any service.
func benchChain(b *testing.B, sc Scenario, ch Chain, p Policy) {
	var s Sim
	rng := NewMulberry32(0)
	var events int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rng.Seed(206 + uint32(i%5))
		r, err := s.RunChain(sc, ch, p, rng, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range r.Layers[:r.NLayers] {
			events += l.Attempts
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// ChainBytes bounds what a chain run holds beyond the scenario's own
// storage: its per-client state and the services' budgets.
func TestChainBytesBoundsTheStorage(t *testing.T) {
	t.Parallel()
	for _, ks := range [][]int{{1, 1}, {2, 2, 2, 2}} {
		ch, p := chainOf(ks)
		for j := range ch.N {
			ch.Front[j].Policy.RetryBudget = 0.1
		}
		sc := chainScenario(5000, true)
		var s Sim
		if _, err := s.RunChain(sc, ch, p, NewMulberry32(1), nil); err != nil {
			t.Fatal(err)
		}
		got, est := int64(s.chain.footprint()), ChainBytes(sc, ch)
		if got == 0 || got > est {
			t.Errorf("%v: holds %d bytes, estimated %d", ks, got, est)
		}
	}
}

// Random chains keep the books: every client ends served, given up or
// pending; every service on the way answers each served client once, so
// each service's Served is Succeeded (times the copies at the server);
// a service passes on at most what it admitted times its callee's
// attempts; the timeline sums to the totals; and the run is the same with
// and without a timeline.
func TestChainKeepsTheBooks(t *testing.T) {
	t.Parallel()
	rng := NewMulberry32(99)
	pols := []Policy{{}, retrying(1), retrying(3), DefaultPolicy(Decorrelated), DefaultPolicy(FullJitter),
		{Kind: Exponential, Base: 50 * time.Millisecond, Multiplier: 2, Cap: time.Second, MaxAttempts: 5, RetryBudget: 0.2, BudgetMinRPS: 1}}
	for trial := range 60 {
		var ch Chain
		ch.N = 1 + int(rng.Float64()*3)
		for j := range ch.N {
			l := &ch.Front[j]
			l.Policy = pols[int(rng.Float64()*float64(len(pols)))]
			if rng.Float64() < 0.4 {
				l.Capacity = float64(10 * (1 + int(rng.Float64()*50)))
			}
			if rng.Float64() < 0.3 {
				l.OutageStart = time.Duration(int(rng.Float64()*20)) * time.Second
				l.RecoverAt = l.OutageStart + time.Duration(int(rng.Float64()*20))*time.Second
			}
		}
		if rng.Float64() < 0.3 {
			ch.Fanout = 2 + int(rng.Float64()*3)
		}
		leaf := 0.0
		if rng.Float64() < 0.3 {
			leaf = rng.Float64() * 0.5
		}
		p := pols[1+int(rng.Float64()*float64(len(pols)-1))]
		sc := chainScenario(50+int(rng.Float64()*500), rng.Float64() < 0.7)
		sc.FailShare = leaf
		sc.Capacity = float64(10 * (1 + int(rng.Float64()*30)))
		var s Sim
		var tl Timeline
		r, err := s.RunChain(sc, ch, p, NewMulberry32(uint32(trial)), &tl)
		if err != nil {
			t.Fatal(err)
		}
		bare, _ := s.RunChain(sc, ch, p, NewMulberry32(uint32(trial)), nil)
		if bare != r {
			t.Fatalf("trial %d: a timeline changes the run", trial)
		}
		if r.Succeeded+r.GaveUp+r.Pending != sc.Clients || r.NLayers != ch.N+1 {
			t.Fatalf("trial %d: %d served + %d gave up + %d pending ≠ %d", trial, r.Succeeded, r.GaveUp, r.Pending, sc.Clients)
		}
		for j := range r.NLayers {
			l := r.Layers[j]
			bad := l.Served != int64(r.Succeeded) // a front service answers each served client once
			if j == ch.N {                        // the server answers each copy's attempt at once
				bad = l.Served+l.Rejected != l.Attempts || l.Served < int64(r.Succeeded*ch.Copies())
			}
			if bad || l.Rejected > l.Attempts {
				t.Errorf("trial %d, service %d: %+v, %d served", trial, j, l, r.Succeeded)
			}
			if j < ch.N && !ch.Retries(j+1, p) {
				mult := int64(1)
				if j+1 == ch.N {
					mult = int64(ch.Copies())
				}
				if got, admitted := r.Layers[j+1].Attempts, l.Attempts-l.Rejected; got != admitted*mult {
					t.Errorf("trial %d: service %d admitted %d and does not retry, the next one got %d (× %d copies)", trial, j, admitted, got, mult)
				}
			}
		}
		var arr, served, quit int64
		for k := range tl.Arrivals {
			arr, served, quit = arr+int64(tl.Arrivals[k]), served+int64(tl.Served[k]), quit+int64(tl.GaveUp[k])
		}
		if arr != r.Sent || served != int64(r.Succeeded) || quit != int64(r.GaveUp) {
			t.Errorf("trial %d: timeline sums %d, %d, %d; want %d, %d, %d", trial, arr, served, quit, r.Sent, r.Succeeded, r.GaveUp)
		}
	}
}

// Stop ends a chain run as it ends a single server's.
func TestChainStops(t *testing.T) {
	t.Parallel()
	ch, _ := chainOf([]int{0, 2, 2})
	p := DefaultPolicy(Decorrelated)
	var stop atomic.Bool
	stop.Store(true)
	s := Sim{Stop: &stop}
	if _, err := s.RunChain(chainScenario(200000, true), ch, p, NewMulberry32(1), nil); err != ErrStopped {
		t.Fatalf("error %v, want ErrStopped", err)
	}
	stop.Store(false)
	if r, err := s.RunChain(chainScenario(2000, true), ch, p, NewMulberry32(1), nil); err != nil || r.Succeeded != 2000 {
		t.Errorf("after a stop: %v, %d served", err, r.Succeeded)
	}
}

// A service's max_elapsed is its caller's deadline passed down: it stops
// retrying once its caller's request has waited that long, and the
// caller's attempt fails then. B retries every 100 ms for ever, but
// within 1 s of its first failure: at most 11 attempts at the server per
// attempt of A.
func TestChainServiceDeadline(t *testing.T) {
	t.Parallel()
	ch, p := chainOf([]int{0, 0})
	ch.Front[0].Policy = Policy{Kind: Fixed, Base: 100 * time.Millisecond, MaxElapsed: time.Second}
	r := runChain(t, chainScenario(100, true), ch, p, 1)
	if got := r.Layers[1].Attempts; got != 100*11 || r.GaveUp != 100 {
		t.Errorf("%d attempts at the server, %d gave up: want 1,100 (11 each within 1 s), 100", got, r.GaveUp)
	}
}

// With a timeline, a chain run allocates no more: the timeline is made
// whole when the run starts, as Sim.Run makes it.
func TestChainTimelineAllocatesOnce(t *testing.T) {
	ch, p := chainOf([]int{2, 2, 2})
	sc := chainScenario(500, true)
	var s Sim
	var tl Timeline
	rng := NewMulberry32(1)
	if _, err := s.RunChain(sc, ch, p, rng, &tl); err != nil {
		t.Fatal(err)
	}
	with := testing.AllocsPerRun(3, func() { rng.Seed(1); _, _ = s.RunChain(sc, ch, p, rng, &tl) })
	fresh := testing.AllocsPerRun(3, func() { rng.Seed(1); _, _ = s.RunChain(sc, ch, p, rng, &Timeline{}) })
	without := testing.AllocsPerRun(3, func() { rng.Seed(1); _, _ = s.RunChain(sc, ch, p, rng, nil) })
	if with > without || fresh > without+4 { // a new timeline: its three slices (and the Timeline)
		t.Errorf("%g allocations a run with a timeline, %g with a new one, %g without", with, fresh, without)
	}
}
