package analysis

import (
	"context"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// A Question is what `sweep recommend` asks when the server is part of
// the question: the scenario on the counting server (capacity, fleet,
// outage, window, Retry-After), the servers the answer must hold on (the
// user's own, or DefaultEnvelope), and the rules of the answer.
type Question struct {
	Base    sim.Scenario
	Servers []Server
	// Own: the servers are the user's (--server), not the default
	// envelope.
	Own         bool
	Query       Query
	Seeding     EnvelopeSeeding
	MarginSeeds int // seeds of each margin's bisection
	// Space is the candidate space; nil: EnvelopeSpace(Base).
	Space []sim.Policy
}

// Advice is the answer to a Question, a value that `sweep recommend` and
// the report render, never compute.
type Advice struct {
	Question Question
	Envelope *Envelope
	// Margins: how far the answer holds along the rejection cost, the
	// client timeout and the background load (nil without an answer).
	Margins []Margin
	// Owner: what the server's owner can do, on the server that defeats
	// the fleet (a defeating server, or the user's queueing server); nil
	// when there is none to show.
	Owner *OwnerView
	Runs  int           // runs asked of the measure
	Took  time.Duration // set by the caller
}

// DefaultMarginSeeds are the seeds of a margin's bisection;
// DefaultOwnerSeeds those of the owner's view.
const (
	DefaultMarginSeeds = 3
	DefaultOwnerSeeds  = 2
)

// Advise answers qu: the envelope's answer, its margins and the owner's
// view, measuring every run through measure.
func Advise(ctx context.Context, qu Question, measure Measure) (*Advice, error) {
	if qu.Seeding == (EnvelopeSeeding{}) {
		qu.Seeding = DefaultEnvelopeSeeding
	}
	if qu.MarginSeeds == 0 {
		qu.MarginSeeds = DefaultMarginSeeds
	}
	space := qu.Space
	if space == nil {
		space = EnvelopeSpace(qu.Base)
	}
	env, err := SearchEnvelope(ctx, qu.Base, qu.Servers, space, qu.Query, qu.Seeding, measure)
	if err != nil {
		return nil, err
	}
	a := &Advice{Question: qu, Envelope: env, Runs: env.Runs}
	w := env.Winner
	if w == nil {
		return a, nil
	}
	axes := MarginAxes(qu.Servers, func(i int) bool { return w.On[i] != nil && w.On[i].Recovers() })
	ms, runs, err := Margins(ctx, qu.Base, w.Policy, axes, space, qu.Query, qu.MarginSeeds, measure)
	if err != nil {
		return nil, err
	}
	a.Margins, a.Runs = ms, a.Runs+runs
	if s, ok := ownerServer(qu, env); ok {
		v, runs, err := Owner(ctx, qu.Base, s, w.Policy, qu.Query, DefaultOwnerSeeds, measure)
		if err != nil {
			return nil, err
		}
		a.Owner, a.Runs = v, a.Runs+runs
	}
	return a, nil
}

// ownerServer is the server the owner's view is measured on: the first
// defeating queueing server (in the order the search measures them),
// else the user's own queueing server.
func ownerServer(qu Question, env *Envelope) (Server, bool) {
	for _, i := range serverOrder(qu.Servers) {
		if containsInt(env.Defeating, i) && qu.Servers[i].Queueing() {
			return qu.Servers[i], true
		}
	}
	if qu.Own {
		for _, s := range qu.Servers {
			if s.Queueing() {
				return s, true
			}
		}
	}
	return Server{}, false
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
