package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Env is what a driver gets for one client: its index, the URL to call,
// and its own http.Client, which records every attempt.
type Env struct {
	Index int
	URL   string
	Addr  string // host:port of the server
	HTTP  *http.Client
	// Scale: the scenario runs this many times faster than real time
	// (1: real time); only Scalable drivers see more than 1. Start is the
	// run's start, the zero of the scaled clock.
	Scale float64
	Start time.Time
	clock Clock // the run's
	// dial connects to Addr on the run's network; nil: the loopback, as
	// a library dials by itself.
	dial func(ctx context.Context, addr string) (net.Conn, error)
}

// Now is the scaled clock: Start plus the real time since, times Scale.
func (e Env) Now() time.Time {
	return e.Start.Add(time.Duration(float64(e.clock.Now().Sub(e.Start)) * e.Scale))
}

// Sleep waits d of scaled time.
func (e Env) Sleep(ctx context.Context, d time.Duration) error {
	return e.clock.Sleep(ctx, time.Duration(float64(d)/e.Scale))
}

// Get sends one attempt: a GET of e.URL that names the client. It returns
// the response (body closed) or the transport's error.
func (e Env) Get(ctx context.Context) (*http.Response, error) {
	req, err := e.Request(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// Request builds the GET a driver sends.
func (e Env) Request(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(clientHeader, strconv.Itoa(e.Index))
	return req, nil
}

// attempt is one request as the client saw it.
type attempt struct {
	at     time.Duration // since the start
	tick   int           // the tick it was counted in (computed for refused ones)
	done   int           // the tick it was answered in: tick, or later on a queueing server
	status int           // 0: no response (connection refused)
	// aim is the tick sim gives the request, when the harness placed it
	// (a client's first request; every request of a sim: client); -1 when
	// its library placed it.
	aim int
}

// recorder is a client's RoundTripper: it records each attempt and bounds
// their number.
type recorder struct {
	mu    sync.Mutex
	next  http.RoundTripper
	clock Clock
	start time.Time
	tick  time.Duration
	grace time.Duration
	max   int
	aim   int // the next attempt's aim (attempt.aim); -1: none
	// timeout, when set, is how long the client waits for an answer from
	// the close of the tick its request is counted in (a queueing
	// server's Timeout, as sim counts it); then the request fails.
	timeout  time.Duration
	attempts []attempt
}

// setAim says that the client's next request is meant for tick k.
func (r *recorder) setAim(k int) {
	r.mu.Lock()
	r.aim = k
	r.mu.Unlock()
}

// errTooMany stops a client that reached the attempt limit of a run.
var errTooMany = errors.New("live: attempt limit of the run reached")

// add records a, with the aim set for it.
func (r *recorder) add(a attempt) {
	r.mu.Lock()
	a.aim, r.aim = r.aim, -1
	r.attempts = append(r.attempts, a)
	r.mu.Unlock()
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	n := len(r.attempts)
	r.mu.Unlock()
	if n >= r.max {
		return nil, errTooMany
	}
	at := r.clock.Now().Sub(r.start)
	if r.timeout > 0 {
		deadline := r.start.Add(time.Duration(tickOf(at, r.tick, r.grace))*r.tick + r.timeout)
		ctx, cancel := context.WithDeadline(req.Context(), deadline)
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := r.next.RoundTrip(req)
	a := attempt{at: at, tick: tickOf(at, r.tick, r.grace)}
	if ri := (refusedIn{}); errors.As(err, &ri) { // refused at a tick's close (a virtual run)
		a.tick = ri.tick
	}
	if err == nil {
		a.status = resp.StatusCode
		if k, perr := strconv.Atoi(resp.Header.Get(tickHeader)); perr == nil {
			a.tick = k
		}
	}
	a.done = a.tick
	if err == nil {
		if k, perr := strconv.Atoi(resp.Header.Get(doneHeader)); perr == nil {
			a.done = k
		}
	}
	r.add(a)
	return resp, err
}

// tickOf is the tick the server counts a request sent at t in: the first k
// with t ≤ k·tick + grace.
func tickOf(t, tick, grace time.Duration) int {
	if t <= grace {
		return 0
	}
	return int((t - grace + tick - 1) / tick)
}

// newHTTPClient returns a client with its own connection pool (one
// connection: a client sends one request at a time), dialling through dial
// when it is not nil.
func newHTTPClient(rec *recorder, dial func(ctx context.Context, addr string) (net.Conn, error)) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback only, whatever the environment says
	tr.MaxIdleConnsPerHost = 1
	tr.MaxConnsPerHost = 1
	if dial != nil {
		tr.DialContext = func(ctx context.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr) }
	}
	rec.next = tr
	return &http.Client{Transport: rec, Timeout: 5 * time.Minute}
}

// statusError is a rejection as an error, for the libraries that retry on
// errors (cenkalti, the AWS retryer, our loop). HTTPStatusCode is the
// method aws-sdk-go-v2's retryer looks for.
type statusError struct {
	code       int
	retryAfter string
	// amzRetryAfter is the X-Amz-Retry-After header (milliseconds), which
	// the AWS SDK's retry middleware reads instead of Retry-After.
	amzRetryAfter string
}

func (e *statusError) Error() string       { return fmt.Sprintf("HTTP %d", e.code) }
func (e *statusError) HTTPStatusCode() int { return e.code }

// getOnce is one attempt with the outcome as an error: nil for a 200.
func getOnce(ctx context.Context, e Env) error {
	resp, err := e.Get(ctx)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), amzRetryAfter: resp.Header.Get(amzRetryAfterHeader)}
	}
	return nil
}
