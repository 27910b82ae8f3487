package experiments

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/herdsweep/herdsweep/grid"
)

// A limit gives every share something, or is refused: Check accepts
// Minimum(w) and refuses anything below it, and a share never rounds to
// zero, which Load reads as no limit.
func TestSmallLimitsAreRefused(t *testing.T) {
	t.Parallel()
	for w := 1; w <= 1024; w = w*2 + 1 {
		min := Minimum(w)
		if err := (Limits{Total: min, Workers: w}).Check(); err != nil {
			t.Errorf("%d workers: Minimum %d refused: %v", w, min, err)
		}
		for _, total := range []int64{0, 1, 8, min / 2} {
			err := (Limits{Total: total, Workers: w}).Check()
			if err == nil || !strings.Contains(err.Error(), "too small for any run") || !strings.Contains(err.Error(), Bytes(min)) {
				t.Errorf("%d workers, %d bytes: %v, want refused, saying %s would take it", w, total, err, Bytes(min))
			}
		}
		l := Limits{Total: min, Workers: w}
		for name, share := range map[string]int64{"run": l.RunBytes(), "grid": l.GridBytes(), "held": l.HeldBytes(), "window": l.WindowBytes(), "part": l.PartBytes()} {
			if share <= 0 {
				t.Errorf("%d workers at the minimum: the %s share is %d", w, name, share)
			}
		}
	}
}

// Would is what it says: under the limit it names, the share holds the
// need; much below it, not.
func TestWouldTakesIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	shares := map[string]func(Limits) int64{"run": Limits.RunBytes, "grid": Limits.GridBytes, "held": Limits.HeldBytes, "window": Limits.WindowBytes, "part": Limits.PartBytes}
	for range 500 {
		l := Limits{Workers: 1 + r.IntN(64)}
		need := 1 + r.Int64N(1<<40)
		for name, share := range shares {
			m := l.Would(share, need)
			if got := share(Limits{Total: m, Workers: l.Workers}); got < need {
				t.Errorf("%s share, need %d, %d workers: Would says %d, whose share is %d", name, need, l.Workers, m, got)
			}
			if got := share(Limits{Total: m * 4 / 5, Workers: l.Workers}); got >= need && m > 64 {
				t.Errorf("%s share, need %d, %d workers: Would says %d, but four fifths of it holds it (%d)", name, need, l.Workers, m, got)
			}
		}
	}
}

const memBase = "[defaults]\nseeds = [1, 2]\npolicy = \"fixed\"\ncapacity_rps = 1000\n"

// Each share is checked before a run: a grid too large for its share, a
// sweep whose cells together outgrow a worker (each alone fits), and a
// timeline whose rows outgrow a part (the run itself fits) are refused at
// the key that makes them large, saying what would take them.
func TestEveryShareIsCounted(t *testing.T) {
	t.Parallel()
	lim := Limits{Total: 64 << 20, Workers: 2, From: "the test's"}
	tests := []struct{ name, src, want string }{
		{"the grid", memBase + "[sweep.g]\nclients = {from = 1, to = 2000}\nseeds = {from = 1, to = 100}\n",
			"t.toml:5: sweep.g: 2000 cells × 100 seeds = 200000 runs take an estimated 21.1 MiB while they are loaded and listed"},
		{"cells together", memBase + "[sweep.e]\n[[sweep.e.cell]]\nclients = 200000\nwindow_s = 10\n[[sweep.e.cell]]\nclients = 1000\ntick_ms = 1\nwindow_s = 60\n",
			"t.toml:5: sweep.e: its cells together need an estimated 22.7 MiB a worker"},
		{"a timeline's rows", memBase + "[sweep.t]\ntimeline_seeds = 1\ntick_ms = 10\nwindow_s = 300\n",
			"t.toml:8: sweep.t.window_s: 300: want a smaller value: a run of this size takes an estimated 5.5 MiB in a part (its rows, a timeline's a tick) until the part is written, more than the 3.2 MiB a part may take under the memory limit 64.0 MiB (the test's) over 2 workers (--memory 112.0 MiB would take it)"},
	}
	for _, tt := range tests {
		_, err := LoadWith("t.toml", []byte(tt.src), lim)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "would take it") {
			t.Errorf("%s: error %v\nwant %s … would take it", tt.name, err, tt.want)
		}
		if _, err := Load("t.toml", []byte(tt.src)); err != nil {
			t.Errorf("%s: without a limit: %v", tt.name, err)
		}
	}
	// each cell of "cells together" fits alone
	for _, src := range []string{memBase + "[sweep.e]\nclients = 200000\nwindow_s = 10\n", memBase + "[sweep.e]\nclients = 1000\ntick_ms = 1\nwindow_s = 60\n"} {
		if _, err := LoadWith("t.toml", []byte(src), lim); err != nil {
			t.Errorf("a cell alone: %v", err)
		}
	}
}

// CellBytes bounds what a loaded grid holds a cell, and RunListBytes what
// a list of a sweep's run keys holds a run (the map a command keeps of the
// runs stored), measured as the heap they keep (runtime.MemStats after a
// collection): the constants the grid's share is counted in.
func TestCellBytesBoundALoadedGrid(t *testing.T) {
	// not parallel: it reads the heap
	for _, src := range []string{
		"[sweep.a]\npolicy = [\"fixed\", \"exponential\", \"full-jitter\", \"decorrelated\"]\nclients = {from = 1, to = 5000}\nseeds = [1]\n",
		"[sweep.a]\npolicy = \"full-jitter\"\nclients = {from = 1, to = 5000}\nmix = [[{share = 0.1, kind = \"fixed\", base_s = 5}]]\nseeds = [1]\n",
		"[sweep.a]\npolicy = \"full-jitter\"\nconcurrency = 4\nservice = \"fixed\"\nservice_s = 0.02\narrival_rps = 10\narrival_curve = \"" + strings.Repeat("1 ", 1439) + "1\"\nclients = {from = 1, to = 5000}\nseeds = [1]\n",
	} {
		before := heapInUse()
		cfg, err := Load("x.toml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		n := len(cfg.Sweeps[0].Cells)
		per := (heapInUse() - before) / int64(n)
		t.Logf("%d cells: %d bytes a cell", n, per)
		if per > CellBytes {
			t.Errorf("%d cells hold %d bytes a cell, more than CellBytes = %d", n, per, CellBytes)
		}
		runtime.KeepAlive(cfg)
	}
	const n = 200_000
	before := heapInUse()
	stored := map[string]bool{}
	for i := range n {
		stored[grid.RunKey("x", uint32(i))] = true
	}
	todo := make([]int32, 0, n)
	for i := range n {
		todo = append(todo, int32(i))
	}
	per := (heapInUse() - before) / n
	t.Logf("a run's key and index: %d bytes", per)
	if per > RunListBytes {
		t.Errorf("a run's key and index hold %d bytes, more than RunListBytes = %d", per, RunListBytes)
	}
	runtime.KeepAlive(stored)
	runtime.KeepAlive(todo)
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A file that does not parse names its line and a key where the line has
// one, never an empty key ("t.toml:2: : …"), on random cuts and insertions
// of a valid config.
func TestSyntaxErrorsNameTheirKey(t *testing.T) {
	t.Parallel()
	src := "[defaults]\nclients = 200\nseeds = [1, 2]\n[sweep.\"a-b\"]\npolicy = [\"fixed\", \"exponential\"]\n[[sweep.\"a-b\".cell]]\ncapacity_rps = 300\n"
	r := rand.New(rand.NewPCG(5, 6))
	junk := []string{"[", "]", "=", "\"", ".", "\n", "[[", "]]", "#", " ", "{", "x"}
	parseErrors := 0
	for i := range 3000 {
		b := []byte(src)
		for range 1 + r.IntN(3) {
			at := r.IntN(len(b) + 1)
			if r.IntN(2) == 0 && at < len(b) {
				b = append(b[:at], b[at+1:]...)
			} else {
				b = append(b[:at], append([]byte(junk[r.IntN(len(junk))]), b[at:]...)...)
			}
		}
		if _, err := toml.Decode(string(b), new(map[string]any)); err == nil {
			continue
		}
		parseErrors++
		_, err := Load("t.toml", b)
		var e *Error
		if !errors.As(err, &e) || e.Line < 1 || strings.Contains(err.Error(), ": :") || strings.HasPrefix(err.Error(), "t.toml: ") {
			t.Errorf("mutation %d %q: %v, want t.toml:LINE: [KEY: ]message", i, b, err)
		}
	}
	if parseErrors < 500 {
		t.Fatalf("only %d of the mutations failed to parse", parseErrors)
	}
}

// A key with control characters is printed quoted, as TOML writes it, at
// its line.
func TestKeysWithControlCharactersAreQuoted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ src, want string }{
		{"x = 1\n[sweep.\"a\\u0007b\"]\npolicy = \"fixed\"\n", `t.toml:2: sweep."a\u0007b": "a\ab": want a sweep name`},
		{"[sweep.\"a\\u001b[31mb\"]\npolicy = \"fixed\"\n", `t.toml:1: sweep."a\u001B[31mb": `},
		{"[sweep.\"a\\u202eb\"]\npolicy = \"fixed\"\n", `t.toml:1: sweep."a\u202Eb": `},
	} {
		_, err := Load("t.toml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %s", tt.src, err, tt.want)
		}
		if err != nil {
			for _, c := range err.Error() {
				if c < 0x20 && c != '\n' || c == 0x7f || c == 0x202e {
					t.Errorf("%q: the error holds %U raw: %q", tt.src, c, err.Error())
				}
			}
		}
	}
}
