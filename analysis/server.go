package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// A Server is one model of the server an answer must hold on: the
// counting server, whose rejections may cost work, or a queueing server
// sized to the capacity the user gives, or a counting server behind a
// chain of services (Layers). Its Scenario is the user's question
// (capacity, fleet, outage, window) on that server, and its Cell a
// policy's cell there. The fields are the scenario parameters of
// sweeps.toml (reject_cost, service, service_s, concurrency, timeout_s,
// queue_limit, queue_wait_s, shed_target_s, arrival_rps, …, layers,
// fanout) and are bounded by sim.Scenario.Validate and sim.ValidateChain,
// the owners of their bounds.
type Server struct {
	// RejectCost: each rejection costs this fraction of a served request's
	// work (the counting server's reject_cost).
	RejectCost float64 `json:"reject_cost,omitempty"`
	// Service: the queueing server's service time distribution; "" for
	// the counting server.
	Service     string        `json:"service,omitempty"`
	ServiceTime time.Duration `json:"service_ns,omitempty"`
	ServiceP99  time.Duration `json:"service_p99_ns,omitempty"`
	// Workers: 0 sizes the server to the capacity: capacity × the mean
	// service time, rounded (at least 1).
	Workers    int           `json:"concurrency,omitempty"`
	Timeout    time.Duration `json:"timeout_ns,omitempty"`
	QueueLimit int           `json:"queue_limit,omitempty"`
	QueueWait  time.Duration `json:"queue_wait_ns,omitempty"`
	ShedTarget time.Duration `json:"shed_target_ns,omitempty"`
	// Load is the open-loop traffic as a share of the server's capacity,
	// or Arrival in requests/s when that is set.
	Load    float64 `json:"load,omitempty"`
	Arrival float64 `json:"arrival_rps,omitempty"`
	// RetryAfter, RetryAfterMax: what the server sends with a rejection
	// (retry_after_s, retry_after_max_s); 0 keeps the question's.
	RetryAfter    time.Duration `json:"retry_after_ns,omitempty"`
	RetryAfterMax time.Duration `json:"retry_after_max_ns,omitempty"`
	// Limiter, LimitMin, LimitMax: an adaptive concurrency limit in front
	// of a queueing server (sim/limiter.go); QueueOrder "lifo" serves the
	// newest waiting request first (sim/lifo.go).
	Limiter    string `json:"limiter,omitempty"`
	LimitMin   int    `json:"limit_min,omitempty"`
	LimitMax   int    `json:"limit_max,omitempty"`
	QueueOrder string `json:"queue_order,omitempty"`
	// LimitInitial, LimitBackoff, LimitTimeout, LimitSmoothing: the
	// limiter's other settings (limit_initial, limit_backoff,
	// limit_timeout_s, limit_smoothing); 0 = its defaults.
	LimitInitial   int           `json:"limit_initial,omitempty"`
	LimitBackoff   float64       `json:"limit_backoff,omitempty"`
	LimitTimeout   time.Duration `json:"limit_timeout_ns,omitempty"`
	LimitSmoothing float64       `json:"limit_smoothing,omitempty"`

	// A brownout (fail_share, added_latency_s): the server fails this
	// share of what it serves whatever the load, and a queueing server
	// answers AddedLatency late; 0 = none.
	FailShare    float64       `json:"fail_share,omitempty"`
	FailCurve    string        `json:"fail_curve,omitempty"`
	AddedLatency time.Duration `json:"added_latency_ns,omitempty"`

	// Layers, Fanout: services in front of a counting server (layers,
	// fanout; grid.EncodeLayers owns the text, sim.Chain the model); ""
	// = none. A cell of the server carries them (Server.Cell).
	Layers string `json:"layers,omitempty"`
	Fanout int    `json:"fanout,omitempty"`
}

// SteadyLead is how long a queueing server with open-loop traffic runs in
// its steady state before the outage starts.
const SteadyLead = 30 * time.Second

// Queueing reports whether s is a queueing server.
func (s Server) Queueing() bool { return s.Service != "" }

// Scenario is base (the counting server of the question: capacity,
// clients, outage from the start, window after recovery) on server s. A
// queueing server with open-loop traffic is up for SteadyLead first, then
// down for the same outage; its cohort first sends when it goes down.
func (s Server) Scenario(base sim.Scenario) sim.Scenario {
	sc := base
	sc.RejectCost = s.RejectCost
	if s.RetryAfter > 0 {
		sc.RetryAfter, sc.RetryAfterMax = s.RetryAfter, s.RetryAfterMax
	}
	sc.FailShare, sc.FailCurve, sc.AddedLatency = s.FailShare, s.FailCurve, s.AddedLatency
	if !s.Queueing() {
		return sc
	}
	sc.RejectCost = 0
	sc.Service, sc.ServiceTime, sc.ServiceP99 = s.Service, s.ServiceTime, s.ServiceP99
	sc.Concurrency = s.Workers
	if sc.Concurrency == 0 {
		sc.Concurrency = 1 // MeanService is a queueing server's
		sc.Concurrency = max(1, int(math.Round(base.Capacity*sc.MeanService().Seconds())))
	}
	sc.Timeout, sc.QueueLimit, sc.QueueWait, sc.ShedTarget = s.Timeout, s.QueueLimit, s.QueueWait, s.ShedTarget
	sc.Limiter, sc.LimitMin, sc.LimitMax, sc.QueueOrder = s.Limiter, s.LimitMin, s.LimitMax, s.QueueOrder
	sc.LimitInitial, sc.LimitBackoff, sc.LimitTimeout, sc.LimitSmoothing = s.LimitInitial, s.LimitBackoff, s.LimitTimeout, s.LimitSmoothing
	sc.ArrivalRate = s.Arrival
	if sc.ArrivalRate == 0 {
		sc.ArrivalRate = math.Round(s.Load * ServerCapacity(sc))
	}
	if sc.ArrivalRate > 0 {
		window := base.Horizon - base.RecoverAt
		sc.OutageStart = SteadyLead
		sc.RecoverAt = SteadyLead + base.RecoverAt
		sc.Horizon = sc.RecoverAt + window
	}
	return sc
}

// ServerCapacity is the requests/s sc's server serves: Capacity for the
// counting server, the workers over the mean service time for a queueing
// one.
func ServerCapacity(sc sim.Scenario) float64 {
	if sc.Concurrency > 0 {
		return float64(sc.Concurrency) / sc.MeanService().Seconds()
	}
	return sc.Capacity
}

// Label names s in a few words: "429s free", "429s cost 25 %", "queue
// 20ms exp, 2s timeout, 50 % load".
func (s Server) Label() string {
	if !s.Queueing() {
		l := "counting, 429s free"
		if s.RejectCost > 0 {
			l = "counting, 429s cost " + pct(s.RejectCost)
		}
		return l + s.brownoutLabel() + s.chainLabel()
	}
	dist := map[string]string{"exponential": "exp", "fixed": "fixed", "lognormal": "lognormal"}[s.Service]
	parts := []string{fmt.Sprintf("queue %v %s", s.ServiceTime, dist)}
	if s.Workers > 0 {
		parts[0] = fmt.Sprintf("queue %d × %v %s", s.Workers, s.ServiceTime, dist)
	}
	if s.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("%v timeout", s.Timeout))
	} else {
		parts = append(parts, "no timeout")
	}
	switch {
	case s.QueueLimit > 0:
		parts = append(parts, fmt.Sprintf("≤ %d waiting", s.QueueLimit))
	case s.QueueWait > 0:
		parts = append(parts, fmt.Sprintf("wait ≤ %v", s.QueueWait))
	case s.ShedTarget > 0:
		parts = append(parts, fmt.Sprintf("shed above %v", s.ShedTarget))
	}
	if w := s.limitLabel(); w != "" {
		parts = append(parts, w)
	}
	switch {
	case s.Arrival > 0:
		parts = append(parts, num.Short(s.Arrival)+" req/s background")
	default:
		parts = append(parts, pct(s.Load)+" load")
	}
	if s.RetryAfter > 0 {
		ra := fmt.Sprintf("Retry-After %v", s.RetryAfter)
		if s.RetryAfterMax > s.RetryAfter {
			ra = fmt.Sprintf("Retry-After U(%v, %v)", s.RetryAfter, s.RetryAfterMax)
		}
		parts = append(parts, ra)
	}
	return strings.Join(parts, ", ") + s.brownoutLabel()
}

// brownoutLabel is the end of Label for a brownout: ", 30 % failing,
// 100ms added"; "" for none.
func (s Server) brownoutLabel() string {
	var l string
	if s.FailShare > 0 {
		l += ", " + pct(s.FailShare) + " failing"
		if s.FailCurve != "" {
			l += " × the curve " + strconv.Quote(s.FailCurve)
		}
	}
	if s.AddedLatency > 0 {
		l += fmt.Sprintf(", %v added", s.AddedLatency)
	}
	return l
}

// DefaultEnvelope is the set of servers an answer is judged on when the
// user says nothing of theirs: the counting server with free rejections
// and rejections costing 10, 25 and 50 % of a request; queueing servers
// with workers = capacity × service time for 20 ms and 100 ms service,
// exponential and fixed, client timeouts of 1, 2 and 5 s, an unbounded
// queue, and background load 0 and 50 %. A user who does not know the
// cost of a 429 on their server to within a factor of ten, nor how it
// queues, gets an answer that holds on all of them.
func DefaultEnvelope() []Server {
	var env []Server
	for _, c := range []float64{0, 0.1, 0.25, 0.5} {
		env = append(env, Server{RejectCost: c})
	}
	for _, st := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond} {
		for _, dist := range []string{"exponential", "fixed"} {
			for _, to := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
				for _, load := range []float64{0, 0.5} {
					env = append(env, Server{Service: dist, ServiceTime: st, Timeout: to, Load: load})
				}
			}
		}
	}
	return env
}

// DescribeEnvelope says in one line what servers env holds.
func DescribeEnvelope(env []Server) string {
	var counting, queueing, chained []Server
	for _, s := range env {
		switch {
		case s.Chained():
			chained = append(chained, s)
		case s.Queueing():
			queueing = append(queueing, s)
		default:
			counting = append(counting, s)
		}
	}
	var parts []string
	if len(counting) > 0 {
		var costs []string
		for _, s := range counting {
			costs = append(costs, pct(s.RejectCost))
		}
		parts = append(parts, fmt.Sprintf("the counting server with 429s costing %s of a request", joinOr(costs)))
	}
	if len(queueing) > 0 {
		set := func(f func(Server) string) string {
			var xs []string
			seen := map[string]bool{}
			for _, s := range queueing {
				if x := f(s); !seen[x] {
					seen[x] = true
					xs = append(xs, x)
				}
			}
			return joinOr(xs)
		}
		parts = append(parts, fmt.Sprintf("%s (%s service, %s, timeouts %s, %s queue, background load %s)",
			num.Plural(len(queueing), "queueing server"),
			set(func(s Server) string { return s.ServiceTime.String() }),
			set(func(s Server) string { return s.Service }),
			set(func(s Server) string {
				if s.Timeout == 0 {
					return "none (clients wait for ever)"
				}
				return s.Timeout.String()
			}),
			set(func(s Server) string {
				switch {
				case s.QueueLimit > 0:
					return fmt.Sprintf("≤ %d waiting", s.QueueLimit)
				case s.QueueWait > 0:
					return fmt.Sprintf("wait ≤ %v", s.QueueWait)
				case s.ShedTarget > 0:
					return fmt.Sprintf("shedding above %v", s.ShedTarget)
				case s.limitLabel() != "":
					return s.limitLabel()
				}
				return "unbounded"
			}),
			set(func(s Server) string {
				if s.Arrival > 0 {
					return num.Short(s.Arrival) + " req/s"
				}
				return pct(s.Load)
			})))
	}
	var failing []string
	for _, s := range env {
		if (s.FailShare > 0 || s.AddedLatency > 0) && !s.Chained() {
			failing = append(failing, s.Label())
		}
	}
	if len(failing) > 0 {
		parts = append(parts, "in a brownout: "+strings.Join(failing, "; "))
	}
	if len(chained) > 0 {
		parts = append(parts, "behind services: "+joinLabels(chained))
	}
	return fmt.Sprintf("%s: %s", num.Plural(len(env), "server"), strings.Join(parts, "; "))
}

func joinOr(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// Ideal is the least time after recovery, in seconds, in which any
// client policy could bring sc's clients back: the server does nothing
// but serve the waiting requests at its capacity, 99 % of the cohort on
// a server without open-loop traffic; with open-loop traffic at rate λ,
// the cohort and every request of the outage at the capacity that the
// traffic leaves (capacity − λ). At least one tick. It depends on the
// scenario alone, never on the candidates, so that a regret against it
// (a candidate's time over Ideal) is the candidate's own: removing a
// candidate that does not win never changes the winner.
func Ideal(sc sim.Scenario) float64 {
	c := ServerCapacity(sc)
	need := 0.99 * float64(sc.Clients) / c
	if sc.ArrivalRate > 0 && sc.Concurrency > 0 {
		backlog := float64(sc.Clients) + sc.ArrivalRate*(sc.RecoverAt-sc.OutageStart).Seconds()
		need = backlog / math.Max(c-sc.ArrivalRate, c*1e-3)
	}
	return math.Max(need, sc.Tick.Seconds())
}

// pct writes a share as a percentage: 0.25 → "25 %".
func pct(x float64) string { return num.Short(100*x) + " %" }

// BeyondBackoff are the settings besides a backoff curve that the
// envelope's search tries on a few curves (BeyondBackoffCurves): a retry
// budget of 10 % of requests plus 10/s per process of 100 clients
// (Finagle's RetryBudget, failsafe-go's budget), gRPC's retryThrottling
// with 10 tokens and a ratio of 0.1 per process of 100 clients (the AWS
// SDKs' retry quota works alike), and an attempt limit of 4. Each lets
// clients give up, so it recovers on a server buried by its own herd by
// failing the outage's requests; the counting server's rule refuses
// that unless the question allows clients to give up. A circuit breaker
// (Polly's defaults per process of 100 clients) was measured beside them
// and left out: it brought no server of the default envelope back that
// its curve alone did not, and its runs on a buried server cannot stop
// early (sim.StuckApplies), at 1–5 s of CPU each for 5,000 clients.
var BeyondBackoff = []sim.Policy{
	{RetryBudget: 0.1, BudgetMinRPS: 10, ClientsPerProcess: 100},
	{RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 100},
	{MaxAttempts: 4},
}

// BeyondBackoffCurves are the curves BeyondBackoff is tried on.
var BeyondBackoffCurves = []sim.Policy{
	{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second},
	{Kind: sim.Decorrelated, Base: 2 * time.Second, Cap: 2 * time.Minute},
	{Kind: sim.APICore, Base: time.Second, Multiplier: 2, Cap: time.Minute},
}

// EnvelopeSpace is the candidate space of an answer over an envelope:
// recommend's (grid.CandidateSpace) and each BeyondBackoff setting
// on each of BeyondBackoffCurves.
func EnvelopeSpace(sc sim.Scenario) []sim.Policy {
	var ps []sim.Policy
	for _, c := range grid.CandidateSpace(sc) {
		ps = append(ps, c.Policy)
	}
	for _, curve := range BeyondBackoffCurves {
		for _, b := range BeyondBackoff {
			p := curve
			p.RetryBudget, p.BudgetMinRPS, p.RetryTokens, p.RetryTokenRatio = b.RetryBudget, b.BudgetMinRPS, b.RetryTokens, b.RetryTokenRatio
			p.MaxAttempts, p.ClientsPerProcess = b.MaxAttempts, b.ClientsPerProcess
			ps = append(ps, p.Normalize())
		}
	}
	return ps
}

// ServerKeys are the sweeps.toml keys a server spec (--server) may set:
// the server's own parameters, never the question's (capacity, clients,
// outage, window) nor a policy's.
var ServerKeys = []string{"reject_cost", "concurrency", "service", "service_s", "service_p99_s", "queue_limit", "queue_wait_s",
	"shed_target_s", "timeout_s", "arrival_rps", "retry_after_s", "retry_after_max_s", "limiter", "limit_initial", "limit_min", "limit_max", "limit_backoff", "limit_timeout_s", "limit_smoothing", "queue_order",
	"fail_share", "fail_curve", "added_latency_s", "fanout", "layers"}

// anyServerKeys are the ServerKeys that do not make a server a queueing
// one: the counting server's rejection cost and the Retry-After any server
// may send. Every other key asks for a queueing server.
var anyServerKeys = []string{"reject_cost", "retry_after_s", "retry_after_max_s", "fail_share", "fail_curve", "fanout", "layers"}

// ParseServer reads a server as sweeps.toml writes its parameters:
// "reject_cost=0.25", or "concurrency=16 service=exponential
// service_s=0.02 timeout_s=2 arrival_rps=560 queue_wait_s=0.5" (service
// and service_s without concurrency size the workers to the capacity;
// "free" is the counting server with free rejections; "layers=…", last
// in the spec as it takes the rest, puts services in front of it). The
// values are checked against base (the question on the counting server)
// by sim.Scenario.Validate and sim.ValidateChain, the owners of their
// bounds; an error names the key.
func ParseServer(spec string, base sim.Scenario) (Server, error) {
	spec, layers, chained := cutLayers(spec)
	fields := strings.Fields(spec)
	if len(fields) == 0 && !chained {
		return Server{}, fmt.Errorf("empty: want key=value pairs of %s, or free", strings.Join(ServerKeys, ", "))
	}
	if len(fields) == 1 && fields[0] == "free" && !chained {
		return Server{}, nil
	}
	c := grid.Cell{Scenario: base}
	c.Scenario.Concurrency, c.Scenario.Service = 0, ""
	seen := map[string]bool{}
	for _, f := range fields {
		if err := setServerKey(&c, f, seen); err != nil {
			return Server{}, err
		}
	}
	sc := c.Scenario
	s := ServerOf(sc)
	s.RetryAfter, s.RetryAfterMax = sc.RetryAfter, sc.RetryAfterMax
	if s.RetryAfter == base.RetryAfter && !seen["retry_after_s"] {
		s.RetryAfter = 0 // the question's
	}
	// A queueing key given (whatever its value: concurrency=-8 is not a
	// counting server) asks for a queueing server, which needs both.
	queueing := false
	for _, k := range ServerKeys {
		queueing = queueing || seen[k] && !slices.Contains(anyServerKeys, k)
	}
	if queueing && (!seen["service"] || !seen["service_s"]) {
		return Server{}, fmt.Errorf("a queueing server needs service and service_s (e.g. service=exponential service_s=0.02)")
	}
	if s.Queueing() && s.RejectCost > 0 {
		return Server{}, fmt.Errorf("reject_cost is the counting server's; a queueing server's rejections cost what its queue does")
	}
	if err := s.Scenario(base).Validate(); err != nil {
		var fe *sim.FieldError
		if errors.As(err, &fe) {
			return Server{}, errors.New(grid.UserWords(fe))
		}
		return Server{}, err
	}
	if err := s.readChain(layers, chained, c.Fanout, base); err != nil {
		return Server{}, err
	}
	return s, nil
}

// setServerKey sets one key=value field of a server spec on c, the
// values read and coerced as sweeps.toml's (grid.Param).
func setServerKey(c *grid.Cell, f string, seen map[string]bool) error {
	key, text, ok := strings.Cut(f, "=")
	if !ok || text == "" {
		return fmt.Errorf("%q: want key=value", f)
	}
	if !slices.Contains(ServerKeys, key) {
		return fmt.Errorf("unknown key %q%s: want one of %s", key, grid.SuggestKey(key, ServerKeys), strings.Join(ServerKeys, ", "))
	}
	if seen[key] {
		return fmt.Errorf("%s given twice", key)
	}
	seen[key] = true
	p := grid.ParamByKey(key)
	var raw any = text
	var err error
	switch p.Type {
	case grid.Int:
		raw, err = strconv.ParseInt(text, 10, 64)
	case grid.Float:
		raw, err = strconv.ParseFloat(text, 64)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: want %s", key, text, p.Type)
	}
	v, err := p.Coerce(raw)
	if err != nil {
		return fmt.Errorf("%s=%v", key, err)
	}
	p.Set(c, v)
	return nil
}

// ServerOf is the server of scenario sc, as ParseServer would read it
// (the workers as they are, the open-loop traffic in requests/s).
func ServerOf(sc sim.Scenario) Server {
	return Server{RejectCost: sc.RejectCost, Service: sc.Service, ServiceTime: sc.ServiceTime, ServiceP99: sc.ServiceP99,
		Workers: sc.Concurrency, Timeout: sc.Timeout, QueueLimit: sc.QueueLimit, QueueWait: sc.QueueWait, ShedTarget: sc.ShedTarget,
		Arrival: sc.ArrivalRate, Limiter: sc.Limiter, LimitMin: sc.LimitMin, LimitMax: sc.LimitMax, QueueOrder: sc.QueueOrder,
		LimitInitial: sc.LimitInitial, LimitBackoff: sc.LimitBackoff, LimitTimeout: sc.LimitTimeout, LimitSmoothing: sc.LimitSmoothing,
		FailShare: sc.FailShare, FailCurve: sc.FailCurve, AddedLatency: sc.AddedLatency}
}

// LimitLabel names sc's adaptive limit (with its settings) and queue
// order, as a server's label does: "Gradient2 limit ≤ 1000 (smoothing
// 0.1)", "LIFO"; "" for neither.
func LimitLabel(sc sim.Scenario) string { return ServerOf(sc).limitLabel() }

// limitLabel names s's adaptive limit and queue order: "Gradient2 limit
// ≤ 1000", "LIFO"; "" for neither.
func (s Server) limitLabel() string {
	var parts []string
	if s.Limiter != "" {
		l := map[string]string{"aimd": "AIMD", "gradient2": "Gradient2"}[s.Limiter] + " limit"
		if s.LimitMax > 0 {
			l += fmt.Sprintf(" ≤ %d", s.LimitMax)
		}
		parts = append(parts, l+s.limitSettings())
	}
	if s.QueueOrder == "lifo" {
		parts = append(parts, "LIFO")
	}
	return strings.Join(parts, ", ")
}

// limitSettings is what limitLabel adds for the limiter's settings that
// are not their defaults: " (from 50, ≥ 10, backoff 0.5, slow above 2s,
// smoothing 0.1)"; "" for none.
func (s Server) limitSettings() string {
	var w []string
	if s.LimitInitial > 0 {
		w = append(w, fmt.Sprintf("from %d", s.LimitInitial))
	}
	if s.LimitMin > 0 {
		w = append(w, fmt.Sprintf("≥ %d", s.LimitMin))
	}
	if s.LimitBackoff > 0 {
		w = append(w, fmt.Sprintf("backoff %g", s.LimitBackoff))
	}
	if s.LimitTimeout > 0 {
		w = append(w, fmt.Sprintf("slow above %v", s.LimitTimeout))
	}
	if s.LimitSmoothing > 0 {
		w = append(w, fmt.Sprintf("smoothing %g", s.LimitSmoothing))
	}
	if len(w) == 0 {
		return ""
	}
	return " (" + strings.Join(w, ", ") + ")"
}

// Spec is s as --server writes it for questions like base: the
// ServerKeys whose value on s's scenario differs from base's, "free" when
// none does. ParseServer(s.Spec(base), base) asks for the same scenario.
func (s Server) Spec(base sim.Scenario) string {
	cell, ref := s.Cell(base, sim.Policy{}), grid.Cell{Scenario: base}
	var kv []string
	for _, k := range ServerKeys {
		p := grid.ParamByKey(k)
		if v := p.Get(cell); v != p.Get(ref) {
			if f, ok := v.(float64); ok {
				v = strconv.FormatFloat(f, 'g', -1, 64)
			}
			kv = append(kv, fmt.Sprintf("%s=%v", k, v))
		}
	}
	if len(kv) == 0 {
		return "free"
	}
	return strings.Join(kv, " ")
}

// DescribeBeyond says in words what an answer over servers adds to
// recommend's candidates (EnvelopeSpace), and how many it judges.
func DescribeBeyond() string {
	var curves []string
	for _, c := range BeyondBackoffCurves {
		curves = append(curves, c.Normalize().Short())
	}
	b := BeyondBackoff
	return fmt.Sprintf("Over servers (the default, or a queueing --server or one behind layers) the candidates also hold a retry budget of %s of requests + %s/s and gRPC retry throttling (%s tokens, ratio %g), each per process of %d clients, and an attempt limit of %d, on each of these curves: %s; %d candidates in all.",
		pct(b[0].RetryBudget), num.Short(b[0].BudgetMinRPS), num.Short(b[1].RetryTokens), b[1].RetryTokenRatio, b[0].ClientsPerProcess, b[2].MaxAttempts,
		strings.Join(curves, "; "), len(EnvelopeSpace(sim.Article())))
}
