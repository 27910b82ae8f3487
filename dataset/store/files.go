package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// buffer collects a part's bytes before they go to disk.
type buffer struct{ b []byte }

func (p *buffer) Write(b []byte) (int, error) { p.b = append(p.b, b...); return len(b), nil }

// WriteFile writes data to dir/name atomically: through a hidden
// temporary file, synced before the rename and the folder synced after it.
func WriteFile(dir, name string, data []byte) error {
	return WriteFileAs(dir, name, "*.tmp", data)
}

// WriteFileAs is WriteFile through a temporary file named
// "."+name+"."+pattern, pattern one of os.CreateTemp.
func WriteFileAs(dir, name, pattern string, data []byte) error {
	if IsObject(dir) {
		return volumeOf(dir).writeFile(dir, name, pattern, data)
	}
	f, err := os.CreateTemp(dir, "."+name+"."+pattern)
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	tmp := f.Name()
	_, err = f.Write(data) // whole: a buffer would copy it first
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, name), err)
	}
	syncDir(dir)
	return nil
}

// syncDir syncs a folder after a file was renamed or linked into it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// writeOnce creates dir/name holding b, create-only: through a hard link
// of the temporary file tmp, so that it appears whole; where hard links
// are not to be had, with O_EXCL. A file of that name holding b already
// is success; one holding anything else is an error.
func writeOnce(dir, name, tmp string, b []byte) error {
	path, tpath := filepath.Join(dir, name), filepath.Join(dir, tmp)
	same := func() error {
		cur, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur, b) {
			return fmt.Errorf("%s is there and holds something else: damaged; move it away", path)
		}
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return same()
	}
	if err := os.WriteFile(tpath, b, 0o644); err != nil {
		os.Remove(tpath)
		return err
	}
	if f, err := os.Open(tpath); err == nil {
		f.Sync()
		f.Close()
	}
	err := os.Link(tpath, path)
	os.Remove(tpath)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return same()
	default: // no hard links here: create it at once
		if err := createExcl(path, b); errors.Is(err, fs.ErrExist) {
			return same()
		} else if err != nil {
			return err
		}
	}
	syncDir(dir)
	return nil
}

// createExcl creates path holding b, failing with fs.ErrExist when it is
// there.
func createExcl(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
