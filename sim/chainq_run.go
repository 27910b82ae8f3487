package sim

import "fmt"

// startQueued prepares a queued chain run's services (chainq.go) once
// startChain has prepared the callers, and schedules each client's first
// send.
func (cr *chainRun) startQueued(ch Chain, rng *Mulberry32) {
	q := &cr.qs
	q.reset(cr.n)
	for j, l := range ch.Front[:ch.N] {
		q.timeout[j] = ms(l.Timeout)
		if l.Concurrency > 0 {
			q.workers[j], q.limit[j], q.draw[j] = l.Concurrency, l.QueueLimit, newServiceDraw(l.Service, l.ServiceTime)
		}
	}
	sc := cr.sc
	q.timeout[ch.N] = ms(sc.Timeout)
	if sc.Server() == QueueingServer {
		q.workers[ch.N], q.limit[ch.N], q.draw[ch.N] = sc.Concurrency, sc.QueueLimit, sc.serviceDraw()
	}
	spread := ms(sc.Spread)
	for i := range cr.n {
		q.top[i] = client{prev: cr.base[0]}
		if next := rng.Float64() * spread; next <= cr.lastT {
			q.push(next, evClient, int32(i), 0)
		}
	}
}

// tickOf is the tick that holds time t (ms ≥ 0).
func (c ticker) tickOf(t float64) int {
	k := int(t * c.inv)
	if float64(k+1)*c.tick <= t {
		k++
	} else if k > 0 && float64(k)*c.tick > t {
		k--
	}
	return k
}

// loopQueued plays a queued chain run's events in time order until none
// is left within the horizon, and returns the tick it stopped before. It
// reads Stop every StopEvery events.
func (s *Sim) loopQueued(cr *chainRun, rng *Mulberry32, tl *Timeline) (int, error) {
	q := &cr.qs
	var events, next int64
	for {
		e, ok := q.next()
		if !ok {
			break
		}
		k := cr.tk.tickOf(e.t)
		if k >= cr.nt {
			q.clear()
			cr.ticksTo(cr.nt, tl)
			return cr.nt, nil
		}
		if events++; events >= next {
			next = events + StopEvery
			if s.Stop != nil && s.Stop.Load() {
				q.clear()
				return k, ErrStopped
			}
			if b, lim := q.held(), s.maxBytes(); b > lim {
				err := cr.tooBig(e.t, b, lim)
				q.clear()
				return k, err
			}
		}
		cr.ticksTo(k, tl)
		switch e.kind() {
		case evClient:
			cr.send(0, e.id, e.id, e.t, rng)
		case evCall:
			if jb := &q.jobs[e.id]; jb.gen == e.gen {
				cr.send(int(jb.s)+1, e.id, jb.client, e.t, rng)
			}
		case evWork:
			if q.jobs[e.id].gen == e.gen {
				cr.workDone(e.id, e.t, rng)
			}
		case evTimer:
			cr.timedOut(e.id, e.gen, e.t, rng)
		}
	}
	cr.ticksTo(q.k+1, tl)
	return q.k, nil
}

// maxBytes is Sim.MaxBytes or its default.
func (s *Sim) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

// tooBig is ErrTooBig with its figures at time t: b bytes held, more
// than lim.
func (cr *chainRun) tooBig(t float64, b, lim int64) error {
	q := &cr.qs
	free := make([]bool, len(q.jobs))
	for _, j := range q.free {
		free[j] = true
	}
	live, abandoned := len(q.jobs)-len(q.free), 0
	for j := range q.jobs {
		if q.jobs[j].abandoned && !free[j] {
			abandoned++
		}
	}
	return fmt.Errorf("%w: %d attempts in flight, %d of them abandoned by their callers and still worked on, hold %.1f MiB at %.1f s, more than %.1f MiB (give the services a queue_limit, their callers fewer retries or longer timeouts, or the runs more --memory)",
		ErrTooBig, live, abandoned, float64(b)/(1<<20), t/1000, float64(lim)/(1<<20))
}

// ticksTo closes the ticks before k: the clients' attempts after
// recovery, the timeline, the milestones.
func (cr *chainRun) ticksTo(k int, tl *Timeline) {
	q, r := &cr.qs, &cr.r
	for ; q.k < k; q.k++ {
		if float64(q.k)*cr.tk.tick >= ms(cr.sc.RecoverAt) {
			r.SentAfterRecovery += int64(q.edge)
			r.PeakArrivals = max(r.PeakArrivals, q.edge)
		}
		if tl != nil {
			tl.Arrivals = append(tl.Arrivals, int32(q.edge))
			tl.Served = append(tl.Served, int32(cr.ok-q.ok0))
			tl.GaveUp = append(tl.GaveUp, int32(cr.gaveUp-q.quit0))
		}
		if cr.ok > q.ok0 {
			cr.marks(r, q.k)
		}
		q.edge, q.ok0, q.quit0 = 0, cr.ok, cr.gaveUp
	}
}

// callState is caller c's retry state for the call of owner: client
// owner's (c = 0), else job owner's at service c-1.
func (cr *chainRun) callState(c int, owner int32) *client {
	if c == 0 {
		return &cr.qs.top[owner]
	}
	return &cr.qs.jobs[owner].sub
}

// send sends caller c's attempt, for owner (as callState), of client i's
// request at time t, to service c.
func (cr *chainRun) send(c int, owner, i int32, t float64, rng *Mulberry32) {
	q := &cr.qs
	if cr.buds[c] != nil && cr.callState(c, owner).att == 0 {
		cr.buds[c].sent(cr.tk.tickOf(t), 1) // an original request: the budget's deposit
	}
	j := q.newJob(c, owner, i)
	cr.layers[c].Attempts++
	if c == 0 {
		q.edge++
	}
	if to := q.timeout[c]; to > 0 {
		q.timer(c, t+to, j, q.jobs[j].gen)
	}
	cr.arrive(j, c, t, rng)
}

// arrive admits job j at service s at time t, queues it, or refuses it.
func (cr *chainRun) arrive(j int32, s int, t float64, rng *Mulberry32) {
	q := &cr.qs
	l := &cr.layers[s]
	switch {
	case t >= cr.downFrom[s] && t < cr.downTo[s]:
		l.Rejected++
		cr.answer(j, false, false, t, rng)
	case q.workers[s] == 0: // a counting service
		if k := cr.tk.tickOf(t); q.usedAt[s] != k {
			q.usedAt[s], cr.used[s][0] = k, 0
		}
		if cr.used[s][0] >= cr.perTick[s] {
			l.Rejected++
			cr.answer(j, false, true, t, rng)
			return
		}
		cr.used[s][0]++
		cr.begin(j, s, t, rng)
	case q.busy[s] < q.workers[s]:
		q.busy[s]++
		cr.begin(j, s, t, rng)
	case q.limit[s] > 0 && q.fifo[s].n >= q.limit[s]:
		l.Rejected++
		cr.answer(j, false, true, t, rng)
	default:
		q.jobs[j].phase = jobWaiting
		q.fifo[s].push(j)
	}
}

// begin starts job j's own work at service s at time t.
func (cr *chainRun) begin(j int32, s int, t float64, rng *Mulberry32) {
	q := &cr.qs
	q.jobs[j].phase = jobWorking
	if q.workers[s] > 0 {
		w := q.draw[s].service(rng)
		q.jobs[j].work = w
		cr.layers[s].BusyMS += w
		if q.jobs[j].abandoned { // abandoned while it waited: all its work is wasted
			cr.layers[s].WastedMS += w
		}
		if w > 0 {
			q.push(t+w, evWork, j, q.jobs[j].gen)
			return
		}
	}
	cr.workDone(j, t, rng)
}

// workDone ends job j's own work at time t: the deepest service answers,
// a front one calls its callee.
func (cr *chainRun) workDone(j int32, t float64, rng *Mulberry32) {
	q := &cr.qs
	jb := &q.jobs[j]
	s := int(jb.s)
	if s == cr.callers-1 {
		if cr.fail > 0 && rng.Float64() < cr.fail {
			cr.layers[s].Rejected++
			cr.answer(j, false, false, t, rng)
			return
		}
		cr.answer(j, true, true, t, rng)
		return
	}
	jb.phase, jb.sub = jobCalling, client{prev: cr.base[s+1]}
	cr.send(s+1, j, jb.client, t, rng)
}

// answer ends job j at time t with success (ok) or a failure (a 429 when
// up, else a 503): its worker takes the next waiting job, and its caller,
// unless it stopped waiting, has the answer.
func (cr *chainRun) answer(j int32, ok, up bool, t float64, rng *Mulberry32) {
	q := &cr.qs
	jb := q.jobs[j]
	s := int(jb.s)
	q.release(j)
	if jb.phase >= jobWorking && q.workers[s] > 0 {
		if f := &q.fifo[s]; f.n > 0 {
			cr.begin(f.pop(), s, t, rng)
		} else {
			q.busy[s]--
		}
	}
	if ok {
		cr.layers[s].Served++
	}
	if jb.abandoned {
		return
	}
	switch {
	case ok && s == 0:
		cr.ok++
	case ok:
		cr.answer(jb.owner, true, true, t, rng)
	default:
		cr.failed(s, jb.owner, jb.client, response{up: up}, t, rng)
	}
}

// timedOut is the timeout of job j (of generation gen) at time t: its
// caller stops waiting, unless it has its answer.
func (cr *chainRun) timedOut(j int32, gen uint32, t float64, rng *Mulberry32) {
	jb := &cr.qs.jobs[j]
	if jb.gen != gen {
		return // answered
	}
	jb.abandoned = true
	cr.layers[jb.s].Abandoned++
	if jb.phase >= jobWorking { // its work, begun, is wasted, finished by the window's end or not
		cr.layers[jb.s].WastedMS += jb.work
	}
	cr.failed(int(jb.s), jb.owner, jb.client, response{up: true, noAnswer: true}, t, rng)
}

// failed applies caller c's rejection rule to the failed attempt of its
// call for owner (as callState), client i's request, at time t: a retry
// scheduled, or the caller gives up (failing its own caller's attempt).
func (cr *chainRun) failed(c int, owner, i int32, resp response, t float64, rng *Mulberry32) {
	q := &cr.qs
	st := cr.callState(c, owner)
	st.att++
	gone := true
	if m := cr.maxAtt[c]; m == 0 || st.att < m {
		resp.index, resp.tick = i, int32(cr.tk.tickOf(t))
		if dl := cr.d[c].delay(st, resp, rng); dl >= 0 {
			gone = false
			next := t + max(dl, 1)
			if next < float64(cr.nt)*cr.tk.tick { // also false for NaN; else pending past the horizon
				if c > 0 {
					q.push(next, evCall, owner, q.jobs[owner].gen)
				} else {
					q.push(next, evClient, owner, 0)
				}
			}
		}
	}
	switch {
	case !gone:
	case c == 0:
		cr.gaveUp++
	default:
		cr.answer(owner, false, false, t, rng)
	}
}
