package sim

import (
	"errors"
	"time"
)

// Driven is a policy's clients stepped a tick at a time by a caller that
// sends the requests and has them answered itself: sweep live's sim:NAME
// clients, which run a preset against a real server. For each tick k in
// turn (0, 1, …), the caller calls Send(k) for the clients that send a
// request in it and, once the server has answered them, Answer(k, …) with
// which of them were served.
//
// Driven owns nothing of its own: it is a run (Sim.start: the clients'
// first sends, the delayer with its limits, the client components, the
// calendar) whose ticks are taken apart around the server, in a run's
// order — gate (the client components), arrive, outcomes, the rejection
// rule for the rejected and then for the refused locally (Sim.loopList) —
// with the run's random stream. A caller whose server serves as sim's
// does (floor(capacity × tick) per tick in client-index order from
// RecoverAt, the scenario's Retry-After with every rejection) replays
// sim's run of the seed exactly (TestDrivenReplaysRun).
//
// A Driven is not safe for concurrent use.
type Driven struct {
	s     Sim
	rng   Mulberry32
	next  int  // the tick Send takes next
	open  bool // Send(next−1) has been called, Answer not yet
	due   bool // the tick in hand had clients due
	sent  []int32
	local []int32
	gave  []int32
	lost  []int32
}

// NewDriven starts the clients of sc under p with the stream of seed: the
// first requests are drawn as a run draws them.
func NewDriven(sc Scenario, p Policy, seed uint32) (*Driven, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if sc.Concurrency > 0 {
		return nil, errors.New("sim: a queueing server's clients are not driven from outside: want the counting server (Concurrency 0)")
	}
	d := &Driven{rng: *NewMulberry32(seed)}
	d.s.start(&d.s.st, sc, []Group{{Share: 1, Policy: p}}, &d.rng, nil)
	return d, nil
}

// Ticks is the number of ticks of the run: Send takes 0 … Ticks()−1.
func (d *Driven) Ticks() int { return d.s.st.nt }

// Send opens tick k, the one after the last: it returns the clients that
// send a request in it, in index order (valid until the next Send). The
// clients due at k that a client component refuses locally send nothing
// and are answered by Answer; those it holds back are due again later.
func (d *Driven) Send(k int) []int32 {
	if d.open || k != d.next {
		panic("sim: Driven.Send: ticks out of order")
	}
	d.next, d.open = k+1, true
	st := &d.s.st
	d.sent, d.local, d.due = d.sent[:0], d.local[:0], false
	if k >= st.nt || d.s.cal.empty(k) {
		return nil
	}
	d.due = true
	list := d.s.cal.take(k, &d.s.order)
	var local []int32
	if st.gate != nil {
		list, local = d.s.gateTick(st, list, k)
	}
	d.sent = append(d.sent, list...)
	d.local = append(d.local, local...)
	return d.sent
}

// Answer closes tick k: served[j] says whether Send(k)'s j-th client was
// served, and retryAfter is the Retry-After the rejections carried (0:
// none). It applies the rejection rule to the others and to the clients
// refused locally, and returns those that gave up and those whose next
// request would come after the horizon (valid until the next Answer). The
// others are due at a later tick, where Send returns them.
func (d *Driven) Answer(k int, served []bool, retryAfter time.Duration) (gaveUp, lost []int32) {
	if !d.open || k != d.next-1 || len(served) != len(d.sent) {
		panic("sim: Driven.Answer: not the tick Send opened, or not one answer per request")
	}
	d.open = false
	d.gave, d.lost = d.gave[:0], d.lost[:0]
	if !d.due {
		return nil, nil
	}
	st := &d.s.st
	// The served first, each part in index order: the order of a run's
	// list, where the server serves a prefix (as the caller's does when it
	// serves as sim's).
	list := d.sent
	ns := 0
	for j, ok := range served {
		if ok {
			i := list[j]
			copy(list[ns+1:j+1], list[ns:j])
			list[ns] = i
			ns++
		}
	}
	m := len(list)
	t, simServed := st.arrive(k, m)
	st.ok += ns - simServed // the caller's server decides
	st.resp.retryAfter = ms(retryAfter)
	if st.gate != nil {
		st.outcomes(list, ns, k, t)
	}
	quit := 0
	reject := func(i int32) {
		dl, nk := d.s.reject(st, i, k, t)
		switch {
		case dl < 0:
			quit++
			d.gave = append(d.gave, i)
		case nk < 0:
			d.lost = append(d.lost, i)
		}
	}
	for _, i := range list[ns:] {
		reject(i)
	}
	st.resp.retryAfter = 0 // refused locally: no response, no Retry-After
	for _, i := range d.local {
		reject(i)
	}
	st.after(k, m, ns, quit)
	return d.gave, d.lost
}
