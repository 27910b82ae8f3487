package sim

import (
	"fmt"
	"math"
	"time"
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
}

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

// MaxTicks bounds Horizon/Tick, so that a run's per-tick tables stay small.
const MaxTicks = 10_000_000

// MaxClients bounds Scenario.Clients (client indices are int32).
const MaxClients = 1 << 30

// A FieldError says which parameter is wrong and what would be accepted.
// Config loaders use Field to point at the key in the file.
type FieldError struct {
	Field string // the Go field name, e.g. "Capacity"
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v: want %s", e.Field, e.Value, e.Want)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func wholeMS(field string, d time.Duration, min time.Duration) error {
	if d < min || d%time.Millisecond != 0 {
		return &FieldError{field, d, fmt.Sprintf("a whole number of milliseconds ≥ %v", min)}
	}
	return nil
}

// Validate reports the first parameter out of range.
func (s Scenario) Validate() error {
	if s.Clients < 1 || s.Clients > MaxClients {
		return &FieldError{"Clients", s.Clients, fmt.Sprintf("a whole number in [1, %d]", MaxClients)}
	}
	if err := wholeMS("Tick", s.Tick, time.Millisecond); err != nil {
		return err
	}
	if err := wholeMS("RecoverAt", s.RecoverAt, 0); err != nil {
		return err
	}
	if math.IsNaN(s.Capacity) || math.IsInf(s.Capacity, 0) || s.budget() < 1 {
		return &FieldError{"Capacity", s.Capacity, fmt.Sprintf("a finite number of requests/s that serves at least one request per %v tick (≥ %g)", s.Tick, 1000/ms(s.Tick))}
	}
	if err := wholeMS("Spread", s.Spread, 0); err != nil {
		return err
	}
	// The horizon's errors name the window Horizon − RecoverAt (field
	// "Window"): the time clients have after recovery, which is what a
	// user sets.
	if err := wholeMS("Window", s.Horizon-s.RecoverAt, time.Millisecond); err != nil {
		return err
	}
	if s.ticks() > MaxTicks {
		return &FieldError{"Window", s.Horizon - s.RecoverAt, fmt.Sprintf("at most %d ticks of %v in all, with RecoverAt (%v)", MaxTicks, s.Tick, s.RecoverAt)}
	}
	if err := wholeMS("RetryAfter", s.RetryAfter, 0); err != nil {
		return err
	}
	if err := wholeMS("RetryAfterMax", s.RetryAfterMax, 0); err != nil {
		return err
	}
	if s.RetryAfterMax != 0 && s.RetryAfterMax <= s.RetryAfter {
		return &FieldError{"RetryAfterMax", s.RetryAfterMax, fmt.Sprintf("0 (a constant Retry-After) or more than RetryAfter (%v)", s.RetryAfter)}
	}
	if s.RetryAfterBacklog && (s.RetryAfter != 0 || s.RetryAfterMax != 0) {
		return &FieldError{"RetryAfterBacklog", true, "false when RetryAfter or RetryAfterMax is set: one Retry-After rule at a time"}
	}
	if err := wholeMS("RampUp", s.RampUp, 0); err != nil {
		return err
	}
	if !(s.RampFrom >= 0 && s.RampFrom <= 1) {
		return &FieldError{"RampFrom", s.RampFrom, "a fraction of Capacity in [0, 1]"}
	}
	if !(s.RejectCost >= 0 && s.RejectCost < 1) {
		return &FieldError{"RejectCost", s.RejectCost, "a fraction of a request's work in [0, 1)"}
	}
	return nil
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

// MemoryBytes is an upper estimate of the memory a Sim takes for one run of
// s (tested against what it holds after runs), with the per-tick timeline
// when timeline is set: 40 bytes per client (its state, the calendar's
// entries with the slack of growing slices, the sort and fleet tables), 32
// per tick, 160 per tick that can hold a client, up to 16 MiB for a dense
// calendar, and 96 per tick of timeline (the Timeline and its rows in the
// dataset). Callers compare it with a memory budget before running.
func (s Scenario) MemoryBytes(timeline bool) int64 {
	clients, ticks := int64(max(s.Clients, 0)), int64(max(s.ticks(), 0))
	b := 40*clients + 32*ticks + 160*min(ticks, clients) + denseLimit
	if timeline {
		b += 96 * ticks
	}
	return b
}
