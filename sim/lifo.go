package sim

import "math"

// A queueing server that serves its waiting requests last in, first out
// (Scenario.QueueOrder "lifo"): a worker that frees takes the newest
// request waiting. This is the order of Facebook's adaptive LIFO (Ben
// Maurer, "Fail at Scale", ACM Queue 13(8), 2015: "during normal operating
// conditions, requests are processed in FIFO order, but when a queue is
// starting to form, the server switches to LIFO mode"), without its
// switch: the two orders differ only when more than one request waits, so
// this is adaptive LIFO with the switch at the first queued request. The
// newest request is the one whose client is most likely still waiting;
// the oldest sink to the bottom, and their clients give up.
//
// A request's fate is then not known when it arrives, as it is under
// FCFS: it is served when a worker frees and no newer request waits. So
// the server keeps the waiting requests in arrival order (a stack: served
// from the top) and, before each arrival and at the end of each tick,
// passes in time order the events up to then:
//
//   - a worker frees: it takes the top of the stack and draws its service
//     time then (so service times are drawn in the order requests start,
//     interleaved with the arrivals' draws in time order). The request is
//     answered at start + service; if that is past its arrival + Timeout
//     it timed out, its client giving up at arrival + Timeout;
//   - a waiting request's client gives up (arrival + Timeout, the oldest
//     waiting first; on a tie with a worker freeing, the client first):
//     it timed out then, and its client draws its retry delay from then.
//     The server does not know: the request stays in the stack and is
//     served when it comes to the top (wasted work).
//
// A client learns its request's fate then, in the tick it happens (its
// client components too). QueueLimit bounds the stack (the new arrival is
// refused when it is full); QueueWait and ShedTarget judge an arrival by
// its wait, which LIFO does not know at arrival, and are refused with it
// (Scenario.validateLimiter). With a limiter a waiting request holds its
// permit until it starts (then as under FCFS) or its client gives up
// (dropped then). When the run ends, requests still waiting are served in
// the same order with no new arrivals, as FCFS counts at admission the
// work of what it admitted.

// lifoWait is a waiting request whose client still waits: its arrival
// (ms), its client (fresh: a new open-loop request) and the in-flight count
// at its admission (with a limiter).
type lifoWait struct {
	a        float64
	i        int32
	inflight int32
}

// lifoQueue is the stack of waiting requests. Their clients give up in
// arrival order, the oldest first, and LIFO serves the newest first, so
// the requests whose clients have given up are always the bottom of the
// stack, served only when no other waits: they are alike (work, nobody
// waiting) and only counted, in abandoned. The others are stack[due:], in
// arrival order: stack[due] is the next client to give up (stack[:due] is
// room, reclaimed as it grows). So the stack holds at most a request per
// client waiting.
type lifoQueue struct {
	stack     []lifoWait
	due       int
	abandoned int
}

// waiting reports whether a client still waits for a request in the stack.
func (l *lifoQueue) waiting() bool { return l.due < len(l.stack) }

// size is the number of requests in the stack.
func (l *lifoQueue) size() int { return len(l.stack) - l.due + l.abandoned }

// push adds a request on top, first reclaiming the room below due when
// it is the larger part of the stack.
func (l *lifoQueue) push(w lifoWait) {
	if l.due > 0 && l.due >= len(l.stack)-l.due && len(l.stack) == cap(l.stack) {
		n := copy(l.stack, l.stack[l.due:])
		l.stack, l.due = l.stack[:n], 0
	}
	l.stack = append(l.stack, w)
}

// admitLIFO admits client i's request arriving at a (ms) in tick k, after
// passing the events before it: it is rejected or served at once (a
// worker is free, so nothing waits), with its outcome and when it is
// answered, or it waits (waits true) for lifoAdvance to decide.
func (s *Sim) admitLIFO(st *runState, q *queueRun, i int32, k int, a float64) (out outcome, done float64, waits bool) {
	s.lifoAdvance(st, q, k, a, true)
	if q.lim != nil && q.lim.full(a) {
		return rejected, 0, false
	}
	if q.free.first() <= a {
		out, done = q.serveLIFO(a, a, st.rng)
		if q.lim != nil {
			q.lim.hold(a, done, q.timeout)
		}
		return out, done, false
	}
	if q.limit > 0 && q.lq.size() >= q.limit {
		return rejected, 0, false
	}
	var n int32
	if q.lim != nil {
		n = q.lim.wait()
	}
	q.lq.push(lifoWait{a: a, i: i, inflight: n})
	return 0, 0, true
}

// serveLIFO starts a request that arrived at a on a worker at start (ms):
// it draws its service time and counts its work, and reports its outcome
// and when it is answered.
func (q *queueRun) serveLIFO(a, start float64, rng *Mulberry32) (outcome, float64) {
	sv := q.service(rng)
	done := start + sv
	q.free.replaceFirst(done)
	q.busy += sv
	if q.timeout > 0 && done-a > q.timeout {
		q.wasted += sv
		q.timedOut++
		return timedOut, done
	}
	q.goodput++
	q.lat.add(done - a)
	return answered, done
}

// lifoAdvance passes, in time order, the events of the waiting requests
// up to time to (ms): those before it, and those at it when incl. Their
// clients learn their fate in tick k.
func (s *Sim) lifoAdvance(st *runState, q *queueRun, k int, to float64, incl bool) {
	lq := &q.lq
	for lq.size() > 0 {
		free, gives := q.free.first(), math.Inf(1)
		if q.timeout > 0 && lq.waiting() {
			gives = lq.stack[lq.due].a + q.timeout
		}
		t := min(free, gives)
		if t > to || (t == to && !incl) {
			return
		}
		if gives <= free {
			s.lifoGiveUp(st, q, k, t)
		} else {
			s.lifoStart(st, q, k, t)
		}
	}
}

// lifoGiveUp: the oldest waiting request's client gives up at t (ms).
func (s *Sim) lifoGiveUp(st *runState, q *queueRun, k int, t float64) {
	w := q.lq.stack[q.lq.due]
	q.lq.due++
	q.lq.abandoned++
	q.timedOut++
	if q.lim != nil {
		q.lim.cancel(t, q.timeout, w.inflight)
	}
	s.resolve(st, q, w.i, k, w.a, t, timedOut, -1, false)
}

// lifoStart: a worker frees at t (ms) and takes the newest waiting request.
func (s *Sim) lifoStart(st *runState, q *queueRun, k int, t float64) {
	lq := &q.lq
	if !lq.waiting() { // only requests whose clients are gone: only the work remains
		lq.abandoned--
		sv := q.service(st.rng)
		done := t + sv
		q.free.replaceFirst(done)
		q.busy += sv
		q.wasted += sv
		if dk := st.tk.arrival(done); dk < st.nt {
			q.rec.lateAt(dk)
		}
		return
	}
	n := len(lq.stack) - 1
	w := lq.stack[n]
	lq.stack = lq.stack[:n]
	if n == lq.due {
		lq.stack, lq.due = lq.stack[:0], 0
	}
	out, done := q.serveLIFO(w.a, t, st.rng)
	if q.lim != nil {
		q.lim.start(w.a, done, q.timeout, w.inflight)
	}
	s.resolve(st, q, w.i, k, w.a, t, out, done, false)
}
