package golden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Check reports instead of
// failing the test that runs it.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

var errFatal = errors.New("fatal")

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	panic(errFatal)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// check runs Check on a recorder and returns it.
func check(t *testing.T, path, got string) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != errFatal {
				panic(p)
			}
		}()
		CheckString(r, path, got)
	}()
	return r
}

func read(t *testing.T, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		golden   string // "" = no golden file
		staleGot bool   // a .got file from an earlier failure is there
		got      string
		update   bool
		// what must follow
		errs       []string // substrings of the one error reported, none when empty
		fatal      bool
		wantGolden string
		wantGot    string // "" = no .got file
	}{
		{name: "match", golden: "a\nb\n", got: "a\nb\n", wantGolden: "a\nb\n"},
		{name: "match removes a stale .got", golden: "a\n", staleGot: true, got: "a\n", wantGolden: "a\n"},
		{name: "mismatch writes .got", golden: "one\ntwo\nthree\nfour\n", got: "one\ntwo\nTHREE\nfour\n",
			errs:       []string{"x.golden differs", "x.golden.got", "-update", "three", "THREE"},
			wantGolden: "one\ntwo\nthree\nfour\n", wantGot: "one\ntwo\nTHREE\nfour\n"},
		{name: "a missing final newline is a difference", golden: "a\n", got: "a",
			errs: []string{"differs"}, wantGolden: "a\n", wantGot: "a"},
		{name: "missing golden", got: "a\n", errs: []string{"x.golden", "go test -update creates it"}, fatal: true},
		{name: "update writes the golden", golden: "old\n", staleGot: true, got: "new\n", update: true, wantGolden: "new\n"},
		{name: "update creates the golden", got: "new\n", update: true, wantGolden: "new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.golden")
			if tt.golden != "" {
				write(t, path, tt.golden)
			}
			if tt.staleGot {
				write(t, path+GotSuffix, "stale\n")
			}
			old := *update
			*update = tt.update
			r := check(t, path, tt.got)
			*update = old

			if len(tt.errs) == 0 && len(r.errs) > 0 {
				t.Errorf("reported %q, want nothing", r.errs)
			}
			if len(tt.errs) > 0 {
				if len(r.errs) != 1 {
					t.Fatalf("reported %q, want one error", r.errs)
				}
				for _, s := range tt.errs {
					if !strings.Contains(r.errs[0], s) {
						t.Errorf("error %q does not say %q", r.errs[0], s)
					}
				}
			}
			if r.fatal != tt.fatal {
				t.Errorf("fatal = %v, want %v", r.fatal, tt.fatal)
			}
			if g, ok := read(t, path); tt.wantGolden != "" && g != tt.wantGolden || tt.wantGolden == "" && ok {
				t.Errorf("golden file holds %q (exists %v), want %q", g, ok, tt.wantGolden)
			}
			if g, ok := read(t, path+GotSuffix); g != tt.wantGot || ok != (tt.wantGot != "") {
				t.Errorf(".got file holds %q (exists %v), want %q", g, ok, tt.wantGot)
			}
		})
	}
}
