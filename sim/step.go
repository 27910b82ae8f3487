package sim

import (
	"math/bits"
	"time"
)

// A run is start → step per tick → finish. start picks the pieces once (the
// server model, the clients' delayer, the calendar's mode, the fleet, the
// timeline); each loop below runs one kind of tick with no "which mode am
// I in" checks; finish turns the counters into a Result.

// runState is the state of the run in progress. It lives in the Sim, so
// that a run allocates nothing once the Sim's storage has grown.
type runState struct {
	sc        Scenario
	n, nt     int
	tk        ticker
	lastT     float64 // ms: the last tick's time
	recoverAt float64 // ms
	resp      response
	maxAtt    int32
	d         delayer
	bud       *budget
	cc        *components // the client components; nil: none
	gate      *components // cc when one acts before the server counts arrivals; nil: none
	fl        *fleet      // nil: one policy for all
	budget    int         // the counting server's requests per tick
	srv       *server     // nil: the article's counting server
	backlog   *server     // the server that sends a backlog Retry-After, or nil
	q         *queueRun   // a queueing server's run, or nil
	brown     *brownout   // a brownout (FailShare > 0), or nil: no draw
	rng       *Mulberry32
	tl        *Timeline

	// Stop is read when the units of work done (StopEvery: the tick's
	// index plus the arrivals so far, r.Sent, which the loops count
	// anyway) reach nextCheck. checks counts the reads (tests).
	nextCheck, checks int64

	r                        Result
	ok, gaveUp, active       int
	half, ninety, ninetyNine float64
	gthresh                  [MaxGroups][3]float64 // per group: 50 %, 99 % and all of its clients
	gok                      [MaxGroups]int
}

// run simulates sc with groups (one group: a single policy). The inputs
// are valid.
func (s *Sim) run(sc Scenario, groups []Group, rng *Mulberry32, tl *Timeline) (Result, error) {
	st := &s.st
	if !s.start(st, sc, groups, rng, tl) {
		err := s.stopped(st, 0)
		*st = runState{}
		return Result{}, err
	}
	var k int
	var err error
	switch {
	case st.q != nil:
		k, err = s.loopQueue(st)
	case s.cal.dense && s.Trace == nil && st.fl == nil && st.cc == nil && st.bud == nil && st.brown == nil:
		k, err = s.loopDense(st)
	default:
		k, err = s.loopList(st)
	}
	if err != nil {
		*st = runState{}
		return Result{}, err
	}
	r := st.finish(k)
	if r.Stuck {
		r.End = time.Duration(k) * sc.Tick // stopped at tick k, not at the horizon
		s.cal.clear(k, st.nt)              // the herd's retries past the stop
	}
	if st.cc != nil {
		r.LocalRejections = st.cc.local
	}
	if st.q != nil {
		st.q.finishQueue(st, &r)
	}
	*st = runState{} // drop the references to the caller's values
	return r, nil
}

// start prepares the run: the pieces, the clients' first requests (one
// draw each, in index order) and the thresholds of the milestones. It
// reports false when Stop was set meanwhile (read every StopEvery
// clients).
func (s *Sim) start(st *runState, sc Scenario, groups []Group, rng *Mulberry32, tl *Timeline) bool {
	p := groups[0].Policy
	n := sc.Clients
	nt := sc.ticks()
	*st = runState{sc: sc, n: n, nt: nt, rng: rng, tl: tl}
	st.tk = ticker{tick: ms(sc.Tick), inv: 1 / ms(sc.Tick)}
	st.lastT = float64(nt-1) * st.tk.tick
	st.recoverAt = ms(sc.RecoverAt)
	st.budget = sc.budget()
	st.resp = response{retryAfter: ms(sc.RetryAfter)}
	st.maxAtt = int32(p.MaxAttempts)
	if p.componentsOn() {
		s.comp.setup(p, n, st.tk.tick)
		st.cc = &s.comp
		if p.gates() {
			st.gate = st.cc
		}
	}
	st.d, st.bud = s.delayer(sc, p, st.cc)
	st.srv = newServer(sc)
	if st.srv != nil && st.srv.backlog {
		st.backlog = st.srv
	}
	if len(groups) > 1 {
		st.fl = &s.fleet
		st.fl.setup(sc, groups, n)
		st.d, st.bud, st.maxAtt = st.fl, nil, 0 // the fleet applies each group's limits
	}

	if sc.FailShare > 0 {
		s.brown.start(sc)
		st.brown = &s.brown
	}
	if sc.Concurrency > 0 {
		st.q = s.queue.start(sc, st, &s.lat)
		if len(groups) == 1 {
			st.q.stuck.setup(s, sc, p, st.q, st)
		}
	}

	if cap(s.clients) < n {
		s.clients = make([]client, n)
		adviseHuge(s.clients)
	}
	s.clients = s.clients[:n]
	s.cal.reset(nt, n, sc.ArrivalRate > 0) // open-loop clients are not in a dense calendar's bitmap
	s.order.reset(n)
	if tl != nil {
		tl.Tick = sc.Tick
		tl.Reset()
		if cap(tl.Arrivals) < nt { // its whole length at once: no growth, no copies (Scenario.MemoryBytes counts 12 bytes a tick)
			tl.Arrivals, tl.Served, tl.GaveUp = make([]int32, 0, nt), make([]int32, 0, nt), make([]int32, 0, nt)
		}
	}

	if !s.firstRequests(st, sc, groups, rng) {
		return false
	}

	st.r = Result{Clients: n}
	if st.fl != nil {
		st.r.NGroups = len(groups)
		for _, g := range st.fl.group {
			st.r.Groups[g].Clients++
		}
		for g := range groups {
			c := float64(st.r.Groups[g].Clients)
			st.gthresh[g] = [3]float64{c * 0.5, c * 0.99, c}
		}
	}
	st.half, st.ninety, st.ninetyNine = float64(n)*0.5, float64(n)*0.9, float64(n)*0.99
	st.nextCheck = 0 // Stop is read again before the first tick
	return true
}

// firstRequests draws each client's first request (one draw each, in
// index order) into the calendar. It reports false when Stop was set
// meanwhile (read every StopEvery clients).
func (s *Sim) firstRequests(st *runState, sc Scenario, groups []Group, rng *Mulberry32) bool {
	var bases [MaxGroups]float64
	for g, gr := range groups {
		bases[g] = ms(gr.Policy.Base)
	}
	spread := ms(sc.Spread)
	from := ms(sc.OutageStart) // 0 but for a queueing server's later outage
	for i := range st.n {
		if i&(StopEvery-1) == StopEvery-1 && s.stopRequested(st, int64(i)) {
			return false
		}
		base := bases[0]
		if st.fl != nil {
			base = bases[st.fl.group[i]]
		}
		s.clients[i] = client{prev: base}
		next := rng.Float64() * spread
		if from > 0 {
			next += from
		}
		if next <= st.lastT {
			s.cal.push(st.tk.arrival(next), int32(i))
			st.active++
		}
	}
	return true
}

// finish turns the counters of a run that stopped before tick k into its
// Result.
func (st *runState) finish(k int) Result {
	r := st.r
	n := st.n
	r.Succeeded, r.GaveUp, r.Pending = st.ok, st.gaveUp, n-st.ok-st.gaveUp
	if st.fl != nil {
		for g := range r.NGroups {
			r.Groups[g].GaveUp = st.fl.gaveUp[g]
		}
	}
	r.PeakRPS = float64(r.PeakArrivals) * 1000 / st.tk.tick
	if r.Pending > 0 {
		k = st.nt // pending clients wait past the horizon: the run went to its end
	}
	r.End = time.Duration(max(k-1, 0)) * st.sc.Tick
	return r
}

// idle handles what every loop does before a tick: it reports whether
// tick k has no arrivals (recording the empty tick in the timeline), and
// before a tick with arrivals reads Stop when a check is due (StopEvery:
// ticks and arrivals so far). An empty tick costs a few nanoseconds and
// is not checked: two loads and a compare on every tick showed on the
// runs whose clients wait in step (exponential backoff, mostly empty
// ticks), and 10⁷ empty ticks in a row take some 20 ms.
func (s *Sim) idle(st *runState, k int) (empty bool, err error) {
	if s.cal.empty(k) {
		if tl := st.tl; tl != nil {
			tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, 0), append(tl.Served, 0), append(tl.GaveUp, 0)
		}
		return true, nil
	}
	if w := int64(k) + st.r.Sent; w >= st.nextCheck && s.stopRequested(st, w) {
		return true, s.stopped(st, k)
	}
	return false, nil
}

// loopDense runs a dense calendar's ticks without a trace or a fleet: the
// article's runs, straight from the bitmap.
func (s *Sim) loopDense(st *runState) (int, error) {
	k := 0
	for ; k < st.nt && st.active > 0; k++ {
		if empty, err := s.idle(st, k); err != nil {
			return k, err
		} else if empty {
			continue
		}
		m := int(s.cal.count[k])
		t, served := st.arrive(k, m)
		quit := s.stepDense(st, k, served, t)
		st.after(k, m, served, quit)
	}
	return k, nil
}

// loopList runs every other counting-server run: a sparse calendar, a
// trace or a mixed fleet, from a list of the tick's clients.
func (s *Sim) loopList(st *runState) (int, error) {
	k := 0
	for ; k < st.nt && st.active > 0; k++ {
		if empty, err := s.idle(st, k); err != nil {
			return k, err
		} else if empty {
			continue
		}
		list := s.cal.take(k, &s.order)
		if st.bud != nil {
			st.bud.sent(k, s.originals(st, list))
		}
		var local []int32
		if st.gate != nil {
			list, local = s.gateTick(st, list, k)
		}
		m := len(list)
		t, served := st.arrive(k, m)
		if s.serve != nil {
			served = s.serve(st, k, list, served)
		}
		failed := 0
		if st.brown != nil && served > 0 {
			served, failed = s.brownTick(st, list, served, t)
		}
		if st.gate != nil {
			st.outcomes(list, served, failed, k, t)
		}
		if st.fl != nil {
			st.fleetTick(k, list, served, s.clients)
		}
		if s.Trace != nil {
			for _, i := range list[:served] {
				s.Trace(Event{Tick: k, Client: int(i), Served: true, NextTick: -1})
			}
		}
		quit := 0
		rej := list[served:]
		up := st.resp.up
		st.resp.up = up && failed == 0 // a brownout's failure is a 503
		for j, i := range rej {
			if j == failed {
				st.resp.up = up
			}
			s.prefetchAhead(rej, j)
			dl, nk := s.reject(st, i, k, t)
			if dl < 0 {
				quit++
			}
			if s.Trace != nil {
				if dl < 0 {
					s.Trace(Event{Tick: k, Client: int(i), GaveUp: true, Failed: j < failed, NextTick: -1})
				} else {
					s.Trace(Event{Tick: k, Client: int(i), Failed: j < failed, Delay: dl, NextTick: nk})
				}
			}
		}
		st.resp.up = up
		ra := st.resp.retryAfter
		st.resp.retryAfter, st.resp.local = 0, true // refused locally: no response, no Retry-After
		for _, i := range local {
			dl, nk := s.reject(st, i, k, t)
			if dl < 0 {
				quit++
			}
			if s.Trace != nil {
				s.Trace(Event{Tick: k, Client: int(i), Local: true, GaveUp: dl < 0, Delay: max(dl, 0), NextTick: nk})
			}
		}
		st.resp.retryAfter, st.resp.local = ra, false
		st.after(k, m, served, quit)
	}
	return k, nil
}

// arrive counts m arrivals at tick k and asks the server how many it
// serves; it returns the tick's time (ms) and that number.
func (st *runState) arrive(k, m int) (t float64, served int) {
	t = float64(float64(k) * st.tk.tick) // float64(): never fused with the + below
	st.resp.up = t >= st.recoverAt
	st.resp.tick = int32(k)
	st.active -= m
	st.r.Sent += int64(m)
	if st.resp.up {
		st.r.SentAfterRecovery += int64(m)
		st.r.PeakArrivals = max(st.r.PeakArrivals, m)
		if st.srv == nil {
			served = min(st.budget, m)
		} else {
			served = st.srv.served(t, m)
		}
	}
	st.ok += served
	if st.backlog != nil {
		st.resp.retryAfter = st.backlog.retryAfter(t, st.n-st.ok-st.gaveUp)
	}
	return t, served
}

// originals counts the original requests among tick k's arrivals (list):
// those of clients not yet rejected. A retry budget takes a deposit for
// each, and only for them, as Finagle's RetryFilter does (apply:
// retryBudget.deposit(), then dispatch, which retries without depositing;
// finagle-core service/RetryFilter.scala, commit 4feb34cb): retries ≤
// percentCanRetry × original requests + the reserve. A deposit for every
// request sent allowed 0.25·O + 125 retries per 10 s at Finagle's 20 % and
// 10/s instead of its 0.2·O + 100.
//
// A request the AWS rate limiter held back arrives twice, when it is held
// and when it is sent: it deposits the first time only.
func (s *Sim) originals(st *runState, list []int32) int {
	n := 0
	for _, i := range list {
		if s.original(st, i) {
			n++
		}
	}
	return n
}

// original reports whether client i's arriving request is an original
// one (Sim.originals).
func (s *Sim) original(st *runState, i int32) bool {
	return s.clients[i].att == 0 && (st.gate == nil || !st.gate.rate.on || !st.gate.rate.holding(i))
}

// after records tick k's outcome: give-ups, the timeline, the milestones.
func (st *runState) after(k, m, served, quit int) {
	st.gaveUp += quit
	if tl := st.tl; tl != nil {
		tl.Arrivals = append(tl.Arrivals, int32(m))
		tl.Served = append(tl.Served, int32(served))
		tl.GaveUp = append(tl.GaveUp, int32(quit))
	}
	if served > 0 {
		st.milestones(k)
	}
}

// milestones marks the milestones the clients served so far reach at tick k.
func (st *runState) milestones(k int) {
	at := time.Duration(k) * st.sc.Tick
	fok := float64(st.ok)
	mark(&st.r.T50, fok >= st.half, at)
	mark(&st.r.T90, fok >= st.ninety, at)
	mark(&st.r.T99, fok >= st.ninetyNine, at)
	mark(&st.r.AllDone, st.ok == st.n, at)
}

// fleetTick keeps a mixed fleet's per-group metrics for tick k, whose
// first served clients of list were served.
func (st *runState) fleetTick(k int, list []int32, served int, clients []client) {
	fl := st.fl
	var sent, orig [MaxGroups]int
	for j, i := range list {
		g := fl.group[i]
		sent[g]++
		if clients[i].att == 0 { // an original request: its group's retry budget's deposit (originals)
			orig[g]++
		}
		if j < served {
			st.gok[g]++
			st.r.Groups[g].Succeeded++
		}
	}
	at := time.Duration(k) * st.sc.Tick
	for g := range st.r.NGroups {
		gr := &st.r.Groups[g]
		gr.Sent += int64(sent[g])
		if st.resp.up {
			gr.SentAfterRecovery += int64(sent[g])
		}
		if b := fl.buds[g]; b != nil {
			b.sent(k, orig[g])
		}
		gok := float64(st.gok[g])
		mark(&gr.T50, gok >= st.gthresh[g][0], at)
		mark(&gr.T99, gok >= st.gthresh[g][1], at)
		mark(&gr.AllDone, gok >= st.gthresh[g][2], at)
	}
}

// reject is the rejection rule: client i, refused at tick k (time t, ms),
// counts the rejection, gives up at its attempt limit (atLimit) or when
// its delayer says so (dl < 0), and otherwise is rescheduled at t + dl —
// at tick nk, or nowhere (nk = -1) when that is past the horizon or dl is
// not a number (due). The dense loops (stepDense, stepDecorrelated,
// stepCurve) compose the same atLimit and due in their own loops: a call
// to reject per client was a fifth of a jittered table 1 row.
func (s *Sim) reject(st *runState, i int32, k int, t float64) (dl float64, nk int) {
	c := &s.clients[i]
	if st.atLimit(c) {
		return giveUp, -1
	}
	r := st.resp // a copy with the index set: storing the index into st.resp
	r.index = i  // and then copying it out stalls the load (store forwarding), +60 % on this path
	dl = st.d.delay(c, r, st.rng)
	if dl < 0 {
		return dl, -1
	}
	if nk = st.due(t, dl, k); nk >= 0 {
		if c := &s.cal; c.dense { // calendar.push's two halves, inlined
			c.set(nk, i)
		} else {
			c.later(nk, i)
		}
		st.active++
	}
	return dl, nk
}

// atLimit counts a rejection of c and reports whether c gives up there,
// at its attempt limit: the first half of the rejection rule (reject).
func (st *runState) atLimit(c *client) bool {
	c.att++
	return st.maxAtt > 0 && c.att >= st.maxAtt
}

// due returns the tick at which a client rejected at tick k (time t)
// retries after dl ms: the tick of t + dl but never k itself, or -1 when
// that is past the horizon or not a number.
func (st *runState) due(t, dl float64, k int) int {
	if next := t + dl; next <= st.lastT { // also false for NaN
		return max(st.tk.arrival(next), k+1)
	}
	return -1
}

// stepDense rejects tick k's clients but the first served ones straight
// from a dense calendar's bitmap: it walks the tick's bits in index order,
// clears them, and applies the rejection rule to each client past the
// served ones. No list is built. A fixed interval moves whole words,
// exponential backoff without jitter and decorrelated jitter have loops of
// their own.
func (s *Sim) stepDense(st *runState, k, served int, t float64) (quit int) {
	switch d := st.d.(type) {
	case fixedDelay: // all to one tick: calendar.moveColumn
		if st.maxAtt == 0 {
			st.active += s.cal.moveColumn(k, served, st.due(t, d.d, k))
			return 0
		}
	case *expDelay: // the delay follows the attempt count alone
		return s.stepCurve(st, &d.curve, k, served, t)
	case *decorrelatedDelay:
		return s.stepDecorrelated(st, d.decorrelated, k, served, t)
	}
	c := &s.cal
	c.count[k] = 0
	d, rng, r := st.d, st.rng, st.resp
	clients := s.clients
	active := 0
	for j := range c.sw {
		for sm := c.summary(k, j); sm != 0; sm &= sm - 1 {
			w := j<<6 + bits.TrailingZeros64(sm)
			for x := c.word(k, w); x != 0; x &= x - 1 {
				if served > 0 {
					served--
					continue
				}
				i := int32(w<<6 + bits.TrailingZeros64(x))
				cl := &clients[i]
				if st.atLimit(cl) {
					quit++
					continue
				}
				r.index = i
				if dl := d.delay(cl, r, rng); dl < 0 {
					quit++
				} else if nk := st.due(t, dl, k); nk >= 0 {
					c.set(nk, i)
					active++
				}
			}
		}
	}
	st.active += active
	return quit
}

// stepDecorrelated is stepDense for decorrelated jitter, reject's rule
// written out for it: the article's hardest row against herd.mjs, where
// the call to reject, the copy of the response and the delayer's dynamic
// call were a fifth of the time. The same draws in the same order, the
// same bits.
func (s *Sim) stepDecorrelated(st *runState, d decorrelated, k, served int, t float64) (quit int) {
	c := &s.cal
	c.count[k] = 0
	rng := *st.rng // a register, not a field behind a pointer
	clients := s.clients
	active := 0
	for j := range c.sw {
		for sm := c.summary(k, j); sm != 0; sm &= sm - 1 {
			w := j<<6 + bits.TrailingZeros64(sm)
			for x := c.word(k, w); x != 0; x &= x - 1 {
				if served > 0 {
					served--
					continue
				}
				i := w<<6 + bits.TrailingZeros64(x)
				cl := &clients[i]
				if st.atLimit(cl) {
					quit++
				} else if dl := d.next(cl, &rng); dl < 0 {
					quit++
				} else if nk := st.due(t, dl, k); nk >= 0 {
					c.set(nk, int32(i))
					active++
				}
			}
		}
	}
	*st.rng = rng
	st.active += active
	return quit
}

// stepCurve is stepDense for exponential backoff without jitter, whose
// delay is a function of the attempt count alone (no draw, no response):
// reject's rule is applied once per attempt count met in the tick, and
// the clients of a word that go to one tick are set together, as
// moveColumn does for a fixed interval. Clients of a tick mostly share
// their count (they were rejected together), so this is one word OR per
// word instead of a delay, an arrival and a set per client: the same bits.
func (s *Sim) stepCurve(st *runState, e *curve, k, served int, t float64) (quit int) {
	const none, gone = -1, -2 // past the horizon; at the attempt limit
	c := &s.cal
	c.count[k] = 0
	att, nk := int32(-1), none // the last attempt count met and its tick
	flush := func(w int, m uint64) {
		switch n := bits.OnesCount64(m); nk {
		case none:
		case gone:
			quit += n
		default:
			c.bitmap[w*c.stride+nk] |= m
			c.sum[nk*c.sw+w>>6] |= 1 << (w & 63)
			c.count[nk] += int32(n)
			st.active += n
		}
	}
	for j := range c.sw {
		for sm := c.summary(k, j); sm != 0; sm &= sm - 1 {
			w := j<<6 + bits.TrailingZeros64(sm)
			var m uint64 // clients of word w bound for tick nk
			for x := c.word(k, w); x != 0; x &= x - 1 {
				if served > 0 {
					served--
					continue
				}
				cl := &s.clients[w<<6+bits.TrailingZeros64(x)]
				if limit := st.atLimit(cl); cl.att != att {
					flush(w, m)
					m, att, nk = 0, cl.att, gone
					if !limit {
						nk = st.due(t, e.at(att), k) // none past the horizon
					}
				}
				m |= x & -x
			}
			flush(w, m)
		}
	}
	return quit
}

// gateTick passes tick k's clients (list, in index order) through the
// client components before anything is sent: it returns those sent, in
// index order (in list's storage), and those refused locally; those held
// back by a rate limiter are moved to the tick of their token.
func (s *Sim) gateTick(st *runState, list []int32, k int) (sent, local []int32) {
	cc := st.gate
	t := float64(float64(k) * st.tk.tick)
	local = cc.list[:0]
	n := 0
	for _, i := range list {
		switch v, hk := cc.gate(&s.clients[i], i, k, t, st.tk, st.rng); v {
		case send:
			list[n] = i
			n++
		case refuse:
			local = append(local, i)
		case holdOff:
			st.active--
			if hk < st.nt {
				s.cal.push(hk, i)
				st.active++
			}
		}
	}
	cc.list = local
	st.active -= len(local)
	return list[:n], local
}

// outcomes tells the components how tick k's sent requests (list, the
// first served of them served, the next failed of them failed by a
// brownout: a 503, no throttling) fared.
func (st *runState) outcomes(list []int32, served, failed, k int, t float64) {
	for j, i := range list {
		st.gate.outcome(i, k, t, j < served, j >= served+failed && st.resp.up)
	}
}
