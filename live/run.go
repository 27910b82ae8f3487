package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Config is one live run.
type Config struct {
	// Scenario is the world, as sim has it: clients, tick, recovery time,
	// capacity, initial spread, horizon and Retry-After (whole seconds).
	// The run stops at the horizon at the latest.
	Scenario sim.Scenario
	Driver   Driver
	Down     DownMode
	// Grace: a request sent up to this long after a tick boundary still
	// counts in that tick (it was meant for it and the timer was late).
	Grace time.Duration
	// Seed draws the clients' first send times, U(0, Spread), as the first
	// Clients draws of sim's stream for this seed, in client order, exactly
	// as sim draws them: a library without jitter then replays sim's run of
	// that seed.
	Seed uint32
	// MaxAttempts bounds each client's requests in the run, whatever its
	// library does.
	MaxAttempts int
	// Scale runs the scenario this many times faster than real time (0 or
	// 1: real time). Only drivers that take time from a clock we can hand
	// them (Driver.Scalable) accept more than 1; the grace stays real time.
	Scale float64
	// Clock is the run's clock; nil: the system's.
	Clock Clock
	// virtual: the run is inside a synctest bubble (RunVirtual), on an
	// in-memory network, its clock the bubble's.
	virtual bool
}

// clock is Clock, the system's for nil.
func (c Config) clock() Clock {
	if c.Clock == nil {
		return systemClock{}
	}
	return c.Clock
}

// scale is Scale, 1 for zero.
func (c Config) scale() float64 {
	if c.Scale == 0 {
		return 1
	}
	return c.Scale
}

// real turns a scenario duration into real time.
func (c Config) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.scale())
}

// MaxScale bounds Config.Scale.
const MaxScale = 100

// Limits of a live run.
const (
	MaxClients   = 5000          // goroutines with a connection each
	MaxHorizon   = 2 * time.Hour // wall time
	MinTick      = 10 * time.Millisecond
	DefaultMax   = 10_000 // attempts per client
	fdsPerClient = 2      // its socket and the server's
	fdsReserve   = 64
)

// MaxVirtualClients bounds a virtual run's clients: goroutines and pipes
// in memory, no file descriptors.
const MaxVirtualClients = 50_000

// The fields of Config its errors (sim.FieldError) name; the scenario's
// are sim's.
var (
	FieldScale       = sim.NewField("Scale")
	FieldDown        = sim.NewField("Down")
	FieldGrace       = sim.NewField("Grace")
	FieldMaxAttempts = sim.NewField("MaxAttempts")
)

// Validate checks the configuration, and that fds file descriptors (the
// soft limit, as `ulimit -n` says; 0 = unknown) are enough for the clients.
// It reports the first fault: of the scale, then the scenario, then the
// server and the driver.
func (c Config) Validate(fds uint64) error {
	if err := c.validateScale(); err != nil {
		return err
	}
	if err := c.validateScenario(fds); err != nil {
		return err
	}
	return c.validateServerAndDriver()
}

// fieldError is the sim.FieldError of field's value v, wanting what
// format says.
func fieldError(field sim.Field, v any, format string, args ...any) error {
	return &sim.FieldError{Field: field, Value: v, Want: fmt.Sprintf(format, args...)}
}

// validateScale checks Scale: in range, and other than 1 only for a
// driver whose clock can be scaled and that reads any Retry-After in
// scenario time.
func (c Config) validateScale() error {
	if !(c.Scale == 0 || (c.Scale >= 1 && c.Scale <= MaxScale)) {
		return fieldError(FieldScale, c.Scale, "1 (real time) to %d", MaxScale)
	}
	if c.virtual && c.scale() != 1 {
		return fieldError(FieldScale, c.Scale, "1: a virtual run takes no real time at any scale")
	}
	if c.scale() != 1 && !c.Driver.Scalable {
		return fieldError(FieldScale, c.Scale, "1: %s takes its time from the system clock, which cannot be scaled without changing what is under test: it runs in real time only", c.Driver.Name)
	}
	if c.scale() != 1 && c.Scenario.RetryAfter != 0 && !c.Driver.stepped {
		return fieldError(FieldScale, c.Scale, "1 with a Retry-After: %s reads it in real seconds, so it runs in real time only", c.Driver.Name)
	}
	return nil
}

// validateScenario checks the scenario as a live run can play it: a tick
// and a horizon in real time that timers can keep, clients the file
// descriptors allow, whole seconds of Retry-After, and a server that only
// counts.
func (c Config) validateScenario(fds uint64) error {
	sc := c.Scenario
	if c.virtual {
		if sc.Clients < 1 || sc.Clients > MaxVirtualClients {
			return fieldError(sim.FieldClients, sc.Clients, "a whole number in [1, %d] for a virtual run", MaxVirtualClients)
		}
		if err := sc.Validate(); err != nil {
			return err
		}
		if sc.Server() == sim.QueueingServer {
			return c.validateVirtualQueue()
		}
		return c.validateServerKind()
	}
	if c.real(sc.Tick) < MinTick {
		return fieldError(sim.FieldTick, sc.Tick, "at least %v of real time for a live run (timers and HTTP take milliseconds; %v at scale %g)", MinTick, c.real(sc.Tick), c.scale())
	}
	if sc.Clients < 1 || sc.Clients > MaxClients {
		return fieldError(sim.FieldClients, sc.Clients, "a whole number in [1, %d] for a live run", MaxClients)
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	if need := uint64(sc.Clients*fdsPerClient + fdsReserve); fds > 0 && need > fds {
		return fieldError(sim.FieldClients, sc.Clients, "at most %d: it needs about %d file descriptors (%d per client and %d spare), and `ulimit -n` allows %d: use at most %d clients or raise the limit yourself",
			(fds-fdsReserve)/fdsPerClient, need, fdsPerClient, fdsReserve, fds, (fds-fdsReserve)/fdsPerClient)
	}
	if c.real(sc.Horizon) > MaxHorizon {
		return fieldError(sim.FieldHorizon, sc.Horizon, "at most %v of real time (%v at scale %g)", MaxHorizon, c.real(sc.Horizon), c.scale())
	}
	return c.validateServerKind()
}

// validateVirtualQueue checks a queueing server as a virtual run plays it
// (virtualQueue): fixed or exponential service, no queue bound or
// shedding, only the failed cohort, down from the start; and a client
// whose attempts the harness sees and times (not a gRPC channel, not
// sim's own clients, which would need sim's queue).
func (c Config) validateVirtualQueue() error {
	sc := c.Scenario
	if err := noBrownout(sc); err != nil {
		return err
	}
	if sc.Service != "fixed" && sc.Service != "exponential" {
		return fieldError(sim.FieldService, sc.Service, "fixed or exponential for a virtual queueing server")
	}
	if sc.QueueLimit != 0 || sc.QueueWait != 0 || sc.ShedTarget != 0 || sc.ArrivalRate != 0 || sc.OutageStart != 0 || sc.RetryAfter != 0 {
		return errors.New("a virtual queueing server has workers, service times and client timeouts only: no queue bound, wait bound, shedding, open-loop traffic, outage start or Retry-After")
	}
	if c.Driver.GRPC != nil || c.Driver.stepped {
		return fmt.Errorf("%s cannot run against a virtual queueing server: the harness times HTTP requests only, and sim's own clients would need sim's queue", c.Driver.Name)
	}
	return nil
}

// validateServerKind checks what a live server can be: whole seconds of
// Retry-After, and a server that only counts.
func (c Config) validateServerKind() error {
	sc := c.Scenario
	if err := noBrownout(sc); err != nil {
		return err
	}
	if sc.RetryAfter%time.Second != 0 {
		return fieldError(sim.FieldRetryAfter, sc.RetryAfter, "whole seconds (the header's unit)")
	}
	if sc.RetryAfterMax != 0 || sc.RetryAfterBacklog || sc.RampUp != 0 || sc.RejectCost != 0 || sc.Server() != sim.CountingServer {
		return errors.New("a live server counts only: no Retry-After ranges or backlog, ramps, rejection costs or queues")
	}
	return nil
}

// noBrownout refuses a brownout: the live servers fail nothing on purpose.
func noBrownout(sc sim.Scenario) error {
	if sc.FailShare != 0 || sc.AddedLatency != 0 {
		return errors.New("a live server has no brownout: fail_share, fail_curve and added_latency_s are the simulator's")
	}
	return nil
}

// validateServerAndDriver checks how the server is down, the grace, the
// driver (a gRPC driver needs 503s: it retries RPCs, not connections) and
// the attempts per client.
func (c Config) validateServerAndDriver() error {
	if c.Down != Down503 && c.Down != DownRefused {
		return fieldError(FieldDown, fmt.Sprintf("%q", c.Down), "503 or refused")
	}
	if c.virtual && c.Grace != 0 {
		return fieldError(FieldGrace, c.Grace, "0 in a virtual run: its requests take no time, and a tick closes once every request sent by its end has arrived")
	}
	if c.Grace < 0 || c.Grace >= c.real(c.Scenario.Tick)/2 {
		return fieldError(FieldGrace, c.Grace, "at least 0 and less than half the tick (%v of real time)", c.real(c.Scenario.Tick)/2)
	}
	if c.Driver.Do == nil && !c.Driver.stepped {
		return errors.New("live: no driver")
	}
	if c.Down == DownRefused && c.Scenario.RetryAfter > 0 && c.Scenario.RecoverAt > 0 {
		return fieldError(FieldDown, fmt.Sprintf("%q", c.Down), "503 with a Retry-After: a refused connection carries no Retry-After, while sim's rejections during the outage do")
	}
	if c.Driver.GRPC != nil && c.Down != Down503 {
		return fieldError(FieldDown, fmt.Sprintf("%q", c.Down), "503 (UNAVAILABLE): the gRPC driver %s retries RPCs, not connections", c.Driver.Name)
	}
	if c.MaxAttempts < 1 {
		return fieldError(FieldMaxAttempts, c.MaxAttempts, "at least 1")
	}
	return nil
}

// Measurement is what a live run saw, in sim's terms.
type Measurement struct {
	Config   Config
	Started  time.Time
	Wall     time.Duration // how long the run took
	Arrivals []int         // per tick: requests counted in it (refused ones included)
	Served   []int         // per tick
	Server   []int         // per tick: arrivals as the server counted them
	// CloseLate: how late the server closed its ticks (median, 99th
	// percentile, worst): a late close answers the tick's requests late.
	CloseLateP50, CloseLateP99, CloseLateMax time.Duration
	// FirstLateMax: the latest a client's first request went out after
	// its time.
	FirstLateMax time.Duration
	// Placed: requests whose tick the harness chose, as sim's (every
	// client's first request; every request of a sim: client); Misplaced:
	// those counted in another tick, or that sim's clients sent and the
	// harness did not send in their tick.
	Placed, Misplaced int
	// Capped: clients the harness stopped at MaxAttempts, which sim does
	// not: the run is then not the library's.
	Capped int
	Result sim.Result // sent, peak, milestones, given up and pending, as sim counts them
	// Errors: how clients ended other than served, by message (a few).
	Errors map[string]int
}

// Run runs cfg in real time. It returns when every client is served or gave
// up, or at the horizon, or when ctx is done (with ctx's error, after
// stopping the server and every client).
func Run(ctx context.Context, cfg Config) (*Measurement, error) {
	sc := cfg.Scenario
	clock := cfg.clock()
	var nw network = loopback{}
	var dial func(context.Context, string) (net.Conn, error)
	var p *pipes
	if cfg.virtual {
		p = &pipes{}
		nw, dial = p, p.dial
	}
	srv, err := newServer(cfg, nw)
	if err != nil {
		return nil, err
	}
	if p != nil {
		p.refuseAt = srv.awaitClose
	}
	if cfg.virtual {
		srv.settle = synctest.Wait
		if sc.Server() == sim.QueueingServer {
			srv.queue = newVirtualQueue(sc, cfg.Seed)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	do := cfg.Driver.Do
	var steps *simRun
	if cfg.Driver.stepped {
		if steps, err = startSimRun(cfg, srv); err != nil {
			return nil, err
		}
		defer steps.d.Close() // after the server's last close: every return below waits for it
		do = steps.do
	}
	f := startClients(ctx, cfg, clock, srv.addr, dial, do)
	f.warm.Wait()
	start := clock.Now().Add(50 * time.Millisecond)
	srv.mu.Lock()
	srv.start = start
	srv.mu.Unlock()
	runCtx, stop := context.WithDeadline(ctx, start.Add(cfg.real(sc.Horizon)))
	defer stop()
	f.start, f.runCtx = start, runCtx
	if cfg.Driver.GRPC != nil {
		srv.record = func(client, tick, status int) {
			if client >= 0 && client < len(f.recs) {
				f.recs[client].add(attempt{at: clock.Now().Sub(start), tick: tick, done: tick, status: status})
			}
		}
	}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.run(runCtx, start, int((sc.Horizon+sc.Tick-1)/sc.Tick)) }()
	close(f.ready)
	f.wg.Wait()
	stop()
	if err := <-srvErr; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.measurement(cfg, srv, clock.Now().Sub(start), steps), nil
}

// startSimRun sets up the simulator's run of a stepped (sim:NAME) driver
// around srv, which tells it each batch it closes; it shuts srv down on
// an error.
func startSimRun(cfg Config, srv *server) (*simRun, error) {
	p, err := cfg.Driver.Policy()
	if err != nil {
		srv.shutdown()
		return nil, err
	}
	steps, err := newSimRun(cfg, srv, p)
	if err != nil {
		srv.shutdown()
		return nil, err
	}
	srv.onClose = steps.closed
	return steps, nil
}

// clients are a live run's clients, one goroutine each. Each may warm up
// its connection first (warm), then waits for ready: Run sets start and
// runCtx before it closes ready, and only then does a client read them.
type clients struct {
	recs []*recorder
	errs []error
	// cut: the client's error came from the run's end (its horizon), not
	// from its library giving up (a request timed out on a queueing
	// server is a DeadlineExceeded too).
	cut       []bool
	firstLate []time.Duration // how late each client's first request went out
	ready     chan struct{}
	start     time.Time
	runCtx    context.Context
	warm, wg  sync.WaitGroup
}

// startClients starts cfg's clients, each of which sends through do to
// the server at addr. Their first send times are the first draws of sim's
// stream for cfg.Seed, in client order.
func startClients(ctx context.Context, cfg Config, clock Clock, addr string, dial func(context.Context, string) (net.Conn, error), do func(context.Context, Env) error) *clients {
	sc := cfg.Scenario
	scale := cfg.scale()
	rng := sim.NewMulberry32(cfg.Seed)
	f := &clients{recs: make([]*recorder, sc.Clients), errs: make([]error, sc.Clients), cut: make([]bool, sc.Clients), firstLate: make([]time.Duration, sc.Clients),
		ready: make(chan struct{})}
	url := "http://" + addr + "/"
	for i := range f.recs {
		// A first send meant for time x (sim's draw) counts in sim's tick
		// k = ceil(x/tick): it goes 1 ms into the window of tick k; one
		// meant for time 0 (no spread) goes at once, within the grace of
		// tick 0.
		x := rng.Float64() * float64(sc.Spread.Milliseconds())
		k0, first := firstSend(x, float64(sc.Tick.Milliseconds()), cfg.real(sc.Tick), cfg.Grace)
		if cfg.virtual {
			first = exactSend(x, k0, sc.Tick)
		}
		rec := &recorder{clock: clock, tick: cfg.real(sc.Tick), grace: cfg.Grace, max: cfg.MaxAttempts, aim: k0}
		if cfg.virtual {
			rec.timeout = sc.Timeout
		}
		f.recs[i] = rec
		hc := newHTTPClient(rec, dial)
		f.warm.Add(1)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer hc.CloseIdleConnections()
			if cfg.Driver.GRPC == nil && (cfg.Down == Down503 || sc.RecoverAt == 0) {
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				warmUp(wctx, hc, url)
				cancel()
			}
			f.warm.Done()
			select {
			case <-f.ready:
			case <-ctx.Done():
				f.errs[i], f.cut[i] = ctx.Err(), true
				return
			}
			rec.start = f.start
			if clock.Sleep(f.runCtx, f.start.Add(first).Sub(clock.Now())) != nil {
				f.errs[i], f.cut[i] = f.runCtx.Err(), true
				return
			}
			f.firstLate[i] = clock.Now().Sub(f.start.Add(first))
			f.errs[i] = do(f.runCtx, Env{Index: i, URL: url, Addr: addr, HTTP: hc, Scale: scale, Start: f.start, clock: clock, dial: dial})
			f.cut[i] = f.errs[i] != nil && f.runCtx.Err() != nil // stopped by the run's end, not by its library
		}()
	}
	return f
}

// measurement is what the run saw, once the clients and the server are
// done: the run took wall; steps, for a stepped driver, adds the requests
// sim's clients sent and the harness did not.
func (f *clients) measurement(cfg Config, srv *server, wall time.Duration, steps *simRun) *Measurement {
	m := &Measurement{Config: cfg, Started: f.start, Wall: wall, Server: srv.arrivals, Errors: map[string]int{},
		FirstLateMax: slices.Max(f.firstLate)}
	if late := slices.Sorted(slices.Values(srv.late)); len(late) > 0 {
		q := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
		m.CloseLateP50, m.CloseLateP99, m.CloseLateMax = q(0.5), q(0.99), late[len(late)-1]
	}
	m.tally(f.recs, f.errs, f.cut)
	if steps != nil {
		missed := steps.missed()
		m.Placed += missed
		m.Misplaced += missed
	}
	return m
}

// tally computes sim's metrics from the clients' records.
func (m *Measurement) tally(recs []*recorder, errs []error, cut []bool) {
	sc := m.Config.Scenario
	n := len(recs)
	r := sim.Result{Clients: n}
	nt := int((sc.Horizon + sc.Tick - 1) / sc.Tick) // sim's ticks: 0 … nt−1
	for i, rec := range recs {
		ok := false
		for _, a := range rec.attempts {
			if a.tick >= nt || (a.status == http.StatusOK && a.done >= nt) { // past the horizon, where sim sends nothing
				continue
			}
			for len(m.Arrivals) <= max(a.tick, a.done) {
				m.Arrivals, m.Served = append(m.Arrivals, 0), append(m.Served, 0)
			}
			m.Arrivals[a.tick]++
			if a.status == http.StatusOK {
				m.Served[a.done]++
				ok = true
			}
			if a.aim >= 0 {
				m.Placed++
				if a.aim != a.tick {
					m.Misplaced++
				}
			}
		}
		if errors.Is(errs[i], errTooMany) {
			m.Capped++
		}
		switch {
		case ok:
			r.Succeeded++
		case errs[i] != nil && !cut[i] && !errors.Is(errs[i], errTooMany):
			r.GaveUp++
			m.Errors[shortError(errs[i])]++
		default:
			r.Pending++
			if errs[i] != nil {
				m.Errors[shortError(errs[i])]++
			}
		}
	}
	firstUp := int((sc.RecoverAt + sc.Tick - 1) / sc.Tick)
	for k, a := range m.Arrivals {
		r.Sent += int64(a)
		if k >= firstUp {
			r.SentAfterRecovery += int64(a)
			r.PeakArrivals = max(r.PeakArrivals, a)
		}
	}
	r.PeakRPS = float64(r.PeakArrivals) / sc.Tick.Seconds()
	ok := 0
	for k, s := range m.Served {
		if s == 0 {
			continue
		}
		ok += s
		at := time.Duration(k) * sc.Tick
		mark(&r.T50, float64(ok) >= float64(n)*0.5, at)
		mark(&r.T90, float64(ok) >= float64(n)*0.9, at)
		mark(&r.T99, float64(ok) >= float64(n)*0.99, at)
		mark(&r.AllDone, ok == n, at)
	}
	r.End = time.Duration(max(len(m.Arrivals)-1, 0)) * sc.Tick
	m.Result = r
}

func mark(m *sim.Milestone, reached bool, at time.Duration) {
	if reached && !m.Reached {
		*m = sim.Milestone{At: at, Reached: true}
	}
}

// shortError keeps an error's message short and free of the port number,
// so that the same failure is counted once.
func shortError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 80 {
		s = s[i+2:]
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// warmUp opens the client's connection with a request the server does not
// count (nor the recorder), so that the first counted request does not pay
// for a TCP handshake on a busy machine.
func warmUp(ctx context.Context, hc *http.Client, url string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	req.Header.Set(warmHeader, "1")
	rec := hc.Transport.(*recorder)
	resp, err := rec.next.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
}

// MedianSeed returns the seed among seeds whose simulated metrics (each
// one a comparison judges) all lie nearest the middle of all of them: it
// minimises the largest distance of a metric's rank from 50. A live run
// that draws its first sends from it is a typical run on every metric, and
// a library without jitter (or a sim: client) should replay it.
func MedianSeed(sc sim.Scenario, p sim.Policy, seeds []uint32) (uint32, error) {
	if len(seeds) == 0 {
		return 0, errors.New("no seeds")
	}
	vals := make([][]float64, len(metrics)) // [metric][seed]
	for j := range vals {
		vals[j] = make([]float64, len(seeds))
	}
	var s sim.Sim
	for i, seed := range seeds {
		r, err := s.Run(sc, p, sim.NewMulberry32(seed), nil)
		if err != nil {
			return 0, err
		}
		for j, mt := range metrics {
			vals[j][i] = mt.f(sc, r)
		}
	}
	sorted := make([][]float64, len(metrics))
	for j := range vals {
		sorted[j] = slices.Sorted(slices.Values(vals[j]))
	}
	best, bestD := seeds[0], math.Inf(1)
	for i, seed := range seeds {
		d := 0.0
		for j := range metrics {
			d = math.Max(d, math.Abs(rank(vals[j][i], sorted[j])-50))
		}
		if d < bestD {
			best, bestD = seed, d
		}
	}
	return best, nil
}

// firstSend is the tick k = ceil(x/tick) in which sim counts a client's
// first request drawn at xMS (in a scenario with tickMS ticks), and when
// the client sends it (sendAt).
func firstSend(xMS, tickMS float64, tick, grace time.Duration) (k int, at time.Duration) {
	kf := math.Ceil(xMS / tickMS)
	if kf*tickMS < xMS { // rounding
		kf++
	}
	return int(kf), sendAt(int(kf), tick, grace)
}

// exactSend is when a virtual run sends a first request sim draws at xMS
// and counts in tick k: at xMS itself (to the nanosecond above), kept
// within the tick's window ((k−1)·tick, k·tick] against rounding. A
// virtual run has no grace: its requests take no time, and a tick closes
// once every request sent by its end has arrived.
func exactSend(xMS float64, k int, tick time.Duration) time.Duration {
	if k == 0 {
		return 0
	}
	at := time.Duration(math.Ceil(xMS * float64(time.Millisecond)))
	return min(max(at, time.Duration(k-1)*tick+1), time.Duration(k)*tick)
}

// sendAt is when the harness sends a request meant for tick k, in real
// time after the start: 1 ms into the tick's window ((k−1)·tick + grace,
// k·tick + grace], which leaves a whole tick of room for a late timer, or
// at once for tick 0. Where in its window a request arrives changes
// nothing: a tick's requests are served in client order and answered at
// its end.
func sendAt(k int, tick, grace time.Duration) time.Duration {
	if k == 0 {
		return 0
	}
	return time.Duration(k-1)*tick + grace + time.Millisecond
}
