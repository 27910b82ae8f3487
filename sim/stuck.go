package sim

import "time"

// A stuck queueing server (Sim.StopStuck): a run that can no longer come
// back to its steady state may stop early instead of simulating every
// retry of a growing herd to the horizon (tens of millions of requests,
// seconds of CPU a run). A caller that needs only "back or not" (the
// recommendation's search over server models) sets Sim.StopStuck; stored
// runs never do, so their metrics are those of the whole run.
//
// The rule is a proof by induction, for runs where nobody gives up and
// nothing holds a request back: an unbounded FCFS queue, a client timeout
// T, no client limits or components (StuckApplies), a policy whose delays
// are at most D (Policy.MaxDelay), constant open-loop traffic at rate λ,
// no Retry-After. Checked at the start of every RecoveryWindow after
// recovery, the run is stuck when
//
//  1. an arrival would wait longer than T: every request sent from now on
//     times out, so no waiting client is answered and none gives up: the
//     clients waiting to retry, P, can only grow; and
//  2. those clients alone bring more work than the workers can do: each of
//     them sends again after a timeout and a delay whose mean is at most
//     D̄ (Policy.MeanDelayBound), so they send at least P/(T + D̄) requests
//     a second on average, each needing the mean service time S̄, beside
//     λ·S̄ of open-loop work, while c workers do c: P·S̄/(T + D̄) + λ·S̄ ≥
//     (1 + StuckMargin)·c, with at least StuckMinWaiting clients waiting.
//
// Then the queue's work grows (by StuckMargin of the capacity at least,
// far more than the random spread of thousands of independent delays and
// service times), so condition 1 holds again at the next check, and P
// has not shrunk: the run is never back. The
// stopped run's Result says Stuck; it is not back (Recovered not
// reached), its milestones are those reached before, and its counts stop
// at the stop. TestStuckRunsNeverComeBack checks the rule against whole
// runs of random scenarios.

// StuckMargin is how much more work than the workers can do the waiting
// clients must bring for a run to be called stuck (condition 2).
const StuckMargin = 0.25

// StuckMinWaiting is the fewest clients waiting to retry for a run to be
// called stuck: enough that their requests a second stay near their mean.
const StuckMinWaiting = 500

// MaxDelay is the longest delay p can draw after a rejection without a
// Retry-After, and whether it is bounded and known: the families whose
// formula is capped (the candidate space's and their kin). Families
// that read a Retry-After, or draw from a state that can grow past the
// cap, report false.
func (p Policy) MaxDelay() (time.Duration, bool) {
	switch p.Kind {
	case Fixed:
		return p.Base, true
	case Exponential, FullJitter, EqualJitter, Decorrelated, APICore:
		return p.Cap, p.Cap > 0
	case WidthJitter, GRPC, GRPCGo:
		return time.Duration(float64(p.Cap) * (1 + p.Width)), p.Cap > 0
	case WatchDog, HTTPRetry: // d·(1 + width·(U − 0.5)); http-retry without a Retry-After
		return time.Duration(float64(p.Cap) * (1 + p.Width/2)), p.Cap > 0
	}
	return 0, false
}

// MeanDelayBound is an upper bound on the mean of any delay p draws
// after a rejection without a Retry-After: the mean of its draw once the
// cap binds, which no earlier attempt's exceeds (each family's draw
// grows with the attempt, or with the last delay, up to the cap). False
// where MaxDelay is.
func (p Policy) MeanDelayBound() (time.Duration, bool) {
	d, ok := p.MaxDelay()
	if !ok {
		return 0, false
	}
	switch p.Kind {
	case FullJitter, APICore:
		return p.Cap / 2, true // U(0, cap)
	case EqualJitter:
		return p.Cap * 3 / 4, true // cap/2 + U(0, cap/2)
	case Decorrelated:
		// min(cap, U(base, 3·prev)) with prev at most cap: its mean is
		// largest at prev = cap, where it is cap − (cap − base)²/(2·(3·cap − base)).
		c, b := float64(p.Cap), float64(min(p.Base, p.Cap))
		return time.Duration(c - (c-b)*(c-b)/(2*(3*c-b))), true
	case WidthJitter, GRPC, GRPCGo, WatchDog, HTTPRetry:
		return p.Cap, true // cap · (1 + width·(2U − 1)) or cap · (1 + width·(U − 0.5)): mean cap
	}
	return d, true // fixed, exponential: the delay itself
}

// StuckApplies reports whether the stuck rule can judge a run of p on sc:
// a queueing server with an unbounded queue, a client timeout and
// constant open-loop traffic, no Retry-After, and a policy under which
// no client gives up and nothing holds a request back, with bounded
// delays.
func StuckApplies(sc Scenario, p Policy) bool {
	if sc.Concurrency == 0 || sc.Timeout <= 0 || sc.QueueLimit > 0 || sc.QueueWait > 0 || sc.ShedTarget > 0 || sc.Limiter != "" || sc.QueueOrder != "" ||
		sc.ArrivalCurve != "" || sc.RetryAfter > 0 || sc.RetryAfterMax > 0 || sc.FailShare > 0 || sc.AddedLatency > 0 {
		return false
	}
	if p.MaxAttempts > 0 || !p.unlimited() {
		return false
	}
	_, ok := p.MaxDelay()
	return ok
}

// stuckRule is a run's instance of the rule: off when span is 0.
type stuckRule struct {
	span    float64 // ms: T + D̄
	work    float64 // ms of work a waiting client brings per span: S̄
	arrival float64 // ms of open-loop work in a span: λ·S̄·(T + D̄)
	need    float64 // ms: (1 + StuckMargin)·c·(T + D̄)
	every   int     // ticks between checks (RecoveryWindow)
	next    int     // the next tick to check at
}

// setup arms the rule for a run of p on sc when s.StopStuck asks for it
// and the rule applies.
func (r *stuckRule) setup(s *Sim, sc Scenario, p Policy, q *queueRun, st *runState) {
	*r = stuckRule{}
	if !s.StopStuck || !StuckApplies(sc, p) {
		return
	}
	d, _ := p.MeanDelayBound()
	span := ms(sc.Timeout) + ms(d)
	mean := ms(sc.MeanService())
	r.span, r.work = span, mean
	r.arrival = sc.ArrivalRate / 1000 * mean * span
	r.need = (1 + StuckMargin) * float64(sc.Concurrency) * span
	r.every = q.recoveryWindowTicks
	r.next = st.tk.arrival(st.recoverAt)
}

// stuck reports, at tick k (time t, ms), whether the run is stuck; it
// reads the state only at the start of each window after recovery.
func (r *stuckRule) stuck(k int, t float64, q *queueRun, pending int) bool {
	if r.span == 0 || k < r.next {
		return false
	}
	r.next = k + r.every
	return pending >= StuckMinWaiting && q.free.first()-t > q.timeout && float64(pending)*r.work+r.arrival >= r.need
}

// Hopeless reports whether every run of p on sc is stuck from its first
// span after recovery, by the stuck rule's proof applied to what a policy
// under which nobody gives up leaves at recovery: the cohort and every
// open-loop request of the outage, P₀ = clients + λ·outage, all waiting
// to retry. In the first span T + D̄ after recovery they send P₀ requests
// on average while the workers answer at most c·(T + D̄)/S̄, so
//
//  1. if the work that arrives in that span exceeds what the workers do by
//     (1 + StuckMargin)·c·T, an arrival at its end waits longer than T;
//  2. if the clients still waiting then (at least P₀ − c·(T + D̄)/S̄) bring
//     the stuck rule's excess of work, the rule's induction holds from
//     there on.
//
// No run of p on sc then comes back; a search that needs only that can
// skip simulating it (TestHopelessRunsNeverComeBack). False where the
// stuck rule does not apply or there is no open-loop traffic.
func Hopeless(sc Scenario, p Policy) bool {
	if !StuckApplies(sc, p) || sc.ArrivalRate <= 0 {
		return false
	}
	d, _ := p.MeanDelayBound()
	span := (sc.Timeout + d).Seconds()
	mean := sc.MeanService().Seconds()
	c := float64(sc.Concurrency)
	lambda := sc.ArrivalRate
	p0 := float64(sc.Clients) + lambda*(sc.RecoverAt-sc.OutageStart).Seconds()
	arriving := (p0 + lambda*span) * mean // work arriving in the first span, s
	if arriving-c*span < (1+StuckMargin)*c*sc.Timeout.Seconds() {
		return false
	}
	p1 := p0 - c*span/mean
	return p1 >= StuckMinWaiting && p1*mean+lambda*mean*span >= (1+StuckMargin)*c*span
}

// LetsClientsGiveUp reports whether p lets a client give up while the
// server is down or refusing: an attempt limit, a deadline, a retry quota
// or budget, gRPC's retry throttling, a cap on retries outstanding, or
// rejections it does not retry. Such a policy can come back on a server
// buried by its own traffic by failing the outage's requests.
func (p Policy) LetsClientsGiveUp() bool {
	return p.MaxAttempts > 0 || p.MaxElapsed > 0 || p.BucketTokens > 0 || p.RetryBudget > 0 || p.RetryTokens > 0 ||
		p.RetryCap > 0 || p.RetryOn != RetryOnAny
}
