package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
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

// Validate checks the configuration, and that fds file descriptors (the
// soft limit, as `ulimit -n` says; 0 = unknown) are enough for the clients.
func (c Config) Validate(fds uint64) error {
	sc := c.Scenario
	if !(c.Scale == 0 || (c.Scale >= 1 && c.Scale <= MaxScale)) {
		return fmt.Errorf("scale %g: want 1 (real time) to %d", c.Scale, MaxScale)
	}
	if c.scale() != 1 && !c.Driver.Scalable {
		return fmt.Errorf("scale %g: %s takes its time from the system clock, which cannot be scaled without changing what is under test: it runs in real time only (scale 1)", c.Scale, c.Driver.Name)
	}
	if c.scale() != 1 && sc.RetryAfter != 0 {
		return fmt.Errorf("scale %g: a Retry-After is read in real seconds: it runs in real time only", c.Scale)
	}
	if c.real(sc.Tick) < MinTick {
		return fmt.Errorf("tick %v: want at least %v of real time for a live run (timers and HTTP take milliseconds)", c.real(sc.Tick), MinTick)
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	if sc.Clients > MaxClients {
		return fmt.Errorf("clients %d: want at most %d for a live run", sc.Clients, MaxClients)
	}
	if need := uint64(sc.Clients*fdsPerClient + fdsReserve); fds > 0 && need > fds {
		return fmt.Errorf("clients %d: needs about %d file descriptors (%d per client and %d spare), and `ulimit -n` allows %d: use at most %d clients or raise the limit yourself",
			sc.Clients, need, fdsPerClient, fdsReserve, fds, (fds-fdsReserve)/fdsPerClient)
	}
	if c.real(sc.Horizon) > MaxHorizon {
		return fmt.Errorf("horizon %v: want at most %v of real time", c.real(sc.Horizon), MaxHorizon)
	}
	if sc.RetryAfter%time.Second != 0 {
		return fmt.Errorf("retry-after %v: want whole seconds (the header's unit)", sc.RetryAfter)
	}
	if sc.RetryAfterMax != 0 || sc.RetryAfterBacklog || sc.RampUp != 0 || sc.RejectCost != 0 {
		return errors.New("a live server counts only: no Retry-After ranges or backlog, ramps or rejection costs")
	}
	if c.Down != Down503 && c.Down != DownRefused {
		return fmt.Errorf("down %q: want 503 or refused", c.Down)
	}
	if c.Grace < 0 || c.Grace >= c.real(sc.Tick)/2 {
		return fmt.Errorf("grace %v: want at least 0 and less than half the tick (%v of real time)", c.Grace, c.real(sc.Tick)/2)
	}
	if c.Driver.Do == nil {
		return errors.New("no driver")
	}
	if c.Driver.GRPC != nil && c.Down != Down503 {
		return fmt.Errorf("down %q: the gRPC driver %s retries RPCs, not connections: want 503 (UNAVAILABLE)", c.Down, c.Driver.Name)
	}
	if c.MaxAttempts < 1 {
		return fmt.Errorf("max attempts %d: want at least 1", c.MaxAttempts)
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
	// percentile, worst): a late close counts arrivals of the next tick in
	// this one.
	CloseLateP50, CloseLateP99, CloseLateMax time.Duration
	// FirstLateMax: the latest a client's first request went out after
	// its time.
	FirstLateMax time.Duration
	Result       sim.Result // sent, peak, milestones, given up and pending, as sim counts them
	// Errors: how clients ended other than served, by message (a few).
	Errors map[string]int
}

// Run runs cfg in real time. It returns when every client is served or gave
// up, or at the horizon, or when ctx is done (with ctx's error, after
// stopping the server and every client).
func Run(ctx context.Context, cfg Config) (*Measurement, error) {
	sc := cfg.Scenario
	srv, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ticks := int((sc.Horizon + sc.Tick - 1) / sc.Tick)
	scale := cfg.scale()
	rng := sim.NewMulberry32(cfg.Seed)
	recs := make([]*recorder, sc.Clients)
	errs := make([]error, sc.Clients)
	firstLate := make([]time.Duration, sc.Clients)
	url := "http://" + srv.addr + "/"
	// The clients open their connections first; the start is set once all
	// of them have, a little ahead, so that every goroutine is waiting
	// when it comes.
	var start time.Time
	var runCtx context.Context
	ready := make(chan struct{})
	var warm, wg sync.WaitGroup
	for i := range recs {
		rec := &recorder{tick: cfg.real(sc.Tick), grace: cfg.Grace, max: cfg.MaxAttempts}
		recs[i] = rec
		// A first send meant for time x (sim's draw) counts in sim's tick
		// k = ceil(x/tick). Where in its tick a request arrives changes
		// nothing (a tick's requests are served in client order and answered
		// at its end), so it goes 1 ms into the window of tick k, leaving a
		// whole tick of room for a late timer; one meant for time 0 (no
		// spread) goes at once, within the grace of tick 0.
		first := firstSend(rng.Float64()*float64(sc.Spread.Milliseconds()), float64(sc.Tick.Milliseconds()), cfg.real(sc.Tick), cfg.Grace)
		hc := newHTTPClient(rec)
		warm.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer hc.CloseIdleConnections()
			if cfg.Driver.GRPC == nil && (cfg.Down == Down503 || sc.RecoverAt == 0) {
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				warmUp(wctx, hc, url)
				cancel()
			}
			warm.Done()
			select {
			case <-ready:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			rec.start = start
			if sleep(runCtx, time.Until(start.Add(first))) != nil {
				errs[i] = runCtx.Err()
				return
			}
			firstLate[i] = time.Since(start.Add(first))
			errs[i] = cfg.Driver.Do(runCtx, Env{Index: i, URL: url, Addr: srv.addr, HTTP: hc, Scale: scale, Start: start})
		}()
	}
	warm.Wait()
	start = time.Now().Add(50 * time.Millisecond)
	srv.mu.Lock()
	srv.start = start
	srv.mu.Unlock()
	runCtx, stop := context.WithDeadline(ctx, start.Add(cfg.real(sc.Horizon)))
	defer stop()
	if cfg.Driver.GRPC != nil {
		srv.record = func(client, tick, status int) {
			if client >= 0 && client < len(recs) {
				recs[client].add(attempt{at: time.Since(start), tick: tick, status: status})
			}
		}
	}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.run(runCtx, start, ticks) }()
	close(ready)
	wg.Wait()
	stop()
	if err := <-srvErr; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := &Measurement{Config: cfg, Started: start, Wall: time.Since(start), Server: srv.arrivals, Errors: map[string]int{},
		FirstLateMax: slices.Max(firstLate)}
	if late := slices.Sorted(slices.Values(srv.late)); len(late) > 0 {
		q := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
		m.CloseLateP50, m.CloseLateP99, m.CloseLateMax = q(0.5), q(0.99), late[len(late)-1]
	}
	m.tally(recs, errs)
	return m, nil
}

// tally computes sim's metrics from the clients' records.
func (m *Measurement) tally(recs []*recorder, errs []error) {
	sc := m.Config.Scenario
	n := len(recs)
	r := sim.Result{Clients: n}
	for i, rec := range recs {
		ok := false
		for _, a := range rec.attempts {
			for len(m.Arrivals) <= a.tick {
				m.Arrivals, m.Served = append(m.Arrivals, 0), append(m.Served, 0)
			}
			m.Arrivals[a.tick]++
			if a.status == http.StatusOK {
				m.Served[a.tick]++
				ok = true
			}
		}
		switch {
		case ok:
			r.Succeeded++
		case errs[i] != nil && !errors.Is(errs[i], context.DeadlineExceeded) && !errors.Is(errs[i], errTooMany):
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

// MedianSeed returns the seed among seeds whose simulated t99 and sent
// after recovery both lie nearest the middle of all of them: a live run
// that draws its first sends from it is a typical run, and a library
// without jitter should replay it.
func MedianSeed(sc sim.Scenario, p sim.Policy, seeds []uint32) (uint32, error) {
	if len(seeds) == 0 {
		return 0, errors.New("no seeds")
	}
	t99 := make([]float64, len(seeds))
	sent := make([]float64, len(seeds))
	var s sim.Sim
	for i, seed := range seeds {
		r, err := s.Run(sc, p, sim.NewMulberry32(seed), nil)
		if err != nil {
			return 0, err
		}
		t99[i], sent[i] = math.Inf(1), float64(r.SentAfterRecovery)
		if r.T99.Reached {
			t99[i] = r.T99.At.Seconds()
		}
	}
	best, bestD := seeds[0], math.Inf(1)
	for i, seed := range seeds {
		d := math.Max(math.Abs(check("", "", t99[i], t99, 0).Rank-50), math.Abs(check("", "", sent[i], sent, 0).Rank-50))
		if d < bestD {
			best, bestD = seed, d
		}
	}
	return best, nil
}

// firstSend is when a client whose first request sim draws at xMS (in a
// scenario with tickMS ticks) sends it, in real time after the start: 1 ms
// into the window ((k−1)·tick + grace, k·tick + grace] of k = ceil(x/tick),
// or at once for x = 0.
func firstSend(xMS, tickMS float64, tick, grace time.Duration) time.Duration {
	k := math.Ceil(xMS / tickMS)
	if k*tickMS < xMS { // rounding
		k++
	}
	if k == 0 {
		return 0
	}
	return time.Duration(k-1)*tick + grace + time.Millisecond
}
