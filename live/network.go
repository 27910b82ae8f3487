package live

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
)

// network is where a run's connections go: the loopback interface (a run
// in real time), or pipes in memory (a virtual run, inside a synctest
// bubble, where a goroutine blocked on a socket would stop the clock).
type network interface {
	// listen starts listening at addr ("": an address of its choice).
	listen(addr string) (net.Listener, error)
	// dial connects to the listener at addr; connection refused when
	// nothing listens there.
	dial(ctx context.Context, addr string) (net.Conn, error)
}

// loopback is the machine's TCP loopback.
type loopback struct{}

func (loopback) listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	return net.Listen("tcp", addr)
}

func (loopback) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// pipeAddr is the one address of a pipe network: a host and a port, so
// that it makes a URL and a gRPC target as a loopback address does.
const pipeAddr = "live.pipe:80"

// pipes is an in-memory network with one address: a dial hands the
// listener one end of a net.Pipe and returns the other. Made inside a
// bubble, every wait on it is on the bubble's channels, so the bubble's
// clock moves on while requests wait for their tick's answer. A pipe
// takes no time: a request reaches the server at the instant it is sent.
type pipes struct {
	mu sync.Mutex
	ln *pipeListener // nil: nothing listens (connection refused)
	// refuseAt, when set, waits before a refusal until the close of the
	// tick the dial counts in (the server's awaitClose): a refusal is
	// learned at its tick's end, as sim's client learns of its
	// rejection, and as the server's 503s are answered.
	refuseAt func(ctx context.Context) (tick int)
}

type pipeListener struct {
	net   *pipes
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (p *pipes) listen(string) (net.Listener, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil, errors.New("live: " + pipeAddr + " is already listened on")
	}
	p.ln = &pipeListener{net: p, conns: make(chan net.Conn), done: make(chan struct{})}
	return p.ln, nil
}

// refused is the error a dial to a closed loopback port returns; on a
// pipe network that learned it at a tick's close, with that tick inside
// (refusedIn), for the recorder.
func refused(addr string, tick int) error {
	var err error = os.NewSyscallError("connect", syscall.ECONNREFUSED)
	if tick >= 0 {
		err = refusedIn{tick: tick, err: err}
	}
	return &net.OpError{Op: "dial", Net: "tcp", Addr: pipeNetAddr(addr), Err: err}
}

// refusedIn is a refusal learned at the close of tick: it counts there.
type refusedIn struct {
	tick int
	err  error
}

func (r refusedIn) Error() string { return r.err.Error() }
func (r refusedIn) Unwrap() error { return r.err }

func (p *pipes) dial(ctx context.Context, addr string) (net.Conn, error) {
	p.mu.Lock()
	ln := p.ln
	p.mu.Unlock()
	if ln == nil {
		tick := -1
		if p.refuseAt != nil {
			tick = p.refuseAt(ctx)
		}
		return nil, refused(addr, tick)
	}
	c, s := net.Pipe()
	select {
	case ln.conns <- s:
		return c, nil
	case <-ln.done:
		return nil, refused(addr, -1)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		if l.net.ln == l {
			l.net.ln = nil
		}
		l.net.mu.Unlock()
	})
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeNetAddr(pipeAddr) }

// pipeNetAddr is an address of the pipe network as a net.Addr.
type pipeNetAddr string

func (a pipeNetAddr) Network() string { return "pipe" }
func (a pipeNetAddr) String() string  { return string(a) }
