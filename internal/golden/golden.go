// Package golden compares a test's output with a golden file under
// testdata/, for every package's tests: one -update flag, one way to show a
// difference.
//
// On a mismatch Check reports the lines that differ (-want +got, as
// cmp.Diff prints them) and writes what the test got beside the golden
// file, as NAME.got (benchstat's cmd/benchstat/main_test.go does the
// same), so that `diff testdata/x.golden testdata/x.golden.got` or an
// editor shows it whole; a later run that matches removes the .got file. Under
// `go test -update` Check rewrites the golden file instead: review its
// diff like code.
//
// Only test files import this package: it registers the -update flag.
package golden

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Update reports whether the test runs with -update: a test that keeps its
// expected output elsewhere than in a whole file (a markdown page's code
// block, a script's expected event log) rewrites it then.
func Update() bool { return *update }

// GotSuffix is what Check appends to a golden file's path to name the file
// that holds what a failing test got.
const GotSuffix = ".got"

// Check compares got with the golden file at path (relative to the test's
// package folder, e.g. "testdata/help.golden"). Under -update it writes got
// to path. The comparison is byte for byte.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		removeGot(t, path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if bytes.Equal(want, got) {
		removeGot(t, path)
		return
	}
	gotPath := path + GotSuffix
	if err := os.WriteFile(gotPath, got, 0o644); err != nil {
		t.Errorf("writing %s: %v", gotPath, err)
	}
	t.Errorf("%s differs (-want +got, by line; what the test got is in %s; go test -update rewrites the golden file):\n%s",
		path, gotPath, cmp.Diff(lines(want), lines(got)))
}

// lines splits b into its lines, each without its newline: a difference
// shows as the lines that differ. A last line without a newline stays
// apart from one with it: the split loses nothing.
func lines(b []byte) []string { return strings.Split(string(b), "\n") }

// CheckString is Check for a string.
func CheckString(t testing.TB, path, got string) {
	t.Helper()
	Check(t, path, []byte(got))
}

// removeGot removes a .got file left by an earlier failing run.
func removeGot(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path + GotSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing a stale %s: %v", path+GotSuffix, err)
	}
}
