package store

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// IntentOf is what a sweep is meant to hold (dataset.Intent): every one of
// runs, of every shard, by cell and seed, as the command meta.Command of
// shard runs it (the intent names the command without its --shard).
func IntentOf(sweep string, runs iter.Seq[grid.Run], meta dataset.Meta, shard Shard) dataset.Intent {
	in := dataset.Intent{Sweep: sweep, Sim: sim.Version, Queue: sim.QueueVersion, ConfigHash: meta.ConfigHash,
		Command: meta.Command, Shards: max(shard.N, 1)}
	if shard.N > 1 {
		in.Command = strings.Replace(meta.Command, " --shard "+shard.String(), "", 1)
	}
	at := map[string]int{} // canonical → index in cells
	var cells []grid.Cell
	var seeds [][]uint32
	var last grid.Cell // the cell of i: a sweep hands out a cell's seeds in a row
	i := -1
	for r := range runs {
		if i < 0 || r.Cell != last {
			k := r.Cell.Canonical()
			var ok bool
			if i, ok = at[k]; !ok {
				i = len(cells)
				at[k] = i
				cells, seeds = append(cells, r.Cell), append(seeds, nil)
			}
			last = r.Cell
		}
		seeds[i] = append(seeds[i], r.Seed)
	}
	for i, c := range cells {
		ss := slices.Compact(slices.Sorted(slices.Values(seeds[i])))
		in.Runs += len(ss)
		in.Cells = append(in.Cells, dataset.IntentCell{Key: c.Key(), Label: c.Label(), Params: c.Canonical(), Seeds: dataset.FormatSeeds(ss)})
	}
	return in
}

// RecordIntent records what the writer's sweep is meant to hold (IntentOf).
// It writes the intent once, create-only: a hard link of a temporary
// file, so that the file appears whole or not at all; finding the same
// intent there (another shard's, or an earlier night's) is success. It
// returns the intent's path.
func (w *Writer) RecordIntent(in dataset.Intent) (string, error) {
	name, b, err := in.Encode()
	if err != nil {
		return "", err
	}
	dir := w.Dir(dataset.RunsDir)
	path := join(dir, name)
	if err := w.v.writeOnce(dir, name, "."+name+"."+w.id.rand+".tmp", b); err != nil {
		return "", fmt.Errorf("recording what %s is meant to hold: %w", in.Sweep, err)
	}
	return path, nil
}

// shardOf is grid.Run.Shard of the run of key k.
func shardOf(k string, n int) int {
	h := sha256.Sum256([]byte(k))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}
