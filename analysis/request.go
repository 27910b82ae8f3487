package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A Request is everything `sweep recommend` is asked: the question (a
// capacity and a fleet, or ranges of them; the outage, the window after
// recovery, the Retry-After), the servers the answer must hold on, the
// rules of the answer and the verdicts asked for beside it.
type Request struct {
	CapacityLo, CapacityHi float64 // requests/s; equal for one capacity
	ClientsLo, ClientsHi   int
	Outage, Window         time.Duration
	RetryAfter             time.Duration
	Query                  Query // objective, budget, give-ups, margin
	Seeding                Seeding
	// Servers: the user's own servers (--server); nil asks over
	// DefaultEnvelope. One counting server is answered by the single
	// server search (Search), with its statistics; a queueing server or
	// several servers by the envelope's (Advise).
	Servers []Server
	// Library and Mine are judged beside the answer (one scenario only).
	Library sim.Preset
	Mine    sim.Policy
}

// Range reports whether r asks over a range of capacities or fleets.
func (r Request) Range() bool { return r.CapacityLo != r.CapacityHi || r.ClientsLo != r.ClientsHi }

// Scenario is the question on the counting server at one point.
func (r Request) Scenario(capacity float64, clients int) sim.Scenario {
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt, sc.RetryAfter = capacity, clients, r.Outage, r.RetryAfter
	sc.Horizon = sc.RecoverAt + r.Window
	return sc
}

// Points are the scenarios of a range (a grid with steps of at most ×2),
// or the one scenario, on the counting server.
func (r Request) Points() []sim.Scenario {
	var out []sim.Scenario
	for _, c := range Grid(r.CapacityLo, r.CapacityHi) {
		for _, n := range Grid(float64(r.ClientsLo), float64(r.ClientsHi)) {
			out = append(out, r.Scenario(c, int(math.Round(n))))
		}
	}
	return out
}

// single reports whether r is answered by the single server search: one
// scenario, or a range, on one counting server. A server behind services
// is judged as one of servers (Advise), where the candidates its chain
// cannot run are skipped and named; a range does not take one (Answer).
func (r Request) single() bool {
	return r.Range() || (len(r.Servers) == 1 && !r.Servers[0].Queueing() && !r.Servers[0].Chained())
}

// server is the one counting server of a single server request.
func (r Request) server() Server {
	if len(r.Servers) == 1 {
		return r.Servers[0]
	}
	return Server{}
}

// envelope is the servers an envelope request is judged on.
func (r Request) envelope() []Server {
	if r.Servers != nil {
		return r.Servers
	}
	return DefaultEnvelope()
}

// Cells are every cell the answer may ask for, for a cache to load
// beforehand and a memory guard to weigh: the candidates' on each server,
// the verdicts', and each library's closest built-in setting of each
// candidate (JudgeClosest).
func (r Request) Cells() []grid.Cell {
	cells := r.searchCells()
	var closest []grid.Cell
	seen := map[grid.Cell]bool{}
	for _, c := range cells {
		if c.Chained() || !grid.JudgesClosest(c.Scenario) { // judged on the server alone
			continue
		}
		for _, cc := range grid.ClosestCells(c.Scenario, c.Policy) {
			if !seen[cc] {
				seen[cc] = true
				closest = append(closest, cc)
			}
		}
	}
	return append(cells, closest...)
}

func (r Request) searchCells() []grid.Cell {
	var cells []grid.Cell
	if r.single() {
		for _, sc := range r.Points() {
			pt := sc
			sc = r.server().Scenario(pt)
			cells = append(cells, grid.CandidateSpace(sc)...)
			for _, p := range []sim.Policy{r.Library.Policy, r.Mine} {
				if p.Kind != "" && !r.Range() {
					cells = append(cells, r.server().Cell(pt, p.Normalize()))
				}
			}
		}
		return cells
	}
	base := r.Points()[0]
	space := EnvelopeSpace(base)
	for _, p := range []sim.Policy{r.Library.Policy, r.Mine} {
		if p.Kind != "" {
			space = append(space, p.Normalize())
		}
	}
	env := r.envelope()
	for _, s := range env {
		for _, p := range space {
			if c := s.Cell(base, p); NotModelled(c) == "" {
				cells = append(cells, c)
			}
		}
	}
	if slices.ContainsFunc(env, Server.Chained) && !slices.Contains(env, Server{}) {
		// The answer's closest built-in settings are judged on the server
		// alone with free rejections (Answer): the answer's runs there too.
		for _, p := range space {
			cells = append(cells, Server{}.Cell(base, p))
		}
	}
	// The owner's view, on a queueing server: the fleet under each option
	// the server as it is lacks, and, on the user's own server, any answer.
	for _, s := range env {
		if !s.Queueing() {
			continue
		}
		fleet := ownerFleet()
		if len(env) == 1 {
			fleet = append(fleet, space...)
		}
		for _, o := range OwnerOptions(s)[1:] {
			for _, p := range fleet {
				cells = append(cells, o.Server.Cell(base, p))
			}
		}
	}
	return cells
}

// Response is the answer to a Request: one of Rec (one scenario, one
// counting server), Robust (a range) or Advice (servers), and the
// verdicts asked for.
type Response struct {
	Request Request
	Rec     *Recommendation
	Robust  *Robust
	Advice  *Advice
	Space   int // candidates searched (per point)
	Library *LibraryVerdict
	Mine    *LibraryVerdict
	// LibraryOver, MineOver: the verdicts over an envelope's servers.
	LibraryOver, MineOver *EnvelopeVerdict
	// Settings: how to set the answer in each library, each closest
	// built-in setting measured against it (JudgeClosest).
	Settings []sim.Setting
	Notes    []string
}

// Answered reports whether the response names a policy.
func (r *Response) Answered() bool {
	switch {
	case r.Robust != nil:
		return r.Robust.NoAnswer == ""
	case r.Advice != nil:
		return r.Advice.Envelope.Winner != nil
	}
	return r.Rec != nil && r.Rec.Best != nil
}

// Answer answers req, measuring every run through measure: the analysis
// decides, the caller says where runs come from.
func Answer(ctx context.Context, req Request, measure Measure) (*Response, error) {
	resp := &Response{Request: req}
	switch {
	case req.Range() && req.server().Chained():
		return nil, fmt.Errorf("a range answers on one counting server without services in front of it: give a single capacity and fleet to judge behind layers")
	case req.Range():
		var points []sim.Scenario
		for _, sc := range req.Points() {
			points = append(points, req.server().Scenario(sc))
		}
		rb, err := SearchRange(ctx, points, req.Query, Seeding{Initial: req.Seeding.Initial, Max: req.Seeding.Initial}, measure)
		if err != nil {
			return nil, err
		}
		resp.Robust, resp.Space = rb, len(grid.CandidateSpace(points[0]))
		return resp, nil
	case req.single():
		if err := answerOne(ctx, req, measure, resp); err != nil {
			return nil, err
		}
		if b := resp.Rec.Best; b != nil {
			st, err := JudgeClosest(ctx, b.Cell.Scenario, b.Cell.Policy, len(b.Seeds), measure)
			if err != nil {
				return nil, err
			}
			resp.Settings = st
		}
		return resp, nil
	}
	base := req.Points()[0]
	qu := Question{Base: base, Servers: req.envelope(), Own: req.Servers != nil, Query: req.Query}
	a, err := Advise(ctx, qu, measure)
	if err != nil {
		return nil, err
	}
	resp.Advice, resp.Space = a, a.Envelope.Space
	if w := a.Envelope.Winner; w != nil { // judged where every library's setting is comparable: free rejections
		st, err := JudgeClosest(ctx, base, w.Policy, a.Envelope.Seeds, measure)
		if err != nil {
			return nil, err
		}
		resp.Settings = st
	}
	for _, v := range []struct {
		p   sim.Policy
		out **EnvelopeVerdict
	}{{req.Library.Policy, &resp.LibraryOver}, {req.Mine, &resp.MineOver}} {
		if v.p.Kind == "" {
			continue
		}
		ev, err := JudgeOver(ctx, a, v.p.Normalize(), measure)
		if err != nil {
			return nil, err
		}
		*v.out = ev
	}
	return resp, nil
}

// answerOne is the single server search at one scenario, with the
// verdicts on a library and the user's policy.
func answerOne(ctx context.Context, req Request, measure Measure, resp *Response) error {
	pt := req.Points()[0]
	sc := req.server().Scenario(pt)
	q := req.Query
	q.Capacity, q.Clients, q.Outage, q.RetryAfter, q.Server = sc.Capacity, sc.Clients, sc.RecoverAt, sc.RetryAfter, serverLabel(sc)
	space := grid.CandidateSpace(sc)
	resp.Space = len(space)
	rec, aggs, err := Search(ctx, space, q, req.Seeding, measure)
	if err != nil {
		return err
	}
	resp.Rec = rec
	if sc.RetryAfter > 0 && rec.Best != nil && !ReadsRetryAfter(rec.Best.Cell.Policy) {
		for _, a := range rec.Ranked[:rec.Feasible] {
			if ReadsRetryAfter(a.Cell.Policy) {
				resp.Notes = append(resp.Notes, fmt.Sprintf("the answer ignores the server's Retry-After %v: the best client that reads it, %s, takes t99 %.1f s after recovery (%.2f× the answer)",
					sc.RetryAfter, a.Cell.Policy.Plain(), a.Summary(T99).Mean, a.Summary(T99).Mean/rec.Best.Summary(T99).Mean))
				break
			}
		}
	}
	// judge measures a policy outside the decision on the best's seeds
	// (or reuses its runs when the search had it) and judges it.
	judge := func(p sim.Policy) (*LibraryVerdict, error) {
		cell := req.server().Cell(pt, p.Normalize())
		for _, a := range aggs {
			if a.Cell == cell {
				v := Judge(rec, a)
				return &v, nil
			}
		}
		n := req.Seeding.Initial
		if rec.Best != nil {
			n = len(rec.Best.Seeds)
		}
		recs, err := measure(ctx, Runs([]grid.Cell{cell}, 1, n))
		if err != nil {
			return nil, err
		}
		v := Judge(rec, Aggregates(recs)[0])
		return &v, nil
	}
	if req.Library.Name != "" {
		if resp.Library, err = judge(req.Library.Policy); err != nil {
			return err
		}
	}
	if req.Mine.Kind != "" {
		if resp.Mine, err = judge(req.Mine); err != nil {
			return err
		}
	}
	return nil
}

// EnvelopeVerdict is a policy judged over the servers of an answer: on
// which it recovers, its worst regret there, against the answer's.
type EnvelopeVerdict struct {
	Policy    sim.Policy
	On        []*Recovery // aligned with the envelope's servers
	Recovers  int
	Worst     float64 // worst regret over the servers it recovers on
	Fine      bool    // recovers wherever the answer does, within FineFactor of its worst regret
	Verdict   string
	Servers   []Server
	Reference *Candidate // the answer
}

// JudgeOver judges p over the servers of a (on the screening seeds).
func JudgeOver(ctx context.Context, a *Advice, p sim.Policy, measure Measure) (*EnvelopeVerdict, error) {
	e := a.Envelope
	j := &judger{ctx: ctx, q: a.Question.Query, measure: measure, memo: map[string]*Record{}}
	v := &EnvelopeVerdict{Policy: p, Servers: e.Servers, Reference: e.Winner}
	var fails, unjudged []string
	for _, s := range e.Servers {
		r, err := j.recovery(s.Cell(a.Question.Base, sim.Policy{}), p, e.Screened)
		if err != nil {
			return nil, err
		}
		v.On = append(v.On, &r)
		switch {
		case r.Recovers():
			v.Recovers++
			v.Worst = math.Max(v.Worst, r.Regret)
		case r.NotModelled:
			unjudged = append(unjudged, fmt.Sprintf("not judged on %s (%s)", s.Label(), r.Why))
		default:
			fails = append(fails, s.Label())
		}
	}
	w := e.Winner
	switch {
	case w == nil:
		v.Verdict = fmt.Sprintf("recovers on %d of %d servers; no answer to compare with", v.Recovers, len(e.Servers))
	case v.Recovers >= w.RecoversOn() && v.Worst <= FineFactor*w.Score:
		v.Fine = true
		v.Verdict = fmt.Sprintf("fine: recovers on %d of %d servers, worst %.2f× the least possible time (the answer's: %.2f×)", v.Recovers, len(e.Servers), v.Worst, w.Score)
	default:
		msg := fmt.Sprintf("recovers on %d of %d servers (the answer: %d)", v.Recovers, len(e.Servers), w.RecoversOn())
		if p.LetsClientsGiveUp() && v.Recovers > 0 {
			msg += ", where it does by letting clients give up"
		}
		if len(fails) > 0 {
			msg += "; not on " + fails[0]
			if len(fails) > 1 {
				msg += fmt.Sprintf(" and %d more", len(fails)-1)
			}
		}
		if v.Recovers >= w.RecoversOn() {
			msg += fmt.Sprintf("; worst %.2f× the least possible time (the answer's: %.2f×)", v.Worst, w.Score)
		}
		v.Verdict = msg + "; switch to " + w.Policy.Plain()
	}
	for _, u := range unjudged {
		v.Verdict += "; " + u
	}
	a.Runs += j.runs
	return v, nil
}
