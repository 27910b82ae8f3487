package sim

import (
	"math"
	"testing"
	"time"
)

// buriedScenario is a random queueing server the stuck rule applies to:
// an unbounded queue, a client timeout, open-loop traffic at 20–95 % load
// and an outage long enough, often, to bury it.
func buriedScenario(r *Mulberry32) (Scenario, Policy) {
	pick := func(n int) int { return int(r.Float64() * float64(n)) }
	svc := time.Duration(5+pick(100)) * time.Millisecond
	c := 1 + pick(20)
	kinds := []string{"exponential", "fixed", "lognormal"}
	sc := Scenario{
		Clients:     1 + pick(1000),
		Tick:        100 * time.Millisecond,
		Capacity:    100,
		Spread:      time.Duration(pick(3000)) * time.Millisecond,
		Concurrency: c,
		Service:     kinds[pick(3)],
		ServiceTime: svc,
		Timeout:     time.Duration(200+pick(5000)) * time.Millisecond,
		OutageStart: time.Duration(pick(30)) * time.Second,
	}
	if sc.Service == "lognormal" {
		sc.ServiceP99 = sc.ServiceTime * time.Duration(2+pick(5))
	}
	capacity := float64(c) / sc.MeanService().Seconds()
	sc.ArrivalRate = float64(int((0.1 + 0.8*r.Float64()) * capacity))
	sc.RecoverAt = sc.OutageStart + time.Duration(1+pick(40))*time.Second
	sc.Horizon = sc.RecoverAt + time.Duration(60+pick(240))*time.Second
	base := time.Duration(100+pick(2000)) * time.Millisecond
	cap := base * time.Duration(1+pick(60))
	ps := []Policy{
		{Kind: GRPC, Base: base, Cap: cap, Multiplier: 1.5 + r.Float64(), Width: r.Float64()},
		{Kind: APICore, Base: base, Cap: cap, Multiplier: 2},
		{Kind: Decorrelated, Base: base, Cap: cap},
		{Kind: Fixed, Base: base},
		{Kind: WatchDog, Base: base, Cap: cap, Multiplier: 1.5 + r.Float64(), Width: r.Float64()},
	}
	return sc, ps[pick(len(ps))].Normalize()
}

// A run the stuck rule stops is never back when run to its horizon, and
// up to the stop it is the whole run: the rule only ever cuts short runs
// that cannot come back. The random servers are chosen so that both
// kinds are common (the test fails if too few runs are stuck to say
// anything).
func TestStuckRunsNeverComeBack(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(17)
	var whole, early Sim
	early.StopStuck = true
	stuck, back := 0, 0
	n := cases(200, 20)
	for trial := range n {
		sc, p := buriedScenario(r)
		if err := sc.Validate(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if !StuckApplies(sc, p) {
			t.Fatalf("trial %d: the rule does not apply to %v on %+v", trial, p, sc)
		}
		seed := r.Uint32()
		full, err := whole.Run(sc, p, NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := early.Run(sc, p, NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		if full.Stuck {
			t.Fatalf("trial %d: a run without StopStuck says Stuck", trial)
		}
		if !cut.Stuck {
			if cut != full {
				t.Fatalf("trial %d: not stuck, yet the run differs from the whole run", trial)
			}
			if full.Recovered.Reached {
				back++
			}
			continue
		}
		stuck++
		if full.Recovered.Reached {
			t.Fatalf("trial %d: stopped as stuck at %v, yet the whole run is back at %v (%v on %+v)", trial, cut.End, full.Recovered.At, p, sc)
		}
		if cut.Recovered.Reached || cut.End >= sc.Horizon {
			t.Fatalf("trial %d: a stuck run says back (%v) or ran to the horizon (%v)", trial, cut.Recovered, cut.End)
		}
		for _, m := range [][2]Milestone{{cut.T50, full.T50}, {cut.T90, full.T90}, {cut.T99, full.T99}} {
			if m[0].Reached && m[0] != m[1] {
				t.Fatalf("trial %d: a milestone reached before the stop moved: %v, whole run %v", trial, m[0], m[1])
			}
		}
	}
	t.Logf("%d of %d stopped as stuck, %d others back", stuck, n, back)
	if stuck < n*3/20 || back < n*3/20 {
		t.Fatalf("%d stuck and %d back of %d: the random servers no longer test both sides", stuck, back, n)
	}
}

// The rule applies only where its proof holds.
func TestStuckAppliesOnlyWhereNobodyGivesUp(t *testing.T) {
	t.Parallel()
	sc := Scenario{Clients: 10, Tick: 100 * time.Millisecond, RecoverAt: time.Minute, Capacity: 100, Horizon: 2 * time.Minute,
		Concurrency: 2, Service: "exponential", ServiceTime: 20 * time.Millisecond, Timeout: time.Second, ArrivalRate: 50}
	p := Policy{Kind: Decorrelated, Base: time.Second, Cap: 30 * time.Second}.Normalize()
	if !StuckApplies(sc, p) {
		t.Fatal("the rule should apply to decorrelated jitter on an unbounded queue with timeouts")
	}
	for name, f := range map[string]func(*Scenario, *Policy){
		"attempt limit": func(_ *Scenario, p *Policy) { p.MaxAttempts = 4 },
		"retry budget":  func(_ *Scenario, p *Policy) { p.RetryBudget = 0.1 },
		"breaker":       func(_ *Scenario, p *Policy) { p.BreakerRatio, p.ClientsPerProcess = 0.5, 100 },
		"no cap":        func(_ *Scenario, p *Policy) { p.Kind, p.Cap, p.Multiplier = Exponential, 0, 2 },
		"wait bound":    func(sc *Scenario, _ *Policy) { sc.QueueWait = time.Second },
		"queue limit":   func(sc *Scenario, _ *Policy) { sc.QueueLimit = 10 },
		"shedding":      func(sc *Scenario, _ *Policy) { sc.ShedTarget = 5 * time.Millisecond },
		"no timeout":    func(sc *Scenario, _ *Policy) { sc.Timeout = 0 },
		"retry-after":   func(sc *Scenario, _ *Policy) { sc.RetryAfter = time.Second },
		"counting": func(sc *Scenario, _ *Policy) {
			sc.Concurrency, sc.Service, sc.ServiceTime, sc.Timeout, sc.ArrivalRate = 0, "", 0, 0, 0
		},
	} {
		s, q := sc, p
		f(&s, &q)
		if StuckApplies(s, q) {
			t.Errorf("%s: the rule applies, though its proof does not hold", name)
		}
	}
}

// A run Hopeless calls stuck from the start is never back when run to its
// horizon; the random servers make both verdicts common.
func TestHopelessRunsNeverComeBack(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(23)
	var s Sim
	s.StopStuck = true // a hopeless run stops as soon as the rule sees it
	hopeless, other := 0, 0
	n := cases(200, 20)
	for trial := range n {
		sc, p := buriedScenario(r)
		if !Hopeless(sc, p) {
			other++
			continue
		}
		hopeless++
		var whole Sim
		res, err := whole.Run(sc, p, NewMulberry32(r.Uint32()), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Recovered.Reached {
			t.Fatalf("trial %d: Hopeless, yet back at %v (%v on %+v)", trial, res.Recovered.At, p, sc)
		}
	}
	t.Logf("%d of %d hopeless, %d not", hopeless, n, other)
	if hopeless < n/10 || other < n/10 {
		t.Fatalf("%d hopeless and %d not of %d: the random servers no longer test both sides", hopeless, other, n)
	}
}

// MeanDelayBound bounds the mean delay of every attempt: over many
// clients of random capped policies, the mean drawn at each of the first
// 40 rejections stays within it (tolerance: 4 standard errors).
func TestMeanDelayBoundHoldsAtEveryAttempt(t *testing.T) {
	t.Parallel()
	r := NewMulberry32(31)
	const clients = 4000
	for trial := range 60 {
		_, p := buriedScenario(r)
		bound, ok := p.MeanDelayBound()
		if !ok {
			t.Fatalf("%v: no bound", p)
		}
		max, _ := p.MaxDelay()
		d := p.compile()
		cs := make([]client, clients)
		for i := range cs {
			cs[i] = client{prev: ms(p.Base)}
		}
		rng := NewMulberry32(r.Uint32())
		resp := response{up: true}
		for att := 1; att <= 40; att++ {
			var sum, sq float64
			for i := range cs {
				cs[i].att = int32(att)
				x := d.delay(&cs[i], resp, rng)
				if x > ms(max)+1e-6 {
					t.Fatalf("trial %d: %v drew %.1f ms, above MaxDelay %v", trial, p, x, max)
				}
				sum += x
				sq += x * x
			}
			mean := sum / clients
			se := math.Sqrt(math.Max(sq/clients-mean*mean, 0) / clients)
			if mean > ms(bound)+4*se+1e-6 {
				t.Fatalf("trial %d: %v: mean delay %.1f ms at attempt %d, above the bound %v", trial, p, mean, att, bound)
			}
		}
	}
}
