package sim

import (
	"errors"
	"iter"
	"sync/atomic"
	"time"
)

// Driven is a policy's clients stepped a tick at a time by a caller that
// sends the requests and has them served itself: sweep live's sim:NAME
// clients, which run a preset against a real server. For each tick k in
// turn (0, 1, …), the caller calls Send(k) for the clients that send a
// request in it and, once its server has answered them, Answer(k, …) with
// which of them were served.
//
// Driven is a run: Sim.start, then Sim.loopList, the loop of every run
// with client components, whose server is the caller's (Sim.serve, called
// after arrive). Everything else in the tick — the calendar, the client
// components' gate and outcomes, the retry budget, the rejection rule, the
// limits, the run's random stream — is the run's own code in the run's
// order, so a caller whose server serves as sim's does (floor(capacity ×
// tick) per tick in client-index order from RecoverAt, the scenario's
// Retry-After with every rejection) replays sim's run of the seed exactly
// (TestDrivenReplaysRun). The loop runs as a coroutine (iter.Pull): it and
// its caller take turns, never at once, so the run stays deterministic.
//
// A Driven is not safe for concurrent use. Close releases its loop.
type Driven struct {
	s      Sim
	rng    Mulberry32
	stop   atomic.Bool
	next   func() (int, bool) // resumes the loop until its next tick with requests
	close  func()
	at     int     // that tick; -1: the run is over
	list   []int32 // its requests
	want   int     // the tick Send takes next
	open   bool    // Send(want−1) was called, Answer not yet
	served []bool  // Answer's
	ra     float64 // ms
	gave   []int32
	lost   []int32
	nt     int
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
	if sc.Server() == QueueingServer {
		return nil, errors.New("sim: a queueing server's clients are not driven from outside: want the counting server (Concurrency 0)")
	}
	d := &Driven{rng: *NewMulberry32(seed), nt: sc.ticks()}
	s := &d.s
	s.Stop = &d.stop
	s.Trace = d.trace
	d.next, d.close = iter.Pull(func(yield func(int) bool) {
		s.serve = func(st *runState, k int, list []int32, simServed int) int {
			if d.stop.Load() {
				return simServed // Close: the loop runs out to its next read of Stop
			}
			d.list = list
			if !yield(k) {
				d.stop.Store(true)
				return simServed
			}
			ns := d.answer(list)
			st.ok += ns - simServed
			return ns
		}
		s.start(&s.st, sc, []Group{{Share: 1, Policy: p}}, &d.rng, nil)
		s.loopList(&s.st)
	})
	d.resume()
	return d, nil
}

// Ticks is the number of ticks of the run: Send takes 0 … Ticks()−1.
func (d *Driven) Ticks() int { return d.nt }

// Close ends the run, wherever it is.
func (d *Driven) Close() {
	d.stop.Store(true)
	d.close()
}

// resume runs the loop to its next tick with requests.
func (d *Driven) resume() {
	if k, ok := d.next(); ok {
		d.at = k
	} else {
		d.at = -1
	}
}

// Send opens tick k, the one after the last: it returns the clients that
// send a request in it, in index order (valid until Answer). The clients
// due at k that a client component refuses locally send nothing and are
// answered by Answer; those it holds back are due again later.
func (d *Driven) Send(k int) []int32 {
	if d.open || k != d.want {
		panic("sim: Driven.Send: ticks out of order")
	}
	d.want, d.open = k+1, true
	if k != d.at {
		return nil
	}
	return d.list
}

// Answer closes tick k: served[j] says whether Send(k)'s j-th client was
// served, and retryAfter is the Retry-After the rejections carried (0:
// none). The run applies its rules to the others and to the clients
// refused locally; Answer returns those that gave up and those whose next
// request would come after the horizon (valid until the next Answer). The
// others are due at a later tick, where Send returns them.
func (d *Driven) Answer(k int, served []bool, retryAfter time.Duration) (gaveUp, lost []int32) {
	if !d.open || k != d.want-1 || (k == d.at && len(served) != len(d.list)) || (k != d.at && len(served) != 0) {
		panic("sim: Driven.Answer: not the tick Send opened, or not one answer per request")
	}
	d.open = false
	d.gave, d.lost = d.gave[:0], d.lost[:0]
	if k != d.at {
		return nil, nil
	}
	d.served, d.ra = served, ms(retryAfter)
	d.resume()
	return d.gave, d.lost
}

// answer puts the served of list first, each part in index order (the
// order of a run's list, where the server serves a prefix, as the caller's
// does when it serves as sim's), sets the tick's Retry-After and returns
// the number served.
func (d *Driven) answer(list []int32) int {
	ns := 0
	for j, ok := range d.served {
		if ok {
			i := list[j]
			copy(list[ns+1:j+1], list[ns:j])
			list[ns] = i
			ns++
		}
	}
	d.s.st.resp.retryAfter = d.ra
	return ns
}

// trace hears the run's events: who gave up, and who will not be back
// before the horizon.
func (d *Driven) trace(e Event) {
	switch {
	case e.GaveUp:
		d.gave = append(d.gave, int32(e.Client))
	case !e.Served && e.NextTick < 0:
		d.lost = append(d.lost, int32(e.Client))
	}
}
