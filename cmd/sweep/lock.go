package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A writer of a sweep holds an advisory lock: the file
// runs/sweep=NAME/_lock.TAG, created with O_EXCL, where TAG is "all" for an
// unsharded writer or "IofN" for shard I of N. It holds the writer's host,
// process id, a random id and the time it started; the writer rewrites it
// every lockBeat, so its modification time (set by the file server's
// clock) says the writer is alive. A lock is abandoned when its writer ran
// on this host and its process is gone, or when it has not been rewritten
// for lockStale by the file server's clock (compared with a file just
// written, never with this machine's clock).
//
// Locks keep two writers from doing the same work; they are not what keeps
// the data whole. If a lock fails (a file system without O_EXCL, a writer
// frozen longer than lockStale), part names still cannot collide and no
// writer deletes another's part in the making, so the worst case is runs
// stored twice, which readers count once and `sweep check` reports.
var (
	lockBeat  = 20 * time.Second
	lockStale = 2 * time.Minute
	// A writer finding a lock of another host waits up to lockWait (long
	// enough for an abandoned lock to go stale), polling every lockPoll:
	// a pod replaced by Kubernetes finds its predecessor's lock.
	lockWait  = lockStale + 2*lockBeat
	lockPoll  = 5 * time.Second
	lockSleep = time.Sleep
)

// heldHere is the random ids of the locks this process holds: a lock of
// this host and process id that is not one of them was left by an earlier
// process with the same id (a restarted container, where every process is
// pid 1).
var heldHere sync.Map

// lockHolder is what a lock file says.
type lockHolder struct {
	host  string
	pid   int
	id    string
	shard string
	since string
	age   time.Duration // since the holder last rewrote it, by the file server's clock
}

func (h lockHolder) String() string {
	s := fmt.Sprintf("host %s, pid %d", h.host, h.pid)
	if h.since != "" {
		s += ", since " + h.since
	}
	return s + fmt.Sprintf(", last seen %v ago", h.age.Round(time.Second))
}

// abandoned reports whether the lock's writer is gone.
func (h lockHolder) abandoned(self writerID) bool {
	if h.host == self.host && h.pid > 0 && !pidAlive(h.pid) {
		return true
	}
	if h.host == self.host && h.pid == self.pid {
		if _, ok := heldHere.Load(h.id); !ok {
			return true
		}
	}
	return h.age > lockStale
}

func readLock(path string, now time.Time) (lockHolder, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return lockHolder{}, nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return lockHolder{}, nil, err
	}
	h := lockHolder{age: now.Sub(fi.ModTime())}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "host":
			h.host = v
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
	return h, b, nil
}

// sweepLock is a lock this process holds.
type sweepLock struct {
	path    string
	id      string // the writer's random id
	content []byte
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
// otherwise waits up to lockWait for it to finish or go silent.
func acquireLock(dir string, id writerID, stderr io.Writer) (*sweepLock, error) {
	var waited time.Duration
	for {
		now, err := serverNow(dir)
		if err != nil {
			return nil, err
		}
		l, h, path, err := tryLock(dir, id, now)
		if l != nil || err != nil {
			return l, err
		}
		if h.host == id.host || waited >= lockWait {
			return nil, fmt.Errorf("%s is being written by another sweep run (%s; lock %s): wait for it to finish, or remove the lock if that process is gone",
				dir, h, path)
		}
		if waited == 0 {
			fmt.Fprintf(stderr, "sweep: %s is being written by %s (lock %s): waiting up to %v for it to finish or go silent\n", dir, h, path, lockWait)
		}
		lockSleep(lockPoll)
		waited += lockPoll
	}
}

// tryLock takes the lock once, or returns the live writer that holds it or
// a conflicting one, and the path of that writer's lock.
func tryLock(dir string, id writerID, now time.Time) (*sweepLock, lockHolder, string, error) {
	l := &sweepLock{path: filepath.Join(dir, lockName(id.tag)), id: id.rand, stop: make(chan struct{})}
	l.content = fmt.Appendf(nil, "host=%s\npid=%d\nid=%s\nshard=%s\nsince=%s\n",
		id.host, id.pid, id.rand, id.tag, now.UTC().Format(time.RFC3339))
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.Write(l.content)
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(l.path)
				return nil, lockHolder{}, "", fmt.Errorf("writing lock %s: %w", l.path, err)
			}
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 1 {
			return nil, lockHolder{}, "", fmt.Errorf("taking lock %s: %w", l.path, err)
		}
		h, b, err := readLock(l.path, now)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, lockHolder{}, "", fmt.Errorf("reading lock %s: %w", l.path, err)
		}
		if !h.abandoned(id) {
			return nil, h, l.path, nil
		}
		// Abandoned: remove it unless it changed since it was read.
		if cur, err := os.ReadFile(l.path); err == nil && bytes.Equal(cur, b) {
			os.Remove(l.path)
		}
	}
	heldHere.Store(l.id, true)
	es, err := os.ReadDir(dir)
	if err != nil {
		l.release()
		return nil, lockHolder{}, "", err
	}
	for _, e := range es {
		tag, ok := strings.CutPrefix(e.Name(), "_lock.")
		if !ok || tag == id.tag || !conflicts(tag, id.tag) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if h, _, err := readLock(p, now); err == nil && !h.abandoned(id) {
			l.release()
			return nil, h, p, nil
		}
	}
	l.wg.Add(1)
	go l.beat()
	return l, lockHolder{}, "", nil
}

// beat rewrites the lock every lockBeat: the file server stamps it, which
// tells other writers this one is alive.
func (l *sweepLock) beat() {
	defer l.wg.Done()
	t := time.NewTicker(lockBeat)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			if f, err := os.OpenFile(l.path, os.O_WRONLY, 0); err == nil {
				f.WriteAt(l.content, 0)
				f.Close()
			}
		}
	}
}

// held checks, before a commit, that the lock is still this writer's.
func (l *sweepLock) held() error {
	b, err := os.ReadFile(l.path)
	if err != nil || !bytes.Equal(b, l.content) {
		return fmt.Errorf("lost the lock %s (another writer took it over as abandoned): stopping; run the same command again to finish", l.path)
	}
	return nil
}

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
		os.Remove(l.path)
	}
	heldHere.Delete(l.id)
}
