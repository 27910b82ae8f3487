package sim

import (
	"fmt"
	"time"
)

// A chain with a queueing service or a caller's timeout in it
// (Chain.Queued) runs on events in time order, as an RPC system does; a
// chain of counting services without timeouts keeps chain.go's ticks,
// whose results this path leaves as they were.
//
//   - An attempt is a job at its service. A counting service admits
//     floor(capacity × tick) attempts a tick (those arriving within it)
//     and refuses the rest at once; it does no work of its own.
//   - A queueing service (Layer.Concurrency > 0; the deepest service when the
//     scenario's Concurrency > 0) serves its attempts first come, first
//     served with its workers: an attempt that finds every worker busy
//     waits, or is refused at once (a 429) when the queue holds its
//     QueueLimit already. An attempt that gets a worker holds it for its
//     own work, a service time drawn from its distribution (serviceDraw,
//     the queueing server's), and then, in a front service, for its call
//     to its callee, retries included, until that call ends: a thread of
//     a blocking RPC server. Then the worker takes the next waiting
//     attempt, and the caller has its answer: success when the callee's
//     call succeeded (the deepest service: unless its failure share says
//     otherwise), else a 503.
//   - A caller waits for an attempt's answer at most the callee's
//     timeout (Layer.Timeout; the deepest service: Scenario.Timeout), from
//     when it sent it. When that passes first, the caller counts the
//     attempt failed (no answer, as the queueing server's timeout) and
//     retries by its policy, while the callee goes on: the abandoned
//     attempt keeps its place in the queue, its worker, its own work and
//     its own call to its callee, retries and all (nothing cancels it: no
//     deadline is passed down). Its answer, when it comes, is thrown away:
//     its service time is wasted work (LayerResult.WastedMS: counted once
//     the attempt is both begun and abandoned, so work still under way at
//     the window's end is wasted too, as BusyMS counts it), and the
//     attempt counts as abandoned (LayerResult.Abandoned).
//   - A down service refuses every attempt at once (a 503), as on ticks.
//   - A retry is sent its delay after the failure (at least a
//     millisecond), not on the next tick's boundary; a client first sends
//     at its U(0, Spread) draw.
//
// Events at the same time run in this order: ends of work, sends, then
// timeouts (an answer exactly at the deadline is in time); else in the
// order they were scheduled. Draw order, one stream: the clients' first
// sends (one draw each, in index order), then in event order: each
// attempt's service time when it gets a worker, the deepest service's
// failure (one draw with a failure share) when its work ends, and its
// caller's retry delay when it fails.

// Queued reports whether a chain run of sc behind ch runs on events
// (chainq.go): a queueing service or a timeout somewhere in it.
func (ch Chain) Queued(sc Scenario) bool {
	if !ch.On() {
		return false
	}
	if sc.Server() == QueueingServer {
		return true
	}
	for _, l := range ch.Front[:min(max(ch.N, 0), len(ch.Front))] {
		if l.Concurrency > 0 || l.Timeout > 0 {
			return true
		}
	}
	return false
}

// validateQueueing reports, through add, the faults of a service's
// queueing keys and timeout.
func (l Layer) validateQueueing(add func(what string, v any, want string)) {
	if l.Timeout < 0 || l.Timeout%time.Millisecond != 0 {
		add("timeout_s", l.Timeout.Seconds(), "0 (its caller waits for ever) or a whole number of milliseconds > 0, s")
	}
	if l.Concurrency == 0 {
		switch {
		case l.Service != "":
			add("service", l.Service, "none without concurrency (a counting service does no work of its own)")
		case l.ServiceTime != 0:
			add("service_s", l.ServiceTime.Seconds(), "0 without concurrency (a counting service does no work of its own)")
		case l.QueueLimit != 0:
			add("queue_limit", l.QueueLimit, "0 without concurrency (a counting service has no queue)")
		}
		return
	}
	if l.Concurrency < 0 || l.Concurrency > MaxConcurrency {
		add("concurrency", l.Concurrency, fmt.Sprintf("0 (a counting service) or 1 to %d workers", MaxConcurrency))
	}
	if l.Capacity != 0 {
		add("capacity_rps", l.Capacity, "0 with concurrency: a queueing service's capacity is its workers over its service time")
	}
	if k := serviceKind(l.Service); k != 0 && k != 1 {
		add("service", fmt.Sprintf("%q", l.Service), "fixed or exponential, with concurrency")
	}
	if l.ServiceTime < time.Millisecond || l.ServiceTime%time.Millisecond != 0 {
		add("service_s", l.ServiceTime.Seconds(), "a whole number of milliseconds ≥ 1 ms, s, with concurrency")
	}
	if l.QueueLimit < 0 || l.QueueLimit > MaxQueueLimit {
		add("queue_limit", l.QueueLimit, fmt.Sprintf("0 (no limit) to %d waiting attempts", MaxQueueLimit))
	}
}

// queueingDeepest reports what a queueing server behind layers may not
// have: a chain models its workers, service time, queue limit, timeout
// and failure share.
func queueingDeepest(sc Scenario) fieldErrs {
	var errs fieldErrs
	for _, f := range []struct {
		on   bool
		what string
	}{{sc.QueueWait != 0, "queue_wait_s"}, {sc.ShedTarget != 0, "shed_target_s"}, {sc.ArrivalRate != 0 || sc.ArrivalCurve != "", "open-loop traffic"},
		{sc.Limiter != "", "a limiter"}, {sc.QueueOrder != "", "queue_order"}, {sc.AddedLatency != 0, "added_latency_s"},
		{sc.OutageStart != 0, "outage_start_s"}, {sc.ServiceP99 != 0, "a lognormal service"}} {
		if f.on {
			errs.add(FieldLayers, "in front of a queueing server with "+f.what, "a queueing server with concurrency, a fixed or exponential service, queue_limit and timeout_s only behind layers")
		}
	}
	return errs
}

// Event kinds of a queued chain run, in the order they run at equal
// times.
const (
	evWork   uint8 = iota // job id's own work ends
	evClient              // client id sends its next attempt
	evCall                // job id sends its call's next attempt
	evTimer               // job id's caller stops waiting for it
)

// qevent is an event of a queued chain run: 24 bytes.
type qevent struct {
	t   float64 // ms
	ord int64   // its kind (the top byte), then the order it was scheduled in
	id  int32
	gen uint32 // the job's generation when it was scheduled
}

// event is an event of kind at time t for id (of generation gen), the
// seq-th scheduled.
func event(t float64, kind uint8, seq int64, id int32, gen uint32) qevent {
	return qevent{t: t, ord: int64(kind)<<56 | seq, id: id, gen: gen}
}

func (a qevent) kind() uint8 { return uint8(a.ord >> 56) }

// before orders events by time, then kind, then the order they were
// scheduled in.
func (a qevent) before(b qevent) bool {
	return a.t < b.t || a.t == b.t && a.ord < b.ord
}

// Phases of a job.
const (
	jobSent    uint8 = iota // arrived, not yet admitted or refused
	jobWaiting              // in its service's queue
	jobWorking              // holds a worker (or a counting service's admission): its own work
	jobCalling              // a front service's: its call to its callee
)

// qjob is an attempt at a service.
type qjob struct {
	work      float64 // ms: its own service time
	sub       client  // its call to its callee: the retry state
	owner     int32   // the job whose call it is an attempt of; service 0: its client
	client    int32   // the client whose request it serves
	gen       uint32  // bumped when it is freed, so that its events go stale
	s         int8    // its service
	phase     uint8
	abandoned bool // its caller stopped waiting for it
}

// ring is a FIFO of jobs or events, growing as it must and kept from run
// to run.
type ring[T any] struct {
	buf     []T
	head, n int
}

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		nb := make([]T, max(2*len(r.buf), 16))
		for i := range r.n {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
}

func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	r.head, r.n = (r.head+1)%len(r.buf), r.n-1
	return v
}

// queuedState is a queued chain run's state beyond chainRun's, kept from
// run to run so that a run allocates nothing once it has grown.
//
// Events wait in a binary heap, but for the timeouts: those of service s
// all come timeout[s] after a send, and sends come in time order, so
// each service's are in order already and wait in a FIFO of their own
// (timers), beside the heap: half the events, most of them stale by the
// time they come (the attempt was answered), kept out of the heap's
// sifting. next takes the earliest of the heap's top and the FIFOs'
// heads, in the order qevent.before says, as one heap would.
type queuedState struct {
	jobs    []qjob
	free    []int32
	heap    []qevent
	timers  [MaxLayers]ring[qevent]
	seq     int64
	top     []client // per client: its own call's retry state
	fifo    [MaxLayers]ring[int32]
	busy    [MaxLayers]int
	workers [MaxLayers]int // 0: a counting service
	limit   [MaxLayers]int // its QueueLimit
	draw    [MaxLayers]serviceDraw
	timeout [MaxLayers]float64 // ms: how long its caller waits; 0: for ever
	usedAt  [MaxLayers]int     // the tick chainRun.used counts

	k                int // the tick being played
	edge, ok0, quit0 int // the clients' attempts in tick k; ok and gaveUp before it
}

// reset empties the state for a run of n clients, keeping its storage.
func (q *queuedState) reset(n int) {
	for s := range q.fifo {
		q.fifo[s].head, q.fifo[s].n = 0, 0
		q.timers[s].head, q.timers[s].n = 0, 0
	}
	*q = queuedState{jobs: q.jobs[:0], free: q.free[:0], heap: q.heap[:0], top: grow(q.top, n), fifo: q.fifo, timers: q.timers}
	for s := range q.usedAt {
		q.usedAt[s] = -1
	}
}

// footprint is the bytes of storage the state holds.
func (q *queuedState) footprint() int {
	b := cap(q.jobs)*48 + cap(q.free)*4 + cap(q.heap)*24 + cap(q.top)*16
	for s, r := range q.fifo {
		b += cap(r.buf)*4 + cap(q.timers[s].buf)*24
	}
	return b
}

// held is the bytes the run's attempts and events take, as footprint
// counts them but by what this run used (its high-water mark of jobs,
// the events and queued attempts now), whatever earlier runs grew the
// storage to: the same for a run on any Sim, so a run that outgrows
// Sim.MaxBytes fails at the same event everywhere. Twice that: the room
// of slices that double as they grow.
func (q *queuedState) held() int64 {
	b := len(q.jobs)*48 + len(q.free)*4 + len(q.heap)*24 + len(q.top)*16
	for s, r := range q.fifo {
		b += r.n*4 + q.timers[s].n*24
	}
	return 2 * int64(b)
}

// push schedules an event of kind at time t for id (of generation gen).
func (q *queuedState) push(t float64, kind uint8, id int32, gen uint32) {
	e := event(t, kind, q.seq, id, gen)
	q.seq++
	q.heap = append(q.heap, e)
	h := q.heap
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// timer schedules job j's timeout at service s at time t.
func (q *queuedState) timer(s int, t float64, j int32, gen uint32) {
	q.timers[s].push(event(t, evTimer, q.seq, j, gen))
	q.seq++
}

// next takes the earliest event, the heap's or a timeout's; ok is false
// when none is left.
func (q *queuedState) next() (e qevent, ok bool) {
	from := -1 // the heap
	if ok = len(q.heap) > 0; ok {
		e = q.heap[0]
	}
	for s := range q.timers {
		if r := &q.timers[s]; r.n > 0 && (!ok || r.buf[r.head].before(e)) {
			e, from, ok = r.buf[r.head], s, true
		}
	}
	switch {
	case !ok:
	case from < 0:
		q.pop()
	default:
		q.timers[from].pop()
	}
	return e, ok
}

// pop takes the earliest event of the heap.
func (q *queuedState) pop() qevent {
	h := q.heap
	e := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].before(h[c]) {
			c++
		}
		if !h[c].before(last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = last
	}
	q.heap = h
	return e
}

// clear drops the events left.
func (q *queuedState) clear() {
	q.heap = q.heap[:0]
	for s := range q.timers {
		q.timers[s].head, q.timers[s].n = 0, 0
	}
}

// newJob makes an attempt at service s for owner on behalf of client i.
func (q *queuedState) newJob(s int, owner, i int32) int32 {
	jb := qjob{owner: owner, client: i, s: int8(s)}
	if n := len(q.free); n > 0 {
		j := q.free[n-1]
		q.free = q.free[:n-1]
		jb.gen = q.jobs[j].gen
		q.jobs[j] = jb
		return j
	}
	q.jobs = append(q.jobs, jb)
	return int32(len(q.jobs) - 1)
}

// release frees job j: its pending events go stale.
func (q *queuedState) release(j int32) {
	q.jobs[j].gen++
	q.free = append(q.free, j)
}
