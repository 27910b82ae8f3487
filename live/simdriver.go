package live

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A sim:NAME client runs preset NAME as the simulator does, because the
// simulator runs it: one sim.Driven for the fleet (the preset's delays,
// retry_on, limits and client components, with the run's random stream) is
// stepped as the server closes its ticks. At the close of tick k the
// stepper hears which of the tick's requests were served, lets Driven
// apply sim's rules to the others (Answer) and opens tick k+1 (Send),
// ordering each of its clients to send a request in that tick's window (1
// ms into it, as a first request: sendAt). A client carries out its orders: it sleeps, sends its
// request over its own connection, and waits for the next order. The
// server, the sockets, the timers and the counting are the harness under
// test; where they keep time, the run replays sim's run of the seed
// exactly, and where they do not, the requests that land in another tick
// than sim's are counted (Measurement.Misplaced).
type simRun struct {
	cfg   Config
	srv   *server
	d     *sim.Driven
	sent  []int32 // the clients ordered to send in the tick in hand, index order
	hit   []bool  // per client: served in the batch being closed
	boxes []mailbox
	// closedTo is the last tick closed, -1 before the first.
	mu       sync.Mutex
	closedTo int
}

// An order is what a client of a sim:NAME fleet does next.
type order struct {
	kind orderKind
	k    int // orderSend: the tick to send in
}

type orderKind uint8

const (
	orderSend   orderKind = iota
	orderGiveUp           // the policy gave up
	orderWait             // its next request would come after the horizon
)

// errGaveUp ends a sim: client whose policy gave up.
var errGaveUp = errors.New("the policy gave up (its attempts, retry_on, a limit or a component)")

// mailbox holds a client's latest order.
type mailbox struct {
	mu     sync.Mutex
	o      order
	fresh  bool
	missed int           // send orders replaced before the client took them
	ch     chan struct{} // a new order
}

func (b *mailbox) post(o order) {
	b.mu.Lock()
	if b.fresh && b.o.kind == orderSend {
		b.missed++
	}
	b.o, b.fresh = o, true
	b.mu.Unlock()
	select {
	case b.ch <- struct{}{}:
	default:
	}
}

func (b *mailbox) take(ctx context.Context) (order, error) {
	for {
		b.mu.Lock()
		if b.fresh {
			b.fresh = false
			o := b.o
			b.mu.Unlock()
			return o, nil
		}
		b.mu.Unlock()
		select {
		case <-b.ch:
		case <-ctx.Done():
			return order{}, ctx.Err()
		}
	}
}

// newSimRun starts the fleet of cfg under p (its first sends are sim's
// draws for cfg.Seed, as Run's are) and orders the clients due at tick 0.
func newSimRun(cfg Config, srv *server, p sim.Policy) (*simRun, error) {
	d, err := sim.NewDriven(cfg.Scenario, p, cfg.Seed)
	if err != nil {
		return nil, err
	}
	n := cfg.Scenario.Clients
	r := &simRun{cfg: cfg, srv: srv, d: d, hit: make([]bool, n), boxes: make([]mailbox, n), closedTo: -1}
	for i := range r.boxes {
		r.boxes[i].ch = make(chan struct{}, 1)
	}
	r.open(0)
	return r, nil
}

// open opens tick k and orders its clients to send.
func (r *simRun) open(k int) {
	r.sent = append(r.sent[:0], r.d.Send(k)...)
	for _, i := range r.sent {
		r.boxes[i].post(order{kind: orderSend, k: k})
	}
}

// closed is the server's close of tick k (server.onClose): clients were
// counted in it and the first of them, by index, served.
func (r *simRun) closed(k int, clients []int32, served []bool) {
	for j, i := range clients {
		if served[j] && int(i) < len(r.hit) {
			r.hit[i] = true
		}
	}
	flags := make([]bool, len(r.sent))
	for j, i := range r.sent {
		flags[j] = r.hit[i]
	}
	for _, i := range clients {
		if int(i) < len(r.hit) {
			r.hit[i] = false
		}
	}
	var ra time.Duration
	if r.srv.answers(k) {
		ra = r.cfg.Scenario.RetryAfter
	}
	gave, lost := r.d.Answer(k, flags, ra)
	for _, i := range gave {
		r.boxes[i].post(order{kind: orderGiveUp})
	}
	for _, i := range lost {
		r.boxes[i].post(order{kind: orderWait})
	}
	r.mu.Lock()
	r.closedTo = k
	r.mu.Unlock()
	if k+1 < r.d.Ticks() {
		r.open(k + 1)
	}
}

// do is one client: it carries out its orders.
func (r *simRun) do(ctx context.Context, e Env) error {
	box := &r.boxes[e.Index]
	rec := e.HTTP.Transport.(*recorder)
	for {
		o, err := box.take(ctx)
		if err != nil {
			return err
		}
		switch o.kind {
		case orderGiveUp:
			return errGaveUp
		case orderWait:
			<-ctx.Done()
			return ctx.Err()
		}
		if err := e.clock.Sleep(ctx, e.Start.Add(sendAt(o.k, r.cfg.real(r.cfg.Scenario.Tick), r.cfg.Grace)).Sub(e.clock.Now())); err != nil {
			return err
		}
		rec.setAim(o.k)
		resp, err := e.Get(ctx)
		switch {
		case err == nil && resp.StatusCode == http.StatusOK:
			return nil
		case errors.Is(err, errTooMany):
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		// Rejected or refused: the next order comes with the tick's close.
	}
}

// missed is the requests sim's clients sent that the harness did not send
// in their tick: orders replaced before they were taken, and orders for a
// tick the server closed that were never taken.
func (r *simRun) missed() int {
	r.mu.Lock()
	closedTo := r.closedTo
	r.mu.Unlock()
	n := 0
	for i := range r.boxes {
		b := &r.boxes[i]
		b.mu.Lock()
		n += b.missed
		if b.fresh && b.o.kind == orderSend && b.o.k <= closedTo {
			n++
		}
		b.mu.Unlock()
	}
	return n
}
