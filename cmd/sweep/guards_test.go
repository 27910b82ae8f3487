package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// A limit too small for any run is refused, saying what would take it;
// it never becomes "no limit" (--memory 1 split over two workers was 0
// bytes a run: no limit, and 2³⁰ clients ran out of memory).
func TestSmallMemoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	huge := filepath.Join(dir, "huge.toml")
	os.WriteFile(huge, []byte("[sweep.h]\npolicy = \"fixed\"\nclients = 1073741824\nseeds = [1]\n"), 0o644)
	for _, tt := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"--memory 1", "", []string{"run", "--config", huge, "--memory", "1", "--workers", "2", "--out", out}, "run: --memory 1: 1 B is too small for any run: 2 workers need at least 3.5 MiB"},
		{"8 meant as GiB", "8", []string{"run", "--config", huge, "--workers", "16", "--out", out}, "HERDSWEEP_MEMORY 8: 8 B is too small for any run: 16 workers need at least 28.0 MiB (1.0 MiB for each worker's simulations, five eighths of the limit): want at least 28.0 MiB, or fewer workers (a number without a unit is bytes: 8GiB?)"},
		{"plan", "", []string{"plan", "--config", huge, "--memory", "100KiB"}, "plan: --memory 100KiB: 100.0 KiB is too small"},
		{"recommend", "", []string{"recommend", "--capacity", "300", "--clients", "1073741824", "--memory", "1", "--workers", "1"}, "recommend: --memory 1: 1 B is too small"},
		{"just enough, then the cell", "", []string{"run", "--config", huge, "--memory", "4MiB", "--workers", "2", "--out", out}, "huge.toml:3: sweep.h.clients: 1073741824: want a smaller value: a run of this size needs an estimated 40.0 GiB of memory, more than the 1.2 MiB each run may take under the memory limit 4.0 MiB (--memory) over 2 workers (--memory 160.0 GiB would take it)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HERDSWEEP_MEMORY", tt.env)
			_, stderr, code := sweep(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr\n%s\nwant exit 2 and\n%s", code, stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// The case, at a tenth of its length: 1 ms ticks, 40 timelines of
// a long window, accepted by plan and run on the old guard (which did not
// count what a timeline takes in a part until it is written: 1.6 GB at a
// tenth, out of memory at full length). It is refused, naming window_s,
// before anything is run or written.
func TestTimelinesAreCountedBeforeARun(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tl.toml")
	os.WriteFile(cfg, []byte("[sweep.tl]\nclients = 2000\ncapacity_rps = 1000\nreject_cost = 0.9\ntick_ms = 1\nwindow_s = 999\npolicy = \"fixed\"\nseeds = {from = 1, to = 40}\ntimeline_seeds = 40\n"), 0o644)
	out := filepath.Join(dir, "out")
	want := "tl.toml:6: sweep.tl.window_s: 999: want a smaller value: a run of this size takes an estimated 172.7 MiB in a part (its rows, a timeline's a tick) until the part is written, more than the 51.2 MiB a part may take under the memory limit 1.0 GiB (--memory) over 2 workers (--memory 3.5 GiB would take it)"
	for _, args := range [][]string{
		{"plan", "--config", cfg, "--memory", "1GiB", "--workers", "2", "--sample", "1"},
		{"run", "--config", cfg, "--memory", "1GiB", "--workers", "2", "--out", out},
	} {
		_, stderr, code := sweep(t, args...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr\n%s\nwant exit 2 and\n%s", args[0], code, stderr, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}

// Under a small limit a part is committed before its rows pass their
// share: parts split by bytes, and the dataset is the same as one written
// in a single part.
func TestPartsAreCommittedByBytes(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.toml")
	os.WriteFile(cfg, []byte("[sweep.p]\nclients = 3000\ncapacity_rps = 300\ntick_ms = 10\nwindow_s = 150\npolicy = [\"full-jitter\", \"decorrelated\"]\nseeds = {from = 1, to = 12}\ntimeline_seeds = 12\n"), 0o644)
	small, large := filepath.Join(dir, "small"), filepath.Join(dir, "large")
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	for _, o := range []struct{ out, mem string }{{small, "64MiB"}, {large, "4GiB"}} {
		if _, stderr, code := sweep(t, "run", "--config", cfg, "--out", o.out, "--memory", o.mem, "--workers", "2", "--no-report", "--quiet"); code != 0 {
			t.Fatalf("--memory %s: exit %d: %s", o.mem, code, stderr)
		}
	}
	count := func(out string) int {
		es, _ := os.ReadDir(filepath.Join(out, "runs", "sweep=p"))
		n := 0
		for _, e := range es {
			if dataset.IsPart(e.Name()) { // not the run's intent, _intent.HASH.json
				n++
			}
		}
		return n
	}
	if n, m := count(small), count(large); n < 3 || m != 1 {
		t.Errorf("%d parts under 64 MiB, %d under 4 GiB: want the timelines' rows to split the first (3.2 MiB a part) and one part for the 24 runs of the second", n, m)
	}
	if stdout, stderr, code := sweep(t, "diff", small, large); code != 0 {
		t.Errorf("diff of the two datasets: exit %d\n%s%s", code, stdout, stderr)
	}
}

// --out "" is no folder: refused before anything is written (run made
// runs/, timelines/ and groups/ in the working directory, then failed).
func TestEmptyOutIsRefused(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := filepath.Abs("testdata/small.toml")
	t.Chdir(dir)
	for _, args := range [][]string{{"run", "--config", cfg, "--out", ""}, {"run", "--config", cfg, "--out", " "}, {"reproduce", "--seeds", "0", "--out", ""}} {
		_, stderr, code := sweep(t, args...)
		if code != 2 || !strings.Contains(stderr, `--out "`) || !strings.Contains(stderr, "want a folder") {
			t.Errorf("%q: exit %d, %s; want exit 2 and want a folder", args, code, stderr)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) > 0 {
		t.Errorf("the working directory holds %d entries, want none: %v", len(es), es)
	}
}

// Shard counts that name no shard are refused: --shards -1, the count of
// the environment without an index (every pod of a job would run the whole
// sweep), and --shard against a different --shards.
func TestShardCountsAreChecked(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tt := range []struct {
		flag   string
		shards int
		env    func(string) string
		want   shardSpec
		err    string
	}{
		{"", -1, env(), shardSpec{}, "--shards -1: want the number of shards, 1 to 100000"},
		{"", 200_000, env("JOB_COMPLETION_INDEX", "3"), shardSpec{}, "--shards 200000: want"},
		{"", 0, env("HERDSWEEP_SHARDS", "4"), shardSpec{}, `HERDSWEEP_SHARDS="4" without --shard, JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID: which shard is this?`},
		{"", 0, env("HERDSWEEP_SHARDS", "four"), shardSpec{}, `HERDSWEEP_SHARDS="four" without`},
		{"", 0, env("HERDSWEEP_SHARDS", "1"), shardSpec{}, ""},
		{"0/4", 8, env(), shardSpec{}, "--shard 0/4 with --shards 8: the shard counts differ"},
		{"0/4", 4, env(), shardSpec{0, 4}, ""},
		{"1/4", 0, env("HERDSWEEP_SHARDS", "4"), shardSpec{1, 4}, ""},
	} {
		got, _, err := resolveShard(tt.flag, tt.shards, tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q %d: error %v, want %q", tt.flag, tt.shards, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q %d: %v, %v; want %v", tt.flag, tt.shards, got, err, tt.want)
		}
	}
}

// Flags that name nothing are refused before anything is run: an empty
// sweep name (--sweep "" ran every sweep) and a capacity no fleet can use.
func TestEmptyAndHugeFlagsAreRefused(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config", "testdata/small.toml", "--out", out, "--sweep", ""}, `run: --sweep "": an empty value: want one or more, separated by commas`},
		{[]string{"run", "--config", "testdata/small.toml", "--out", out, "--sweep", "a,,b"}, `run: --sweep "a,,b": an empty value`},
		{[]string{"plan", "--config", "testdata/small.toml", "--sweep", ""}, `plan: --sweep "": an empty value`},
		{[]string{"run", "--config", "testdata/small.toml", "--out", out, "--shards", "-1"}, "--shards -1: want the number of shards"},
		{[]string{"recommend", "--capacity", "1e308"}, "recommend: --capacity 1e+308: want at most 1.07e+10 requests/s"},
		{[]string{"recommend", "--capacity", "300..1e300"}, "want at most 1.07e+10 requests/s"},
		{[]string{"live", "--library", "sim:grpc", "--scale", "0", "--out", out}, "live: --scale 0: want 1 (real time) to 100"},
		{[]string{"plan", "--config", "testdata/small.toml", "--calibration", "0s"}, "plan: --calibration 0s: want a positive duration"},
		{[]string{"run", "--config", "testdata/small.toml", "--out", out, "--add-seeds", "10000", "--memory", "64MiB"}, "run: --add-seeds 10000: a's 6 cells × 10000 = 60000 runs of rolling seeds are listed before they run, with its grid an estimated 146.5 MiB, more than the 8.0 MiB"},
	} {
		_, stderr, code := sweep(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, %s; want exit 2 and %s", tt.args, code, stderr, tt.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}

// An assertion line too long for the reader names its file and line
// (bufio.Scanner said "token too long" and nothing more).
func TestALongAssertionLineNamesItsLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "a.assert")
	terms := make([]string, 20_000)
	for i := range terms {
		terms[i] = "capacity_rps=" + strconv.Itoa(i)
	}
	os.WriteFile(f, []byte("# nightly\nt99_after_s max <= 60\n\nt99_after_s max <= 60 where "+strings.Join(terms, " ")+"\n"), 0o644)
	_, err := readAssertions(f)
	if err == nil || !strings.Contains(err.Error(), f+":4: a line of more than 64 KiB: want one assertion a line") {
		t.Errorf("error %v, want %s:4: a line of more than 64 KiB", err, f)
	}
}

// Every error a command prints is printable: a name with control
// characters, a bidirectional override or bytes that are not UTF-8, from
// a command line or a file, is escaped, never written raw to the terminal.
func TestErrorsArePrintable(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	bad := []string{"\x1b[31m", "\a", "\x00", "\r", "\u202e", "\x7f", "\xff", "\u0085", "\b", "\x9b"}
	name := func() string {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString("n")
			b.WriteString(bad[r.IntN(len(bad))])
		}
		return b.String()
	}
	for i := range 60 {
		n := name()
		cfg := filepath.Join(dir, fmt.Sprintf("c%d.toml", i))
		os.WriteFile(cfg, []byte("[sweep.\""+strings.ToValidUTF8(strings.NewReplacer("\x00", `\u0000`, "\x1b", `\u001b`, "\a", `\u0007`, "\r", `\r`, "\x7f", `\u007f`, "\b", `\b`).Replace(n), "?")+"\"]\npolicy = \"fixed\"\nseeds = [1]\n"), 0o644)
		for _, args := range [][]string{
			{n},
			{"run", "--" + n},
			{"run", "--config", filepath.Join(dir, n)},
			{"run", "--config", cfg, "--out", filepath.Join(dir, "o")},
			{"run", "--config", "testdata/small.toml", "--sweep", n, "--out", filepath.Join(dir, "o")},
			{"report", "--results", filepath.Join(dir, n)},
			{"check", filepath.Join(dir, n)},
			{"recommend", "--capacity", "300", "--mine", n},
			{"assert", "--results", dir, filepath.Join(dir, n)},
		} {
			_, stderr, code := sweep(t, args...)
			if code == 0 {
				t.Errorf("%q: exit 0", args)
			}
			if !utf8.ValidString(stderr) {
				t.Errorf("%q: stderr is not UTF-8: %q", args, stderr)
			}
			for _, c := range stderr {
				if c != '\n' && c != '\t' && (unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c)) {
					t.Errorf("%q: stderr holds %U raw: %q", args, c, stderr)
					break
				}
			}
		}
	}
}

// A cut calibration times what finished and says its times are lower
// bounds; a spent budget starts no run (counted, not timed).
func TestPlanCalibrationStopsAtItsBudget(t *testing.T) {
	t.Parallel()
	c := grid.Cell{Scenario: bigScenario(), Policy: fullJitter()}
	var started atomic.Int64
	at := func(i int) grid.Run {
		started.Add(1)
		return grid.Run{Cell: c, Seed: uint32(i + 1)}
	}
	budget, spend := context.WithCancel(context.Background())
	spend()
	_, _, cut, err := calibrate(context.Background(), budget, at, 3, 1500, 2)
	if err != nil || !cut {
		t.Errorf("calibrate with its budget spent: cut %v, %v; want cut and no error", cut, err)
	}
	// the runs handed out before the workers saw the stop were never run:
	// Execute's workers refuse every job after a stop
	if n := started.Load(); n > 3 {
		t.Errorf("%d runs handed out, want at most the 3 of the sample", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := calibrate(ctx, context.Background(), at, 3, 1500, 2); err == nil {
		t.Errorf("calibrate interrupted: no error, want the interruption")
	}
}

var heapChild = flag.Bool("heap.child", false, "internal: run the command of HERDSWEEP_HEAP_ARGS and report its peak heap")

// TestHeapChild is the child of TestPeakHeapStaysWithinTheLimit: it runs
// one command, with a goroutine reading the heap every 100 µs, and writes
// the most it saw. It does nothing in a test run of its own.
func TestHeapChild(t *testing.T) {
	if !*heapChild {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv("HERDSWEEP_HEAP_ARGS")), &args); err != nil {
		t.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(100 * time.Microsecond)
		defer tk.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tk.C:
			}
		}
	}()
	_, stderr, code := sweep(t, args...)
	close(done)
	metrics.Read(sample)
	p := max(peak.Load(), sample[0].Value.Uint64())
	os.WriteFile(os.Getenv("HERDSWEEP_HEAP_OUT"), []byte(fmt.Sprintf("%d %d\n%s", code, p, stderr)), 0o644)
}

var heapConfigs = flag.Int("heap.configs", 10, "random configs TestPeakHeapStaysWithinTheLimit runs")

// The memory guard's promise, on random accepted configs run under a small
// --memory (64–256 MiB): the peak heap (runtime/metrics, every heap
// object, live or not yet collected, read every 100 µs in a process of its
// own) stays within the limit plus baseBytes (64 MiB: the Go runtime, the
// program and its libraries, which the guard does not count). The configs
// are drawn around the shares: timelines whose rows fill parts, many
// clients, long windows, open loops, mixed fleets, many seeds.
func TestPeakHeapStaysWithinTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a process per config")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(23, 1))
	ran := 0
	for i := 0; ran < *heapConfigs && i < 20**heapConfigs; i++ {
		mem := int64(64+r.IntN(193)) << 20
		workers := 1 + r.IntN(3)
		src, desc := heapConfig(r, i%5, mem, workers)
		cfg := filepath.Join(dir, fmt.Sprintf("h%d.toml", i))
		os.WriteFile(cfg, []byte(src), 0o644)
		out := filepath.Join(dir, fmt.Sprintf("o%d", i))
		args := []string{"run", "--config", cfg, "--out", out, "--memory", strconv.FormatInt(mem>>20, 10) + "MiB", "--workers", strconv.Itoa(workers),
			"--part-rows", strconv.Itoa(1 + r.IntN(2000)), "--no-report", "--quiet"}
		code, peak, stderr := heapOf(t, dir, args)
		if code == 2 {
			t.Logf("config %d (%s), --memory %d MiB, %d workers: refused: %s", i, desc, mem>>20, workers, strings.TrimSpace(stderr))
			continue // not a config the guard accepted
		}
		ran++
		if code != 0 {
			t.Errorf("config %d (%s): exit %d: %s", i, desc, code, stderr)
			continue
		}
		t.Logf("config %d (%s), --memory %d MiB, %d workers: peak heap %.1f MiB", i, desc, mem>>20, workers, float64(peak)/(1<<20))
		if peak > mem+baseBytes {
			t.Errorf("config %d (%s) under --memory %d MiB, %d workers: the heap peaked at %.1f MiB, more than the limit plus %d MiB\n%s",
				i, desc, mem>>20, workers, float64(peak)/(1<<20), baseBytes>>20, src)
		}
	}
	if ran < *heapConfigs {
		t.Errorf("only %d of the drawn configs were accepted, want %d", ran, *heapConfigs)
	}
}

// heapOf runs args in a process of its own (the test binary as TestHeapChild)
// and returns its exit code, peak heap and stderr.
func heapOf(t *testing.T, dir string, args []string) (code int, peak int64, stderr string) {
	t.Helper()
	a, _ := json.Marshal(args)
	res := filepath.Join(dir, "heap.out")
	os.Remove(res)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHeapChild$", "-heap.child")
	cmd.Env = append(os.Environ(), "HERDSWEEP_HEAP_ARGS="+string(a), "HERDSWEEP_HEAP_OUT="+res, "GOMEMLIMIT=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(b), "\n")
	if _, err := fmt.Sscan(head, &code, &peak); err != nil {
		t.Fatalf("%q: %v", head, err)
	}
	return code, peak, rest
}

// heapConfig draws a sweep of kind (0–4) sized around the shares of a
// limit of mem over workers: its runs' simulators, timelines, parts and
// grid each take from a fifth to all of their share.
func heapConfig(r *rand.Rand, kind int, mem int64, workers int) (src, desc string) {
	lim := experiments.Limits{Total: mem, Workers: workers}
	frac := func() float64 { return 0.2 + 0.8*r.Float64() }
	var b strings.Builder
	b.WriteString("[sweep.h]\n")
	seeds := 2 + r.IntN(10)
	policy := []string{`"full-jitter"`, `"decorrelated", "exponential"`, `"exponential", "full-jitter", "equal-jitter"`}[r.IntN(3)]
	switch kind {
	case 0: // timelines with arrivals at every tick of a long outage: their rows fill parts
		tick := []int{1, 2, 5}[r.IntN(3)]
		ticks := int(frac() * float64(lim.PartBytes()) / grid.TimelineRowBytes)
		outage := max(1, ticks*tick/1000)
		seeds = 2 + r.IntN(23)
		fmt.Fprintf(&b, "clients = %d\ncapacity_rps = %d\ntick_ms = %d\nrecover_s = %d\nwindow_s = 1\nspread_s = 0.01\ntimeline_seeds = %d\n",
			20+r.IntN(100), 1000/tick, tick, outage, seeds)
		policy = fmt.Sprintf(`{kind = "fixed", base_s = %g}`, float64(tick*(2+r.IntN(10)))/1000)
		desc = fmt.Sprintf("%d timelines of %d ticks a policy", seeds, (outage+1)*1000/tick)
	case 1: // many clients: the simulator's share
		clients := int(frac() * float64(lim.RunBytes()) / 60)
		fmt.Fprintf(&b, "clients = %d\ncapacity_rps = %d\nwindow_s = 120\n", clients, max(10, clients/100))
		desc = fmt.Sprintf("%d clients", clients)
	case 2: // an open loop on a queueing server
		rate := int(frac() * float64(lim.RunBytes()) / 80 / 200)
		fmt.Fprintf(&b, "clients = 500\nconcurrency = 16\nservice = \"exponential\"\nservice_s = 0.005\narrival_rps = %d\nwindow_s = 170\ntimeout_s = 1\n", max(1, min(rate, 2500)))
		desc = fmt.Sprintf("an open loop of %d requests/s", rate)
	case 3: // a mixed fleet with timelines of every seed
		fmt.Fprintf(&b, "clients = %d\ncapacity_rps = 100\nmix = [{share = 0.3, kind = \"fixed\", base_s = 1}]\ntimeline_seeds = %d\nwindow_s = %d\n", 200+r.IntN(3000), seeds, 60+r.IntN(600))
		desc = "a mixed fleet"
	case 4: // a grid of many small cells
		cells := int(frac() * float64(lim.GridBytes()) / (experiments.CellBytes + 3*experiments.RunListBytes))
		fmt.Fprintf(&b, "clients = {from = 1, to = %d}\ncapacity_rps = 10\nwindow_s = 30\n", max(1, cells))
		policy, seeds = `"full-jitter"`, 2
		desc = fmt.Sprintf("a grid of %d cells", cells)
	}
	fmt.Fprintf(&b, "policy = [%s]\nseeds = {from = 1, to = %d}\n", policy, seeds)
	return b.String(), desc
}

func bigScenario() sim.Scenario {
	sc := sim.Article()
	sc.Clients = 1_000_000
	return sc
}

func fullJitter() sim.Policy { return sim.DefaultPolicy(sim.FullJitter) }

// heapNow is the heap in use after two collections.
func heapNow() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The constants the parts' share is counted in bound what the writers of
// dataset/parquetio hold, measured as the heap they keep (after a
// collection): a runs row with its strings (Cell.RowBytes), a groups row
// per group of a mixed fleet, a timelines row per tick with arrivals
// (TimelineRows), and recommend's records (RecordBytes: the run, its
// record and its place in the aggregates).
func TestRowBytesBoundTheWriters(t *testing.T) {
	// not parallel: it reads the heap
	curve := strings.TrimSpace(strings.Repeat("0.25 1.5 ", 720))
	cells := map[string]grid.Cell{"the article's": {Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.FullJitter)}}
	q := sim.Article()
	q.Concurrency, q.Service, q.ServiceTime, q.ArrivalRate, q.ArrivalCurve = 4, "fixed", 20*time.Millisecond, 10, curve
	cells["a 1,440-slot curve"] = grid.Cell{Scenario: q, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	mixed := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.GRPC)}
	mixed.Mix[0] = sim.Group{Share: 0.25, Policy: sim.DefaultPolicy(sim.Fixed)}
	mixed.Mix[1] = sim.Group{Share: 0.25, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	cells["a mixed fleet"] = mixed
	for name, c := range cells {
		const n = 3000
		var res sim.Result
		res.NGroups = len(c.Groups())
		if !c.Mixed() {
			res.NGroups = 0
		}
		before := heapNow()
		p := store.NewPart(dataset.Meta{}, n)
		for i := range n {
			p.Add(grid.Run{Cell: c, Seed: uint32(i)}, res, nil)
		}
		per, est := (heapNow()-before)/n, c.RowBytes(false)
		t.Logf("%s: a run's rows hold %d bytes, RowBytes %d", name, per, est)
		if per > est {
			t.Errorf("%s: a run's rows hold %d bytes, more than RowBytes %d", name, per, est)
		}
		runtime.KeepAlive(p)
	}
	for _, ticks := range []int{1000, 70_000, 300_000} {
		tl := &sim.Timeline{Tick: time.Millisecond}
		for k := range ticks {
			tl.Arrivals, tl.Served, tl.GaveUp = append(tl.Arrivals, int32(1+k%7)), append(tl.Served, 1), append(tl.GaveUp, 0)
		}
		before := heapNow()
		p := store.NewPart(dataset.Meta{}, 1)
		p.Add(grid.Run{Cell: cells["the article's"], Seed: 1}, sim.Result{}, tl) // and its run's row, a few hundred bytes
		got, est := heapNow()-before, grid.TimelineRows(tl)
		t.Logf("a timeline of %d ticks: %d bytes in a part, TimelineRows %d", ticks, got, est)
		// Beside the timeline, the part holds its run's row and its columns'
		// first buffers, a fixed cost that grows with the runs table's
		// columns: 55 KB at 85 columns, 70 KB at 96 (the limiter's 11).
		if got > est+96<<10 {
			t.Errorf("a timeline of %d ticks holds %d bytes in a part, more than TimelineRows %d", ticks, got, est)
		}
		runtime.KeepAlive(p)
	}
	const n = 20_000
	space := grid.CandidateSpace(sim.Article())
	before := heapNow()
	runs := analysis.Runs(space, 1, n/len(space))
	recs := make([]analysis.Record, len(runs))
	for i, r := range runs {
		recs[i] = analysis.Record{Record: dataset.Record{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed, Label: r.Cell.Label(), Cell: r.Cell}}
	}
	aggs := analysis.Aggregates(recs)
	per := (heapNow() - before) / int64(len(runs))
	t.Logf("recommend: %d bytes a run, RecordBytes %d", per, experiments.RecordBytes)
	if per > experiments.RecordBytes {
		t.Errorf("recommend holds %d bytes a run, more than RecordBytes %d", per, experiments.RecordBytes)
	}
	runtime.KeepAlive(runs) // a search holds them all to its end
	runtime.KeepAlive(recs)
	runtime.KeepAlive(aggs)
}
