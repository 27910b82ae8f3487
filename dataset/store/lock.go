package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A writer of a sweep holds an advisory lock: the file
// runs/sweep=NAME/_lock.TAG, created with O_EXCL, where TAG is "all" for an
// unsharded writer or "IofN" for shard I of N. It holds the writer's host,
// its pid space (PIDSpace), process id, random id (the one in the names of
// its parts and temporary files) and the time it started; the writer
// rewrites it every lockBeat, so its modification time (set by the file
// server's clock) says the writer is alive. A lock is abandoned when its
// writer ran in this pid space and its process is gone, or when it has not
// been rewritten for LockStale: by the file server's clock (compared with a
// file just written, never with this machine's clock), or, for a lock
// dated in the future, as long as a waiting writer watched it unchanged. A
// lock dated more than LockStale in the future was not written by a
// heartbeat: it is abandoned at once.
//
// A writer is gone when no lock that is not abandoned holds its random id:
// a writer takes its lock before it writes a file and gives it up when it
// writes no more. Its files are then leftovers, which the next writer of the
// sweep removes (Writer.clean) and Check reports (leftover.go).
//
// Locks keep two writers from doing the same work; they are not what keeps
// the data whole. If a lock fails (a file system without O_EXCL, a writer
// frozen longer than LockStale), part names still cannot collide and no
// writer deletes another's part in the making, so the worst case is runs
// stored twice, which readers count once and `sweep check` reports.
const (
	lockBeat = 20 * time.Second
	// LockStale is how long a lock's writer may stay silent before the
	// lock is abandoned.
	LockStale = 2 * time.Minute
	lockPoll  = 5 * time.Second
)

var (
	// A writer finding a lock of another host waits up to lockWait (long
	// enough for an abandoned lock to go stale), polling every lockPoll:
	// a pod replaced by Kubernetes finds its predecessor's lock. Tests
	// change both.
	lockWait  = LockStale + 2*lockBeat
	lockSleep = time.Sleep
)

// heldHere is the random ids of the locks this process holds: a lock of
// this pid space and process id that is not one of them was left by an
// earlier process with the same id.
var heldHere sync.Map

// lockHolder is what a lock file says.
type lockHolder struct {
	host  string
	space string // PIDSpace of the writer; "" in locks of herdsweep before 2026-12
	pid   int
	id    string
	shard string
	since string
	age   time.Duration // since the holder last rewrote it, by the file server's clock (< 0: dated in the future)
	// watched is how long a waiting writer saw the lock unchanged (its
	// content and time), by its own count of the time it waited.
	watched time.Duration
}

func (h lockHolder) String() string {
	s := fmt.Sprintf("host %s, pid %d", h.host, h.pid)
	if h.since != "" {
		s += ", since " + h.since
	}
	if h.age < 0 {
		return s + fmt.Sprintf(", dated %v in the future", (-h.age).Round(time.Second))
	}
	return s + fmt.Sprintf(", last seen %v ago", h.age.Round(time.Second))
}

// sameSpace reports whether the lock's writer ran in self's pid space, so
// that its pid says whether it is alive. A lock of an older herdsweep names
// no space: its host stands for it, as it did.
func (h lockHolder) sameSpace(self writerID) bool {
	if h.host != self.host {
		return false
	}
	if h.space == "" || self.space == "" {
		return h.space == self.space || h.space == ""
	}
	return h.space == self.space
}

// abandoned reports whether the lock's writer is gone.
func (h lockHolder) abandoned(self writerID) bool {
	if h.sameSpace(self) && h.pid > 0 && !pidAlive(h.pid) {
		return true
	}
	if h.sameSpace(self) && h.pid == self.pid {
		if _, ok := heldHere.Load(h.id); !ok {
			return true // this process's id, not one of its locks: an earlier process's
		}
	}
	return h.age > LockStale || h.age < -LockStale || h.watched > LockStale
}

// alive reports whether the lock's writer is known to be alive, so that a
// writer refuses at once rather than wait for it to go silent.
func (h lockHolder) alive(self writerID) bool {
	return h.sameSpace(self) && h.pid > 0 && pidAlive(h.pid) && !h.abandoned(self)
}

// readLock reads the lock at path, its age compared with now (the
// server's clock), and returns its content and version (lockRead).
func readLock(path string, now time.Time) (lockHolder, []byte, lockRead, error) {
	b, mod, version, err := volumeOf(path).stamp(path)
	if err != nil {
		return lockHolder{}, nil, lockRead{}, err
	}
	h := parseLock(b)
	h.age = now.Sub(mod)
	return h, b, lockRead{mod, version}, nil
}

// lockRead is when a lock read was last written, by the server's clock,
// and its version (an object's ETag).
type lockRead struct {
	mod     time.Time
	version string
}

func parseLock(b []byte) lockHolder {
	var h lockHolder
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "host":
			h.host = v
		case "space":
			h.space = v
		case "pid":
			h.pid, _ = strconv.Atoi(v)
		case "id":
			h.id = v
		case "shard":
			h.shard = v
		case "since":
			h.since = v
		}
	}
	return h
}

// lockWatch remembers the locks a waiting writer saw, to tell how long
// each stayed unchanged.
type lockWatch struct {
	waited time.Duration // so far, by lockSleep's count
	seen   map[string]lockSeen
}

type lockSeen struct {
	content []byte
	mod     time.Time
	at      time.Duration // waited when first seen so
}

// watch sets h.watched for the lock at path, read as b at r.
func (w *lockWatch) watch(h *lockHolder, path string, b []byte, r lockRead) {
	if w == nil {
		return
	}
	s, ok := w.seen[path]
	if !ok || !bytes.Equal(s.content, b) || !s.mod.Equal(r.mod) {
		s = lockSeen{content: b, mod: r.mod, at: w.waited}
		w.seen[path] = s
	}
	h.watched = w.waited - s.at
}

// sweepLock is a lock this process holds.
type sweepLock struct {
	v       volume
	path    string
	id      string // the writer's random id
	content []byte
	version string // on object storage: its ETag, which the heartbeat swaps from
	stop    chan struct{}
	wg      sync.WaitGroup
}

// lockName is the lock file of a shard tag.
func lockName(tag string) string { return "_lock." + tag }

// conflicts reports whether writers of shard tags a and b may write the
// same runs.
func conflicts(a, b string) bool {
	if a == "all" || b == "all" || a == b {
		return true
	}
	_, na, _ := strings.Cut(a, "of")
	_, nb, _ := strings.Cut(b, "of")
	return na != nb // shards of different counts overlap
}

// acquireLock takes the lock of id's shard in dir (a runs/sweep=NAME
// folder), taking over an abandoned one. When a live writer holds it, or a
// conflicting one, it refuses at once if that writer runs on this host, and
// otherwise waits up to lockWait for it to finish or go silent, saying so
// to note.
func acquireLock(dir string, id writerID, note func(string)) (*sweepLock, error) {
	w := &lockWatch{seen: map[string]lockSeen{}}
	for {
		now, err := volumeOf(dir).now(dir)
		if err != nil {
			return nil, err
		}
		l, h, path, err := tryLock(dir, id, now, w)
		if l != nil || err != nil {
			return l, err
		}
		if h.alive(id) || w.waited >= lockWait {
			return nil, fmt.Errorf("%s is being written by another sweep run (%s; lock %s): wait for it to finish, or remove the lock if that process is gone",
				dir, h, path)
		}
		if w.waited == 0 {
			note(fmt.Sprintf("%s is being written by %s (lock %s): waiting up to %v for it to finish or go silent", dir, h, path, lockWait))
		}
		lockSleep(lockPoll)
		w.waited += lockPoll
	}
}

// tryLock takes the lock once, or returns the live writer that holds it or
// a conflicting one, and the path of that writer's lock.
func tryLock(dir string, id writerID, now time.Time, w *lockWatch) (*sweepLock, lockHolder, string, error) {
	v := volumeOf(dir)
	l := &sweepLock{v: v, path: join(dir, lockName(id.tag)), id: id.rand, stop: make(chan struct{})}
	l.content = fmt.Appendf(nil, "host=%s\nspace=%s\npid=%d\nid=%s\nshard=%s\nsince=%s\n",
		id.host, id.space, id.pid, id.rand, id.tag, now.UTC().Format(time.RFC3339))
	for attempt := 0; ; attempt++ {
		version, err := v.create(l.path, l.content)
		if err == nil {
			l.version = version
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 1 {
			return nil, lockHolder{}, "", fmt.Errorf("taking lock %s: %w", l.path, err)
		}
		h, b, r, err := readLock(l.path, now)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, lockHolder{}, "", fmt.Errorf("reading lock %s: %w", l.path, err)
		}
		w.watch(&h, l.path, b, r)
		if !h.abandoned(id) {
			return nil, h, l.path, nil
		}
		// Abandoned: take it over unless it changed since it was read (on
		// a file system: remove it, and create it again).
		if taken, version := v.takeOver(l.path, b, r.version, l.content); taken {
			l.version = version
			break
		}
	}
	heldHere.Store(l.id, true)
	es, err := v.list(dir)
	if err != nil {
		l.release()
		return nil, lockHolder{}, "", err
	}
	for _, e := range es {
		tag, ok := strings.CutPrefix(e.Name(), "_lock.")
		if !ok || tag == id.tag || !conflicts(tag, id.tag) {
			continue
		}
		p := join(dir, e.Name())
		h, b, r, err := readLock(p, now)
		if err != nil {
			continue
		}
		w.watch(&h, p, b, r)
		if !h.abandoned(id) {
			l.release()
			return nil, h, p, nil
		}
	}
	l.wg.Add(1)
	go l.beat()
	return l, lockHolder{}, "", nil
}

// beat rewrites the lock every lockBeat: the file server stamps it, which
// tells other writers this one is alive. On object storage the rewrite is
// a compare-and-swap from the version this writer wrote last: a lock
// taken over is never written again.
func (l *sweepLock) beat() {
	defer l.wg.Done()
	t := time.NewTicker(lockBeat)
	defer t.Stop()
	for beat := 1; ; beat++ {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.version = l.v.rewrite(l.path, l.version, l.content, beat)
		}
	}
}

// held checks, before a commit, that the lock is still this writer's, and
// says what became of it if not.
func (l *sweepLock) held() error {
	b, err := l.v.readFile(l.path)
	switch {
	case err == nil && bytes.Equal(withoutBeat(b), l.content):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		dir := dirOf(l.path)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) && !IsObject(dir) {
			return fmt.Errorf("%s was removed while this run wrote into it: stopping; run the same command again to write the sweep anew", dir)
		}
		return fmt.Errorf("lost the lock %s: it was removed (by hand, or by a writer that took it over as abandoned and has finished): stopping; run the same command again to finish", l.path)
	case err != nil:
		return fmt.Errorf("reading the lock %s: %w", l.path, err)
	}
	return fmt.Errorf("lost the lock %s to another writer (%s), which took it over as abandoned: stopping; run the same command again to finish", l.path, parseLock(b).brief())
}

// withoutBeat is a lock's content without the line "beat=N" its writer's
// heartbeat ends it with on object storage.
func withoutBeat(b []byte) []byte {
	i := bytes.LastIndex(b, []byte("\nbeat="))
	if i < 0 || !bytes.HasSuffix(b, []byte("\n")) {
		return b
	}
	return b[:i+1]
}

// brief names the lock's writer.
func (h lockHolder) brief() string { return fmt.Sprintf("host %s, pid %d", h.host, h.pid) }

// release stops the heartbeat and removes the lock if it is still this
// writer's.
func (l *sweepLock) release() {
	select {
	case <-l.stop:
		return
	default:
	}
	close(l.stop)
	l.wg.Wait()
	if l.held() == nil {
		l.v.remove(l.path)
	}
	heldHere.Delete(l.id)
}
