package store

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herdsweep/herdsweep/dataset/store/objstore"
	"github.com/herdsweep/herdsweep/internal/s3test"
)

// On object storage a lock's age is by the store's clock (its
// LastModified against a probe's), and an abandoned lock is taken over
// only by a compare-and-swap from the version read: a holder that renewed
// it meanwhile keeps it, and a holder whose lock was taken over never
// writes it again.
func TestObjectLockTakeOverIsACompareAndSwap(t *testing.T) {
	defer func(w time.Duration, s func(time.Duration)) { lockWait, lockSleep = w, s }(lockWait, lockSleep)
	lockWait = 0
	srv := s3test.Start(t, s3test.Options{})
	dir := "s3://" + s3test.Bucket + "/ds/runs/sweep=s"
	path := join(dir, lockName("all"))
	ctx := context.Background()
	b, _, err := objstore.Open(ctx, "s3://"+s3test.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	theirs := []byte("host=elsewhere\nspace=x\npid=7\nid=aaaaaaaa\nshard=all\nsince=2026-12-01T00:00:00Z\n")
	planted, err := b.Create(ctx, "ds/runs/sweep=s/_lock.all", theirs)
	if err != nil {
		t.Fatal(err)
	}
	id := newWriterID(Shard{})
	if _, err := acquireLock(dir, id, func(string) {}); err == nil || !strings.Contains(err.Error(), "is being written by another sweep run") {
		t.Fatalf("a fresh lock of another host: %v, want refused", err)
	}
	// Silent for longer than LockStale by the store's clock; this
	// machine's clock has not moved.
	srv.Clock.Advance(LockStale + time.Minute)
	v := volumeOf(dir)
	seen, _, version, err := v.stamp(path)
	if err != nil || version != planted.ETag {
		t.Fatalf("stamp: %v, version %q, want %q", err, version, planted.ETag)
	}
	// Its holder renews it after it was read: the takeover from what was
	// read fails, and the lock stays the holder's.
	renewed := v.rewrite(path, planted.ETag, theirs, 1)
	if renewed == planted.ETag {
		t.Fatal("the holder's renewal did not change the lock's version")
	}
	if taken, _ := v.takeOver(path, seen, version, []byte("mine\n")); taken {
		t.Fatal("took over a lock renewed since it was read")
	}
	if cur, _ := v.readFile(path); !bytes.Equal(withoutBeat(cur), theirs) {
		t.Fatalf("the renewed lock holds %q", cur)
	}
	// Silent again: taken over, and its holder's next beat, from the
	// version it wrote last, does not write it back.
	srv.Clock.Advance(LockStale + time.Minute)
	l, err := acquireLock(dir, id, func(string) {})
	if err != nil {
		t.Fatalf("an abandoned lock: %v, want taken over", err)
	}
	defer l.release()
	if v.rewrite(path, renewed, theirs, 2) != renewed {
		t.Error("the old holder's beat reported a new version")
	}
	if err := l.held(); err != nil {
		t.Fatalf("after the old holder's beat: %v", err)
	}
	// The old holder, were it alive, finds it lost the lock.
	old := &sweepLock{v: v, path: path, content: theirs}
	if err := old.held(); err == nil || !strings.Contains(err.Error(), "lost the lock") {
		t.Errorf("the old holder's check: %v, want lost", err)
	}
}

// What a writer killed on object storage can leave, a side part whose runs
// part it never created, is no reader's data, is named by Check, and is
// removed by the sweep's next writer once no lock holds its writer's id.
func TestObjectLeftoversOfAGoneWriterAreRemoved(t *testing.T) {
	s3test.Start(t, s3test.Options{})
	root := "s3://" + s3test.Bucket + "/ds"
	ctx := context.Background()
	b, _, err := objstore.Open(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	key := "ds/timelines/sweep=s/part-all-00000-elsewhere-7-deadbeef.parquet"
	if _, err := b.Create(ctx, key, []byte("half a commit")); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != "orphan" || rep.Tables[1].Parts != 0 {
		t.Fatalf("check of an uncommitted side part: %+v", rep)
	}
	var notes []string
	w, err := Open(Options{Root: root, Sweep: "s", Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(notes) != 1 || !strings.Contains(notes[0], "removing "+root+"/timelines/sweep=s/part-all-00000-elsewhere-7-deadbeef.parquet: a side-table part never committed") {
		t.Errorf("notes: %q", notes)
	}
	if _, err := b.Head(ctx, key); err == nil {
		t.Error("the leftover is still there")
	}
}
