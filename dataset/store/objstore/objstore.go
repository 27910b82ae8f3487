package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Object is what a bucket says of one object.
type Object struct {
	Key      string
	Size     int64
	ETag     string    // as the store gives it, quotes included
	Modified time.Time // LastModified: the store's clock
}

// UnconditionalError is a store that does not honour conditional writes
// (Check): what it did instead.
type UnconditionalError struct{ Msg string }

func (e *UnconditionalError) Error() string { return e.Msg }

// ErrChanged is a compare-and-swap that failed: the object is not the one
// read (changed, or gone).
var ErrChanged = errors.New("changed since it was read (precondition failed)")

// Bucket is what the dataset's store does with a bucket. Keys are full
// keys, slash-separated. A key that is not there is fs.ErrNotExist.
type Bucket interface {
	// Get reads an object whole.
	Get(ctx context.Context, key string) ([]byte, Object, error)
	// Head reads what the bucket says of an object.
	Head(ctx context.Context, key string) (Object, error)
	// List lists the objects whose keys start with prefix and hold no
	// further "/", and the sub-prefixes (ending in "/") that hold some,
	// each sorted.
	List(ctx context.Context, prefix string) (objects []Object, dirs []string, err error)
	// Put writes an object, replacing any.
	Put(ctx context.Context, key string, b []byte) (Object, error)
	// Create writes an object only if the key is not there (If-None-Match:
	// *): fs.ErrExist when it is.
	Create(ctx context.Context, key string, b []byte) (Object, error)
	// Swap replaces the object only if its ETag is still etag (If-Match):
	// ErrChanged when it is not, or when it is gone.
	Swap(ctx context.Context, key, etag string, b []byte) (Object, error)
	// Delete removes an object; one not there is no error.
	Delete(ctx context.Context, key string) error
}

// Schemes are the URL schemes of object storage.
var Schemes = []string{"s3", "gs"}

// Split splits an object storage URL scheme://bucket/prefix; ok is false
// for anything else (a folder, file://).
func Split(url string) (scheme, bucket, prefix string, ok bool) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || (scheme != "s3" && scheme != "gs") {
		return "", "", "", false
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	return scheme, bucket, strings.Trim(prefix, "/"), true
}

// IsURL reports whether p names object storage.
func IsURL(p string) bool {
	_, _, _, ok := Split(p)
	return ok
}

// Check proves that b honours conditional writes, with a probe object at
// key (removed after): a second create-only write of it must fail, and so
// must a swap from an ETag it does not have. It returns the probe's
// LastModified, the store's clock now. A store that ignores either header
// would let two writers both commit, or both hold a lock: it is an error
// saying so.
func Check(ctx context.Context, b Bucket, key string) (time.Time, error) {
	o, err := b.Create(ctx, key, []byte("probe\n"))
	if err != nil {
		return time.Time{}, fmt.Errorf("writing a probe object %s: %w", key, err)
	}
	defer b.Delete(ctx, key)
	_, err = b.Create(ctx, key, []byte("probe again\n"))
	if err == nil {
		return time.Time{}, &UnconditionalError{fmt.Sprintf("the store does not honour conditional writes: a second create-only PUT of %s (If-None-Match: *) replaced it instead of failing with 412; the commit protocol needs it to fail (two writers would both commit, two locks both be held)", key)}
	}
	if !errors.Is(err, fs.ErrExist) {
		return time.Time{}, fmt.Errorf("writing a probe object %s again: %w", key, err)
	}
	_, err = b.Swap(ctx, key, `"0123456789abcdef0123456789abcdef"`, []byte("probe swapped\n"))
	if err == nil {
		return time.Time{}, &UnconditionalError{fmt.Sprintf("the store does not honour conditional writes: a PUT of %s with If-Match on an ETag it does not have replaced it instead of failing with 412; the writers' locks need it to fail", key)}
	}
	if !errors.Is(err, ErrChanged) {
		return time.Time{}, fmt.Errorf("swapping the probe object %s: %w", key, err)
	}
	h, err := b.Head(ctx, key)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the probe object %s: %w", key, err)
	}
	if h.ETag != o.ETag {
		return time.Time{}, &UnconditionalError{fmt.Sprintf("the store does not honour conditional writes: the probe object %s changed under a refused write", key)}
	}
	return h.Modified, nil
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func sortEntries(es []fs.DirEntry) {
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
