package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Scenario is the world a run takes place in: how many clients failed, when
// the server recovers and how much it then serves.
//
// Every duration must be a whole number of milliseconds: the simulator keeps
// time in float64 milliseconds, as herd.mjs does, so that tick times are exact.
type Scenario struct {
	Clients   int           // clients that failed during the outage, ≥ 1
	Tick      time.Duration // simulation step, ≥ 1 ms
	RecoverAt time.Duration // the server serves nothing before this time, ≥ 0
	Capacity  float64       // requests/s served after recovery; budget per tick is floor(Capacity × Tick)
	Spread    time.Duration // each client first sends at U(0, Spread), ≥ 0
	Horizon   time.Duration // the run stops at this time, > RecoverAt

	// RetryAfter is the Retry-After the server sends with every rejection
	// (503 while down, 429 after); 0 means it sends none.
	RetryAfter time.Duration

	// A server that does more than count; each off at zero.

	// RetryAfterMax > RetryAfter: each response's Retry-After is drawn
	// from U(RetryAfter, RetryAfterMax), before the client's own draw.
	RetryAfterMax time.Duration
	// RetryAfterBacklog: the Retry-After is the backlog (clients not yet
	// served) over the capacity, in whole seconds.
	RetryAfterBacklog bool
	// RampUp: after recovery the capacity grows linearly from
	// RampFrom × Capacity to Capacity over this long (cold caches).
	RampUp   time.Duration
	RampFrom float64
	// RejectCost: each rejection consumes this fraction of a served
	// request's work, so that a large enough herd keeps the server from
	// serving anyone (the metastable failure). In [0, 1).
	RejectCost float64

	// A queueing server instead of the counting one: on when Concurrency
	// > 0 (see queue.go). RampUp, RejectCost and RetryAfterBacklog belong
	// to the counting server and must then be zero. A queueing server
	// does not read Capacity (its capacity is Concurrency over the mean
	// service time): it is held only to a number ≥ 0, not to the tick
	// (validateCapacity).

	// Concurrency: requests in service at once; 0 = the counting server.
	Concurrency int
	// Service: the service time's distribution, one of ServiceKinds.
	Service string
	// ServiceTime: the mean service time (fixed, exponential) or its
	// median (lognormal), ≥ 1 ms.
	ServiceTime time.Duration
	// ServiceP99: lognormal only, its 99th percentile, > ServiceTime.
	ServiceP99 time.Duration
	// QueueLimit: the most requests waiting for a worker; one more is
	// rejected. 0 = no limit.
	QueueLimit int
	// QueueWait: a request that would wait longer than this is rejected.
	// 0 = no limit.
	QueueWait time.Duration
	// ShedTarget: CoDel-style load shedding. While the queue's delay has
	// stayed above this for ShedInterval, arrivals are rejected. 0 = none.
	ShedTarget time.Duration
	// Timeout: a client stops waiting for an answer after this long, counts
	// the request failed and retries by its policy, while the server still
	// serves it (wasted work). 0 = clients wait for ever.
	Timeout time.Duration
	// ArrivalRate: open-loop traffic, new requests/s arriving as a Poisson
	// process from time 0 to the horizon, before, during and after the
	// outage, each with its own retry state. 0 = only the failed cohort.
	ArrivalRate float64
	// ArrivalCurve: open-loop traffic whose rate follows a daily curve:
	// n multipliers separated by spaces or commas, one per n-th of a day
	// (24: hourly), the rate at clock time h of day being ArrivalRate ×
	// the multiplier of h's slot (a non-homogeneous Poisson process,
	// piecewise constant). "" = a constant ArrivalRate.
	ArrivalCurve string
	// ArrivalClock: the time of day at time 0, for ArrivalCurve; in
	// [0, 24h).
	ArrivalClock time.Duration
	// OutageStart: a queueing server is up from 0 to this time, then down
	// until RecoverAt; the cohort first sends at OutageStart + U(0,
	// Spread). Before it the open-loop traffic reaches steady state.
	// 0 = down from the start, as the counting server always is.
	OutageStart time.Duration

	// Limiter: an adaptive concurrency limit in front of a queueing
	// server (limiter.go), one of Limiters; "" = none. A request arriving
	// when as many are in flight as the limit is rejected at once (429).
	Limiter string
	// LimitInitial, LimitMin, LimitMax: the limiter's limit at the start
	// and its bounds; 0 = the defaults, 20, 20 and 200.
	LimitInitial, LimitMin, LimitMax int
	// LimitBackoff: "aimd" only, the ratio the limit is multiplied by on
	// a drop or a slow answer, in [0.5, 1); 0 = 0.9.
	LimitBackoff float64
	// LimitTimeout: "aimd" only, an answer slower than this backs the
	// limit off; 0 = 5 s.
	LimitTimeout time.Duration
	// LimitSmoothing: "gradient2" only, in (0, 1]; 0 = 0.2.
	LimitSmoothing float64
	// QueueOrder: the order a queueing server serves its waiting requests
	// in, one of QueueOrders: "" first come, first served, or "lifo" the
	// newest first (lifo.go).
	QueueOrder string

	// A brownout (brownout.go), on both servers; each off at zero.

	// FailShare: the share of the requests the server serves that it
	// answers with an error (a 503) whatever the load, in [0, 1], while it
	// is up: the whole run when RecoverAt is 0, else after recovery (and,
	// on a queueing server, before OutageStart). 0 = none, and no draw.
	FailShare float64
	// FailCurve: FailShare varying over the run: n multipliers separated
	// by spaces or commas, one per n-th of the horizon (from 0 to
	// Horizon), the share at time t being FailShare × the multiplier of
	// t's slot, at most 1. "" = a constant FailShare. With FailShare 0
	// nothing fails, whatever the curve (a sweep's axis may hold 0).
	FailCurve string
	// AddedLatency: a queueing server answers each request this much
	// later than its service ends, without holding its worker (a slow hop
	// after it; a dependency that holds the worker is a longer
	// ServiceTime). The counting server answers within the tick: 0 there.
	AddedLatency time.Duration
}

// ServiceKinds are the service time distributions of a queueing server.
var ServiceKinds = []string{"fixed", "exponential", "lognormal"}

// ShedInterval is how long the queue's delay must stay above ShedTarget
// before the server sheds load (CoDel's interval).
const ShedInterval = 100 * time.Millisecond

// MaxConcurrency bounds Scenario.Concurrency.
const MaxConcurrency = 1 << 20

// MaxQueueLimit bounds Scenario.QueueLimit (8 bytes a waiting request).
const MaxQueueLimit = 1 << 24

// MaxOffered bounds the open-loop requests of a run: ArrivalRate × Horizon.
const MaxOffered = 20_000_000

// plain reports whether the scenario is the article's kind of server.
func (s Scenario) plain() bool {
	return s.RetryAfterMax == 0 && !s.RetryAfterBacklog && s.RampUp == 0 && s.RejectCost == 0
}

// Article returns the scenario shared by all of the article's tables: 2,000
// clients, 100 ms ticks, recovery at 30 s with 120 requests/s, a 2 s initial
// spread, a 20 min horizon and no Retry-After.
func Article() Scenario {
	return Scenario{
		Clients:   2000,
		Tick:      100 * time.Millisecond,
		RecoverAt: 30 * time.Second,
		Capacity:  120,
		Spread:    2 * time.Second,
		Horizon:   20 * time.Minute,
	}
}

// ServerKind says which server a scenario has.
type ServerKind uint8

// The servers.
const (
	// CountingServer is the article's: it serves floor(Capacity × Tick)
	// requests a tick after recovery and rejects the rest at once.
	CountingServer ServerKind = iota
	// QueueingServer has Concurrency workers and a queue (queue.go).
	QueueingServer
)

func (k ServerKind) String() string { return [...]string{"counting", "queueing"}[k] }

// Server says which server the scenario has: a queueing server when it
// sets workers (Concurrency), else the counting server. Everything that
// asks which server a scenario has asks this.
func (s Scenario) Server() ServerKind {
	if s.Concurrency > 0 {
		return QueueingServer
	}
	return CountingServer
}

// MaxTicks bounds Horizon/Tick, so that a run's per-tick tables stay small.
const MaxTicks = 10_000_000

// MaxClients bounds Scenario.Clients (client indices are int32).
const MaxClients = 1 << 30

// A FieldError says which parameter is wrong and what would be accepted.
// Config loaders use Field to point at the key in the file.
type FieldError struct {
	Field Field // the Go field name, e.g. FieldCapacity
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v: want %s", e.Field, e.Value, e.Want)
}

// FieldErrors returns the FieldErrors in err, which may join or wrap
// several, in order.
func FieldErrors(err error) []*FieldError {
	if fe, ok := err.(*FieldError); ok {
		return []*FieldError{fe}
	}
	var out []*FieldError
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, FieldErrors(e)...)
		}
	case interface{ Unwrap() error }:
		out = FieldErrors(u.Unwrap())
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func wholeMS(field Field, d time.Duration, min time.Duration) error {
	if d < min || d%time.Millisecond != 0 {
		return &FieldError{field, d, fmt.Sprintf("a whole number of milliseconds ≥ %v", min)}
	}
	return nil
}

// Validate reports the first parameter out of range.
func (s Scenario) Validate() error {
	if s.Clients < 1 || s.Clients > MaxClients {
		return &FieldError{FieldClients, s.Clients, fmt.Sprintf("a whole number in [1, %d]", MaxClients)}
	}
	if err := wholeMS(FieldTick, s.Tick, time.Millisecond); err != nil {
		return err
	}
	if err := wholeMS(FieldRecoverAt, s.RecoverAt, 0); err != nil {
		return err
	}
	if err := s.validateCapacity(); err != nil {
		return err
	}
	if err := wholeMS(FieldSpread, s.Spread, 0); err != nil {
		return err
	}
	// The horizon's errors name the window Horizon − RecoverAt (field
	// "Window"): the time clients have after recovery, which is what a
	// user sets.
	if err := wholeMS(FieldWindow, s.Horizon-s.RecoverAt, time.Millisecond); err != nil {
		return err
	}
	if s.ticks() > MaxTicks {
		return &FieldError{FieldWindow, s.Horizon - s.RecoverAt, fmt.Sprintf("at most %d ticks of %v in all, with RecoverAt (%v)", MaxTicks, s.Tick, s.RecoverAt)}
	}
	if err := wholeMS(FieldRetryAfter, s.RetryAfter, 0); err != nil {
		return err
	}
	if err := wholeMS(FieldRetryAfterMax, s.RetryAfterMax, 0); err != nil {
		return err
	}
	if s.RetryAfterMax != 0 && s.RetryAfterMax <= s.RetryAfter {
		return &FieldError{FieldRetryAfterMax, s.RetryAfterMax, fmt.Sprintf("0 (a constant Retry-After) or more than RetryAfter (%v)", s.RetryAfter)}
	}
	if s.RetryAfterBacklog && (s.RetryAfter != 0 || s.RetryAfterMax != 0) {
		return &FieldError{FieldRetryAfterBacklog, true, "false when RetryAfter or RetryAfterMax is set: one Retry-After rule at a time"}
	}
	if err := wholeMS(FieldRampUp, s.RampUp, 0); err != nil {
		return err
	}
	if !(s.RampFrom >= 0 && s.RampFrom <= 1) {
		return &FieldError{FieldRampFrom, s.RampFrom, "a fraction of Capacity in [0, 1]"}
	}
	if !(s.RejectCost >= 0 && s.RejectCost < 1) {
		return &FieldError{FieldRejectCost, s.RejectCost, "a fraction of a request's work in [0, 1)"}
	}
	if err := s.validateQueue(); err != nil {
		return err
	}
	return s.validateBrownout()
}

// validateCapacity checks Capacity as the server reads it. The counting
// server serves floor(Capacity × Tick) requests a tick: at least one. A
// queueing server does not read it (its capacity is Concurrency over the
// mean service time), so the tick does not bound it there; but a value
// that is no number of requests/s (NaN, infinite, negative) is nonsense
// whichever server runs, and is refused rather than kept in a cell's key.
func (s Scenario) validateCapacity() error {
	if math.IsNaN(s.Capacity) || math.IsInf(s.Capacity, 0) {
		return &FieldError{FieldCapacity, s.Capacity, "a finite number of requests/s"}
	}
	if s.Server() == QueueingServer {
		if s.Capacity < 0 {
			return &FieldError{FieldCapacity, s.Capacity, "a number of requests/s ≥ 0; a queueing server (Concurrency > 0) does not read it: its capacity is Concurrency over the mean ServiceTime"}
		}
		return nil
	}
	if s.budget() < 1 {
		return &FieldError{FieldCapacity, s.Capacity, fmt.Sprintf("a finite number of requests/s that serves at least one request per %v tick (≥ %g)", s.Tick, 1000/ms(s.Tick))}
	}
	return nil
}

// validateQueue checks the queueing server's and the open loop's fields:
// the number of workers, then, for the counting server, that it sets none
// of the queueing server's keys, and for a queueing server each group of
// its keys in turn. It reports the first fault.
func (s Scenario) validateQueue() error {
	if s.Concurrency < 0 || s.Concurrency > MaxConcurrency {
		return &FieldError{FieldConcurrency, s.Concurrency, fmt.Sprintf("a whole number in [0, %d]; 0 = the counting server", MaxConcurrency)}
	}
	if s.Server() == CountingServer {
		if err := s.validateCountingHasNoQueue(); err != nil {
			return err
		}
		if s.Limiter != "" {
			return &FieldError{FieldLimiter, s.Limiter, `"" unless Concurrency > 0: only a queueing server has a limiter`}
		}
		if s.QueueOrder != "" {
			return &FieldError{FieldQueueOrder, s.QueueOrder, `"" unless Concurrency > 0: only a queueing server has a queue`}
		}
		return s.validateNoLimiter()
	}
	for _, check := range []func() error{s.validateQueueingHasNoCounting, s.validateService, s.validateQueueLimits, s.validateOpenLoop, s.validateLimiter} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateCountingHasNoQueue checks that a counting server sets none of
// the queueing server's keys, nor open-loop traffic, in field order.
func (s Scenario) validateCountingHasNoQueue() error {
	const want = "0 unless Concurrency > 0: only a queueing server has it"
	switch {
	case s.Service != "":
		return &FieldError{FieldService, s.Service, `"" unless Concurrency > 0: only a queueing server has it`}
	case s.ServiceTime != 0:
		return &FieldError{FieldServiceTime, s.ServiceTime, want}
	case s.ServiceP99 != 0:
		return &FieldError{FieldServiceP99, s.ServiceP99, want}
	case s.QueueLimit != 0:
		return &FieldError{FieldQueueLimit, s.QueueLimit, want}
	case s.QueueWait != 0:
		return &FieldError{FieldQueueWait, s.QueueWait, want}
	case s.ShedTarget != 0:
		return &FieldError{FieldShedTarget, s.ShedTarget, want}
	case s.Timeout != 0:
		return &FieldError{FieldTimeout, s.Timeout, "0 unless Concurrency > 0: the counting server answers at once"}
	case s.ArrivalRate != 0:
		return &FieldError{FieldArrivalRate, s.ArrivalRate, "0 unless Concurrency > 0: open-loop traffic needs a queueing server"}
	case s.ArrivalCurve != "":
		return &FieldError{FieldArrivalCurve, s.ArrivalCurve, `"" unless Concurrency > 0: open-loop traffic needs a queueing server`}
	case s.ArrivalClock != 0:
		return &FieldError{FieldArrivalClock, s.ArrivalClock, "0 unless Concurrency > 0: open-loop traffic needs a queueing server"}
	case s.OutageStart != 0:
		return &FieldError{FieldOutageStart, s.OutageStart, "0 unless Concurrency > 0: the counting server is down from the start"}
	}
	return nil
}

// validateQueueingHasNoCounting checks that a queueing server sets none of
// the keys that belong to the counting server.
func (s Scenario) validateQueueingHasNoCounting() error {
	const counting = "0 with a queueing server (Concurrency > 0): it belongs to the counting server"
	switch {
	case s.RampUp != 0:
		return &FieldError{FieldRampUp, s.RampUp, counting}
	case s.RejectCost != 0:
		return &FieldError{FieldRejectCost, s.RejectCost, counting}
	case s.RetryAfterBacklog:
		return &FieldError{FieldRetryAfterBacklog, true, "false with a queueing server (Concurrency > 0): it belongs to the counting server"}
	}
	return nil
}

// validateService checks a queueing server's service time: its
// distribution, its mean (or median), and its 99th percentile, which only
// the lognormal has.
func (s Scenario) validateService() error {
	if s.Service == "" {
		return &FieldError{FieldService, s.Service, "one of " + strings.Join(ServiceKinds, ", ") + ": a queueing server (Concurrency > 0) needs its service time distribution"}
	}
	if serviceKind(s.Service) < 0 {
		return &FieldError{FieldService, s.Service, "one of " + strings.Join(ServiceKinds, ", ")}
	}
	if err := wholeMS(FieldServiceTime, s.ServiceTime, time.Millisecond); err != nil {
		return err
	}
	if s.Service != "lognormal" {
		if s.ServiceP99 != 0 {
			return &FieldError{FieldServiceP99, s.ServiceP99, "0 unless Service is lognormal"}
		}
		return nil
	}
	if err := wholeMS(FieldServiceP99, s.ServiceP99, 0); err != nil {
		return err
	}
	if s.ServiceP99 <= s.ServiceTime {
		return &FieldError{FieldServiceP99, s.ServiceP99, fmt.Sprintf("more than the median ServiceTime (%v)", s.ServiceTime)}
	}
	return nil
}

// validateQueueLimits checks what bounds a queueing server's queue and a
// request's wait (the queue's length and wait, load shedding, the
// clients' timeout), and when its outage starts.
func (s Scenario) validateQueueLimits() error {
	if s.QueueLimit < 0 || s.QueueLimit > MaxQueueLimit {
		return &FieldError{FieldQueueLimit, s.QueueLimit, fmt.Sprintf("a whole number in [0, %d]; 0 = no limit", MaxQueueLimit)}
	}
	for _, f := range []struct {
		name Field
		d    time.Duration
	}{{FieldQueueWait, s.QueueWait}, {FieldShedTarget, s.ShedTarget}, {FieldTimeout, s.Timeout}, {FieldOutageStart, s.OutageStart}} {
		if err := wholeMS(f.name, f.d, 0); err != nil {
			return err
		}
	}
	if s.OutageStart > 0 && s.OutageStart >= s.RecoverAt {
		return &FieldError{FieldOutageStart, s.OutageStart, fmt.Sprintf("before RecoverAt (%v), or 0", s.RecoverAt)}
	}
	return nil
}

// validateOpenLoop checks a queueing server's open-loop traffic: its rate,
// then its daily curve and the clock that places the curve in the day.
func (s Scenario) validateOpenLoop() error {
	if !(s.ArrivalRate >= 0) || s.ArrivalRate*s.Horizon.Seconds() > MaxOffered {
		return &FieldError{FieldArrivalRate, s.ArrivalRate, fmt.Sprintf("requests/s ≥ 0 with at most %d over the run (%v)", MaxOffered, s.Horizon)}
	}
	if s.ArrivalCurve == "" {
		if s.ArrivalClock != 0 {
			return &FieldError{FieldArrivalClock, s.ArrivalClock, "0 without an ArrivalCurve: it places the curve in the day"}
		}
		return nil
	}
	if s.ArrivalRate == 0 {
		return &FieldError{FieldArrivalCurve, s.ArrivalCurve, `"" without open-loop traffic (ArrivalRate > 0): it shapes that traffic`}
	}
	c, err := ParseCurve(s.ArrivalCurve)
	if err != nil {
		return &FieldError{FieldArrivalCurve, s.ArrivalCurve, err.Error()}
	}
	if peak := slices.Max(c); s.ArrivalRate*peak*s.Horizon.Seconds() > MaxOffered {
		return &FieldError{FieldArrivalCurve, s.ArrivalCurve, fmt.Sprintf("a peak multiplier (now %g) with ArrivalRate × peak at most %d requests over the run (%v)", peak, MaxOffered, s.Horizon)}
	}
	if s.ArrivalClock < 0 || s.ArrivalClock >= Day || s.ArrivalClock%time.Millisecond != 0 {
		return &FieldError{FieldArrivalClock, s.ArrivalClock, "the time of day at time 0: in [0, 24h) (0 to 86399.999 s), whole milliseconds"}
	}
	return nil
}

// Day is the period of Scenario.ArrivalCurve.
const Day = 24 * time.Hour

// MaxCurve bounds the multipliers of Scenario.ArrivalCurve (one a minute).
const MaxCurve = 1440

// ParseCurve reads Scenario.ArrivalCurve: 1 to MaxCurve finite multipliers
// ≥ 0, separated by spaces or commas, at least one of them > 0.
func ParseCurve(text string) ([]float64, error) {
	return parseMultipliers(text, "the rate, one per equal slot of a day (24: hourly)")
}

// parseMultipliers reads a curve of multipliers of what (ParseCurve).
func parseMultipliers(text, what string) ([]float64, error) {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(fields) == 0 || len(fields) > MaxCurve {
		return nil, fmt.Errorf("1 to %d multipliers of %s, separated by spaces or commas; got %d", MaxCurve, what, len(fields))
	}
	// "1,,2" or ",1" most likely lost a multiplier: refused, not read as
	// fewer slots (which would stretch every slot after it); one trailing
	// comma is allowed.
	parts := strings.Split(text, ",")
	for i, p := range parts[:len(parts)-1] {
		switch {
		case strings.TrimSpace(p) != "":
		case i == 0:
			return nil, fmt.Errorf("multipliers ≥ 0 separated by spaces or commas; none before the first comma")
		default:
			return nil, fmt.Errorf("multipliers ≥ 0 separated by spaces or commas; none between commas %d and %d", i, i+1)
		}
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("multipliers ≥ 0 separated by spaces or commas; %q (number %d) is not one", f, i+1)
		}
		out[i] = v
	}
	if slices.Max(out) == 0 {
		return nil, fmt.Errorf("some multiplier > 0: an all-zero curve sends nothing")
	}
	return out, nil
}

// serviceKind is the index of name in ServiceKinds, or -1.
func serviceKind(name string) int {
	for i, k := range ServiceKinds {
		if k == name {
			return i
		}
	}
	return -1
}

// budget is the number of requests served per tick after recovery, computed
// as herd.mjs does (CAPACITY_PER_SEC * TICK / 1000, then whole requests).
func (s Scenario) budget() int {
	b := s.Capacity * ms(s.Tick) / 1000
	if !(b >= 1) {
		return 0
	}
	if b > MaxClients {
		return MaxClients
	}
	return int(math.Floor(b))
}

// ticks is the number of ticks t = k·Tick with t < Horizon.
func (s Scenario) ticks() int {
	return int((s.Horizon + s.Tick - 1) / s.Tick)
}

// ArrivalRates are the lowest and highest rate (requests/s) of the
// open-loop traffic during the run, from 0 to Horizon: ArrivalRate both,
// without a curve; with one, ArrivalRate times the least and greatest
// multiplier of the slots the run's clock times fall in.
func (s Scenario) ArrivalRates() (lo, hi float64) {
	c, err := ParseCurve(s.ArrivalCurve)
	if s.ArrivalCurve == "" || err != nil {
		return s.ArrivalRate, s.ArrivalRate
	}
	slot := Day / time.Duration(len(c))
	lo, hi = math.Inf(1), math.Inf(-1)
	for t := s.ArrivalClock; t < s.ArrivalClock+s.Horizon; t = (t/slot + 1) * slot {
		m := c[int(t%Day/slot)%len(c)]
		lo, hi = min(lo, m), max(hi, m)
		if t-s.ArrivalClock >= Day { // every slot seen
			break
		}
	}
	return s.ArrivalRate * lo, s.ArrivalRate * hi
}

// curvePeak is ArrivalCurve's largest multiplier: 1 without a curve (or
// with one that does not parse).
func (s Scenario) curvePeak() float64 {
	if c, err := ParseCurve(s.ArrivalCurve); s.ArrivalCurve != "" && err == nil {
		return slices.Max(c)
	}
	return 1
}
