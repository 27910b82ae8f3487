package grid

import (
	"fmt"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// The candidate space of `sweep recommend`: defined here once, printed by
// `sweep recommend -h` from the same values, and searched the same way
// whether or not a dataset holds some of its cells.
var (
	// Jittered exponential backoff as most libraries write it (grpc-go,
	// cenkalti/backoff): first retry after base, ×multiplier, cap, ±width.
	SpaceBases       = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	SpaceCaps        = []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute}
	SpaceMultipliers = []float64{1.5, 2}
	SpaceWidths      = []float64{0.2, 0.5, 1}
)

// RecommendWindow is how long after recovery recommend gives clients to come
// back unless told otherwise (--window), and the window of a candidates
// sweep that sets no window_s.
const RecommendWindow = 20 * time.Minute

// SpaceFamilies are the families of the candidate space: jittered
// exponential backoff with every base, multiplier, cap and width above;
// full jitter from the base (google-api-core, Envoy) and the article's
// decorrelated jitter with every base and cap (×2). Policies without jitter
// are not candidates: they keep a herd in step (the article's finding), so
// they are judged (`--mine`, `--library`), never recommended.
var SpaceFamilies = []sim.Kind{sim.GRPC, sim.APICore, sim.Decorrelated}

// RetryAfterFamilies join the space when the server sends a Retry-After.
var RetryAfterFamilies = []sim.Kind{sim.RALowerBound, sim.RAFullJitter, sim.ArticleClient}

// CandidateSpace returns every candidate policy for scenario sc, in a fixed
// order: the families of SpaceFamilies over the grid above, then the
// library presets of the space (sim.Preset.Candidate), with their own
// defaults; with a Retry-After, also the
// clients that read it (at every base and cap).
func CandidateSpace(sc sim.Scenario) []Cell {
	var ps []sim.Policy
	for _, b := range SpaceBases {
		for _, m := range SpaceMultipliers {
			for _, c := range SpaceCaps {
				for _, w := range SpaceWidths {
					ps = append(ps, sim.Policy{Kind: sim.GRPC, Base: b, Multiplier: m, Cap: c, Width: w})
				}
			}
		}
	}
	for _, b := range SpaceBases {
		for _, c := range SpaceCaps {
			ps = append(ps, sim.Policy{Kind: sim.APICore, Base: b, Multiplier: 2, Cap: c})
		}
	}
	for _, b := range SpaceBases {
		for _, c := range SpaceCaps {
			ps = append(ps, sim.Policy{Kind: sim.Decorrelated, Base: b, Cap: c})
		}
	}
	if sc.RetryAfter > 0 {
		for _, k := range RetryAfterFamilies {
			for _, b := range SpaceBases {
				for _, c := range SpaceCaps {
					p := sim.DefaultPolicy(k)
					p.Base, p.Cap = b, c
					ps = append(ps, p)
				}
			}
		}
	}
	for _, pr := range sim.Presets() {
		if pr.Candidate() {
			ps = append(ps, pr.Policy)
		}
	}
	cells := make([]Cell, len(ps))
	for i, p := range ps {
		cells[i] = Cell{Scenario: sc, Policy: p.Normalize()}
	}
	return cells
}

// ClosestCells are each library's closest built-in setting of p
// (sim.Setting.Closest) on sc: the cells recommend measures beside its
// answer to say how far the library's own defaults are from it.
func ClosestCells(sc sim.Scenario, p sim.Policy) []Cell {
	var out []Cell
	seen := map[sim.Policy]bool{p: true}
	for _, s := range p.Settings() {
		if c := s.Closest; c != nil && !seen[c.Policy] {
			seen[c.Policy] = true
			out = append(out, Cell{Scenario: sc, Policy: c.Policy})
		}
	}
	return out
}

// JudgesClosest says whether recommend measures the closest built-in
// settings of its answer on sc: on the counting server with free
// rejections, where every library setting is judged.
func JudgesClosest(sc sim.Scenario) bool {
	return sc.Concurrency == 0 && sc.RejectCost == 0
}

// CandidateCells are the cells a candidates sweep holds at sc, so that a
// dataset of them answers recommend there without simulating: the
// candidate space, then, where recommend judges them (JudgesClosest), the
// closest built-in setting of each candidate not already in it.
func CandidateCells(sc sim.Scenario) []Cell {
	cells := CandidateSpace(sc)
	if !JudgesClosest(sc) {
		return cells
	}
	seen := map[Cell]bool{}
	for _, c := range cells {
		seen[c] = true
	}
	for _, c := range cells {
		for _, cc := range ClosestCells(sc, c.Policy) {
			if !seen[cc] {
				seen[cc] = true
				cells = append(cells, cc)
			}
		}
	}
	return cells
}

// DescribeSpace says what CandidateSpace holds, for `sweep recommend -h`.
func DescribeSpace() string {
	ds := func(xs []time.Duration) string {
		var s []string
		for _, x := range xs {
			s = append(s, x.String())
		}
		return strings.Join(s, ", ")
	}
	fs := func(xs []float64, pct bool) string {
		var s []string
		for _, x := range xs {
			if pct {
				s = append(s, sim.Percent(x))
			} else {
				s = append(s, fmt.Sprintf("×%g", x))
			}
		}
		return strings.Join(s, ", ")
	}
	var presets, plain, judged []string
	for _, p := range sim.Presets() {
		switch {
		case p.Candidate():
			presets = append(presets, p.Name)
		case p.Policy.Jittered():
			judged = append(judged, p.Name)
		default:
			plain = append(plain, p.Name)
		}
	}
	n := len(CandidateSpace(sim.Article()))
	return fmt.Sprintf(`The candidates (%d without a Retry-After, defined once in grid/candidates.go):
  - exponential backoff with uniform jitter: first retry after {%s}, {%s} per attempt,
    at most {%s}, jitter {%s}
  - exponential backoff with full jitter from the base: the same bases and caps, ×2
  - decorrelated jitter: the same bases and caps
  - the library presets that jitter, with their own defaults: %s
  - with --retry-after, also Retry-After as a lower bound, Retry-After + full jitter and the
    article's client at every base and cap
Policies without jitter (and the presets %s) keep a herd in step: they are
judged (--library, --mine), never recommended. So are the presets that jitter
but joined after the space was fixed (a dated name of another, another reading
of a document, helpers and SDK defaults that give up after a few attempts): %s.`,
		n, ds(SpaceBases), fs(SpaceMultipliers, false), ds(SpaceCaps), fs(SpaceWidths, true), strings.Join(presets, ", "), strings.Join(plain, ", "), strings.Join(judged, ", "))
}
