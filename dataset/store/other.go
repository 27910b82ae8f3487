package store

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// other files what is not data: leftovers and the files of writers at
// work (leftover.go), parts set aside, anything else.
func (c *checker) other() {
	o := &others{c: c, now: fileNow(c.dir), self: writerID{host: HostName(), space: PIDSpace(), pid: os.Getpid()}, ws: map[string]writers{}}
	for _, e := range c.l.Other {
		if c.ownEntry(e) {
			o.file(e)
		}
	}
}

// ownEntry reports whether the check covers entry e.
func (c *checker) ownEntry(e dataset.Entry) bool {
	if c.only == nil {
		return true
	}
	name := filepath.Base(e.Path)
	if m := tempName.FindStringSubmatch(name); m != nil {
		name = m[1]
	}
	sweep := strings.TrimPrefix(filepath.Base(filepath.Dir(e.Path)), "sweep=")
	return c.mine(dataset.Part{Sweep: sweep, Name: name})
}

// others is the filing of what is not data.
type others struct {
	c    *checker
	now  time.Time // the file server's
	self writerID
	ws   map[string]writers // by sweep
}

// writersOf reads the locks of a sweep once.
func (o *others) writersOf(sweep string) writers {
	w, ok := o.ws[sweep]
	if !ok {
		w = readWriters(join(o.c.dir, dataset.RunsDir, "sweep="+sweep), o.self, o.now)
		o.ws[sweep] = w
	}
	return w
}

// file files one entry that is not data.
func (o *others) file(e dataset.Entry) {
	rep := o.c.rep
	sweep := strings.TrimPrefix(path.Base(path.Dir(e.Path)), "sweep=")
	rand, ours := fileWriter(path.Base(e.Path))
	var gone bool
	var why string
	if ours {
		gone, why = o.writersOf(sweep).gone(rand)
	}
	switch e.Kind {
	case dataset.Temporary:
		switch {
		case !ours:
			rep.add("temporary", e.Path, "a hidden temporary file not named as herdsweep names its own: `sweep run` never removes it; remove it if no program is writing it")
		case gone:
			rep.note("leftover", e.Path, "a temporary file of a writer that is gone (%s): no reader sees it; the next `sweep run` of this sweep removes it", why)
		default:
			rep.add("temporary", e.Path, "a part being written (%s): the dataset is not finished", why)
		}
	case dataset.Lock:
		o.lock(e)
	case dataset.Stale:
		rep.add("stale", e.Path, "a part of another simulator version, set aside: not data; delete it when no longer needed")
	case dataset.Orphan:
		switch {
		case !ours:
			rep.add("orphan", e.Path, "a side-table part whose runs part is not there, not named as herdsweep names its parts: invisible to herdsweep's readers, read by a direct reader of the table; `sweep run` never removes it: remove it if it is not data")
		case gone:
			rep.add("orphan", e.Path, "a side-table part whose runs part was never committed, of a writer that is gone (%s): invisible to herdsweep's readers, read by a direct reader of the table (keep a side part's rows only where its runs part is there); the next `sweep run` of this sweep removes it", why)
		default:
			rep.add("orphan", e.Path, "a side-table part being committed (%s): the dataset is not finished", why)
		}
	case dataset.Special:
		rep.add("special", e.Path, "not a regular file (%s): never read (a named pipe would hang its reader); remove it", fileType(filepath.Join(o.c.dir, filepath.FromSlash(e.Path))))
	default:
		rep.add("unknown", e.Path, "not part of a herdsweep dataset")
	}
}

// lock files a lock: of a writer at work, or a leftover.
func (o *others) lock(e dataset.Entry) {
	rep := o.c.rep
	p := join(o.c.dir, filepath.FromSlash(e.Path))
	h, _, _, err := readLock(p, o.now)
	switch {
	case err != nil:
		rep.add("lock", e.Path, "a writer at work, or one that died: %v", err)
	case h.abandoned(o.self):
		rep.note("leftover", e.Path, "the lock of a writer that is gone (%s): no reader needs it; the next `sweep run` of these shards removes it", h)
	default:
		rep.add("lock", e.Path, "held by %s: a writer at work (the dataset is not finished), or one that died and has not yet gone silent for %v", h, LockStale)
	}
}

// fileNow is the file server's time, from a probe file in dir; this
// machine's clock when dir cannot be written.
func fileNow(dir string) time.Time {
	if t, err := volumeOf(dir).now(dir); err == nil {
		return t
	}
	return time.Now()
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
	fsys := FS(c.dir)
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
		if msg := c.missing(in); msg != "" {
			c.rep.add("missing", path, "%s", msg)
		}
	}
}

// missing says which of the runs an intent asks for are not in the
// dataset, and how to finish them; "" when none is missing.
func (c *checker) missing(in dataset.Intent) string {
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
		return ""
	}
	msg := fmt.Sprintf("%s of the %s it asks for %s not in the dataset (first: %s)", num.Int(missing), num.Plural(in.Runs, "run"), num.Agree(missing, "is", "are"), example)
	if in.Shards <= 1 {
		return msg + fmt.Sprintf("; to finish: `%s`", in.Command)
	}
	var shards, cmds []string
	for i, m := range perShard {
		if m[0] == 0 {
			continue
		}
		shards = append(shards, fmt.Sprintf("shard %d/%d lacks %d of its %d", i, in.Shards, m[0], m[1]))
		cmds = append(cmds, fmt.Sprintf("`%s --shard %d/%d`", in.Command, i, in.Shards))
	}
	return msg + "; " + strings.Join(shards, ", ") + "; to finish: " + strings.Join(cmds, ", ")
}
