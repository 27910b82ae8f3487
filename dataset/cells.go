package dataset

import (
	"math"
	"strings"

	"github.com/herdsweep/herdsweep/grid"
)

// CellsSchema is the schema version of the cells table: one row per cell
// (a run's parameters without its seed), each metric summarised over the
// cell's seeds. `sweep cells` writes it from a streaming scan of the runs.
const CellsSchema = "cells/1"

// Columns of the cells table beside the parameters and the runs table's
// cell_key, label and policy_spec.
const (
	ColSweeps = "sweeps"
	ColRuns   = "runs"
)

// Stat is one metric of a cell over its seeds, as the cells table stores
// it: N runs with a value and Unfinished without (a milestone never
// reached), the mean, sample standard deviation, 95 % interval of the mean
// (Student-t; a share's the Wilson score interval at the effective sample
// size, within [0, 1]), least and greatest value of the N.
type Stat struct {
	N, Unfinished              int
	Mean, SD, Lo, Hi, Min, Max float64
}

// statColumns are the columns of each metric m, as m + suffix. The values
// are null when a run did not reach the milestone (Unfinished > 0), so that
// no mean flatters a cell by leaving out its unfinished runs, and where
// undefined (sd and the interval of fewer than two runs).
var statColumns = []struct {
	suffix string
	doc    string
	get    func(Stat) float64
}{
	{"_mean", "mean over the cell's runs; null when a run did not reach it", func(s Stat) float64 { return s.Mean }},
	{"_sd", "sample standard deviation; null likewise, or with one run", func(s Stat) float64 { return s.SD }},
	{"_lo", "Student-t 95 % interval of the mean, low end; null likewise", func(s Stat) float64 { return s.Lo }},
	{"_hi", "the same, high end", func(s Stat) float64 { return s.Hi }},
	{"_min", "least value; null likewise", func(s Stat) float64 { return s.Min }},
	{"_max", "greatest value; null likewise", func(s Stat) float64 { return s.Max }},
}

// IsShare reports whether a metric column is a share, a proportion in
// [0, 1]: its name ends in _share (goodput_share), or it is the success
// rate. Its interval in the cells table is a proportion's, never beyond 0
// or 1.
func IsShare(metric string) bool {
	return strings.HasSuffix(metric, "_share") || metric == ColSuccessRate
}

// shareLoDoc documents a share's _lo column.
const shareLoDoc = "95 % interval of the mean, low end: the Wilson score interval at the effective sample size, within [0, 1] (a Student-t interval would reach past them); null likewise"

// CellRow is a row of the cells table: a cell, the sweeps and runs it
// was read from, and a Stat per metric, in the order of the table's.
type CellRow struct {
	Key, Label string
	Cell       *grid.Cell
	Sweeps     []string
	Runs       int
	Stats      []Stat
}

// CellsColumn is a column of the cells table; it is written, never read.
type CellsColumn = TableColumn[CellRow, CellRow]

// CellsTable is the cells table's one column list for the given metrics
// (columns of the runs table): the cell's key, label, policy spec and
// parameters, the sweeps and runs, then per metric its _n and _unfinished
// counts and its Stat's values (EachValue).
func CellsTable(metrics []string) []CellsColumn {
	str := func(n, doc string, get func(*CellRow) string) CellsColumn {
		return CellsColumn{Field: Field{Name: n, Type: Utf8}, Doc: doc, Get: func(r *CellRow, out *Value) { *out = Value{Str: get(r)} }}
	}
	i64 := func(n, doc string, get func(*CellRow) int) CellsColumn {
		return CellsColumn{Field: Field{Name: n, Type: Int64}, Doc: doc, Get: func(r *CellRow, out *Value) { *out = Value{Int: int64(get(r))} }}
	}
	cols := []CellsColumn{
		str(ColCellKey, "the cell (joins runs.cell_key)", func(r *CellRow) string { return r.Key }),
		str(ColLabel, "the policy in words, and scenario parameters that differ from the article's", func(r *CellRow) string { return r.Label }),
		str(ColPolicySpec, "exactly the policy that ran, as in the runs table", func(r *CellRow) string { return r.Cell.PolicySpec() }),
	}
	for i := range grid.Params {
		p := &grid.Params[i]
		cols = append(cols, CellsColumn{Field: Field{Name: p.Key, Type: paramType(p.Type), Nullable: p.NullZero}, Doc: p.Doc,
			Get: func(r *CellRow, out *Value) { *out = valueOf(p.Of(r.Cell)) }})
	}
	cols = append(cols,
		str(ColSweeps, "the sweeps whose folders hold its runs, comma-separated", func(r *CellRow) string { return strings.Join(r.Sweeps, ",") }),
		i64(ColRuns, "runs of the cell (its seeds), each counted once", func(r *CellRow) int { return r.Runs }))
	for j, m := range metrics {
		cols = append(cols,
			i64(m+"_n", "runs with a value of "+m, func(r *CellRow) int { return r.Stats[j].N }),
			i64(m+"_unfinished", "runs that never reached it (null in the runs table): counted, not dropped", func(r *CellRow) int { return r.Stats[j].Unfinished }))
		for _, sc := range statColumns {
			doc := sc.doc
			if sc.suffix == "_lo" && IsShare(m) {
				doc = shareLoDoc
			}
			cols = append(cols, CellsColumn{Field: Field{Name: m + sc.suffix, Type: Float64, Nullable: true}, Doc: m + ": " + doc,
				Get: func(r *CellRow, out *Value) {
					s := r.Stats[j]
					if v := sc.get(s); s.Unfinished == 0 && s.N > 0 && !math.IsNaN(v) {
						*out = Value{Float: v}
					} else {
						*out = Value{Null: true}
					}
				}})
		}
	}
	return cols
}

// CellsColumns documents the cells table for the given metrics.
func CellsColumns(metrics []string) []Column { return docsOf(CellsTable(metrics)) }

// CellsFields are the cells table's columns for the given metrics, in
// order.
func CellsFields(metrics []string) []Field { return fieldsOf(CellsTable(metrics)) }

// EachValue calls fn with each of s's values stored in the cells table, in
// the order of its columns.
func (s Stat) EachValue(fn func(float64)) {
	for _, sc := range statColumns {
		fn(sc.get(s))
	}
}
