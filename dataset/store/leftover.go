package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset"
)

// What a writer may remove, one rule that the writers' cleaning
// (Writer.clean) and Check share:
//
// A file of a sweep's folders is a leftover when its name is one of ours
// (a part's, a part's temporary file, an intent's temporary file; each
// names its writer's random id), it is not data (a temporary file, or a
// side-table part whose runs part is not there), and its writer is gone:
// no lock that is not abandoned holds its id (lock.go). The next writer of
// the sweep removes every leftover at once, naming each; nothing else is
// ever removed, whatever its name or age. `sweep check` reports a leftover
// a reader can see (a side part: a direct reader of timelines/*.parquet
// would read its rows) as a problem, and a hidden one (a temporary file, a
// lock of a writer that is gone) as a note; the files of a writer at work
// are problems (the dataset is not finished).

// intentTemp matches the temporary file of an intent: its writer's id.
var intentTemp = regexp.MustCompile(`^\.(_intent\.[0-9a-f]{16}\.json)\.([0-9a-f]{8})\.tmp$`)

// fileWriter returns the random id of the writer of one of our files: a
// part, its temporary file, or an intent's temporary file.
func fileWriter(name string) (rand string, ours bool) {
	if m := intentTemp.FindStringSubmatch(name); m != nil {
		return m[2], true
	}
	p, ok := ParsePartName(name)
	return p.Rand, ok
}

// leftoverKind says what file name of a table's sweep folder is, when it
// would be a leftover if its writer were gone: "a temporary file" or "a
// side-table part never committed"; "" for anything else (data, locks,
// intents, names not ours).
func leftoverKind(table, name string, committed map[string]bool) string {
	if _, ours := fileWriter(name); !ours {
		return ""
	}
	switch {
	case dataset.IsTemporary(name):
		return "a temporary file"
	case table != dataset.RunsDir && dataset.IsPart(name) && !committed[name]:
		return "a side-table part never committed"
	}
	return ""
}

// heldLock is a lock file read.
type heldLock struct {
	path, tag string
	content   []byte
	holder    lockHolder
}

// writers is what the locks of a sweep's runs folder say of its writers.
type writers struct {
	live      map[string]lockHolder // by random id
	abandoned []heldLock            // by path
}

// readWriters reads the locks of a sweep's runs folder: which writers are
// alive, as self judges them (lock.go), and which locks are abandoned.
func readWriters(runsDir string, self writerID, now time.Time) writers {
	ws := writers{live: map[string]lockHolder{}}
	es, _ := volumeOf(runsDir).list(runsDir)
	for _, e := range es {
		tag, ok := strings.CutPrefix(e.Name(), "_lock.")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		p := join(runsDir, e.Name())
		h, b, _, err := readLock(p, now)
		if err != nil {
			continue
		}
		if h.abandoned(self) {
			ws.abandoned = append(ws.abandoned, heldLock{p, tag, b, h})
			continue
		}
		ws.live[h.id] = h
	}
	sort.Slice(ws.abandoned, func(i, j int) bool { return ws.abandoned[i].path < ws.abandoned[j].path })
	return ws
}

// gone reports whether the writer of random id rand is gone, and why.
func (ws writers) gone(rand string) (bool, string) {
	if h, ok := ws.live[rand]; ok {
		return false, fmt.Sprintf("%s, at work", h.brief())
	}
	for _, l := range ws.abandoned {
		if l.holder.id == rand {
			return true, fmt.Sprintf("%s: its lock is abandoned", l.holder.brief())
		}
	}
	return true, fmt.Sprintf("writer %s holds no lock: it finished or was stopped", rand)
}

// A LinkError is a folder under the output reached through a symbolic link
// that leads out of it, or nowhere: a writer neither writes nor removes
// anything through it.
type LinkError struct {
	Path   string // the link
	Target string // where it leads; "" for nowhere
	Root   string // the output folder
}

func (e *LinkError) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("%s is a symbolic link that leads nowhere", e.Path)
	}
	return fmt.Sprintf("%s is a symbolic link to %s, outside %s", e.Path, e.Target, e.Root)
}

// Within refuses a folder under root (dir, a path that starts with root)
// that leads out of root through a symbolic link (a *LinkError): a sweep
// folder or plots/ linked elsewhere, where a writer would write and remove
// files outside the folder it was given. A link within root, or a folder
// not yet there, is fine.
func Within(root, dir string) error {
	if IsObject(root) {
		return nil // no links in a bucket
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil // not there yet: made as a folder
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // not there yet
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return &LinkError{Path: p, Root: root}
		}
		if r, err := filepath.Rel(realRoot, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return &LinkError{Path: p, Target: target, Root: root}
		}
	}
	return nil
}

// IsRegular reports whether entry e of folder dir is a regular file, a
// symbolic link to one, or a link to nothing (its reader then says it
// cannot open it), as dataset.List lists parts: never a named pipe, which
// would hang its reader.
func IsRegular(dir string, e fs.DirEntry) bool {
	switch t := e.Type(); {
	case t.IsRegular():
		return true
	case t&os.ModeSymlink == 0:
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err != nil || fi.Mode().IsRegular()
}
