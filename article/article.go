// Package article holds the article's tables: the cells that reproduce
// each row and the figures the article published for them, with the seeds
// on which its non-random rows come out to the printed digit. `sweep
// reproduce` and the report set them against the simulator's; a sweep may
// run them as a built-in experiment (experiment = "article").
//
// It builds on grid's cells and reads no file.
package article

import (
	"slices"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Metric names a figure the article published.
type Metric string

// The article's columns.
const (
	Sent Metric = "sent" // requests that reached the server at or after recovery
	Peak Metric = "peak" // most arrivals in one tick after recovery, as requests/s
	T50  Metric = "t50"  // first tick (s) at which 50 % of clients had succeeded
	T99  Metric = "t99"  // first tick (s) at which 99 % of clients had succeeded
)

// Published is one figure as the article printed it.
type Published struct {
	Value       float64
	NotFinished bool // "not finished within 20 min"
}

// Row is one row of an article table: the cell that reproduces it and what
// the article printed for it.
type Row struct {
	Label     string
	Cell      grid.Cell
	Published map[Metric]Published
}

// Table is one of the article's tables.
type Table struct {
	ID      string // "table1" …
	Title   string
	Metrics []Metric
	Rows    []Row
}

// Seeds are seeds with which the article's non-random rows come out
// to the printed digit (found by running its code; its own seeds are not
// published).
var Seeds = []uint32{206, 207, 208, 209, 210}

func articleCell(p sim.Policy, retryAfter time.Duration) grid.Cell {
	sc := sim.Article()
	sc.RetryAfter = retryAfter
	return grid.Cell{Scenario: sc, Policy: p.Normalize()}
}

func pol(k sim.Kind) sim.Policy { return sim.DefaultPolicy(k) }

func withCap(p sim.Policy, d time.Duration) sim.Policy { p.Cap = d; return p }

func withWidth(w float64) sim.Policy { p := pol(sim.WidthJitter); p.Width = w; return p }

func figs(sent, peak, t50, t99 float64) map[Metric]Published {
	m := map[Metric]Published{Sent: {Value: sent}, Peak: {Value: peak}, T99: {Value: t99}}
	if t50 >= 0 {
		m[T50] = Published{Value: t50}
	}
	return m
}

// Tables returns tables 1–4 of the article with their published
// figures (see shared/reference/article-tables.md).
func Tables() []Table {
	fixed5 := sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}
	const ra = 30 * time.Second
	return []Table{
		{ID: "table1", Title: "Naive strategies (cap 60 s)", Metrics: []Metric{Sent, Peak, T50, T99}, Rows: []Row{
			{"fixed 5 s", articleCell(fixed5, 0), figs(9423, 1174, 50.4, 73.5)},
			{"exponential, no jitter", articleCell(pol(sim.Exponential), 0), figs(9423, 1174, 242.4, 507.5)},
			{"exponential + full jitter", articleCell(pol(sim.FullJitter), 0), figs(2011, 152, 43.5, 84.5)},
			{"exponential + equal jitter", articleCell(pol(sim.EqualJitter), 0), figs(2152, 224, 48.4, 103.3)},
			{"decorrelated jitter", articleCell(pol(sim.Decorrelated), 0), figs(2324, 264, 39.0, 73.4)},
		}},
		{ID: "table2", Title: "The cap re-synchronises clients (no jitter)", Metrics: []Metric{Sent, Peak, T99}, Rows: []Row{
			{"exponential, cap 60 s", articleCell(pol(sim.Exponential), 0), figs(9423, 1174, -1, 507.5)},
			{"exponential, cap 300 s", articleCell(withCap(pol(sim.Exponential), 5*time.Minute), 0),
				map[Metric]Published{Sent: {Value: 8960}, Peak: {Value: 1174}, T99: {NotFinished: true}}},
		}},
		{ID: "table3", Title: "Jitter width (all capped at 60 s)", Metrics: []Metric{Sent, Peak, T99}, Rows: []Row{
			{"no jitter", articleCell(pol(sim.Exponential), 0), figs(9423, 1174, -1, 507.5)},
			{"±10 %", articleCell(withWidth(0.10), 0), figs(3754, 706, -1, 129.4)},
			{"±25 %", articleCell(withWidth(0.25), 0), figs(2554, 370, -1, 72.8)},
			{"full jitter (uniform 0..delay)", articleCell(pol(sim.FullJitter), 0), figs(2011, 152, -1, 84.5)},
			{"decorrelated jitter", articleCell(pol(sim.Decorrelated), 0), figs(2324, 264, -1, 73.4)},
		}},
		{ID: "table4", Title: "Retry-After: 30 returned by the server", Metrics: []Metric{Sent, Peak, T50, T99}, Rows: []Row{
			{"honour Retry-After exactly", articleCell(pol(sim.RAExact), ra), figs(9423, 1174, 150.4, 283.5)},
			{"Retry-After + full jitter", articleCell(pol(sim.RAFullJitter), ra), figs(3818, 1208, 44.6, 60.9)},
			{"Retry-After as lower bound, ×1..2", articleCell(pol(sim.RALowerBound), ra), figs(3762, 1174, 74.1, 90.9)},
			{"ignore Retry-After, decorrelated", articleCell(pol(sim.RAIgnore), ra), figs(2324, 264, 39.0, 73.4)},
		}},
	}
}

// Builtin returns the cells of a built-in experiment, distinct and in
// table order: "article" (tables 1–4) or "table1" … "table4".
func Builtin(name string) ([]grid.Cell, bool) {
	var cells []grid.Cell
	seen := map[string]bool{}
	for _, t := range Tables() {
		if name != "article" && name != t.ID {
			continue
		}
		for _, r := range t.Rows {
			if k := r.Cell.Key(); !seen[k] {
				seen[k] = true
				cells = append(cells, r.Cell)
			}
		}
	}
	return cells, len(cells) > 0
}

// BuiltinNames lists the built-in experiments.
func BuiltinNames() []string {
	names := []string{"article"}
	for _, t := range Tables() {
		names = append(names, t.ID)
	}
	return slices.Clip(names)
}
