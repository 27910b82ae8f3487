package analysis

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
)

// Shortfall is a cell that a dataset's intents (dataset.Intent: what its
// runs were meant to hold) ask for with seeds the dataset does not hold: a
// shard that never ran or died, parts deleted. A nightly gate must not pass
// over it in silence.
type Shortfall struct {
	CellKey, Label string
	Cell           grid.Cell
	Asked          int      // seeds the intents ask for
	Missing        []uint32 // of those, the seeds without a run, ascending
	Agg            *Aggregate
	Intent         string // an intent that asks for it, slash-separated in the dataset
}

// ReadPlan reads the intents of the dataset in fsys that apply to it
// (dataset.ReadPlan): metas are the metadata of its runs parts, as Scan
// read them. A dataset written before intents has none: an empty plan.
func ReadPlan(fsys fs.FS, metas []dataset.Meta) (*dataset.Plan, error) {
	l, err := dataset.List(fsys)
	if err != nil {
		return nil, err
	}
	sims := map[string][]string{}
	for _, m := range metas {
		if !slices.Contains(sims[m.Sweep], m.Sim) {
			sims[m.Sweep] = append(sims[m.Sweep], m.Sim)
		}
	}
	p, err := dataset.ReadPlan(fsys, l, sims)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, &FileError{Path: pe.Path, Err: pe.Err}
	}
	return p, err
}

// Shortfalls compares what plan asks for with the aggregates: every cell
// (by key, over every sweep that asks for it) whose aggregate lacks seeds
// it asks for, or that has none, in the plan's order.
func Shortfalls(plan *dataset.Plan, aggs []*Aggregate) ([]Shortfall, error) {
	byKey := make(map[string]*Aggregate, len(aggs))
	for _, a := range aggs {
		byKey[a.CellKey] = a
	}
	asked := map[string][]uint32{}
	var order []*dataset.PlannedCell
	for i := range plan.Cells {
		pc := &plan.Cells[i]
		if prev, ok := asked[pc.Key]; ok {
			asked[pc.Key] = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(prev), pc.Seeds...))))
			continue
		}
		asked[pc.Key] = pc.Seeds
		order = append(order, pc)
	}
	var out []Shortfall
	for _, pc := range order {
		agg := byKey[pc.Key]
		var held []uint32
		if agg != nil {
			held = agg.Seeds
		}
		var missing []uint32
		for _, s := range asked[pc.Key] {
			if _, ok := slices.BinarySearch(held, s); !ok {
				missing = append(missing, s)
			}
		}
		if len(missing) == 0 {
			continue
		}
		sf := Shortfall{CellKey: pc.Key, Label: pc.Label, Asked: len(asked[pc.Key]), Missing: missing, Agg: agg,
			Intent: plan.Intents[pc.Intents[0]].Path}
		if agg != nil {
			sf.Cell = agg.Cell
		} else {
			c, err := pc.Cell()
			if err != nil {
				return nil, &FileError{Path: sf.Intent, Err: err}
			}
			sf.Cell = c
		}
		out = append(out, sf)
	}
	return out, nil
}

// MissingRuns counts the runs the shortfalls lack.
func MissingRuns(short []Shortfall) int {
	n := 0
	for _, sf := range short {
		n += len(sf.Missing)
	}
	return n
}
