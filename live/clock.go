package live

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"
)

// Clock is the time a run keeps: where it reads the time and how it waits,
// for the server's ticks, the first sends, the recorder and a scalable
// driver's clock (Env). Config.Clock nil is the system clock. A test hands
// a run a clock whose waits end late, to see what a busy machine does to a
// verdict without loading the machine. The libraries keep their own time.
type Clock interface {
	Now() time.Time
	// Sleep waits d (none for d ≤ 0), or until ctx is done (with its
	// error).
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the system's clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }

// Machine is what the machine's clock and loopback do, measured before a
// run: the honest limits of its numbers.
type Machine struct {
	// TimerLate: how late a 10 ms timer fires (median, 90th and 99th
	// percentiles and worst of the samples).
	TimerLateP50 time.Duration `json:"timer_late_p50_ns"`
	TimerLateP90 time.Duration `json:"timer_late_p90_ns"`
	TimerLateP99 time.Duration `json:"timer_late_p99_ns"`
	TimerLateMax time.Duration `json:"timer_late_max_ns"`
	// RTT: one GET to a loopback server and its answer, on a kept-alive
	// connection.
	RTTP50  time.Duration `json:"rtt_p50_ns"`
	RTTP99  time.Duration `json:"rtt_p99_ns"`
	Samples int           `json:"samples"`
}

// MaxTimerShare is the largest lateness a live run accepts, as a share of
// its tick: of a 10 ms timer before the run, at the 90th percentile (one
// timer in ten is later; Machine.Check), and of the server's tick closes
// in a library's run, at the 99th percentile (Measurement.Degraded).
const MaxTimerShare = 0.1

// Check refuses a tick the timer cannot keep: a 90th-percentile lateness
// above MaxTimerShare of the tick.
func (m Machine) Check(tick time.Duration) error {
	if float64(m.TimerLateP90) > MaxTimerShare*float64(tick) {
		return fmt.Errorf("one timer in ten fires %v late or later (of %d), more than %.0f %% of the %v tick: use a tick of at least %v, or run on a quieter machine",
			m.TimerLateP90.Round(time.Microsecond), m.Samples, 100*MaxTimerShare, tick, time.Duration(float64(m.TimerLateP90)/MaxTimerShare).Round(time.Millisecond))
	}
	return nil
}

// Measure samples n timers of 10 ms and n loopback round trips.
func Measure(ctx context.Context, n int) (Machine, error) {
	late := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return Machine{}, err
		}
		late = append(late, time.Since(t0)-10*time.Millisecond)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Machine{}, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	rtt := make([]time.Duration, 0, n)
	for i := range n + 1 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
		t0 := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return Machine{}, fmt.Errorf("loopback round trip: %w", err)
		}
		resp.Body.Close()
		if i > 0 { // the first one opens the connection
			rtt = append(rtt, time.Since(t0))
		}
	}
	slices.Sort(late)
	slices.Sort(rtt)
	q := func(xs []time.Duration, p float64) time.Duration { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	return Machine{TimerLateP50: q(late, 0.5), TimerLateP90: q(late, 0.9), TimerLateP99: q(late, 0.99), TimerLateMax: late[len(late)-1],
		RTTP50: q(rtt, 0.5), RTTP99: q(rtt, 0.99), Samples: n}, nil
}
