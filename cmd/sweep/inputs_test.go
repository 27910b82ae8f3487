package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input of every kind is refused with exit 2, a message that says what
// would be accepted, and nothing written: not the output folder, not a
// folder a sweep name points at.
func TestInputGuards(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const seeds = "[defaults]\nseeds = [1, 2]\n"
	traversal := write("traversal.toml", seeds+"[sweep.\"../../../victim/runs/sweep=v\"]\npolicy = \"fixed\"\nclients = 10\n")
	huge := write("huge.toml", seeds+"[sweep.h]\npolicy = \"fixed\"\nclients = 1073741824\n")
	grid := write("grid.toml", seeds+"[sweep.g]\npolicy = \"fixed\"\nclients = {from = 1, to = 1000}\ncapacity_rps = {from = 10, to = 10000, step = 10}\n")
	budget := write("budget.toml", seeds+"[sweep.b]\npolicy = \"fixed\"\nbudget_min_rps = 2\n")
	big := write("big.toml", seeds+"[sweep.l]\npolicy = \"fixed\"\n# "+strings.Repeat("x", maxConfigBytes)+"\n")
	small := "testdata/small.toml"
	out := filepath.Join(dir, "a", "b", "c", "out")
	tests := []struct {
		name string
		env  string // HERDSWEEP_MEMORY
		args []string
		want string
	}{
		{"sweep name with separators", "", []string{"run", "--config", traversal}, `traversal.toml:3: sweep."../../../victim/runs/sweep=v": "../../../victim/runs/sweep=v": want a sweep name of 1 to 64 characters a-z, 0-9, '-' and '_'`},
		{"--sweep name with separators", "", []string{"run", "--config", small, "--sweep", "../a"}, `--sweep "../a": want a sweep name`},
		{"--sweep with a leading dot", "", []string{"plan", "--config", small, "--sweep", ".a"}, `--sweep ".a": want a sweep name`},
		{"clients past the memory limit", "", []string{"run", "--config", huge, "--workers", "2"}, "huge.toml:5: sweep.h.clients: 1073741824: want a smaller value: a run of this size needs an estimated 40.0 GiB of memory, more than the 1.2 GiB each run may take under the memory limit 4.0 GiB (the default; --memory or HERDSWEEP_MEMORY to change it) over 2 workers (--memory 160.0 GiB would take it)"},
		{"the limit from the environment", "1GiB", []string{"plan", "--config", huge, "--workers", "1"}, "more than the 640.0 MiB each run may take under the memory limit 1.0 GiB (HERDSWEEP_MEMORY) over 1 workers (--memory 80.0 GiB would take it)"},
		{"the limit from the flag", "1GiB", []string{"run", "--config", huge, "--workers", "4", "--memory", "64GiB"}, "more than the 10.0 GiB each run may take under the memory limit 64.0 GiB (--memory) over 4 workers (--memory 320.0 GiB would take it)"},
		{"a bad limit", "lots", []string{"run", "--config", small}, `HERDSWEEP_MEMORY "lots": want a size such as 4GiB`},
		{"a million cells", "", []string{"plan", "--config", grid}, "grid.toml:3: sweep.g: more than 100000 cells"},
		{"a field sim names", "", []string{"run", "--config", budget}, "budget.toml:5: sweep.b.budget_min_rps: 2: want retries/s ≥ 0, with a retry_budget"},
		{"a config too large", "", []string{"run", "--config", big}, "big.toml: more than 4 MiB"},
		{"a million workers", "", []string{"run", "--config", small, "--workers", "1000000"}, "run: --workers 1000000: want 0 (one per CPU) to 1024"},
		{"workers in plan", "", []string{"plan", "--config", small, "--workers", "-1"}, "plan: --workers -1: want 0"},
		{"workers in reproduce", "", []string{"reproduce", "--workers", "5000"}, "reproduce: --workers 5000: want 0"},
		{"parts too large", "", []string{"run", "--config", small, "--part-rows", "100000000"}, "run: --part-rows 100000000: want 1 to 1000000"},
		{"a calibration too large", "", []string{"plan", "--config", small, "--sample", "1000000000"}, "plan: --sample 1000000000: want 1 to 100000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HERDSWEEP_MEMORY", tt.env)
			args := tt.args
			if tt.args[0] != "plan" {
				args = append(args, "--out", out)
			}
			_, stderr, code := sweep(t, args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr\n%s\nwant exit 2 and\n%s", code, stderr, tt.want)
			}
		})
	}
	for _, p := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "victim"), "victim", "../victim"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "1.5G": 3 << 29, "100": 100, "2 TB": 2 << 40, "64K": 64 << 10} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1G", "0", "lots", "NaNG", "1e30", "GiB"} {
		if _, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q): no error", s)
		}
	}
}

// A dataset folder the user names that does not exist is bad input (exit
// 2) for every command that reads one, as it is for cells and check.
func TestMissingDatasetIsBadInput(t *testing.T) {
	dir := t.TempDir()
	nope := filepath.Join(dir, "nope")
	asserts := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(asserts, []byte("gave_up max <= 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "--results", nope},
		{"recommend", "--capacity", "120", "--results", nope},
		{"cells", "--results", nope},
		{"assert", "--results", nope, asserts},
		{"check", nope},
		{"diff", nope, nope},
		{"compare", nope, nope},
	} {
		_, stderr, code := sweep(t, args...)
		if code != 2 || !strings.Contains(stderr, nope) {
			t.Errorf("sweep %s: exit %d, stderr %q; want exit 2 naming %s", strings.Join(args, " "), code, stderr, nope)
		}
	}
	if _, err := os.Stat(nope); err == nil {
		t.Errorf("%s was created", nope)
	}
}
