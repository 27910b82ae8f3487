package objstore_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/herdsweep/herdsweep/dataset/store/objstore"
	"github.com/herdsweep/herdsweep/internal/s3test"
)

// The server the tests use behaves as S3 does where the store relies on
// it: a create-only PUT of a key that is there fails, a swap from an ETag
// the object no longer has fails, LastModified is the server's clock.
func TestConditionalWrites(t *testing.T) {
	srv := s3test.Start(t, s3test.Options{})
	ctx := context.Background()
	b, prefix, err := objstore.Open(ctx, "s3://"+s3test.Bucket+"/data/")
	if err != nil || prefix != "data" {
		t.Fatalf("Open: %q, %v", prefix, err)
	}
	first, err := b.Create(ctx, "data/a", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, "data/a", []byte("two")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	second, err := b.Swap(ctx, "data/a", first.ETag, []byte("two"))
	if err != nil {
		t.Fatalf("swap from the ETag it has: %v", err)
	}
	if _, err := b.Swap(ctx, "data/a", first.ETag, []byte("three")); !errors.Is(err, objstore.ErrChanged) {
		t.Fatalf("swap from an old ETag: %v, want ErrChanged", err)
	}
	data, o, err := b.Get(ctx, "data/a")
	if err != nil || string(data) != "two" || o.ETag != second.ETag {
		t.Fatalf("Get: %q %+v %v, want the swapped object", data, o, err)
	}
	if _, err := b.Swap(ctx, "data/none", first.ETag, []byte("x")); !errors.Is(err, objstore.ErrChanged) {
		t.Fatalf("swap of an object not there: %v, want ErrChanged", err)
	}
	now, err := objstore.Check(ctx, b, "data/.probe")
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if d := srv.Clock.Now().Sub(now); d < 0 || d > 5e9 {
		t.Errorf("Check's time is %v off the server's", d)
	}
}

// A store that ignores If-None-Match and If-Match is refused with the
// reason.
func TestCheckRefusesAStoreWithoutConditionalWrites(t *testing.T) {
	s3test.Start(t, s3test.Options{Unconditional: true})
	ctx := context.Background()
	b, _, err := objstore.Open(ctx, "s3://"+s3test.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	_, err = objstore.Check(ctx, b, ".probe")
	var ue *objstore.UnconditionalError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "does not honour conditional writes") {
		t.Fatalf("Check: %v, want an UnconditionalError", err)
	}
	if _, _, err := b.Get(ctx, ".probe"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the probe is left: %v", err)
	}
}

// FS is the bucket's objects under a prefix as a file system.
func TestFS(t *testing.T) {
	s3test.Start(t, s3test.Options{})
	ctx := context.Background()
	b, _, err := objstore.Open(ctx, "s3://"+s3test.Bucket+"/d")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d/runs/sweep=a/p.parquet", "d/runs/sweep=a/_lock.all", "d/timelines/sweep=a/p.parquet", "other/x"} {
		if _, err := b.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	fsys := objstore.FS(b, "d")
	if err := fstest.TestFS(fsys, "runs/sweep=a/p.parquet", "runs/sweep=a/_lock.all", "timelines/sweep=a/p.parquet"); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open("runs/sweep=a/p.parquet")
	if err != nil {
		t.Fatal(err)
	}
	ra, ok := f.(interface {
		io.ReaderAt
		io.Seeker
	})
	if !ok {
		t.Fatalf("%T is not an io.ReaderAt and io.Seeker", f)
	}
	buf := make([]byte, 4)
	if _, err := ra.ReadAt(buf, 2); err != nil || string(buf) != "runs" {
		t.Errorf("ReadAt: %q %v", buf, err)
	}
	if _, err := fs.ReadDir(fsys, "groups"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder with nothing under it: %v, want fs.ErrNotExist", err)
	}
}
