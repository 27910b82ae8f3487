package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/internal/suggest"
	"github.com/herdsweep/herdsweep/sim"
)

// Cell is one point of a grid: a scenario and the policy its clients run.
// In a mixed fleet, Mix holds the other groups (share > 0) and Policy runs
// the rest of the clients.
type Cell struct {
	Scenario sim.Scenario
	Policy   sim.Policy
	Mix      [sim.MaxGroups - 1]sim.Group
	// Layers: services in front of the scenario's server (layers.go;
	// "" = none), Fanout: the rest of its chain (sim.Chain). The deepest
	// service's failure share is the scenario's (fail_share).
	Layers string
	Fanout int
}

// Groups returns the fleet: Policy with the share Mix leaves, then Mix.
func (c Cell) Groups() []sim.Group {
	rest := 1.0
	var out []sim.Group
	for _, g := range c.Mix {
		if g.Share > 0 {
			rest -= g.Share
			out = append(out, g)
		}
	}
	return append([]sim.Group{{Share: rest, Policy: c.Policy}}, out...)
}

// Mixed reports whether the cell is a mixed fleet.
func (c Cell) Mixed() bool { return c.Mix[0].Share > 0 }

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
	Field sim.Field // the sim field it sets, as sim's errors name it
	// Policy is true for the policy's parameters, false for the scenario's.
	Policy bool
	// OmitZero leaves the parameter out of Canonical (so out of the keys)
	// at its zero value: parameters added after runs were stored keep
	// those runs' keys.
	OmitZero bool
	// NullZero: the dataset stores the zero value as null, "none" (the
	// preset of a policy that is no library's). Readers take a null and
	// the zero value alike: parts written before hold "". Keys are
	// unchanged (Canonical writes the value, not the column).
	NullZero bool
	// SettingOf names the parameter that switches on the mechanism this
	// one sets (breaker_window_s → breaker_ratio), or ComponentsSwitch for
	// the scope of every client component: with it off, this one means
	// nothing (SwitchedOff).
	SettingOf string
	// Aliases are other keys users write for this parameter, each with
	// why it is this one: an unknown key that is one gets this key as its
	// suggestion (SuggestKey), where an edit distance would not find it.
	Aliases map[string]string

	get func(c *Cell) any
	set func(c *Cell, v any)
}

// Get returns the parameter's value in c: int64, float64, string or bool.
func (p *Param) Get(c Cell) any { return p.get(&c) }

// Of is Get without copying the cell (a cell is over a kilobyte): for
// callers that read every parameter of many cells.
func (p *Param) Of(c *Cell) any { return p.get(c) }

func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts seconds to a whole number of milliseconds; ok is false
// when v is not one.
func duration(v float64) (time.Duration, bool) {
	msf := float64(v * 1000) // float64(): never fused with the - below
	r := math.Round(msf)
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(msf-r) > 1e-6 || math.Abs(r) > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, false
	}
	return time.Duration(r) * time.Millisecond, true
}

func durParam(key string, field sim.Field, doc string, policy bool, ptr func(c *Cell) *time.Duration) Param {
	return Param{Key: key, Type: Float, Field: field, Doc: doc, Policy: policy,
		get: func(c *Cell) any { return seconds(*ptr(c)) },
		set: func(c *Cell, v any) { d, _ := duration(v.(float64)); *ptr(c) = d },
	}
}

// Params lists every parameter, in the order of the dataset's columns.
var Params = []Param{
	{Key: "policy", Type: String, Field: sim.FieldKind, Policy: true, Doc: "policy family (see `sweep policies`); a preset's rows hold its family (the cenkalti-backoff preset's is grpc): filter exact policies on `policy_spec`. In sweeps.toml, a family or a preset's name",
		get: func(c *Cell) any { return string(c.Policy.Kind) },
		set: func(c *Cell, v any) { c.Policy = PolicyNamed(v.(string)) }},
	{Key: "preset", Type: String, Field: sim.FieldPreset, Policy: true, NullZero: true, Doc: "the library whose defaults the policy is; null for none (\"\" in parts written before herdsweep stored null)",
		get: func(c *Cell) any { return c.Policy.Preset },
		set: func(c *Cell, v any) { c.Policy.Preset = v.(string) }},
	durParam("base_s", sim.FieldBase, "base delay, s", true, func(c *Cell) *time.Duration { return &c.Policy.Base }),
	durParam("cap_s", sim.FieldCap, "longest computed delay, s; 0 = no cap", true, func(c *Cell) *time.Duration { return &c.Policy.Cap }),
	{Key: "multiplier", Type: Float, Field: sim.FieldMultiplier, Policy: true, Doc: "growth per rejection",
		get: func(c *Cell) any { return c.Policy.Multiplier },
		set: func(c *Cell, v any) { c.Policy.Multiplier = v.(float64) }},
	{Key: "width", Type: Float, Field: sim.FieldWidth, Policy: true, Doc: "jitter width, fraction of the delay",
		Aliases: map[string]string{"jitter": "the jitter's width, ± a fraction of the delay"},
		get:     func(c *Cell) any { return c.Policy.Width },
		set:     func(c *Cell, v any) { c.Policy.Width = v.(float64) }},
	{Key: "max_attempts", Type: Int, Field: sim.FieldMaxAttempts, Policy: true, Doc: "requests per client before it gives up; 0 = unlimited",
		Aliases: map[string]string{"max_retries": retriesWhy, "retries": retriesWhy, "attempts": retriesWhy},
		get:     func(c *Cell) any { return int64(c.Policy.MaxAttempts) },
		set:     func(c *Cell, v any) { c.Policy.MaxAttempts = int(v.(int64)) }},
	{Key: "honor_retry_after", Type: Bool, Field: sim.FieldHonorRetryAfter, Policy: true, Doc: "http-retry waits the server's Retry-After",
		get: func(c *Cell) any { return c.Policy.HonorRetryAfter },
		set: func(c *Cell, v any) { c.Policy.HonorRetryAfter = v.(bool) }},
	durParam("max_elapsed_s", sim.FieldMaxElapsed, "a client gives up rather than wait past this since its first request, s; 0 = never", true, func(c *Cell) *time.Duration { return &c.Policy.MaxElapsed }),
	{Key: "bucket_tokens", Type: Int, Field: sim.FieldBucketTokens, Policy: true, Doc: "per-client retry token bucket; 0 = none",
		get: func(c *Cell) any { return int64(c.Policy.BucketTokens) },
		set: func(c *Cell, v any) { c.Policy.BucketTokens = int(v.(int64)) }},
	{Key: "bucket_cost", SettingOf: "bucket_tokens", Type: Int, Field: sim.FieldBucketCost, Policy: true, Doc: "tokens a retry takes (5 when a bucket is set)",
		get: func(c *Cell) any { return int64(c.Policy.BucketCost) },
		set: func(c *Cell, v any) { c.Policy.BucketCost = int(v.(int64)) }},
	{Key: "retry_budget", Type: Float, Field: sim.FieldRetryBudget, Policy: true, Doc: "fleet-wide retries ≤ this fraction of requests over 10 s; 0 = none",
		get: func(c *Cell) any { return c.Policy.RetryBudget },
		set: func(c *Cell, v any) { c.Policy.RetryBudget = v.(float64) }},
	{Key: "budget_min_rps", SettingOf: "retry_budget", Type: Float, Field: sim.FieldBudgetMinRPS, Policy: true, Doc: "retries/s the budget always allows",
		get: func(c *Cell) any { return c.Policy.BudgetMinRPS },
		set: func(c *Cell, v any) { c.Policy.BudgetMinRPS = v.(float64) }},
	{Key: "retry_on", Type: String, Field: sim.FieldRetryOn, Policy: true, OmitZero: true, Doc: retryOnDoc(),
		get: func(c *Cell) any { return string(c.Policy.RetryOn) },
		set: func(c *Cell, v any) { c.Policy.RetryOn = sim.RetryOn(v.(string)) }},
	{Key: "mix", Type: String, Field: sim.FieldMix, Policy: true, Doc: "other policy groups of a mixed fleet, `share=… policy=… …` separated by ` | `; empty for one policy",
		get: func(c *Cell) any { return mixCodec.encode(c.Mix) },
		set: func(c *Cell, v any) { c.Mix, _ = mixCodec.decode(v.(string)) }},
	{Key: "clients", Type: Int, Field: sim.FieldClients, Doc: "clients that failed during the outage",
		get: func(c *Cell) any { return int64(c.Scenario.Clients) },
		set: func(c *Cell, v any) { c.Scenario.Clients = int(v.(int64)) }},
	{Key: "tick_ms", Type: Int, Field: sim.FieldTick, Doc: "simulation step, ms",
		get: func(c *Cell) any { return c.Scenario.Tick.Milliseconds() },
		set: func(c *Cell, v any) { c.Scenario.Tick = time.Duration(v.(int64)) * time.Millisecond }},
	// recover_s keeps the window after recovery as it is, whichever of the
	// two a grid sets first.
	{Key: "recover_s", Type: Float, Field: sim.FieldRecoverAt, Doc: "outage length: the server recovers at this time, s",
		Aliases: map[string]string{"outage_s": outageWhy, "outage": outageWhy, "outage_duration_s": outageWhy, "downtime_s": outageWhy},
		get:     func(c *Cell) any { return seconds(c.Scenario.RecoverAt) },
		set: func(c *Cell, v any) {
			d, _ := duration(v.(float64))
			c.Scenario.Horizon += d - c.Scenario.RecoverAt
			c.Scenario.RecoverAt = d
		}},
	{Key: "capacity_rps", Type: Float, Field: sim.FieldCapacity, Doc: "requests/s the counting server serves after recovery; a queueing server does not read it (its capacity is concurrency ÷ mean service_s), and there it need only be ≥ 0",
		get: func(c *Cell) any { return c.Scenario.Capacity },
		set: func(c *Cell, v any) { c.Scenario.Capacity = v.(float64) }},
	durParam("spread_s", sim.FieldSpread, "clients first send at U(0, spread), s", false, func(c *Cell) *time.Duration { return &c.Scenario.Spread }),
	// window_s is the horizon counted from recovery: a longer outage does
	// not shorten the time clients have to come back.
	{Key: "window_s", Type: Float, Field: sim.FieldWindow, Doc: "the run stops this long after recovery, s; a milestone not reached by then is \"not finished\"",
		Aliases: map[string]string{"horizon_s": windowWhy, "duration_s": windowWhy, "horizon": windowWhy},
		get:     func(c *Cell) any { return seconds(c.Scenario.Horizon - c.Scenario.RecoverAt) },
		set:     func(c *Cell, v any) { d, _ := duration(v.(float64)); c.Scenario.Horizon = c.Scenario.RecoverAt + d }},
	durParam("retry_after_s", sim.FieldRetryAfter, "Retry-After the server sends, s; 0 = none", false, func(c *Cell) *time.Duration { return &c.Scenario.RetryAfter }),
	durParam("retry_after_max_s", sim.FieldRetryAfterMax, "> retry_after_s: each Retry-After drawn from U(retry_after_s, this), s; 0 = constant", false, func(c *Cell) *time.Duration { return &c.Scenario.RetryAfterMax }),
	{Key: "retry_after_backlog", Type: Bool, Field: sim.FieldRetryAfterBacklog, Doc: "the Retry-After is the backlog over the capacity, whole seconds",
		get: func(c *Cell) any { return c.Scenario.RetryAfterBacklog },
		set: func(c *Cell, v any) { c.Scenario.RetryAfterBacklog = v.(bool) }},
	durParam("ramp_s", sim.FieldRampUp, "capacity ramps up linearly over this after recovery, s; 0 = at once", false, func(c *Cell) *time.Duration { return &c.Scenario.RampUp }),
	{Key: "ramp_from", Type: Float, Field: sim.FieldRampFrom, Doc: "fraction of the capacity the ramp starts from",
		get: func(c *Cell) any { return c.Scenario.RampFrom },
		set: func(c *Cell, v any) { c.Scenario.RampFrom = v.(float64) }},
	{Key: "reject_cost", Type: Float, Field: sim.FieldRejectCost, Doc: "work a 429 costs, as a fraction of a served request; 0 = free",
		get: func(c *Cell) any { return c.Scenario.RejectCost },
		set: func(c *Cell, v any) { c.Scenario.RejectCost = v.(float64) }},
	// A queueing server, client timeouts and open-loop traffic (sim/queue.go).
	{Key: "concurrency", Type: Int, Field: sim.FieldConcurrency, OmitZero: true, Doc: "a queueing server with this many workers; 0 = the article's counting server",
		get: func(c *Cell) any { return int64(c.Scenario.Concurrency) },
		set: func(c *Cell, v any) { c.Scenario.Concurrency = int(v.(int64)) }},
	{Key: "service", Type: String, Field: sim.FieldService, OmitZero: true, Doc: "queueing server: service time distribution, fixed, exponential or lognormal",
		get: func(c *Cell) any { return c.Scenario.Service },
		set: func(c *Cell, v any) { c.Scenario.Service = v.(string) }},
	omitZero(durParam("service_s", sim.FieldServiceTime, "queueing server: mean service time (median for lognormal), s", false, func(c *Cell) *time.Duration { return &c.Scenario.ServiceTime })),
	omitZero(durParam("service_p99_s", sim.FieldServiceP99, "lognormal service: its 99th percentile, s", false, func(c *Cell) *time.Duration { return &c.Scenario.ServiceP99 })),
	{Key: "queue_limit", Type: Int, Field: sim.FieldQueueLimit, OmitZero: true, Doc: "queueing server: most requests waiting; 0 = no limit",
		get: func(c *Cell) any { return int64(c.Scenario.QueueLimit) },
		set: func(c *Cell, v any) { c.Scenario.QueueLimit = int(v.(int64)) }},
	omitZero(durParam("queue_wait_s", sim.FieldQueueWait, "queueing server: a request that would wait longer is rejected, s; 0 = no limit", false, func(c *Cell) *time.Duration { return &c.Scenario.QueueWait })),
	omitZero(durParam("shed_target_s", sim.FieldShedTarget, "queueing server: shed load while the queue's delay stays above this for 100 ms (CoDel), s; 0 = never", false, func(c *Cell) *time.Duration { return &c.Scenario.ShedTarget })),
	omitZero(durParam("timeout_s", sim.FieldTimeout, "queueing server: a client stops waiting after this, counts a failure and retries, s; 0 = waits for ever", false, func(c *Cell) *time.Duration { return &c.Scenario.Timeout })),
	{Key: "arrival_rps", Type: Float, Field: sim.FieldArrivalRate, OmitZero: true, Doc: "queueing server: new requests/s arriving throughout the run (Poisson), each with its own retries; 0 = none",
		get: func(c *Cell) any { return c.Scenario.ArrivalRate },
		set: func(c *Cell, v any) { c.Scenario.ArrivalRate = v.(float64) }},
	{Key: "arrival_curve", Type: String, Field: sim.FieldArrivalCurve, OmitZero: true, Doc: "queueing server: open-loop traffic following a daily curve, multipliers of arrival_rps separated by spaces or commas, one per equal slot of the day (24: hourly), e.g. \"0.3 0.2 … 1.4\"; empty = constant",
		get: func(c *Cell) any { return c.Scenario.ArrivalCurve },
		set: func(c *Cell, v any) { c.Scenario.ArrivalCurve = v.(string) }},
	omitZero(durParam("arrival_clock_s", sim.FieldArrivalClock, "queueing server: with arrival_curve, the time of day at time 0, s after midnight (32400 = 09:00)", false, func(c *Cell) *time.Duration { return &c.Scenario.ArrivalClock })),
	omitZero(durParam("outage_start_s", sim.FieldOutageStart, "queueing server: up until this time, then down until recover_s (the cohort first sends from then), s; 0 = down from the start", false, func(c *Cell) *time.Duration { return &c.Scenario.OutageStart })),
	// An adaptive concurrency limiter in front of a queueing server (sim/limiter.go).
	{Key: "limiter", Type: String, Field: sim.FieldLimiter, OmitZero: true, Doc: "queueing server: an adaptive concurrency limit (Netflix concurrency-limits), aimd or gradient2: a request arriving with as many in flight as the limit gets a 429; empty = none",
		get: func(c *Cell) any { return c.Scenario.Limiter },
		set: func(c *Cell, v any) { c.Scenario.Limiter = v.(string) }},
	{Key: "limit_initial", SettingOf: "limiter", Type: Int, Field: sim.FieldLimitInitial, OmitZero: true, Doc: "limiter: its limit at the start (20 when 0)",
		get: func(c *Cell) any { return int64(c.Scenario.LimitInitial) },
		set: func(c *Cell, v any) { c.Scenario.LimitInitial = int(v.(int64)) }},
	{Key: "limit_min", SettingOf: "limiter", Type: Int, Field: sim.FieldLimitMin, OmitZero: true, Doc: "limiter: the lowest its limit goes (20 when 0)",
		get: func(c *Cell) any { return int64(c.Scenario.LimitMin) },
		set: func(c *Cell, v any) { c.Scenario.LimitMin = int(v.(int64)) }},
	{Key: "limit_max", SettingOf: "limiter", Type: Int, Field: sim.FieldLimitMax, OmitZero: true, Doc: "limiter: the highest its limit goes (200 when 0)",
		get: func(c *Cell) any { return int64(c.Scenario.LimitMax) },
		set: func(c *Cell, v any) { c.Scenario.LimitMax = int(v.(int64)) }},
	{Key: "limit_backoff", SettingOf: "limiter", Type: Float, Field: sim.FieldLimitBackoff, OmitZero: true, Doc: "aimd: the limit is multiplied by this on a drop or a slow answer, in [0.5, 1) (0.9 when 0)",
		get: func(c *Cell) any { return c.Scenario.LimitBackoff },
		set: func(c *Cell, v any) { c.Scenario.LimitBackoff = v.(float64) }},
	settingOf("limiter", omitZero(durParam("limit_timeout_s", sim.FieldLimitTimeout, "aimd: an answer slower than this backs the limit off, s (5 when 0)", false, func(c *Cell) *time.Duration { return &c.Scenario.LimitTimeout }))),
	{Key: "limit_smoothing", SettingOf: "limiter", Type: Float, Field: sim.FieldLimitSmoothing, OmitZero: true, Doc: "gradient2: its smoothing, in (0, 1] (0.2 when 0)",
		get: func(c *Cell) any { return c.Scenario.LimitSmoothing },
		set: func(c *Cell, v any) { c.Scenario.LimitSmoothing = v.(float64) }},
	// "fifo" is the order by default: written as "", so that it keeps the keys of cells without it.
	{Key: "queue_order", Type: String, Field: sim.FieldQueueOrder, OmitZero: true, Doc: "queueing server: the order waiting requests are served in, fifo (first come, first served) or lifo (the newest first, Facebook's adaptive LIFO); empty = fifo",
		get: func(c *Cell) any { return c.Scenario.QueueOrder },
		set: func(c *Cell, v any) {
			if c.Scenario.QueueOrder = v.(string); c.Scenario.QueueOrder == "fifo" {
				c.Scenario.QueueOrder = ""
			}
		}},
	// A brownout (sim/brownout.go), either server.
	{Key: "fail_share", Type: Float, Field: sim.FieldFailShare, OmitZero: true, Doc: "brownout: share of the requests served that fail whatever the load (a 503 with the server's Retry-After), in [0, 1], while the server is up; 0 = none",
		Aliases: map[string]string{"failure_rate": failWhy, "fail_rate": failWhy, "error_rate": failWhy, "failure_share": failWhy,
			"layers_fail_share": "the failure share of the server, the deepest service of a chain too"},
		get: func(c *Cell) any { return c.Scenario.FailShare },
		set: func(c *Cell, v any) { c.Scenario.FailShare = v.(float64) }},
	{Key: "fail_curve", SettingOf: "fail_share", Type: String, Field: sim.FieldFailCurve, OmitZero: true, Doc: "brownout: fail_share varying over the run, multipliers of it separated by spaces or commas, one per equal slot of the run from 0 to the horizon, e.g. \"0 1 1 0\"; empty = constant",
		get: func(c *Cell) any { return c.Scenario.FailCurve },
		set: func(c *Cell, v any) { c.Scenario.FailCurve = v.(string) }},
	withAliases(omitZero(durParam("added_latency_s", sim.FieldAddedLatency, "brownout, queueing server: each answer comes this long after its service ends, without holding the worker, s; 0 = none", false, func(c *Cell) *time.Duration { return &c.Scenario.AddedLatency })),
		map[string]string{"added_latency": "the added latency, in seconds", "latency_s": "the added latency, in seconds", "extra_latency_s": "the added latency, in seconds"}),
	// Client components (sim/components.go), each off at zero.
	{Key: "clients_per_process", SettingOf: ComponentsSwitch, Type: Int, Field: sim.FieldClientsPerProcess, Policy: true, OmitZero: true, Doc: "per-process components keep one state per this many clients (by index); 0 = one process for the fleet",
		get: func(c *Cell) any { return int64(c.Policy.ClientsPerProcess) },
		set: func(c *Cell, v any) { c.Policy.ClientsPerProcess = int(v.(int64)) }},
	{Key: "throttle_k", Type: Float, Field: sim.FieldThrottleK, Policy: true, OmitZero: true, Doc: "adaptive throttling (SRE book): refuse locally with probability max(0, (requests − K·accepts)/(requests + 1)); K, 0 = off",
		get: func(c *Cell) any { return c.Policy.ThrottleK },
		set: func(c *Cell, v any) { c.Policy.ThrottleK = v.(float64) }},
	settingOf("throttle_k", omitZero(durParam("throttle_window_s", sim.FieldThrottleWindow, "adaptive throttling's window, s (120 when 0)", true, func(c *Cell) *time.Duration { return &c.Policy.ThrottleWindow }))),
	{Key: "aws_adaptive", Type: Bool, Field: sim.FieldAWSAdaptive, Policy: true, OmitZero: true, Doc: "the AWS SDKs' adaptive retry mode: a CUBIC rate limiter that holds requests back after throttling",
		get: func(c *Cell) any { return c.Policy.AWSAdaptive },
		set: func(c *Cell, v any) { c.Policy.AWSAdaptive = v.(bool) }},
	{Key: "retry_tokens", Type: Float, Field: sim.FieldRetryTokens, Policy: true, OmitZero: true, Doc: "gRPC retry throttling's maxTokens per process; 0 = off",
		get: func(c *Cell) any { return c.Policy.RetryTokens },
		set: func(c *Cell, v any) { c.Policy.RetryTokens = v.(float64) }},
	{Key: "retry_token_ratio", SettingOf: "retry_tokens", Type: Float, Field: sim.FieldRetryTokenRatio, Policy: true, OmitZero: true, Doc: "gRPC retry throttling's tokenRatio: tokens a success gives back",
		get: func(c *Cell) any { return c.Policy.RetryTokenRatio },
		set: func(c *Cell, v any) { c.Policy.RetryTokenRatio = v.(float64) }},
	{Key: "pushback", Type: Bool, Field: sim.FieldPushback, Policy: true, OmitZero: true, Doc: "gRPC server pushback: wait exactly the Retry-After, then restart the backoff",
		get: func(c *Cell) any { return c.Policy.Pushback },
		set: func(c *Cell, v any) { c.Policy.Pushback = v.(bool) }},
	{Key: "retry_cap", Type: Int, Field: sim.FieldRetryCap, Policy: true, OmitZero: true, Doc: "Envoy's max_retries: most retries outstanding per process, beyond which a client gives up; 0 = none",
		get: func(c *Cell) any { return int64(c.Policy.RetryCap) },
		set: func(c *Cell, v any) { c.Policy.RetryCap = int(v.(int64)) }},
	{Key: "breaker_ratio", Type: Float, Field: sim.FieldBreakerRatio, Policy: true, OmitZero: true, Doc: "circuit breaker per process: opens at this failure ratio; 0 = none",
		get: func(c *Cell) any { return c.Policy.BreakerRatio },
		set: func(c *Cell, v any) { c.Policy.BreakerRatio = v.(float64) }},
	{Key: "breaker_min_throughput", SettingOf: "breaker_ratio", Type: Int, Field: sim.FieldBreakerMinThroughput, Policy: true, OmitZero: true, Doc: "circuit breaker: requests in the window before it may open (100 when 0)",
		get: func(c *Cell) any { return int64(c.Policy.BreakerMinThroughput) },
		set: func(c *Cell, v any) { c.Policy.BreakerMinThroughput = int(v.(int64)) }},
	settingOf("breaker_ratio", omitZero(durParam("breaker_window_s", sim.FieldBreakerWindow, "circuit breaker: its sampling window, s (30 when 0)", true, func(c *Cell) *time.Duration { return &c.Policy.BreakerWindow }))),
	settingOf("breaker_ratio", omitZero(durParam("breaker_break_s", sim.FieldBreakerBreak, "circuit breaker: how long it stays open, s (5 when 0)", true, func(c *Cell) *time.Duration { return &c.Policy.BreakerBreak }))),
	// A chain of services in front of the server (sim/chain.go, layers.go).
	{Key: "layers", Type: String, Field: sim.FieldLayers, OmitZero: true, Doc: "services in front of the server, from the one the clients call: `capacity_rps=… outage_start_s=… recover_s=… policy=\"SPEC\"` separated by ` | ` (capacity 0 = no limit; down from outage_start_s to recover_s; the policy with which the service retries its callee, \"none\" = never), then, only when set, a queueing service's `concurrency=… service=\"fixed|exponential\" service_s=… queue_limit=…` and `timeout_s=…`, how long its caller waits for it (0 = for ever); the server is the deepest service; empty = no chain",
		get: func(c *Cell) any { return c.Layers },
		set: func(c *Cell, v any) { c.Layers = v.(string) }},
	{Key: "fanout", SettingOf: "layers", Type: Int, Field: sim.FieldFanout, OmitZero: true, Doc: "layers: the last service calls this many copies of the server at once (each with its capacity and outage), all must succeed; 0 or 1 = one",
		get: func(c *Cell) any { return int64(c.Fanout) },
		set: func(c *Cell, v any) { c.Fanout = int(v.(int64)) }},
}

// retryOnDoc describes retry_on's values, as sim defines them.
func retryOnDoc() string {
	var vs []string
	for _, v := range sim.RetryOnValues() {
		name := string(v.Value)
		if name == "" {
			name = `"" (or "any")`
		}
		vs = append(vs, name+": "+v.Means)
	}
	return "which rejections a client retries (a 503 while down, a 429 after recovery); on any other it gives up: " + strings.Join(vs, "; ")
}

// ComponentsSwitch is the SettingOf of a parameter that every client
// component reads (clients_per_process).
const ComponentsSwitch = "client components"

// SwitchedOff reports whether p sets a mechanism that c has switched off.
func (p *Param) SwitchedOff(c *Cell) bool {
	switch p.SettingOf {
	case "":
		return false
	case ComponentsSwitch:
		return c.Policy.ComponentsShort() == ""
	}
	return isZero(ParamByKey(p.SettingOf).Of(c))
}

func settingOf(sw string, p Param) Param {
	p.SettingOf = sw
	return p
}

func withAliases(p Param, aliases map[string]string) Param {
	p.Aliases = aliases
	return p
}

func omitZero(p Param) Param {
	p.OmitZero = true
	return p
}

// mixCodec breaks the initialization cycle Params → mix → Params.
var mixCodec struct {
	encode func([sim.MaxGroups - 1]sim.Group) string
	decode func(string) ([sim.MaxGroups - 1]sim.Group, error)
}

func init() { mixCodec.encode, mixCodec.decode = EncodeMix, DecodeMix }

// EncodeMix writes a fleet's other groups with the policy parameters, in
// Params order: the dataset's "mix" column, which DecodeMix reads back.
func EncodeMix(mix [sim.MaxGroups - 1]sim.Group) string {
	var groups []string
	for _, g := range mix {
		if g.Share == 0 {
			continue
		}
		c := Cell{Policy: g.Policy}
		parts := []string{"share=" + strconv.FormatFloat(g.Share, 'g', -1, 64)}
		for i := range Params {
			p := &Params[i]
			if !p.Policy || p.Key == "mix" {
				continue
			}
			v := p.get(&c)
			if p.OmitZero && isZero(v) {
				continue // as in Canonical: stored mixes keep their keys
			}
			parts = append(parts, p.Key+"="+formatValue(v))
		}
		groups = append(groups, strings.Join(parts, " "))
	}
	return strings.Join(groups, " | ")
}

func DecodeMix(s string) ([sim.MaxGroups - 1]sim.Group, error) {
	var mix [sim.MaxGroups - 1]sim.Group
	if s == "" {
		return mix, nil
	}
	for gi, g := range strings.Split(s, " | ") {
		if gi >= len(mix) {
			return mix, fmt.Errorf("more than %d mixed groups", len(mix))
		}
		var c Cell
		for _, kv := range strings.Fields(g) {
			k, v, _ := strings.Cut(kv, "=")
			if k == "share" {
				mix[gi].Share, _ = strconv.ParseFloat(v, 64)
				continue
			}
			p := ParamByKey(k)
			if p == nil {
				return mix, fmt.Errorf("mix: unknown key %q", k)
			}
			val, err := parseValue(p.Type, v)
			if err != nil {
				return mix, fmt.Errorf("mix: %s: %w", k, err)
			}
			p.Set(&c, val) // as stored: "policy" is the family
		}
		mix[gi].Policy = c.Policy
	}
	return mix, nil
}

func formatValue(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	}
	panic(fmt.Sprintf("grid: value %T", v))
}

func parseValue(t Type, s string) (any, error) {
	switch t {
	case Int:
		return strconv.ParseInt(s, 10, 64)
	case Float:
		return strconv.ParseFloat(s, 64)
	case String:
		return strconv.Unquote(s)
	}
	return strconv.ParseBool(s)
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

// paramByField returns the parameter that sets the sim field named field
// (sim.FieldError.Field), or nil. Field names are unique across
// sim.Scenario and sim.Policy (tested).
func paramByField(field sim.Field) *Param {
	for i := range Params {
		if Params[i].Field == field {
			return &Params[i]
		}
	}
	return nil
}

// Coerce checks that v, as decoded from TOML, has p's type and converts it
// to p's Go type. It checks no bounds: each bound lives in the Validate of
// the sim type that owns the field, and the loader reports its errors at
// the key (cellError).
func (p *Param) Coerce(v any) (any, error) {
	switch p.Type {
	case Int:
		switch x := v.(type) {
		case int64:
			if strings.HasSuffix(p.Key, "_ms") && (x > maxMS || x < -maxMS) {
				return nil, fmt.Errorf("%d: want a number of milliseconds within ±%d", x, maxMS)
			}
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return p.Coerce(int64(x))
			}
		}
	case Float:
		switch x := v.(type) {
		case int64:
			v = float64(x)
		case float64:
		default:
			return nil, fmt.Errorf("%s: want %s", Show(v), p.Type)
		}
		if strings.HasSuffix(p.Key, "_s") {
			if _, ok := duration(v.(float64)); !ok {
				return nil, fmt.Errorf("%s: want a number of seconds in whole milliseconds", Show(v))
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
	return nil, fmt.Errorf("%s: want %s", Show(v), p.Type)
}

// maxMS is the most milliseconds a time.Duration holds.
const maxMS = math.MaxInt64 / int64(time.Millisecond)

func Show(v any) string {
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

// Canonical writes every parameter of c as key=value, in Params order,
// but those marked OmitZero at their zero value.
func (c Cell) Canonical() string {
	b := make([]byte, 0, 256)
	for i := range Params {
		p := &Params[i]
		v := p.get(&c)
		if p.OmitZero && isZero(v) {
			continue
		}
		b = append(b, p.Key...)
		b = append(b, '=')
		b = append(b, formatValue(v)...)
		b = append(b, ' ')
	}
	return string(b[:len(b)-1])
}

func isZero(v any) bool {
	switch x := v.(type) {
	case int64:
		return x == 0
	case float64:
		return x == 0
	case string:
		return x == ""
	case bool:
		return !x
	}
	return false
}

// Set sets the parameter in c to v (int64, float64, string or bool, as
// Get returns it), as the dataset stores it: "policy" is the family (not
// a preset of the same name, such as grpc) and resets the policy to that
// family with no parameters, so set it first and every other parameter
// after it, as the dataset's columns come.
func (p *Param) Set(c *Cell, v any) {
	if p.Key == "policy" {
		c.Policy = sim.Policy{Kind: sim.Kind(v.(string))}
		return
	}
	p.set(c, v)
}

// Apply sets the parameter in c to v (as Get returns it) as a config
// writes it: "policy" names a preset or a family's defaults (PolicyNamed),
// and recover_s keeps the window after recovery as it is.
func (p *Param) Apply(c *Cell, v any) { p.set(c, v) }

// Why an alias is its parameter (Param.Aliases).
const (
	failWhy    = "the brownout's share of requests that fail whatever the load"
	outageWhy  = "the outage: the server is down from time 0 (a queueing server: from outage_start_s) until recover_s"
	windowWhy  = "a run lasts until recover_s + window_s"
	retriesWhy = "attempts, the first included: N retries is max_attempts = N + 1"
)

// SuggestKey is an unknown key's suggestion among names: a parameter it
// is an alias of (with why), else the nearest name by DidYouMean.
func SuggestKey(k string, names []string) string {
	for _, p := range Params {
		if why, ok := p.Aliases[k]; ok && slices.Contains(names, p.Key) {
			return fmt.Sprintf(" (did you mean %q? %s)", p.Key, why)
		}
	}
	return suggest.DidYouMean(k, names)
}

// SetPolicyParam sets the policy parameter named key (a sweeps.toml key
// that a policy table may hold) of p from its text, as the policy_spec
// column writes it: a number (seconds for a _s key), true or false, or a
// word (retry_on). Its bounds are p.Validate's; UserWords says its errors
// in these keys' words.
func SetPolicyParam(p *sim.Policy, key, text string) error {
	pa := ParamByKey(key)
	if pa == nil || !pa.InPolicyTable() {
		return fmt.Errorf("unknown key %q%s", key, SuggestKey(key, PolicyTableKeys()))
	}
	var raw any = text
	var err error
	switch pa.Type {
	case Int:
		raw, err = strconv.ParseInt(text, 10, 64)
	case Float:
		raw, err = strconv.ParseFloat(text, 64)
	case Bool:
		raw, err = strconv.ParseBool(text)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: want %s", key, text, pa.Type)
	}
	v, err := pa.Coerce(raw)
	if err != nil {
		return fmt.Errorf("%s=%v", key, err)
	}
	c := Cell{Policy: *p}
	pa.set(&c, v)
	*p = c.Policy
	return nil
}

// UserWords says a sim.FieldError in sweeps.toml's words: the key of the
// parameter that sets its field, and what would be accepted.
func UserWords(fe *sim.FieldError) string {
	key, msg := KeyWords(fe)
	return key + "=" + msg
}

// InPolicyTable reports whether p may be set in a policy table
// ({kind = "fixed", base_s = 5}) or after a policy's name in a spec: a
// policy parameter, components included.
func (p *Param) InPolicyTable() bool {
	return p.Policy && p.Key != "policy" && p.Key != "mix" && p.Key != "preset"
}

// PolicyTableKeys lists the keys a policy table takes besides kind.
func PolicyTableKeys() []string {
	var ks []string
	for i := range Params {
		if Params[i].InPolicyTable() {
			ks = append(ks, Params[i].Key)
		}
	}
	return ks
}
