package sim

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// Every field of Scenario and Policy has its Field, named as the field:
// a renamed field fails here, not in a map of names elsewhere. The other
// Fields are the few values that are no field (Window, a fleet's, a
// chain's).
func TestFieldsNameTheirFields(t *testing.T) {
	t.Parallel()
	var names []string
	for _, v := range []any{Scenario{}, Policy{}} {
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			names = append(names, ty.Field(i).Name)
		}
	}
	have := map[string]bool{}
	for _, f := range Fields() {
		if have[f.String()] {
			t.Errorf("%s listed twice", f)
		}
		have[f.String()] = true
		if !slices.Contains(names, f.String()) && f != FieldWindow && f != FieldShare && f != FieldGroups && f != FieldMix &&
			f != FieldLayers && f != FieldFanout {
			t.Errorf("Field %s names no field of Scenario or Policy", f)
		}
	}
	for _, n := range names {
		if !have[n] {
			t.Errorf("%s has no Field", n)
		}
	}
}

// Each error of Validate names one of sim's Fields, for out-of-range
// values of every field.
func TestFieldErrorsNameFields(t *testing.T) {
	t.Parallel()
	bad := []Scenario{{}, {Clients: 1, Tick: time.Millisecond, Capacity: 1e3, Horizon: 0}}
	sc := Article()
	for _, f := range []func(*Scenario){
		func(s *Scenario) { s.Tick = 0 }, func(s *Scenario) { s.RecoverAt = -1 }, func(s *Scenario) { s.Capacity = -1 },
		func(s *Scenario) { s.Spread = -1 }, func(s *Scenario) { s.RetryAfter = -1 }, func(s *Scenario) { s.RampFrom = 2 },
		func(s *Scenario) { s.RejectCost = 2 }, func(s *Scenario) { s.Concurrency = -1 }, func(s *Scenario) { s.Timeout = time.Second },
		func(s *Scenario) { s.Concurrency, s.Service = 2, "x" },
	} {
		s := sc
		f(&s)
		bad = append(bad, s)
	}
	n := 0
	for _, s := range bad {
		for _, fe := range FieldErrors(s.Validate()) {
			n++
			if !slices.Contains(Fields(), fe.Field) {
				t.Errorf("%+v: error names %q, not one of Fields", s, fe.Field)
			}
		}
	}
	for _, p := range []Policy{{Kind: "x"}, {Kind: Decorrelated, Multiplier: 2, Width: 2, MaxAttempts: -1, BreakerWindow: time.Second, ThrottleK: 0.5}} {
		for _, fe := range FieldErrors(p.Validate()) {
			n++
			if !slices.Contains(Fields(), fe.Field) {
				t.Errorf("%+v: error names %q, not one of Fields", p, fe.Field)
			}
		}
	}
	if n < 12 {
		t.Errorf("%d errors: the cases do not reach Validate's checks", n)
	}
}

// The scenario says which server it has: the counting server unless it
// sets workers, and only a queueing server has a mean service time.
func TestServerKind(t *testing.T) {
	t.Parallel()
	q := Article()
	q.Concurrency, q.Service, q.ServiceTime = 4, "exponential", 20*time.Millisecond
	for _, tt := range []struct {
		name string
		sc   Scenario
		want ServerKind
	}{{"article", Article(), CountingServer}, {"workers", q, QueueingServer}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sc.Server(); got != tt.want || (tt.sc.MeanService() > 0) != (tt.want == QueueingServer) {
				t.Errorf("Server() = %v, MeanService %v: want %v", got, tt.sc.MeanService(), tt.want)
			}
			if err := tt.sc.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}
