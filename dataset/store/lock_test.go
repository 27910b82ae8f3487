package store

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// plant writes a file with the given content, dated age ago.
func plant(t *testing.T, path string, data []byte, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mod := time.Now().Add(-age).Truncate(time.Second)
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// Writers of one sweep: an unsharded writer excludes every other, shards of
// one count run side by side.
func TestLocks(t *testing.T) {
	defer func(w time.Duration, s func(time.Duration)) { lockWait, lockSleep = w, s }(lockWait, lockSleep)
	lockWait = 0
	dir := t.TempDir()
	id := func(tag string) writerID { w := newWriterID(Shard{}); w.tag = tag; return w }
	acquire := func(tag string) (*sweepLock, error) { return acquireLock(dir, id(tag), func(string) {}) }
	a, err := acquire("0of4")
	if err != nil {
		t.Fatal(err)
	}
	b, err := acquire("1of4")
	if err != nil {
		t.Fatalf("two shards of one count: %v", err)
	}
	for _, tag := range []string{"all", "0of4", "0of2"} {
		if _, err := acquire(tag); err == nil || !strings.Contains(err.Error(), "is being written by another sweep run") {
			t.Errorf("%s beside shards 0of4 and 1of4: %v, want refused", tag, err)
		}
	}
	a.release()
	b.release()
	if es := mustReadDir(t, dir); len(es) != 0 {
		t.Errorf("released locks left %v", es)
	}
}

// A lock of a writer that is gone is taken over: a process of this host
// that is gone; an earlier process with this process's id (a restarted
// container); a host that has not rewritten its lock for longer than
// LockStale. A writer of another host is waited for.
func TestAbandonedLocks(t *testing.T) {
	defer func(w time.Duration, s func(time.Duration)) { lockWait, lockSleep = w, s }(lockWait, lockSleep)
	lockWait = 0
	dir := t.TempDir()
	now, err := serverNow(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := func(tag string) writerID { w := newWriterID(Shard{}); w.tag = tag; return w }
	acquire := func(tag string) (*sweepLock, error) { return acquireLock(dir, id(tag), func(string) {}) }
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "_lock.all")
	for _, content := range []string{
		fmt.Sprintf("host=%s\npid=%d\nid=00000000\n", HostName(), gone.Process.Pid),
		fmt.Sprintf("host=%s\npid=%d\nid=00000000\n", HostName(), os.Getpid()),
	} {
		os.WriteFile(lock, []byte(content), 0o644)
		l, err := acquire("all")
		if err != nil {
			t.Fatalf("lock %q: %v", content, err)
		}
		l.release()
	}
	os.WriteFile(lock, []byte("host=elsewhere\npid=1\n"), 0o644)
	if _, err := acquire("all"); err == nil {
		t.Error("a live lock of another host was taken over")
	}
	old := now.Add(-LockStale - time.Second)
	os.Chtimes(lock, old, old)
	l, err := acquire("all")
	if err != nil {
		t.Fatalf("lock of another host, silent for longer than %v: %v", LockStale, err)
	}
	// A writer whose lock was taken over stops before its next commit.
	os.WriteFile(lock, []byte("host=elsewhere\npid=1\n"), 0o644)
	if err := l.held(); err == nil || !strings.Contains(err.Error(), "lost the lock") {
		t.Errorf("held after a takeover: %v", err)
	}
	l.release()
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("a writer that lost its lock removed the new holder's: %v", err)
	}

	// A live lock of another host is waited for: here it is released
	// during the first wait.
	lockWait = time.Hour
	waits := 0
	lockSleep = func(time.Duration) {
		if waits++; waits == 1 {
			os.Remove(lock)
		}
	}
	var note bytes.Buffer
	l, err = acquireLock(dir, id("all"), func(msg string) { note.WriteString(msg + "\n") })
	if err != nil || waits != 1 || !strings.Contains(note.String(), "waiting up to 1h0m0s") {
		t.Errorf("after one wait: %v, %d waits, %q", err, waits, note.String())
	}
	l.release()
}

// Locks: one dated in the future by more than LockStale is abandoned (it
// blocked every writer for as long as it was ahead); one dated less far
// ahead is abandoned once a waiting writer has watched it unchanged for
// LockStale; a live writer of another pid space with this host's name and
// this process's pid (two containers, each pid 1) is not displaced.
func TestLockLiveness(t *testing.T) {
	defer func(w time.Duration, s func(time.Duration)) { lockWait, lockSleep = w, s }(lockWait, lockSleep)
	dir := t.TempDir()
	lock := filepath.Join(dir, "_lock.all")
	id := newWriterID(Shard{})
	acquire := func() (*sweepLock, error) { return acquireLock(dir, id, func(string) {}) }

	lockWait, lockSleep = 0, func(time.Duration) {}
	plant(t, lock, []byte("host=elsewhere\nspace=x/1\npid=1\nid=12345678\n"), -24*time.Hour)
	l, err := acquire()
	if err != nil {
		t.Fatalf("a lock dated a day ahead: %v", err)
	}
	l.release()

	plant(t, lock, fmt.Appendf(nil, "host=%s\nspace=another/4026531836\npid=%d\nid=12345678\n", HostName(), os.Getpid()), 0)
	if _, err := acquire(); err == nil || !strings.Contains(err.Error(), "is being written by another sweep run") {
		t.Errorf("a live writer of another pid space with this host's name and pid: %v, want it not displaced", err)
	}
	// As the same process (no pid space known, as before), an earlier
	// process with this pid is taken for gone, as it was.
	plant(t, lock, fmt.Appendf(nil, "host=%s\npid=%d\nid=12345678\n", HostName(), os.Getpid()), 0)
	if l, err := acquire(); err != nil {
		t.Errorf("a lock of an earlier process with this pid, of herdsweep before pid spaces: %v", err)
	} else {
		l.release()
	}

	// A minute ahead, never rewritten: taken once watched for LockStale.
	lockWait = time.Hour
	polls := 0
	lockSleep = func(time.Duration) { polls++ }
	plant(t, lock, []byte("host=elsewhere\nspace=x/1\npid=1\nid=12345678\n"), -time.Minute)
	l, err = acquire()
	if err != nil {
		t.Fatalf("a lock a minute ahead, unchanged: %v", err)
	}
	l.release()
	if want := int(LockStale/lockPoll) + 1; polls != want {
		t.Errorf("taken after %d polls, want %d (LockStale watched)", polls, want)
	}
	// A lock a minute ahead that its writer rewrites is never taken.
	polls = 0
	lockWait = 10 * LockStale
	lockSleep = func(time.Duration) {
		polls++
		mod := time.Now().Add(time.Minute).Add(time.Duration(polls) * time.Millisecond) // its clock a minute ahead
		os.Chtimes(lock, mod, mod)
	}
	plant(t, lock, []byte("host=elsewhere\nspace=x/1\npid=1\nid=12345678\n"), -time.Minute)
	if _, err := acquire(); err == nil {
		t.Error("a lock rewritten every poll was taken over")
	}
}
