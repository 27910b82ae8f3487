package experiments

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

func TestLoadRepositorySweeps(t *testing.T) {
	t.Parallel()
	cfg := repoConfig(t)
	art := cfg.Sweep("article")
	if art == nil || len(art.Cells) != 12 || len(art.Seeds) != 5 {
		t.Fatalf("article sweep: %+v, want the 12 distinct cells of tables 1–4 on 5 seeds", art)
	}
	for _, s := range cfg.Main() {
		if s.OnDemand || s.Name == "nightly" {
			t.Errorf("Main() includes %s", s.Name)
		}
	}
	if n := cfg.Sweep("nightly"); n == nil || !n.OnDemand || n.Len() < 10_000 {
		t.Errorf("nightly sweep: %+v", n)
	}
}

const base = `
[defaults]
seeds = [1, 2]
`

func TestLoadExpandsGrids(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		cells int
		seeds int
		check func(t *testing.T, s *Sweep)
	}{
		{"product", base + `
[sweep.s]
policy = ["full-jitter", "decorrelated"]
capacity_rps = [60, 120, 240]`, 6, 2, nil},
		// width is read by width-jitter only: fixed's three widths collapse.
		{"unread axes collapse", base + `
[sweep.s]
policy = ["fixed", "width-jitter"]
width = [0.1, 0.25, 0.5]`, 4, 2, nil},
		{"range", base + `
[sweep.s]
policy = "width-jitter"
width = {from = 0, to = 1, step = 0.05}
seeds = {from = 10, to = 19}`, 21, 10, func(t *testing.T, s *Sweep) {
			if w := s.Cells[6].Policy.Width; w != 0.3 {
				t.Errorf("7th width %v, want 0.3 exactly", w)
			}
		}},
		{"policy table wins over axes", base + `
[sweep.s]
policy = [{kind = "fixed", base_s = 5}, "decorrelated"]
base_s = 2`, 2, 2, func(t *testing.T, s *Sweep) {
			if s.Cells[0].Policy.Base != 5*time.Second || s.Cells[1].Policy.Base != 2*time.Second {
				t.Errorf("bases %v, %v; want 5s (table) and 2s (axis)", s.Cells[0].Policy.Base, s.Cells[1].Policy.Base)
			}
		}},
		{"cells on top of the sweep", base + `
[sweep.s]
capacity_rps = 240
[[sweep.s.cell]]
policy = "fixed"
base_s = 5
[[sweep.s.cell]]
policy = "decorrelated"
cap_s = [30, 60]`, 3, 2, func(t *testing.T, s *Sweep) {
			for _, c := range s.Cells {
				if c.Scenario.Capacity != 240 {
					t.Errorf("cell %s: capacity %v, want the sweep's 240", c.Label(), c.Scenario.Capacity)
				}
			}
		}},
		{"experiment with its own seeds", `
[sweep.a]
experiment = "table2"`, 2, 5, func(t *testing.T, s *Sweep) {
			if s.Seeds[0] != 206 {
				t.Errorf("seeds %v, want the article's", s.Seeds)
			}
		}},
		{"family defaults when a key is absent", `
[sweep.s]
policy = ["article-client", "watchdog"]
seeds = [1]`, 2, 1, func(t *testing.T, s *Sweep) {
			if p := s.Cells[0].Policy; p.MaxAttempts != 6 || p.Cap != time.Minute {
				t.Errorf("article-client %+v, want its 6 attempts and 60 s cap", p)
			}
			if p := s.Cells[1].Policy; p.Cap != 0 {
				t.Errorf("watchdog %+v, want MaxInterval 0 (no cap) by default", p)
			}
		}},
		{"explicit zero cap is no cap", base + `
[sweep.s]
policy = "exponential"
cap_s = 0`, 1, 2, func(t *testing.T, s *Sweep) {
			if s.Cells[0].Policy.Cap != 0 {
				t.Errorf("cap %v, want 0", s.Cells[0].Policy.Cap)
			}
		}},
	}
	for _, tt := range tests {
		cfg, err := Load("t.toml", []byte(tt.src))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		s := cfg.Sweeps[0]
		if len(s.Cells) != tt.cells || len(s.Seeds) != tt.seeds {
			t.Errorf("%s: %d cells × %d seeds, want %d × %d", tt.name, len(s.Cells), len(s.Seeds), tt.cells, tt.seeds)
		}
		for _, c := range s.Cells {
			if err := c.Validate(); err != nil {
				t.Errorf("%s: invalid cell %s: %v", tt.name, c.Label(), err)
			}
		}
		if tt.check != nil && !t.Failed() {
			tt.check(t, s)
		}
	}
}

func TestLoadErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string // fragments, all in the error
	}{
		{"syntax", "[sweep.s]\npolicy = [\"fixed\"\ncapacity_rps = 1", []string{"t.toml:3:"}},
		{"unknown key", base + "[sweep.s]\npolicy = \"fixed\"\ncapcity_rps = 120\n", []string{"t.toml:6: sweep.s.capcity_rps: unknown key (did you mean \"capacity_rps\"?): want a parameter (policy, base_s"}},
		{"a key users write for another", base + "[sweep.s]\npolicy = \"fixed\"\noutage_s = 600\n", []string{"t.toml:6: sweep.s.outage_s: unknown key (did you mean \"recover_s\"? the outage: the server is down from time 0"}},
		{"retries for attempts", base + "[sweep.s]\npolicy = {kind = \"fixed\", max_retries = 3}\n", []string{"t.toml:5: sweep.s.policy.max_retries: unknown key in a policy table (did you mean \"max_attempts\"? attempts, the first included: N retries is max_attempts = N + 1)"}},
		{"unknown policy", base + "[sweep.s]\npolicy = [\"fixed\", \"decor\"]\n", []string{`t.toml:5: sweep.s.policy: "decor": want a family (fixed, exponential, full-jitter`, "or a preset (grpc, aws-sdk-go-v2"}},
		{"wrong type", base + "[sweep.s]\npolicy = \"fixed\"\nclients = \"many\"\n", []string{`t.toml:6: sweep.s.clients: "many": want a whole number`}},
		{"empty axis", base + "[sweep.s]\npolicy = \"fixed\"\ncapacity_rps = []\n", []string{"t.toml:6: sweep.s.capacity_rps: empty list"}},
		{"out of range", base + "[sweep.s]\npolicy = \"fixed\"\ncapacity_rps = 0\n", []string{"t.toml:6: sweep.s.capacity_rps: 0: want a finite number of requests/s"}},
		{"in defaults", "[defaults]\nseeds = [1]\ntick_ms = 0\n[sweep.s]\npolicy = \"fixed\"\n", []string{"t.toml:3: defaults.tick_ms: 0: want a whole number of milliseconds ≥ 1ms"}},
		{"cap below base", base + "[sweep.s]\npolicy = \"exponential\"\nbase_s = 2\ncap_s = 1\n", []string{"t.toml:7: sweep.s.cap_s: 1: want 0 (no cap) or at least base_s (2s)"}},
		{"width", base + "[sweep.s]\npolicy = \"width-jitter\"\nwidth = 1.5\n", []string{"t.toml:6: sweep.s.width: 1.5: want a fraction in [0, 1]"}},
		{"cap below base, per cell", base + "[sweep.s]\npolicy = \"exponential\"\nbase_s = [1, 2]\ncap_s = 1.5\n", []string{"t.toml:7: sweep.s.cap_s: 1.5: want 0 (no cap) or at least base_s (2s)"}},
		{"bad range", base + "[sweep.s]\npolicy = \"width-jitter\"\nwidth = {from = 1, to = 0, step = 0.1}\n", []string{"t.toml:6: sweep.s.width: from 1 to 0 step 0.1"}},
		{"in a cell", base + "[sweep.s]\n[[sweep.s.cell]]\npolicy = \"fixed\"\n[[sweep.s.cell]]\npolicy = \"fixed\"\nbase_s = -1\n", []string{"t.toml:9: sweep.s.cell[1].base_s"}},
		{"seeds in a cell", base + "[sweep.s]\n[[sweep.s.cell]]\npolicy = \"fixed\"\nseeds = [1, 2]\n", []string{"t.toml:7: sweep.s.cell[0].seeds: a cell table has no seeds of its own: want the sweep's seeds"}},
		{"no seeds", "[sweep.s]\npolicy = \"fixed\"\n", []string{"sweep.s.seeds: missing"}},
		{"sub-ms duration", base + "[sweep.s]\npolicy = \"fixed\"\nbase_s = 0.0005\n", []string{"t.toml:6: sweep.s.base_s: 0.0005: want a number of seconds in whole milliseconds"}},
		{"two mistakes at once", base + "[sweep.s]\npolicy = \"nope\"\nclients = -1\n", []string{"t.toml:5: sweep.s.policy", "t.toml:6: sweep.s.clients"}},
		{"unknown experiment", "[sweep.s]\nexperiment = \"table9\"\n", []string{`t.toml:2: sweep.s.experiment: "table9": want one of article, table1`}},
		{"preset key", base + "[sweep.s]\npolicy = \"fixed\"\npreset = \"grpc\"\n", []string{"t.toml:6: sweep.s.preset: a preset is a policy"}},
		{"mix share", base + "[sweep.s]\npolicy = \"fixed\"\nmix = [{share = -0.5, kind = \"fixed\"}]\n", []string{"t.toml:6: sweep.s.mix: share -0.5: want a fraction in (0, 1)"}},
		{"mix shares sum", base + "[sweep.s]\npolicy = \"fixed\"\nmix = [{share = 0.6, kind = \"fixed\"}, {share = 0.6, kind = \"decorrelated\"}]\n", []string{"t.toml:6: sweep.s.mix"}},
		{"top level", "[sweeps.s]\npolicy = \"fixed\"\n", []string{"t.toml:1: sweeps: unknown key: want defaults or sweep"}},
		{"nothing", "", []string{"t.toml: no [sweep.NAME] table"}},
		// Bounds live in sim's Validate; the loader reports them at the key,
		// in the config's words, whichever type owns the field.
		{"policy field sim names", base + "[sweep.s]\npolicy = \"fixed\"\nbudget_min_rps = 2\n", []string{"t.toml:6: sweep.s.budget_min_rps: 2: want retries/s ≥ 0, with a retry_budget"}},
		{"scenario field", base + "[sweep.s]\npolicy = \"fixed\"\nreject_cost = 1\n", []string{"t.toml:6: sweep.s.reject_cost: 1: want a fraction of a request's work in [0, 1)"}},
		{"field of another field", base + "[sweep.s]\npolicy = \"fixed\"\nramp_from = 2\n", []string{"t.toml:6: sweep.s.ramp_from: 2: want a fraction of capacity_rps in [0, 1]"}},
		{"several fields of one policy", base + "[sweep.s]\npolicy = \"exponential\"\nmultiplier = 200\nmax_attempts = -1\n", []string{"t.toml:6: sweep.s.multiplier: 200: want a number in [1, 100]", "t.toml:7: sweep.s.max_attempts: -1"}},
		{"an empty window", base + "[sweep.s]\npolicy = \"fixed\"\nwindow_s = 0\n", []string{"t.toml:6: sweep.s.window_s: 0: want"}},
		{"bucket", base + "[sweep.s]\npolicy = \"fixed\"\nbucket_tokens = 2000000000\n", []string{"t.toml:6: sweep.s.bucket_tokens: 2000000000: want 0 (no bucket) or a whole number of tokens ≤ 1000000000"}},
		// A component is off at 0; a negative or NaN switch is an error,
		// not "off" (Normalize cleared them before Validate saw them).
		{"negative throttle_k", base + "[sweep.s]\npolicy = \"fixed\"\nthrottle_k = -1\n", []string{"t.toml:6: sweep.s.throttle_k: -1: want 0 (no adaptive throttling) or a multiplier of accepts in [1, 100]"}},
		{"NaN throttle_k", base + "[sweep.s]\npolicy = \"fixed\"\nthrottle_k = nan\n", []string{"t.toml:6: sweep.s.throttle_k: NaN: want 0 (no adaptive throttling)"}},
		{"negative retry_tokens", base + "[sweep.s]\npolicy = \"fixed\"\nretry_tokens = -1\n", []string{"t.toml:6: sweep.s.retry_tokens: -1: want 0 (no retry throttling)"}},
		{"negative breaker_ratio", base + "[sweep.s]\npolicy = \"fixed\"\nbreaker_ratio = -0.1\n", []string{"t.toml:6: sweep.s.breaker_ratio: -0.1: want 0 (no circuit breaker)"}},
		{"unknown key in a policy table", base + "[sweep.s]\npolicy = {kind = \"fixed\", breaker_raito = 0.1}\n", []string{"t.toml:5: sweep.s.policy.breaker_raito: unknown key in a policy table (did you mean \"breaker_ratio\"?): want kind or a policy parameter (base_s, cap_s", "retry_on", "breaker_ratio", "clients_per_process"}},
		// A component's own parameters are checked with the component off
		// too, as a family's parameters are in a sweep of other families.
		{"breaker window without a breaker", base + "[sweep.s]\npolicy = \"fixed\"\nbreaker_window_s = -3\n", []string{"t.toml:6: sweep.s.breaker_window_s: -3: want"}},
		{"throttle window without throttling", base + "[sweep.s]\npolicy = \"fixed\"\nthrottle_window_s = 7200\n", []string{"t.toml:6: sweep.s.throttle_window_s: 7200: want at most"}},
		{"token ratio without tokens", base + "[sweep.s]\npolicy = \"fixed\"\nretry_token_ratio = 2\n", []string{"t.toml:6: sweep.s.retry_token_ratio: 2: want gRPC's tokenRatio in (0, 1]"}},
		{"mix group field", base + "[sweep.s]\npolicy = \"fixed\"\nmix = [{share = 0.5, kind = \"exponential\", multiplier = 0.5}]\n", []string{"t.toml:6: sweep.s.mix.multiplier: 0.5: want a number in [1, 100]"}},
		{"tick overflow", base + "[sweep.s]\npolicy = \"fixed\"\ntick_ms = 9223372036854775807\n", []string{"t.toml:6: sweep.s.tick_ms: 9223372036854775807: want a number of milliseconds within"}},
		// Names become folders: runs/sweep=NAME.
		{"name with separators", base + "[sweep.\"../../victim/runs/sweep=v\"]\npolicy = \"fixed\"\n", []string{`t.toml:4: sweep."../../victim/runs/sweep=v": "../../victim/runs/sweep=v": want a sweep name of 1 to 64 characters a-z, 0-9`}},
		{"name with a leading dot", base + "[sweep.\".hidden\"]\npolicy = \"fixed\"\n", []string{`t.toml:4: sweep.".hidden": ".hidden": want a sweep name`}},
		{"name in capitals", base + "[sweep.Nightly]\npolicy = \"fixed\"\n", []string{`t.toml:4: sweep.Nightly: "Nightly": want a sweep name`}},
		{"name too long", base + "[sweep." + strings.Repeat("a", 65) + "]\npolicy = \"fixed\"\n", []string{"t.toml:4: sweep.aaaa", "want a sweep name of 1 to 64"}},
		// Sizes are counted before anything is expanded.
		{"a million cells", base + "[sweep.s]\npolicy = \"fixed\"\nclients = {from = 1, to = 1000}\ncapacity_rps = {from = 10, to = 10000, step = 10}\n", []string{"t.toml:4: sweep.s: more than 100000 cells"}},
		{"too many runs", "[sweep.s]\nseeds = {from = 1, to = 100000}\npolicy = \"fixed\"\nclients = {from = 1, to = 101}\n", []string{"t.toml:1: sweep.s: 101 cells × 100000 seeds = 10100000 runs: more than 10000000"}},
		// A long value is shown by its start: the message stays readable.
		{"too many slots", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 1\nservice = \"fixed\"\nservice_s = 0.01\narrival_rps = 1\narrival_curve = \"" + strings.Repeat("1 ", 1440) + "1\"\n",
			[]string{"t.toml:10: sweep.s.arrival_curve: " + strings.Repeat("1 ", 30) + "… (2881 characters): want 1 to 1440 multipliers", "; got 1441"}},
		// An adaptive concurrency limiter (sim/limiter.go).
		{"unknown limiter", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nlimiter = [\"aimd\", \"vegas\"]\n", []string{`t.toml:9: sweep.s.limiter: vegas: want "", "aimd" or "gradient2"`}},
		{"limiter on the counting server", base + "[sweep.s]\npolicy = \"fixed\"\nlimiter = \"aimd\"\n", []string{`t.toml:6: sweep.s.limiter: aimd: want "" unless concurrency > 0: only a queueing server has a limiter`}},
		{"backoff out of range", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nlimiter = \"aimd\"\nlimit_backoff = 0.3\n", []string{"t.toml:10: sweep.s.limit_backoff: 0.3: want in [0.5, 1)"}},
		{"smoothing of aimd", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nlimiter = \"aimd\"\nlimit_smoothing = 0.5\n", []string{`t.toml:10: sweep.s.limit_smoothing: 0.5: want 0 unless limiter is "gradient2"`}},
		{"min over max", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nlimiter = \"gradient2\"\nlimit_min = 50\nlimit_max = 40\n", []string{"t.toml:10: sweep.s.limit_min: 50: want at most limit_max (40)"}},
		{"unknown queue order", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nqueue_order = \"random\"\n", []string{`t.toml:9: sweep.s.queue_order: random: want "fifo" (or "": first come, first served) or "lifo"`}},
		{"lifo with a wait bound", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nqueue_order = \"lifo\"\nqueue_wait_s = 0.5\n", []string{"t.toml:10: sweep.s.queue_wait_s: 0.5: want 0 with queue_order lifo: it judges an arrival by its wait"}},
		{"limit without a limiter", base + "[sweep.s]\npolicy = \"fixed\"\nconcurrency = 2\nservice = \"fixed\"\nservice_s = 0.01\nlimit_max = 40\n", []string{"t.toml:9: sweep.s.limit_max: 40: want 0 unless a limiter is set"}},
		{"a long list", "[sweep.s]\npolicy = \"fixed\"\nseeds = [" + strings.Repeat("1, ", MaxList) + "1]\n", []string{"t.toml:3: sweep.s.seeds: a list of 100001 values: want at most 100000"}},
	}
	for _, tt := range tests {
		_, err := Load("t.toml", []byte(tt.src))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if len(err.Error()) > 2000 {
			t.Errorf("%s: an error of %d bytes", tt.name, len(err.Error()))
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%v\nwant it to contain\n%s", tt.name, err, w)
			}
		}
	}
}

// Refusing a grid of a million cells allocates next to nothing: the cells
// are counted, not built.
func TestHugeGridIsRefusedWithoutBuildingIt(t *testing.T) {
	src := []byte(base + "[sweep.s]\npolicy = \"fixed\"\nclients = {from = 1, to = 1000}\ncapacity_rps = {from = 10, to = 10000, step = 10}\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Load("t.toml", src)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 100000 cells") {
		t.Fatalf("error %v, want the grid refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("refusing the grid allocated %d MB, want under 20", alloc>>20)
	}
}

// A cell whose run would take more memory than the limit is refused at the
// key that makes it large, with the estimate and the limit.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	lim := Limits{Total: 4 << 30, Workers: 3, From: "the test's"}
	tests := []struct{ src, want string }{
		{base + "[sweep.s]\npolicy = \"fixed\"\nclients = 1073741824\n", "t.toml:6: sweep.s.clients: 1073741824: want a smaller value: a run of this size needs an estimated 40.0 GiB of memory, more than the 853.3 MiB each run may take under the memory limit 4.0 GiB (the test's) over 3 workers (--memory 224.0 GiB would take it)"},
		{base + "[sweep.s]\ntimeline_seeds = 1\npolicy = \"fixed\"\ntick_ms = 1\ncapacity_rps = 1000\nwindow_s = 9000\n", "t.toml:9: sweep.s.window_s: 9000: want a smaller value: a run of this size takes an estimated 1.5 GiB in a part (its rows, a timeline's a tick) until the part is written, more than the 204.8 MiB a part may take under the memory limit 4.0 GiB (the test's) over 3 workers (--memory 32.0 GiB would take it)"},
	}
	for _, tt := range tests {
		_, err := LoadWith("t.toml", []byte(tt.src), lim)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v\nwant %s", err, tt.want)
		}
		if _, err := Load("t.toml", []byte(tt.src)); err != nil {
			t.Errorf("without a limit: %v", err)
		}
	}
}

func TestShardsPartitionRuns(t *testing.T) {
	t.Parallel()
	cells, _ := article.Builtin("article")
	s := &Sweep{Cells: cells, Seeds: []uint32{1, 2, 3, 4, 5, 6, 7, 8}}
	const n = 3
	counts := make([]int, n)
	for i := range s.Len() {
		counts[s.Run(i).Shard(n)]++
	}
	total := 0
	for _, c := range counts {
		if c == 0 {
			t.Errorf("an empty shard: %v", counts)
		}
		total += c
	}
	if total != s.Len() {
		t.Errorf("shards hold %d runs, want %d", total, s.Len())
	}
}

func TestPresetsAndMixedFleets(t *testing.T) {
	t.Parallel()
	cfg, err := Load("t.toml", []byte(base+`
[sweep.s]
policy = ["go-retryablehttp", "grpc", "decorrelated"]
cap_s = 300          # not applied to presets
mix = [[], [{share = 0.1, kind = "fixed", base_s = 5}], [{share = 0.2, kind = "sgc-fleet"}, {share = 0.1, kind = "exponential", cap_s = 0}]]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sweeps[0]
	if len(s.Cells) != 9 {
		t.Fatalf("%d cells, want 3 policies × 3 fleets", len(s.Cells))
	}
	rh := s.Cells[0]
	if rh.Policy.Preset != "go-retryablehttp" || rh.Policy.Cap != 30*time.Second || !rh.Policy.HonorRetryAfter || rh.Mixed() {
		t.Errorf("preset cell %+v: want go-retryablehttp's own 30 s cap, one policy", rh.Policy)
	}
	if d := s.Cells[6]; d.Policy.Cap != 300*time.Second {
		t.Errorf("decorrelated: cap %v, want the axis's 300 s", d.Policy.Cap)
	}
	mixed := s.Cells[2]
	gs := mixed.Groups()
	if len(gs) != 3 || math.Abs(gs[0].Share-0.7) > 1e-12 || gs[1].Policy.Preset != "sgc-fleet" || gs[2].Policy.Cap != 0 {
		t.Fatalf("mixed fleet %+v", gs)
	}
	// The mix survives the round trip through its dataset column.
	var back grid.Cell
	for i := range grid.Params {
		grid.Params[i].Set(&back, grid.Params[i].Get(mixed))
	}
	if back != mixed || back.Key() != mixed.Key() {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, mixed)
	}
	var sm sim.Sim
	r, err := mixed.Simulate(&sm, sim.NewMulberry32(1), nil)
	if err != nil || r.NGroups != 3 {
		t.Errorf("Simulate: %v, %d groups", err, r.NGroups)
	}
}

// retry_on, added after runs were stored, leaves the keys of cells that
// do not set it as they were, mixed fleets included (the mix column
// leaves it out at its zero value; the key was computed on the commit
// before retry_on existed); "any" is the default under another name.
func TestRetryOnKeepsKeys(t *testing.T) {
	t.Parallel()
	mixed := grid.Cell{Scenario: sim.Article(), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	cb, _ := sim.PresetByName("cenkalti-backoff")
	mixed.Mix[0] = sim.Group{Share: 0.3, Policy: cb.Policy.Normalize()}
	if k := mixed.Key(); k != "3314895bd1c0bec7" {
		t.Errorf("mixed cell key %s, want 3314895bd1c0bec7:\n%s", k, mixed.Canonical())
	}
	cfg, err := Load("t.toml", []byte(base+"[sweep.s]\npolicy = \"decorrelated\"\nretry_on = [\"any\", \"5xx\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cells := cfg.Sweep("s").Cells
	plain := grid.Cell{Scenario: cells[0].Scenario, Policy: sim.DefaultPolicy(sim.Decorrelated)}
	if len(cells) != 2 || cells[0].Key() != plain.Key() || cells[1].Policy.RetryOn != sim.RetryOn5xx ||
		!strings.Contains(cells[1].Canonical(), `retry_on="5xx"`) {
		t.Errorf("retry_on any, 5xx: %v", cells)
	}
	_, err = Load("t.toml", []byte(base+"[sweep.s]\npolicy = \"decorrelated\"\nretry_on = \"429\"\n"))
	if err == nil || !strings.Contains(err.Error(), `retry_on: 429: want one of`) || !strings.Contains(err.Error(), "5xx+retry-after") {
		t.Errorf("retry_on 429: %v", err)
	}
}

// A value bound to another key (budget_min_rps needs a retry_budget) is
// accepted when the sweep sets both, and refused at the cell without.
func TestBudgetMinWithABudget(t *testing.T) {
	t.Parallel()
	if _, err := Load("t.toml", []byte(base+"[sweep.s]\npolicy = \"full-jitter\"\nretry_budget = 0.1\nbudget_min_rps = 10\n")); err != nil {
		t.Errorf("retry_budget with budget_min_rps: %v", err)
	}
	if _, err := Load("t.toml", []byte(base+"[sweep.s]\npolicy = \"full-jitter\"\nbudget_min_rps = 10\n")); err == nil || !strings.Contains(err.Error(), "budget_min_rps: 10: want retries/s ≥ 0, with a retry_budget") {
		t.Errorf("budget_min_rps alone: %v", err)
	}
}

// A policy table names a family: {kind = "grpc", …} is the grpc family
// with those parameters, not the grpc preset claiming its library's
// defaults; a string names the preset; a preset table with parameters of
// its own is no longer the preset.
func TestPolicyTableIsAFamily(t *testing.T) {
	t.Parallel()
	cfg, err := Load("t.toml", []byte(base+`[sweep.s]
policy = ["grpc", {kind = "grpc", base_s = 0.5, width = 0.5}, {kind = "cenkalti-backoff", cap_s = 30}]
`))
	if err != nil {
		t.Fatal(err)
	}
	cells := cfg.Sweep("s").Cells
	if len(cells) != 3 {
		t.Fatalf("%d cells", len(cells))
	}
	if p := cells[0].Policy; p.Preset != "grpc" || p.Kind != sim.GRPCGo {
		t.Errorf("policy = \"grpc\": %v, want the grpc preset", p)
	}
	if p := cells[1].Policy; p.Preset != "" || p.Kind != sim.GRPC || p.Base != 500*time.Millisecond || p.Width != 0.5 {
		t.Errorf("{kind = \"grpc\", …}: %v, want the grpc family with the table's values", p)
	}
	if p := cells[2].Policy; p.Preset != "" || p.Cap != 30*time.Second || p.MaxElapsed != 15*time.Minute {
		t.Errorf("{kind = \"cenkalti-backoff\", cap_s = 30}: %v, want the preset's values but its cap, and not called the preset", p)
	}
}

// TestAliasesAreNotKeys: a parameter's alias is never a key sweeps.toml
// accepts (it would shadow it), nor another parameter's alias.
func TestAliasesAreNotKeys(t *testing.T) {
	owner := map[string]string{}
	for _, p := range grid.Params {
		for a := range p.Aliases {
			if grid.ParamByKey(a) != nil || slices.Contains(sweepKeys, a) {
				t.Errorf("%s's alias %q is a key", p.Key, a)
			}
			if o, ok := owner[a]; ok {
				t.Errorf("alias %q of both %s and %s", a, o, p.Key)
			}
			owner[a] = p.Key
		}
	}
	if len(owner) == 0 {
		t.Error("no aliases")
	}
}

// A retired preset name is refused with where it went, not taken for
// another library setting.
func TestRetiredPresetName(t *testing.T) {
	t.Parallel()
	_, err := Load("t.toml", []byte(base+"[sweep.s]\npolicy = [\"urllib3\", \"decorrelated\"]\n"))
	if err == nil || !strings.Contains(err.Error(), `t.toml:`) || !strings.Contains(err.Error(), `"urllib3": a retired preset:`) ||
		!strings.Contains(err.Error(), "urllib3-default") {
		t.Errorf("policy urllib3: %v", err)
	}
}

// A policy in sweeps.toml may be written as the dataset's policy_spec
// writes it (grid.ParsePolicy, as --mine and live --policy read it): the
// spec of a stored row gives that row's cell, with its key; the spec names
// the whole policy, so the sweep's policy axes leave it as it is; a bad
// spec is reported at its file, line and key.
func TestPolicySpecsInTheConfig(t *testing.T) {
	t.Parallel()
	stored := grid.Cell{Scenario: sim.Article(), Policy: sim.Policy{Kind: sim.Exponential, Base: time.Second, Multiplier: 2}}
	cfg, err := Load("t.toml", []byte(base+`[sweep.s]
policy = ["decorrelated base_s=1 cap_s=30", "`+stored.PolicySpec()+`", "decorrelated"]
cap_s = 10
`))
	if err != nil {
		t.Fatal(err)
	}
	cells := cfg.Sweep("s").Cells
	if len(cells) != 3 {
		t.Fatalf("%d cells, want 3", len(cells))
	}
	want := []sim.Policy{{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second}, stored.Policy, {Kind: sim.Decorrelated, Base: time.Second, Cap: 10 * time.Second}}
	for i, c := range cells {
		if diff := cmp.Diff(want[i], c.Policy); diff != "" {
			t.Errorf("cell %d (-want +got):\n%s", i, diff)
		}
	}
	if cells[1].Key() != stored.Key() {
		t.Errorf("the stored row's spec %q gives key %s, want the row's %s", stored.PolicySpec(), cells[1].Key(), stored.Key())
	}
	for _, tt := range []struct{ src, want string }{
		{"policy = [\"fixed\", \"decorrelated bse_s=1\"]\n", `t.toml:5: sweep.s.policy: "decorrelated bse_s=1": unknown key "bse_s" (did you mean "base_s"?)`},
		{"policy = \"decorrelated base_s=1 cap_s=0.5\"\n", `t.toml:5: sweep.s.policy: "decorrelated base_s=1 cap_s=0.5": cap_s=0.5: want 0 (no cap) or at least base_s (1s)`},
		{"policy = {kind = \"decorrelated base_s=1\"}\n", `t.toml:5: sweep.s.policy: kind "decorrelated base_s=1": want a family or a preset's name`},
	} {
		if _, err := Load("t.toml", []byte(base+"[sweep.s]\n"+tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %s", strings.TrimSpace(tt.src), err, tt.want)
		}
	}
}
