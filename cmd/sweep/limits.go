package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/herdsweep/herdsweep/experiments"
)

// Guards on what a command line or a config may ask for, checked before
// anything is allocated for it.
const (
	// maxWorkers bounds --workers: each worker holds a simulator and a
	// window of 64 outcomes.
	maxWorkers = 1024
	// maxConfigBytes bounds a sweeps file: the repository's is 6 KB; a
	// list of millions of seeds would take gigabytes to parse.
	maxConfigBytes = 4 << 20
	// maxPartRows bounds --part-rows: a part is held in memory until it
	// is written.
	maxPartRows = 1_000_000
	// defaultMemory is the memory the simulations of one command may take
	// in all, unless --memory or HERDSWEEP_MEMORY says otherwise; each
	// worker's run may take its share.
	defaultMemory = 4 << 30
)

// checkWorkers refuses a worker count outside 0 … maxWorkers.
func checkWorkers(cmd string, n int) error {
	if n < 0 || n > maxWorkers {
		return usagef("%s: --workers %d: want 0 (one per CPU) to %d", cmd, n, maxWorkers)
	}
	return nil
}

// workersOr returns n, or one per CPU for 0.
func workersOr(n int) int {
	if n <= 0 {
		return defaultWorkers()
	}
	return n
}

// memoryLimits is the memory limit and how w workers spend it
// (experiments.Limits): the --memory flag, else HERDSWEEP_MEMORY, else
// defaultMemory. A limit too small for any run is refused, saying what it
// would take; it never turns into "no limit".
func memoryLimits(cmd, flagValue string, w int) (experiments.Limits, error) {
	v, from := flagValue, "--memory"
	if v == "" {
		v, from = getenv("HERDSWEEP_MEMORY"), "HERDSWEEP_MEMORY"
	}
	if v == "" {
		return experiments.Limits{Total: defaultMemory, Workers: w, From: "the default; --memory or HERDSWEEP_MEMORY to change it"}, nil
	}
	n, err := parseBytes(v)
	if err != nil {
		return experiments.Limits{}, usagef("%s: %s %q: %v", cmd, from, v, err)
	}
	lim := experiments.Limits{Total: n, Workers: w, From: from}
	if err := lim.Check(); err != nil {
		hint := ""
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			hint = fmt.Sprintf(" (a number without a unit is bytes: %sGiB?)", strings.TrimSpace(v))
		}
		return experiments.Limits{}, usagef("%s: %s %s: %v%s", cmd, from, v, err, hint)
	}
	return lim, nil
}

// baseBytes is the memory a command takes beside what experiments.Limits
// counts: the Go runtime, the program and its libraries, a dataset's
// listing. The Go runtime's soft limit is the memory limit plus this.
const baseBytes = 64 << 20

// goMemoryLimit sets the Go runtime's soft memory limit to lim's total
// plus baseBytes, so that garbage is collected before the heap passes what
// the guard counted (unless GOMEMLIMIT says otherwise); it returns what
// puts the previous limit back.
func goMemoryLimit(lim experiments.Limits) (restore func()) {
	if getenv("GOMEMLIMIT") != "" || !lim.On() {
		return func() {}
	}
	old := debug.SetMemoryLimit(lim.Total + baseBytes)
	return func() { debug.SetMemoryLimit(old) }
}

// parseBytes reads a size: a whole number of bytes, or with a unit KiB,
// MiB, GiB or TiB (KB, MB, GB, TB, K, M, G and T mean the same).
func parseBytes(s string) (int64, error) {
	t, shift := strings.TrimSpace(s), 0
	for _, u := range []struct {
		suffix string
		shift  int
	}{{"TiB", 40}, {"TB", 40}, {"T", 40}, {"GiB", 30}, {"GB", 30}, {"G", 30}, {"MiB", 20}, {"MB", 20}, {"M", 20},
		{"KiB", 10}, {"KB", 10}, {"K", 10}, {"B", 0}} {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || !(n > 0) || n*float64(int64(1)<<shift) >= 1<<62 {
		return 0, fmt.Errorf("want a size such as 4GiB, 512MiB or a number of bytes")
	}
	return int64(n * float64(int64(1)<<shift)), nil
}

// readConfig reads a sweeps file of at most maxConfigBytes.
func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("reading config: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, usagef("reading config: %w", err)
	}
	if len(src) > maxConfigBytes {
		return nil, usagef("%s: more than %d MiB: want a sweeps file of ranges ({from, to, step}), not of long lists", path, maxConfigBytes>>20)
	}
	return src, nil
}

// checkRolling refuses --add-seeds n whose runs, listed before they are
// run (a cell and a seed each, experiments.RolledRunBytes), would take a
// sweep's lists past the grid's share of lim.
func checkRolling(cmd string, sweeps []*experiments.Sweep, n int, lim experiments.Limits) error {
	if n <= 0 || !lim.On() {
		return nil
	}
	for _, s := range sweeps {
		runs := int64(len(s.Cells)) * int64(n)
		need := runs*experiments.RolledRunBytes + int64(len(s.Cells))*experiments.CellBytes + int64(s.Len())*experiments.RunListBytes
		if need > lim.GridBytes() {
			return usagef("%s: --add-seeds %d: %s's %d cells × %d = %d runs of rolling seeds are listed before they run, with its grid an estimated %s, more than the %s a sweep's lists may take under %s (--memory %s would take it); want fewer seeds a night",
				cmd, n, s.Name, len(s.Cells), n, runs, experiments.Bytes(need), experiments.Bytes(lim.GridBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.GridBytes, need)))
		}
	}
	return nil
}
