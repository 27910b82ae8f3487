package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// recordIntent records what the sweep is meant to hold (dataset.Intent):
// every run of s, of every shard, and the rolling seeds of every shard. It
// writes the intent once, create-only: a hard link of a temporary file, so
// that the file appears whole or not at all; finding the same intent there
// (another shard's, or an earlier night's) is success. It returns the
// intent's path.
func (st *store) recordIntent(s *experiments.Sweep, rolling []grid.Run, meta dataset.Meta, shard shardSpec) (string, error) {
	in := dataset.Intent{Sweep: s.Name, Sim: sim.Version, Queue: sim.QueueVersion, ConfigHash: meta.ConfigHash,
		Command: meta.Command, Shards: max(shard.n, 1)}
	if shard.n > 1 {
		in.Command = strings.Replace(meta.Command, " --shard "+shard.String(), "", 1)
	}
	at := map[string]int{} // canonical → index in cells
	var cells []grid.Cell
	var seeds [][]uint32
	add := func(r grid.Run) {
		k := r.Cell.Canonical()
		i, ok := at[k]
		if !ok {
			i = len(cells)
			at[k] = i
			cells, seeds = append(cells, r.Cell), append(seeds, nil)
		}
		seeds[i] = append(seeds[i], r.Seed)
	}
	for i := range s.Len() {
		add(s.Run(i))
	}
	for _, r := range rolling {
		add(r)
	}
	for i, c := range cells {
		ss := slices.Compact(slices.Sorted(slices.Values(seeds[i])))
		in.Runs += len(ss)
		in.Cells = append(in.Cells, dataset.IntentCell{Key: c.Key(), Label: c.Label(), Params: c.Canonical(), Seeds: dataset.FormatSeeds(ss)})
	}
	name, b, err := in.Encode()
	if err != nil {
		return "", err
	}
	dir := st.dir(dataset.RunsDir)
	path := filepath.Join(dir, name)
	if err := writeOnce(dir, name, "."+name+"."+st.id.rand+".tmp", b); err != nil {
		return "", fmt.Errorf("recording what %s is meant to hold: %w", s.Name, err)
	}
	return path, nil
}

// writeOnce creates dir/name holding b, create-only: through a hard link
// of the temporary file tmp, so that it appears whole; where hard links
// are not to be had, with O_EXCL. A file of that name holding b already
// is success; one holding anything else is an error.
func writeOnce(dir, name, tmp string, b []byte) error {
	path, tpath := filepath.Join(dir, name), filepath.Join(dir, tmp)
	same := func() error {
		cur, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, b) {
			return fmt.Errorf("%s is there and holds something else: damaged; move it away", path)
		}
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return same()
	}
	if err := os.WriteFile(tpath, b, 0o644); err != nil {
		os.Remove(tpath)
		return err
	}
	if f, err := os.Open(tpath); err == nil {
		f.Sync()
		f.Close()
	}
	err := os.Link(tpath, path)
	os.Remove(tpath)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return same()
	default: // no hard links here: create it at once
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return same()
		}
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// shardOf is grid.Run.Shard of the run of key k.
func shardOf(k string, n int) int {
	h := sha256.Sum256([]byte(k))
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(n))
}

// intents checks the runs the dataset's intents ask for against the runs
// read: every run of an intent that applies must be stored (in any
// sweep's folder). It names, per intent, the runs missing and, for a
// sharded sweep, the shards they belong to and the commands that finish
// them.
func (c *checker) intents() {
	sims := map[string][]string{}
	for _, p := range c.l.Runs {
		if m, ok := c.manifest[p.Sweep+"/"+p.Name]; ok && !slices.Contains(sims[p.Sweep], m.Sim) {
			sims[p.Sweep] = append(sims[p.Sweep], m.Sim)
		}
	}
	fsys := os.DirFS(c.dir)
	for _, ip := range c.l.Intents {
		path := ip.Path()
		in, err := dataset.ReadIntent(fsys, path)
		if err != nil {
			c.rep.add("corrupt", path, "not an intent herdsweep wrote: %v; move it away if it is not one", err)
			continue
		}
		if vs := sims[ip.Sweep]; len(vs) > 0 && !slices.Contains(vs, in.Sim) {
			continue // superseded: see dataset.Intent
		}
		if in.Sim != sim.Version || in.Queue != sim.QueueVersion {
			c.rep.note("intent", path, "written by simulator %s (%s): this one (%s, %s) cannot tell the keys of its runs", in.Sim, in.Queue, sim.Version, sim.QueueVersion)
			continue
		}
		missing, example := 0, ""
		perShard := make([][2]int, in.Shards) // missing, of
		for _, ic := range in.Cells {
			seeds, _ := dataset.ParseSeeds(ic.Seeds) // checked by ReadIntent
			for _, seed := range seeds {
				k := grid.RunKey(ic.Params, seed)
				sh := 0
				if in.Shards > 1 {
					sh = shardOf(k, in.Shards)
				}
				perShard[sh][1]++
				if _, ok := c.first.get(k); ok {
					continue
				}
				missing++
				perShard[sh][0]++
				if example == "" {
					example = fmt.Sprintf("%s seed %d", ic.Label, seed)
				}
			}
		}
		if missing == 0 {
			continue
		}
		msg := fmt.Sprintf("%s of the %s it asks for %s not in the dataset (first: %s)", num.Int(missing), num.Plural(in.Runs, "run"), num.Agree(missing, "is", "are"), example)
		if in.Shards > 1 {
			var shards, cmds []string
			for i, m := range perShard {
				if m[0] == 0 {
					continue
				}
				shards = append(shards, fmt.Sprintf("shard %d/%d lacks %d of its %d", i, in.Shards, m[0], m[1]))
				cmds = append(cmds, fmt.Sprintf("`%s --shard %d/%d`", in.Command, i, in.Shards))
			}
			msg += "; " + strings.Join(shards, ", ") + "; to finish: " + strings.Join(cmds, ", ")
		} else {
			msg += fmt.Sprintf("; to finish: `%s`", in.Command)
		}
		c.rep.add("missing", path, "%s", msg)
	}
}
