package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/dataset/store/objstore"
)

// A volume is where a dataset lies: a folder of a file system (posix), or
// a prefix of a bucket of object storage (object), named by a URL
// scheme://bucket/prefix. Paths are the volume's own: joined with join.
// Each operation is the one the commit protocol relies on: on a file
// system an atomic rename, a create-only file (a hard link, O_EXCL) and a
// modification time set by the file server; on object storage a
// create-only PUT (If-None-Match: *), a compare-and-swap (If-Match on the
// ETag read) and a LastModified set by the store.
type volume interface {
	mkdirs(dir string) error
	list(dir string) ([]fs.DirEntry, error)
	readFile(p string) ([]byte, error)
	// stamp reads a file with its modification time, by the server's
	// clock, and its version (an ETag; "" on a file system).
	stamp(p string) (b []byte, mod time.Time, version string, err error)
	// now is the server's clock, from a probe written into dir.
	now(dir string) (time.Time, error)
	// writeFile writes dir/name whole or not at all; pattern names its
	// temporary file where there is one ("."+name+"."+pattern).
	writeFile(dir, name, pattern string, b []byte) error
	// commitFile writes a part, dir/name, whole or not at all: through a
	// temporary file renamed, or with a create-only PUT.
	commitFile(dir, name string, b []byte) error
	// writeOnce creates dir/name holding b, create-only (tmp: the name of
	// a temporary file where one is needed); one holding b already is
	// success, one holding anything else an error.
	writeOnce(dir, name, tmp string, b []byte) error
	// create creates p holding b, or fails with fs.ErrExist; it returns
	// its version.
	create(p string, b []byte) (string, error)
	// rewrite writes b again over p, a lock of this writer of version
	// version, for the beat-th time, and returns its new version. On
	// object storage the lock then ends in a line "beat=N": an ETag is
	// the hash of the content, and a renewal must change it, so that a
	// takeover from the version read before it fails.
	rewrite(p, version string, b []byte, beat int) string
	// takeOver replaces p, read as seen of version version, by b when it
	// is still what was read: on a file system by removing it (taken is
	// false: the caller creates it again), on object storage by a
	// compare-and-swap.
	takeOver(p string, seen []byte, version string, b []byte) (taken bool, newVersion string)
	remove(p string) error
	rename(oldPath, newPath string) error
	exists(p string) bool
	open(p string) (file, error)
	fsys(root string) fs.FS
}

// file is a part opened for reading.
type file interface {
	io.ReaderAt
	io.Seeker
	io.Reader
	io.Closer
}

// volumeOf is the volume path p lies in.
func volumeOf(p string) volume {
	if scheme, bucket, _, ok := objstore.Split(p); ok {
		o := &object{url: scheme + "://" + bucket}
		o.b, _, o.err = objstore.Open(bg, o.url) // dialled once per bucket
		return o
	}
	return posix{}
}

// IsObject reports whether p names object storage (s3://, gs://).
func IsObject(p string) bool { return objstore.IsURL(p) }

// join joins path elements to p, a path of its volume.
func join(p string, elem ...string) string {
	if scheme, bucket, prefix, ok := objstore.Split(p); ok {
		return scheme + "://" + path.Join(append([]string{bucket, prefix}, elem...)...)
	}
	return filepath.Join(append([]string{p}, elem...)...)
}

// dirOf is the folder of path p.
func dirOf(p string) string {
	if IsObject(p) {
		return p[:strings.LastIndex(p, "/")]
	}
	return filepath.Dir(p)
}

// FS is the dataset at root (a folder, or an object storage URL) as an
// fs.FS whose files are dataset.File values, for dataset.List and the
// readers.
func FS(root string) fs.FS { return volumeOf(root).fsys(root) }

// posix is a folder of a file system.
type posix struct{}

func (posix) mkdirs(dir string) error                         { return os.MkdirAll(dir, 0o755) }
func (posix) list(dir string) ([]fs.DirEntry, error)          { return os.ReadDir(dir) }
func (posix) readFile(p string) ([]byte, error)               { return os.ReadFile(p) }
func (posix) now(dir string) (time.Time, error)               { return serverNow(dir) }
func (posix) remove(p string) error                           { return os.Remove(p) }
func (posix) rename(oldPath, newPath string) error            { return os.Rename(oldPath, newPath) }
func (posix) fsys(root string) fs.FS                          { return os.DirFS(root) }
func (posix) writeOnce(dir, name, tmp string, b []byte) error { return writeOnce(dir, name, tmp, b) }
func (posix) writeFile(dir, name, pattern string, b []byte) error {
	return WriteFileAs(dir, name, pattern, b)
}

func (posix) commitFile(dir, name string, b []byte) error { return WriteFile(dir, name, b) }

func (posix) exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (posix) open(p string) (file, error) { return os.Open(p) }

func (posix) stamp(p string) ([]byte, time.Time, string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, time.Time{}, "", err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, time.Time{}, "", err
	}
	return b, fi.ModTime(), "", nil
}

func (posix) create(p string, b []byte) (string, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
	}
	return "", err
}

func (posix) rewrite(p, _ string, b []byte, _ int) string {
	if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
		f.WriteAt(b, 0)
		f.Close()
	}
	return ""
}

func (posix) takeOver(p string, seen []byte, _ string, _ []byte) (bool, string) {
	if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, seen) {
		os.Remove(p)
	}
	return false, ""
}

// object is a bucket of object storage; its paths are URLs.
type object struct {
	url string // scheme://bucket
	b   objstore.Bucket
	err error // from dialling b
}

var bg = context.Background()

// bucket is the bucket, or why it cannot be reached.
func (o *object) bucket() (objstore.Bucket, error) { return o.b, o.err }

// key is the object key of path p.
func (o *object) key(p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, o.url), "/")
}

func (o *object) mkdirs(string) error { return nil }

func (o *object) list(dir string) ([]fs.DirEntry, error) {
	b, err := o.bucket()
	if err != nil {
		return nil, err
	}
	es, err := fs.ReadDir(objstore.FS(b, ""), o.key(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a prefix holds nothing until it holds an object
	}
	return es, err
}

func (o *object) readFile(p string) ([]byte, error) {
	b, _, _, err := o.stamp(p)
	return b, err
}

func (o *object) stamp(p string) ([]byte, time.Time, string, error) {
	b, err := o.bucket()
	if err != nil {
		return nil, time.Time{}, "", err
	}
	data, obj, err := b.Get(bg, o.key(p))
	return data, obj.Modified, obj.ETag, err
}

// now writes a probe object into dir and returns its LastModified.
func (o *object) now(dir string) (time.Time, error) {
	b, err := o.bucket()
	if err != nil {
		return time.Time{}, err
	}
	k := o.key(join(dir, ".probe-"+processRand()))
	if _, err := b.Put(bg, k, []byte("probe\n")); err != nil {
		return time.Time{}, fmt.Errorf("output %s is not writable: %w", dir, err)
	}
	defer b.Delete(bg, k)
	h, err := b.Head(bg, k)
	return h.Modified, err
}

// check proves that the bucket honours conditional writes
// (objstore.Check), with a probe object in dir.
func (o *object) check(dir string) error {
	b, err := o.bucket()
	if err != nil {
		return err
	}
	_, err = objstore.Check(bg, b, o.key(join(dir, ".probe-"+processRand())))
	return err
}

func (o *object) writeFile(dir, name, _ string, data []byte) error {
	b, err := o.bucket()
	if err == nil {
		_, err = b.Put(bg, o.key(join(dir, name)), data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", join(dir, name), err)
	}
	return nil
}

// commitFile creates a part with a create-only PUT: its name is this
// writer's alone, so one there already is an error, never replaced,
// unless it holds these very bytes (the client's retry of a PUT whose
// answer was lost).
func (o *object) commitFile(dir, name string, data []byte) error {
	if err := o.writeOnce(dir, name, "", data); err != nil {
		return fmt.Errorf("writing %s: %w", join(dir, name), err)
	}
	return nil
}

func (o *object) writeOnce(dir, name, _ string, data []byte) error {
	p := join(dir, name)
	_, err := o.create(p, data)
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	cur, err := o.readFile(p)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, data) {
		return fmt.Errorf("%s is there and holds something else: damaged; move it away", p)
	}
	return nil
}

func (o *object) create(p string, data []byte) (string, error) {
	b, err := o.bucket()
	if err != nil {
		return "", err
	}
	obj, err := b.Create(bg, o.key(p), data)
	return obj.ETag, err
}

func (o *object) rewrite(p, version string, data []byte, beat int) string {
	b, err := o.bucket()
	if err != nil {
		return version
	}
	obj, err := b.Swap(bg, o.key(p), version, fmt.Appendf(bytes.Clone(data), "beat=%d\n", beat))
	if err != nil {
		return version // taken over, or not reached: held says which
	}
	return obj.ETag
}

func (o *object) takeOver(p string, _ []byte, version string, data []byte) (bool, string) {
	b, err := o.bucket()
	if err != nil {
		return false, ""
	}
	obj, err := b.Swap(bg, o.key(p), version, data)
	if err != nil {
		return false, ""
	}
	return true, obj.ETag
}

func (o *object) remove(p string) error {
	b, err := o.bucket()
	if err != nil {
		return err
	}
	return b.Delete(bg, o.key(p))
}

// rename copies oldPath to newPath and removes it: not atomic, used only
// to set aside a part of another simulator version, whose new name no
// reader takes for data.
func (o *object) rename(oldPath, newPath string) error {
	b, err := o.bucket()
	if err != nil {
		return err
	}
	data, _, err := b.Get(bg, o.key(oldPath))
	if err != nil {
		return err
	}
	if _, err := b.Put(bg, o.key(newPath), data); err != nil {
		return err
	}
	return b.Delete(bg, o.key(oldPath))
}

func (o *object) exists(p string) bool {
	b, err := o.bucket()
	if err != nil {
		return false
	}
	_, err = b.Head(bg, o.key(p))
	return err == nil
}

func (o *object) open(p string) (file, error) {
	b, err := o.bucket()
	if err != nil {
		return nil, err
	}
	data, _, err := b.Get(bg, o.key(p))
	if err != nil {
		return nil, err
	}
	return nopCloser{bytes.NewReader(data)}, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func (o *object) fsys(root string) fs.FS {
	b, err := o.bucket()
	if err != nil {
		return errFS{err}
	}
	return objstore.FS(b, o.key(root))
}

// errFS is a file system that cannot be reached.
type errFS struct{ err error }

func (e errFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: e.err}
}

// Join joins slash-separated elements to root, a folder or an object
// storage URL, as the store names the dataset's files.
func Join(root string, elem ...string) string {
	if IsObject(root) {
		return join(root, elem...)
	}
	for i, e := range elem {
		elem[i] = filepath.FromSlash(e)
	}
	return join(root, elem...)
}

// Dir is the folder of p, a path of a folder or of object storage.
func Dir(p string) string { return dirOf(p) }

// PartFile is a file of a dataset opened for reading.
type PartFile interface {
	io.ReaderAt
	io.Seeker
	io.Reader
	io.Closer
}

// OpenFile opens the file at p, a path of a folder or of object storage,
// for reading.
func OpenFile(p string) (PartFile, error) { return volumeOf(p).open(p) }

// MkdirAll makes folder dir and its parents; on object storage a prefix
// needs no making.
func MkdirAll(dir string) error { return volumeOf(dir).mkdirs(dir) }

// Stat says whether dir, a folder or a prefix of object storage, is
// there: nil, an error that is fs.ErrNotExist, or one saying what it is
// instead ("not a folder"). A prefix is there when an object is under it.
func Stat(dir string) error {
	if IsObject(dir) {
		es, err := fs.ReadDir(FS(dir), ".")
		if err == nil && len(es) == 0 {
			err = fmt.Errorf("no object under %s/: %w", dir, fs.ErrNotExist)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Op == "readdir" {
			err = pe.Err // names the bucket's URL
		}
		return err
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a folder")
	}
	return err
}
