package experiments

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// Cell is one point of a grid: a scenario and the policy every client runs.
type Cell struct {
	Scenario sim.Scenario
	Policy   sim.Policy
}

// Type is the type of a parameter's values.
type Type uint8

// Parameter types.
const (
	Int Type = iota
	Float
	String
	Bool
)

func (t Type) String() string {
	return [...]string{"a whole number", "a number", "a string", "true or false"}[t]
}

// Param is one parameter of a cell. Its Key is both the config key in
// sweeps.toml and the column name in the dataset; units are in the name.
type Param struct {
	Key   string
	Type  Type
	Doc   string
	Field string // the sim field it sets, as sim's errors name it
	// Policy is true for the policy's parameters, false for the scenario's.
	Policy bool

	// Min and Max bound a numeric value whatever the family (NaN: none).
	Min, Max float64

	get func(c *Cell) any
	set func(c *Cell, v any)
}

// Get returns the parameter's value in c: int64, float64, string or bool.
func (p *Param) Get(c Cell) any { return p.get(&c) }

func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts seconds to a whole number of milliseconds; ok is false
// when v is not one.
func duration(v float64) (time.Duration, bool) {
	msf := v * 1000
	r := math.Round(msf)
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(msf-r) > 1e-6 || math.Abs(r) > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, false
	}
	return time.Duration(r) * time.Millisecond, true
}

func durParam(key, field, doc string, policy bool, ptr func(c *Cell) *time.Duration) Param {
	return Param{Key: key, Type: Float, Field: field, Doc: doc, Policy: policy,
		get: func(c *Cell) any { return seconds(*ptr(c)) },
		set: func(c *Cell, v any) { d, _ := duration(v.(float64)); *ptr(c) = d },
	}
}

// Params lists every parameter, in the order of the dataset's columns.
var Params = []Param{
	{Key: "policy", Type: String, Field: "Kind", Policy: true, Doc: "policy family (see `sweep policies`)",
		get: func(c *Cell) any { return string(c.Policy.Kind) },
		set: func(c *Cell, v any) { c.Policy = sim.DefaultPolicy(sim.Kind(v.(string))) }},
	durParam("base_s", "Base", "base delay, s", true, func(c *Cell) *time.Duration { return &c.Policy.Base }),
	durParam("cap_s", "Cap", "longest computed delay, s; 0 = no cap", true, func(c *Cell) *time.Duration { return &c.Policy.Cap }),
	{Key: "multiplier", Type: Float, Field: "Multiplier", Policy: true, Doc: "growth per rejection",
		get: func(c *Cell) any { return c.Policy.Multiplier },
		set: func(c *Cell, v any) { c.Policy.Multiplier = v.(float64) }},
	{Key: "width", Type: Float, Field: "Width", Policy: true, Doc: "jitter width, fraction of the delay",
		get: func(c *Cell) any { return c.Policy.Width },
		set: func(c *Cell, v any) { c.Policy.Width = v.(float64) }},
	{Key: "max_attempts", Type: Int, Field: "MaxAttempts", Policy: true, Doc: "requests per client before it gives up; 0 = unlimited",
		get: func(c *Cell) any { return int64(c.Policy.MaxAttempts) },
		set: func(c *Cell, v any) { c.Policy.MaxAttempts = int(v.(int64)) }},
	{Key: "honor_retry_after", Type: Bool, Field: "HonorRetryAfter", Policy: true, Doc: "http-retry waits the server's Retry-After",
		get: func(c *Cell) any { return c.Policy.HonorRetryAfter },
		set: func(c *Cell, v any) { c.Policy.HonorRetryAfter = v.(bool) }},
	{Key: "clients", Type: Int, Field: "Clients", Doc: "clients that failed during the outage",
		get: func(c *Cell) any { return int64(c.Scenario.Clients) },
		set: func(c *Cell, v any) { c.Scenario.Clients = int(v.(int64)) }},
	{Key: "tick_ms", Type: Int, Field: "Tick", Doc: "simulation step, ms",
		get: func(c *Cell) any { return c.Scenario.Tick.Milliseconds() },
		set: func(c *Cell, v any) { c.Scenario.Tick = time.Duration(v.(int64)) * time.Millisecond }},
	durParam("recover_s", "RecoverAt", "outage length: the server recovers at this time, s", false, func(c *Cell) *time.Duration { return &c.Scenario.RecoverAt }),
	{Key: "capacity_rps", Type: Float, Field: "Capacity", Doc: "requests/s served after recovery",
		get: func(c *Cell) any { return c.Scenario.Capacity },
		set: func(c *Cell, v any) { c.Scenario.Capacity = v.(float64) }},
	durParam("spread_s", "Spread", "clients first send at U(0, spread), s", false, func(c *Cell) *time.Duration { return &c.Scenario.Spread }),
	durParam("horizon_s", "Horizon", "the run stops at this time, s", false, func(c *Cell) *time.Duration { return &c.Scenario.Horizon }),
	durParam("retry_after_s", "RetryAfter", "Retry-After the server sends, s; 0 = none", false, func(c *Cell) *time.Duration { return &c.Scenario.RetryAfter }),
}

// bounds are the values a parameter may take whatever the policy family;
// sim's Validate checks the rest (a cap below the base, a capacity that
// serves nothing per tick …) cell by cell.
var bounds = map[string][2]float64{
	"base_s": {0, math.Inf(1)}, "cap_s": {0, math.Inf(1)}, "multiplier": {1, 100}, "width": {0, 1},
	"max_attempts": {0, math.MaxInt32}, "clients": {1, 1 << 30}, "tick_ms": {1, 3_600_000},
	"recover_s": {0, math.Inf(1)}, "capacity_rps": {0, math.Inf(1)}, "spread_s": {0, math.Inf(1)},
	"horizon_s": {0, math.Inf(1)}, "retry_after_s": {0, math.Inf(1)},
}

// ParamByKey returns the parameter named key, or nil.
func ParamByKey(key string) *Param {
	for i := range Params {
		if Params[i].Key == key {
			return &Params[i]
		}
	}
	return nil
}

func paramByField(field string, policy bool) *Param {
	for i := range Params {
		if Params[i].Field == field && Params[i].Policy == policy {
			return &Params[i]
		}
	}
	return nil
}

// coerce checks that v, as decoded from TOML, fits p and returns it in p's
// Go type.
func (p *Param) coerce(v any) (any, error) {
	cv, err := p.coerceType(v)
	if err != nil {
		return nil, err
	}
	b, ok := bounds[p.Key]
	if !ok {
		return cv, nil
	}
	var f float64
	switch x := cv.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	}
	if math.IsNaN(f) || f < b[0] || f > b[1] {
		num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
		want := fmt.Sprintf("%s in [%s, %s]", p.Type, num(b[0]), num(b[1]))
		if math.IsInf(b[1], 1) {
			want = fmt.Sprintf("%s ≥ %s", p.Type, num(b[0]))
		}
		return nil, fmt.Errorf("%s: want %s", show(v), want)
	}
	return cv, nil
}

func (p *Param) coerceType(v any) (any, error) {
	switch p.Type {
	case Int:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return int64(x), nil
			}
		}
	case Float:
		switch x := v.(type) {
		case int64:
			v = float64(x)
		case float64:
		default:
			return nil, fmt.Errorf("%s: want %s", show(v), p.Type)
		}
		if p.Key != "multiplier" && p.Key != "width" && p.Key != "capacity_rps" {
			if _, ok := duration(v.(float64)); !ok {
				return nil, fmt.Errorf("%s: want a number of seconds in whole milliseconds", show(v))
			}
		}
		return v, nil
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s: want %s", show(v), p.Type)
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case map[string]any:
		return "a table"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// Canonical writes every parameter of c as key=value, in Params order.
func (c Cell) Canonical() string {
	b := make([]byte, 0, 256)
	for i := range Params {
		p := &Params[i]
		b = append(b, p.Key...)
		b = append(b, '=')
		switch v := p.get(&c).(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case float64:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		case string:
			b = strconv.AppendQuote(b, v)
		case bool:
			b = strconv.AppendBool(b, v)
		}
		b = append(b, ' ')
	}
	return string(b[:len(b)-1])
}

// Set sets the parameter in c to v (int64, float64, string or bool, as
// Get returns it). Setting "policy" resets the policy to the family's
// defaults, so set it first.
func (p *Param) Set(c *Cell, v any) { p.set(c, v) }
