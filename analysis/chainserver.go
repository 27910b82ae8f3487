package analysis

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A server may stand behind a chain of services (sim.Chain): clients call
// A, A calls B, …, the last calls the server, each service with its own
// capacity, outage and retry policy. The chain is the cell's (grid.Cell's
// Layers and Fanout), not the scenario's, so a server becomes a cell in
// one place, Server.Cell, and every measurement of a server goes through
// it.

// Chained reports whether s stands behind services (layers).
func (s Server) Chained() bool { return s.Layers != "" }

// Cell is policy p's cell on server s for the question base: s's scenario
// (Server.Scenario) and its chain.
func (s Server) Cell(base sim.Scenario, p sim.Policy) grid.Cell {
	return grid.Cell{Scenario: s.Scenario(base), Policy: p, Layers: s.Layers, Fanout: s.Fanout}
}

// NotModelled says why the chain of cell c cannot run its clients' policy
// (sim.ValidateChain refuses clients with client components: breakers,
// gRPC retry tokens, throttling, a retry budget per process…); "" when it
// can, or c has no chain.
func NotModelled(c grid.Cell) string {
	if !c.Chained() {
		return ""
	}
	ch, err := c.Chain()
	if err != nil || sim.ValidateChain(c.Scenario, ch, sim.Policy{}) != nil {
		return "" // the chain's own fault, not the policy's: ParseServer refuses it
	}
	if sim.ValidateChain(c.Scenario, ch, c.Policy) == nil {
		return ""
	}
	return fmt.Sprintf("not modelled behind services: its client components (%s); a chain models attempt limits, backoff and retry budgets",
		strings.TrimPrefix(strings.TrimSpace(c.Policy.ComponentsShort()), "+ "))
}

// chainLabel is the end of Label for a server behind services: ",
// behind A no limit, exponential …; B no limit, no retries"; "" for none.
func (s Server) chainLabel() string {
	if !s.Chained() {
		return ""
	}
	return ", behind " + CellServicesWords(grid.Cell{Layers: s.Layers, Fanout: s.Fanout})
}

// cutLayers splits a server spec at its layers key, which takes the rest
// of the spec (the layers text has spaces and quotes of its own):
// "fail_share=0.1 layers=policy=\"…\" | policy=none" is
// "fail_share=0.1" and `policy="…" | policy=none`.
func cutLayers(spec string) (rest, layers string, ok bool) {
	for i := 0; i < len(spec); i++ {
		if strings.HasPrefix(spec[i:], "layers=") && (i == 0 || unicode.IsSpace(rune(spec[i-1]))) {
			return spec[:i], strings.TrimSpace(spec[i+len("layers="):]), true
		}
	}
	return spec, "", false
}

// layersWant is what a server spec's layers key accepts.
var layersWant = fmt.Sprintf("services from the one the clients call, key=value (%s) separated by \" | \", after layers= and last in the spec: layers=policy=\"exponential base_s=0.1 max_attempts=3\" | capacity_rps=500 policy=none",
	strings.Join(grid.LayerKeys, ", "))

// readChain sets s's chain from a spec's layers text (written as
// grid.EncodeLayers writes it, so that a cell's key is a sweep's) and
// fanout, and checks it in front of s on base: sim.ValidateChain, the one
// owner of its bounds, says what a chain accepts.
func (s *Server) readChain(text string, chained bool, fanout int, base sim.Scenario) error {
	if !chained {
		if fanout != 0 {
			return fmt.Errorf("fanout=%d: want it with layers (the last service calls that many copies of the server)", fanout)
		}
		return nil
	}
	ls, err := grid.DecodeLayers(text)
	if err == nil && len(ls) == 0 {
		err = errors.New("no services")
	}
	if err != nil {
		return fmt.Errorf("layers=%s: %v: want %s", text, err, layersWant)
	}
	s.Layers, s.Fanout = grid.EncodeLayers(ls), fanout
	if s.Queueing() {
		// sim runs queueing services and servers in a chain, but not the
		// wait bound recommend's queueing servers keep (Server.Scenario)
		return fmt.Errorf("layers=in front of this server: want a counting server (a queueing server here bounds the wait in its queue, which a chain does not model; a sweep's layers take queueing services and servers)")
	}
	c := s.Cell(base, sim.Policy{})
	ch, err := c.Chain()
	if err == nil {
		err = sim.ValidateChain(c.Scenario, ch, sim.Policy{})
	}
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		return errors.New(grid.UserWords(fe))
	}
	return err
}

// joinLabels is the servers' labels, each in brackets: a chained server's
// label holds semicolons of its own.
func joinLabels(servers []Server) string {
	var ls []string
	for _, s := range servers {
		ls = append(ls, "("+s.Label()+")")
	}
	return strings.Join(ls, ", ")
}

// unmodelled is the recovery of the policy of cell c on a server whose
// chain cannot run it: not measured, not back, and why; ok is false when
// the chain can run it.
func unmodelled(c grid.Cell) (r Recovery, ok bool) {
	why := NotModelled(c)
	return Recovery{Ideal: Ideal(c.Scenario), Time: math.NaN(), Regret: math.Inf(1), Why: why, NotModelled: true}, why != ""
}

// markNotModelled judges, without a run, every candidate a chained
// server's chain cannot run, so that none of them is measured there and
// the answer says which were skipped (Envelope.NotModelledOn).
func (e *envelopeSearch) markNotModelled() {
	for i, at := range e.cells {
		if !at.Chained() {
			continue
		}
		for _, c := range e.cands {
			at.Policy = c.Policy
			if r, ok := unmodelled(at); ok {
				c.On[i] = &r
			}
		}
	}
}

// NotModelledOn are the candidates server i's chain of services cannot
// run (NotModelled), left out there without a run: the answer on it is
// the best of the others.
func (e *Envelope) NotModelledOn(i int) []*Candidate {
	var out []*Candidate
	for _, c := range e.Candidates {
		if r := c.On[i]; r != nil && r.NotModelled {
			out = append(out, c)
		}
	}
	return out
}
