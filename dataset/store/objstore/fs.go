package objstore

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// FS is the objects of b under prefix as a read-only file system: a
// prefix ending in "/" is a folder. Opening a file reads its object whole
// (a dataset's parts are read whole, or their footer and a column, and
// are at most a few MiB); the file is an io.ReaderAt and io.Seeker, as
// dataset.File asks.
func FS(b Bucket, prefix string) fs.FS { return &bucketFS{b: b, prefix: prefix} }

type bucketFS struct {
	b      Bucket
	prefix string
}

func (f *bucketFS) key(name string) string {
	if f.prefix == "" {
		return name
	}
	if name == "." {
		return f.prefix
	}
	return f.prefix + "/" + name
}

// dirPrefix is the listing prefix of folder name.
func (f *bucketFS) dirPrefix(name string) string {
	if name == "." && f.prefix == "" {
		return ""
	}
	return f.key(name) + "/"
}

func (f *bucketFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	ctx := context.Background()
	if name != "." {
		data, o, err := f.b.Get(ctx, f.key(name))
		if err == nil {
			return &file{Reader: bytes.NewReader(data), info: info{name: path.Base(name), size: o.Size, mod: o.Modified}}, nil
		}
		if !isNotExist(err) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	es, err := f.ReadDir(name)
	if err != nil {
		return nil, err
	}
	return &dir{info: info{name: path.Base(name), dir: true}, entries: es}, nil
}

func isNotExist(err error) bool { return err != nil && errorsIs(err, fs.ErrNotExist) }

// ReadDir lists folder name: the objects and sub-prefixes under it. A
// folder with nothing under it is not there.
func (f *bucketFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	p := f.dirPrefix(name)
	objs, dirs, err := f.b.List(context.Background(), p)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	if len(objs) == 0 && len(dirs) == 0 && name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	var es []fs.DirEntry
	for _, o := range objs {
		n := strings.TrimPrefix(o.Key, p)
		if n == "" {
			continue // a folder marker
		}
		// to the second, as a GET or HEAD dates it
		es = append(es, info{name: n, size: o.Size, mod: o.Modified.Truncate(time.Second)})
	}
	for _, d := range dirs {
		es = append(es, info{name: strings.TrimSuffix(strings.TrimPrefix(d, p), "/"), dir: true})
	}
	sortEntries(es)
	return es, nil
}

// Stat says what name is: an object, else a folder.
func (f *bucketFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name != "." {
		o, err := f.b.Head(context.Background(), f.key(name))
		if err == nil {
			return info{name: path.Base(name), size: o.Size, mod: o.Modified}, nil
		}
		if !isNotExist(err) {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
	}
	if _, err := f.ReadDir(name); err != nil {
		return nil, err
	}
	return info{name: path.Base(name), dir: true}, nil
}

// info is an object's or a folder's fs.FileInfo and fs.DirEntry.
type info struct {
	name string
	size int64
	mod  time.Time
	dir  bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i info) ModTime() time.Time         { return i.mod }
func (i info) IsDir() bool                { return i.dir }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }

// file is an object read whole.
type file struct {
	*bytes.Reader
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dir is a folder opened.
type dir struct {
	info    info
	entries []fs.DirEntry
	at      int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}

func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.at:]
	if n <= 0 {
		d.at = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.at += len(rest)
	return rest, nil
}
