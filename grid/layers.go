package grid

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A chain of services in front of the scenario's server (sim.Chain) is a
// cell's "layers" parameter: its front services written as text, one per
// service from the one the clients call, separated by " | ", each
//
//	capacity_rps=500 outage_start_s=0 recover_s=0 policy="exponential base_s=0.1 max_attempts=3"
//
// with the policy as a spec (ParsePolicy; "none" for a service that never
// retries), then, only when set, a queueing service's and a caller's
// timeout's keys (sim/chainq.go):
//
//	… policy="none" concurrency=8 service="fixed" service_s=0.02 queue_limit=50 timeout_s=1
//
// so that a service without them reads as it always has. EncodeLayers
// writes it and DecodeLayers reads it back; fanout is a parameter of its
// own; the server's failure share is fail_share.

// LayerKeys are the keys of one service, in the order EncodeLayers
// writes them.
var LayerKeys = []string{"capacity_rps", "outage_start_s", "recover_s", "policy", "concurrency", "service", "service_s", "queue_limit", "timeout_s"}

// NoRetry is the policy spec of a service that never retries.
const NoRetry = "none"

// EncodeLayers writes front services as the layers parameter's text.
func EncodeLayers(ls []sim.Layer) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		spec := NoRetry
		if l.Policy != (sim.Policy{}) {
			spec = Cell{Policy: l.Policy}.PolicySpec()
		}
		parts[i] = fmt.Sprintf("capacity_rps=%s outage_start_s=%s recover_s=%s policy=%s",
			strconv.FormatFloat(l.Capacity, 'g', -1, 64), strconv.FormatFloat(l.OutageStart.Seconds(), 'g', -1, 64),
			strconv.FormatFloat(l.RecoverAt.Seconds(), 'g', -1, 64), strconv.Quote(spec)) + queueingText(l)
	}
	return strings.Join(parts, " | ")
}

// queueingText is the keys of a queueing service and of its caller's
// timeout, each only when set: "" for a counting service its caller waits
// for, whose text stays as it was before these keys.
func queueingText(l sim.Layer) string {
	var b strings.Builder
	if l.Concurrency != 0 {
		fmt.Fprintf(&b, " concurrency=%d", l.Concurrency)
	}
	if l.Service != "" {
		fmt.Fprintf(&b, " service=%s", strconv.Quote(l.Service))
	}
	if l.ServiceTime != 0 {
		fmt.Fprintf(&b, " service_s=%s", strconv.FormatFloat(l.ServiceTime.Seconds(), 'g', -1, 64))
	}
	if l.QueueLimit != 0 {
		fmt.Fprintf(&b, " queue_limit=%d", l.QueueLimit)
	}
	if l.Timeout != 0 {
		fmt.Fprintf(&b, " timeout_s=%s", strconv.FormatFloat(l.Timeout.Seconds(), 'g', -1, 64))
	}
	return b.String()
}

// LayerPolicy reads a service's policy: a spec (ParsePolicy) or "none".
func LayerPolicy(spec string) (sim.Policy, error) {
	if strings.EqualFold(strings.TrimSpace(spec), NoRetry) {
		return sim.Policy{}, nil
	}
	return ParsePolicy(spec)
}

// DecodeLayers reads the layers parameter's text back into front
// services; "" is none.
func DecodeLayers(s string) ([]sim.Layer, error) {
	if s == "" {
		return nil, nil
	}
	var out []sim.Layer
	for n, part := range strings.Split(s, " | ") {
		var l sim.Layer
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("service %d is empty: want key=value", n+1)
		}
		for rest := strings.TrimSpace(part); rest != ""; {
			k, after, ok := strings.Cut(rest, "=")
			if !ok {
				return nil, fmt.Errorf("service %d: %q: want key=value", n+1, rest)
			}
			var raw string
			if strings.HasPrefix(after, `"`) {
				q, err := strconv.QuotedPrefix(after)
				if err != nil {
					return nil, fmt.Errorf("service %d: %s: %v", n+1, k, err)
				}
				raw, rest = q, after[len(q):]
				raw, _ = strconv.Unquote(raw)
			} else {
				raw, rest, _ = strings.Cut(after, " ")
			}
			rest = strings.TrimPrefix(rest, " ")
			if err := setLayerKey(&l, k, raw); err != nil {
				return nil, fmt.Errorf("service %d: %w", n+1, err)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// setLayerKey sets one key of a service from its text.
func setLayerKey(l *sim.Layer, k, raw string) error {
	switch k {
	case "policy":
		p, err := LayerPolicy(raw)
		if err != nil {
			return fmt.Errorf("policy %q: %v", raw, err)
		}
		l.Policy = p
		return nil
	case "service":
		l.Service = raw
		return nil
	case "concurrency", "queue_limit":
		v, err := strconv.Atoi(raw)
		if err != nil {
			return fmt.Errorf("%s %q: want a whole number", k, raw)
		}
		if k == "concurrency" {
			l.Concurrency = v
		} else {
			l.QueueLimit = v
		}
		return nil
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return fmt.Errorf("%s %q: want a number", k, raw)
	}
	if k == "capacity_rps" {
		l.Capacity = v
		return nil
	}
	if d := LayerDuration(l, k); d != nil {
		x, ok := duration(v)
		if !ok {
			return fmt.Errorf("%s %v: want a whole number of milliseconds, in s", k, v)
		}
		*d = x
		return nil
	}
	return fmt.Errorf("unknown key %q: want one of %s", k, strings.Join(LayerKeys, ", "))
}

// LayerDuration is the field of l that key k (a time in s) sets, or nil.
func LayerDuration(l *sim.Layer, k string) *time.Duration {
	switch k {
	case "outage_start_s":
		return &l.OutageStart
	case "recover_s":
		return &l.RecoverAt
	case "service_s":
		return &l.ServiceTime
	case "timeout_s":
		return &l.Timeout
	}
	return nil
}

// Chained reports whether the cell has services in front of its server.
func (c Cell) Chained() bool { return c.Layers != "" }

// Chain returns the cell's chain (sim.Chain): its layers and fanout. An error is a sim.FieldError of sim.FieldLayers.
func (c Cell) Chain() (sim.Chain, error) {
	ch := sim.Chain{Fanout: c.Fanout}
	ls, err := DecodeLayers(c.Layers)
	if err != nil {
		return ch, &sim.FieldError{Field: sim.FieldLayers, Value: err.Error(), Want: fmt.Sprintf("services as key=value (%s) separated by \" | \"", strings.Join(LayerKeys, ", "))}
	}
	if len(ls) > len(ch.Front) {
		return ch, &sim.FieldError{Field: sim.FieldLayers, Value: fmt.Sprintf("%d services", len(ls)), Want: fmt.Sprintf("1 to %d services in front of the server", len(ch.Front))}
	}
	ch.N = copy(ch.Front[:], ls)
	return ch, nil
}

// validateChain checks the cell's chain, when it has any of its
// parameters set.
func (c Cell) validateChain() error {
	if c.Layers == "" && c.Fanout == 0 {
		return nil
	}
	if c.Mixed() {
		return &sim.FieldError{Field: sim.FieldLayers, Value: c.Layers, Want: "no mixed fleet (mix) in front of layers"}
	}
	ch, err := c.Chain()
	if err != nil {
		return err
	}
	return sim.ValidateChain(c.Scenario, ch, c.Policy)
}

// SecondsDuration converts seconds to a whole number of milliseconds, as
// every _s parameter is read; ok is false when v is not one.
func SecondsDuration(v float64) (time.Duration, bool) { return duration(v) }
