package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// DownMode is how the server answers before it recovers.
type DownMode string

// The down modes.
const (
	Down503     DownMode = "503"     // it answers 503 (with the Retry-After, if any)
	DownRefused DownMode = "refused" // nothing listens: connection refused
)

// Headers between clients and the server.
const (
	clientHeader = "X-Herd-Client" // the client's index
	tickHeader   = "X-Herd-Tick"   // the tick the request was counted in
	doneHeader   = "X-Herd-Done"   // the tick it was answered in, when later (a queueing server)
	// amzRetryAfterHeader is the AWS SDK's Retry-After, in milliseconds
	// (aws/retry/middleware.go adjustForRetryAfterHeader).
	amzRetryAfterHeader = "X-Amz-Retry-After"
	warmHeader          = "X-Herd-Warm-Up" // opens the connection before the start; not counted
)

// server is the counting server of sim on a real socket. Requests are
// batched by tick: the batch of tick k takes the requests that arrive in
// ((k−1)·tick + grace, k·tick + grace] after the start, and is answered at
// k·tick + grace, its first floor(capacity × tick) requests in client-index
// order served (200) and the others rejected (503 while down, 429 after,
// each with the Retry-After when there is one). That is sim's server, with
// the answer held to the end of the tick; grace lets a request sent on a
// tick boundary, a few ms late, still count in that tick.
type server struct {
	tick, grace, recoverAt time.Duration
	budget                 int
	retryAfter             string // the header's value; "" for none
	// amzRetryAfter is the same wait in X-Amz-Retry-After's milliseconds:
	// an AWS service's hint, which the AWS SDK reads in place of
	// Retry-After.
	amzRetryAfter string
	down          DownMode

	addr  string
	net   network
	srv   *http.Server
	serve func(net.Listener) error // the HTTP server's, or a gRPC server's
	stop  func()
	// record, when set, records each answered request for its client (the
	// gRPC front end, whose attempts the client cannot see one by one).
	record func(client, tick, status int)
	// onClose, when set, is told each batch as it is decided, before its
	// answers go out (the sim: clients' stepper, simdriver.go).
	onClose func(k int, clients []int32, served []bool)
	// settle, when set, returns once every request sent by the time of a
	// tick's close has reached the server (synctest.Wait, in a virtual
	// run): a request sent at a tick's end then counts in that tick.
	settle func()
	// queue, when set, is a queueing server's workers (a virtual run).
	queue *virtualQueue
	clock Clock
	lnMu  sync.Mutex
	ln    net.Listener

	mu       sync.Mutex
	start    time.Time
	batches  map[int]*batch // the open batches, by tick
	closed   int            // the last tick closed; -1 before the first
	over     bool
	arrivals []int // per tick, as the server counted them
	served   []int
	late     []time.Duration // per tick: how late the batch closed
}

type batch struct {
	k      int
	client []int32
	served []bool
	answer []time.Duration // a queueing server's: when each served one is answered, since the start
	done   chan struct{}
}

// newServer reserves an address on nw (a loopback port). In DownRefused
// mode nothing listens on it until open.
//
// The server keeps real time: its tick and recovery are the scenario's
// divided by the scale; its budget per tick is the scenario's.
func newServer(cfg Config, nw network) (*server, error) {
	s := &server{tick: cfg.real(cfg.Scenario.Tick), grace: cfg.Grace, recoverAt: cfg.real(cfg.Scenario.RecoverAt),
		budget: int(math.Floor(cfg.Scenario.Capacity * cfg.Scenario.Tick.Seconds())), down: cfg.Down, clock: cfg.clock(), net: nw}
	if ra := cfg.Scenario.RetryAfter; ra > 0 {
		s.retryAfter = strconv.FormatInt(int64(ra/time.Second), 10)
		s.amzRetryAfter = strconv.FormatInt(ra.Milliseconds(), 10)
	}
	ln, err := nw.listen("")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.serve = s.srv.Serve
	s.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.srv.Close()
		}
	}
	if cfg.Driver.GRPC != nil {
		s.serve, s.stop = newGRPCFront(s)
	}
	s.batches, s.closed = map[int]*batch{}, -1
	if cfg.Down == DownRefused && cfg.Scenario.RecoverAt > 0 {
		ln.Close() // the port stays ours in practice: the kernel hands out ephemeral ports in turn
	} else {
		s.ln = ln
		go s.serve(ln)
	}
	return s, nil
}

// open starts listening (DownRefused mode, at recovery).
func (s *server) open() error {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.ln != nil {
		return nil
	}
	ln, err := s.net.listen(s.addr)
	if err != nil {
		return fmt.Errorf("listening again on %s at recovery: %w", s.addr, err)
	}
	s.ln = ln
	go s.serve(ln)
	return nil
}

// admit counts a request of client id in the open batch and waits for the
// batch's answer: the tick it was counted in and whether it was served.
// ok is false when the run is over or ctx is done first.
func (s *server) admit(ctx context.Context, id int32) (k int, served, ok bool) {
	k, served, _, _, ok = s.admitBatch(ctx, id)
	return k, served, ok
}

// admitBatch is admit, with the request's batch and its index there.
func (s *server) admitBatch(ctx context.Context, id int32) (k int, served bool, b *batch, i int, ok bool) {
	s.mu.Lock()
	if s.over {
		s.mu.Unlock()
		return 0, false, nil, 0, false
	}
	// The tick of the arrival by the clock, not the batch that happens to
	// be open: a late close must not gather the next tick's arrivals.
	k = max(tickOf(s.clock.Now().Sub(s.start), s.tick, s.grace), s.closed+1)
	b = s.batch(k)
	i = len(b.client)
	b.client = append(b.client, id)
	s.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, false, nil, 0, false
	}
	if s.record != nil {
		st := http.StatusOK
		if !b.served[i] {
			st = s.rejectStatus(b.k)
		}
		s.record(int(id), b.k, st)
	}
	if b.answer != nil && b.served[i] { // a queueing server answers when the service ends
		if s.clock.Sleep(ctx, s.start.Add(b.answer[i]).Sub(s.clock.Now())) != nil {
			return 0, false, nil, 0, false
		}
	}
	return b.k, b.served[i], b, i, true
}

// doneTick is the tick a request of batch b answered at its index i counts
// as served in: its arrival's, or a queueing server's answer's.
func (s *server) doneTick(b *batch, i int) int {
	if b.answer == nil {
		return b.k
	}
	return tickOf(b.answer[i], s.tick, 0)
}

// admitHTTP is admit, with the tick the request is served in.
func (s *server) admitHTTP(ctx context.Context, id int32) (k int, served bool, done int, ok bool) {
	k, served, b, i, ok := s.admitBatch(ctx, id)
	if !ok {
		return 0, false, 0, false
	}
	return k, served, s.doneTick(b, i), true
}

// awaitClose waits for the close of the tick a request sent now counts in
// (the tick of its clock time, or the next one to close), or until ctx is
// done or the run is over, and returns that tick (−1 when the run is
// over). It counts nothing: a refused connection never reaches the
// server.
func (s *server) awaitClose(ctx context.Context) int {
	s.mu.Lock()
	if s.over {
		s.mu.Unlock()
		return -1
	}
	k := max(tickOf(s.clock.Now().Sub(s.start), s.tick, s.grace), s.closed+1)
	b := s.batch(k)
	s.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
	}
	return k
}

// rejectStatus is 503 while down, 429 after.
func (s *server) rejectStatus(k int) int {
	if time.Duration(k)*s.tick >= s.recoverAt {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(warmHeader) != "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	id, err := strconv.ParseInt(r.Header.Get(clientHeader), 10, 32)
	if err != nil {
		http.Error(w, "missing "+clientHeader, http.StatusBadRequest)
		return
	}
	k, served, done, ok := s.admitHTTP(r.Context(), int32(id))
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.Header().Set(tickHeader, strconv.Itoa(k))
	if done != k {
		w.Header().Set(doneHeader, strconv.Itoa(done))
	}
	if served {
		w.WriteHeader(http.StatusOK)
		return
	}
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
		w.Header().Set(amzRetryAfterHeader, s.amzRetryAfter)
	}
	w.WriteHeader(s.rejectStatus(k))
}

// batch returns the batch of tick k, opening it. The caller holds mu.
func (s *server) batch(k int) *batch {
	b := s.batches[k]
	if b == nil {
		b = &batch{k: k, done: make(chan struct{})}
		s.batches[k] = b
	}
	return b
}

// close decides batch b: sim's order (client index) and budget.
func (s *server) decide(b *batch) {
	b.served = make([]bool, len(b.client))
	if s.queue != nil {
		s.decideQueued(b)
	} else if time.Duration(b.k)*s.tick >= s.recoverAt {
		order := make([]int, len(b.client))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int { return int(b.client[x]) - int(b.client[y]) })
		for _, i := range order[:min(s.budget, len(order))] {
			b.served[i] = true
		}
	}
	n := 0
	for _, ok := range b.served {
		if ok {
			n++
		}
	}
	for len(s.arrivals) <= b.k {
		s.arrivals, s.served = append(s.arrivals, 0), append(s.served, 0)
	}
	s.arrivals[b.k] += len(b.client)
	s.served[b.k] += n
}

// decideQueued decides batch b on a queueing server: rejected while down,
// else each admitted in client order and answered when its service ends.
func (s *server) decideQueued(b *batch) {
	at := time.Duration(b.k) * s.tick
	if at < s.recoverAt {
		return
	}
	b.answer = make([]time.Duration, len(b.client))
	order := make([]int, len(b.client))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return int(b.client[x]) - int(b.client[y]) })
	for _, i := range order {
		b.served[i], b.answer[i] = true, s.queue.admit(at)
	}
}

// run closes a batch at every k·tick + grace after start, until ctx is done
// or the last tick, then answers what is left with 503 and shuts down.
// s.start must be set.
func (s *server) run(ctx context.Context, start time.Time, ticks int) error {
	defer s.shutdown()
	firstUp := s.firstUp()
	for k := 0; k < ticks; k++ {
		end := start.Add(time.Duration(k)*s.tick + s.grace)
		if s.clock.Sleep(ctx, end.Sub(s.clock.Now())) != nil {
			return nil
		}
		s.late = append(s.late, s.clock.Now().Sub(end))
		if s.settle != nil {
			s.settle()
		}
		if k+1 == firstUp || (k == 0 && firstUp == 0) {
			if err := s.open(); err != nil {
				return err
			}
		}
		s.mu.Lock()
		b := s.batch(k)
		delete(s.batches, k)
		s.closed = k
		s.decide(b)
		s.mu.Unlock()
		if s.onClose != nil {
			s.onClose(k, b.client, b.served)
		}
		close(b.done)
	}
	return nil
}

// firstUp is the first tick k with k·tick ≥ recoverAt: the first the
// server serves in.
func (s *server) firstUp() int { return int((s.recoverAt + s.tick - 1) / s.tick) }

// answers reports whether the server answers the requests of tick k: in
// DownRefused mode nothing listens before recovery (run opens the port as
// it closes the tick before).
func (s *server) answers(k int) bool {
	return s.down != DownRefused || k >= s.firstUp()
}

func (s *server) shutdown() {
	s.mu.Lock()
	s.over = true
	for k, b := range s.batches { // order does not matter: every one is answered "over"
		b.served = make([]bool, len(b.client))
		close(b.done)
		delete(s.batches, k)
	}
	s.mu.Unlock()
	s.stop()
}
