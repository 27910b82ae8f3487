package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/live"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"
)

// liveHelp is what `sweep live -h` says before the options.
const liveHelp = `Runs a real client (a retry library with its defaults, or sim:PRESET: the
simulator's own clients of a preset) against a loopback server that counts
as the simulator's does, then sets the run against the simulator's
prediction over many seeds. The verdict is one of: agrees (every metric
within the band), disagrees (one outside), inconclusive (the machine did not
keep the simulator's clock: the run is not the simulated scenario, whatever
its metrics say).

With --virtual the same libraries run on a fake clock (testing/synctest)
over an in-memory network: no real time passes, the machine's load cannot
move a request, and --runs runs are judged together: a library without
jitter must give the simulator's run of each seed tick for tick, a jittered
one is a sample set against the simulator's runs by a permutation test at
the false-alarm rate --alpha. --grid runs every library over a grid of
scenarios.

Exit codes: 0 agrees, 1 disagrees (or failed), 2 bad input, 3 inconclusive,
130 interrupted. With several --policy, it exits 0 only when every
comparison agrees.
`

// liveRun is one `sweep live` once its flags are read: flags → options,
// then runLive.
type liveRun struct {
	virtual *virtualRun // --virtual: the rest is unused
	cfg     live.Config
	pols    []sim.Policy
	seeds   []uint32
	tail    float64
	out     string
	asJSON  bool
}

// errInconclusive is a live check that could not decide: exit code 3.
type errInconclusive struct{ error }

func (errInconclusive) exitStatus() int { return 3 }

func cmdLive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseLive(args, stdout, stderr)
	if err != nil || o == nil {
		return err
	}
	if o.virtual != nil {
		return runVirtual(ctx, o.virtual, stdout, stderr)
	}
	return runLive(ctx, o, stdout, stderr)
}

// liveFlagValues are `sweep live`'s flags as read.
type liveFlagValues struct {
	library, down, out            string
	article, asJSON               bool
	clients, seeds, maxAttempts   int
	capacity, tail, scale         float64
	outage, tick, spread, horizon time.Duration
	retryAfter, grace             time.Duration
	seed                          uint
	policies                      listFlag
	virtual, grid                 bool
	runs                          int
	alpha                         float64
	set                           map[string]bool // the flags given
}

// liveFlagSet declares `sweep live`'s flags into v.
func liveFlagSet(v *liveFlagValues, stderr io.Writer) *flag.FlagSet {
	fs := newFlagsDoc("live", "--library NAME [--clients 300] [--outage 5s] [--capacity 100] [--policy P,…] [--out out/live] [--json]", liveHelp, stderr)
	fs.StringVar(&v.library, "library", "", "the client: a library with its defaults, or sim:PRESET for the simulator's own clients of a preset (--library list lists them)")
	fs.BoolVar(&v.article, "article", false, "the article's scenario (2,000 clients, 30 s outage, 120 requests/s, 2 s spread); the flags below then change it")
	fs.IntVar(&v.clients, "clients", 300, "clients that failed during the outage (goroutines, a connection each)")
	fs.DurationVar(&v.outage, "outage", 5*time.Second, "outage length: the server recovers at this time (real time)")
	fs.Float64Var(&v.capacity, "capacity", 100, "requests/s served after recovery: floor(capacity × tick) per tick")
	fs.DurationVar(&v.tick, "tick", 100*time.Millisecond, "the server's tick")
	fs.DurationVar(&v.spread, "spread", 2*time.Second, "clients first send at U(0, spread)")
	fs.DurationVar(&v.horizon, "horizon", 5*time.Minute, "the run stops at this time at the latest (the simulator stops there too); more than --outage")
	fs.DurationVar(&v.retryAfter, "retry-after", 0, "Retry-After the server sends with every rejection, whole seconds (0: none)")
	fs.StringVar(&v.down, "down", "503", "how the server is down before recovery: 503 or refused (connection refused)")
	fs.DurationVar(&v.grace, "grace", 0, "a request this late after a tick boundary still counts in that tick (0: 10ms, or a tenth of the tick in real time if less)")
	fs.UintVar(&v.seed, "seed", 0, "the clients' first send times are sim's draws for this seed; 0: the simulated seed nearest the median of every metric")
	fs.IntVar(&v.seeds, "seeds", 200, "simulated seeds to compare against")
	fs.Float64Var(&v.tail, "band", 5, "the band runs from this percentile to 100 minus it (with --virtual: the figure's band)")
	fs.Var(&v.policies, "policy", "simulated policies to compare against: presets, family:NAME for a family's defaults, or any policy spec as the dataset's policy_spec writes it ('decorrelated base_s=1 cap_s=30') (default: the library's preset)")
	fs.StringVar(&v.out, "out", "out/live", "folder for the figures")
	fs.BoolVar(&v.asJSON, "json", false, "print the report as JSON")
	fs.IntVar(&v.maxAttempts, "max-attempts", live.DefaultMax, "requests per client at most in the run, whatever its library does")
	fs.Float64Var(&v.scale, "scale", 1, "run this many times faster than real time: only for clients on a clock we can hand them (cenkalti-backoff-v4, sim:*); the tick must stay above the timer error")
	fs.BoolVar(&v.virtual, "virtual", false, "run on virtual time (a synctest bubble, in-memory network): --runs runs, judged seed for seed or as a distribution; --seeds then defaults to 2000")
	fs.IntVar(&v.runs, "runs", 10, "with --virtual: runs, seeds --seed … --seed+runs−1 (--seed 0: from 1)")
	fs.Float64Var(&v.alpha, "alpha", 1e-4, "with --virtual: the permutation test's false-alarm rate for a jittered library")
	fs.BoolVar(&v.grid, "grid", false, "with --virtual: every library (--library all) or the one named, over the grid of scenarios (capacities 60–960/s, outages 10 s–10 min, Retry-After, refused connections, a queueing server with client timeouts)")
	return fs
}

// parseLive reads the flags into a run; nil (and no error) when there is
// nothing to run (--library list).
func parseLive(args []string, stdout, stderr io.Writer) (*liveRun, error) {
	v := &liveFlagValues{set: map[string]bool{}}
	fs := liveFlagSet(v, stderr)
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { v.set[f.Name] = true })
	if v.library == "list" {
		for _, d := range live.Drivers() {
			fmt.Fprintf(stdout, "%s — model %s, %s\n  %s\n  source: %s\n", d.Name, d.ModelName(), d.Module, d.Note, d.Source)
		}
		fmt.Fprintln(stdout, "not here: Polly (.NET), Envoy (C++ proxy) and the second source's Delphi component cannot run in a Go process; their presets run only as sim:NAME.")
		return nil, nil
	}
	if v.library == "" {
		return nil, usagef("live: --library is required (--library list lists them)")
	}
	if v.virtual {
		return parseVirtual(v)
	}
	for _, name := range []string{"runs", "alpha", "grid"} {
		if v.set[name] {
			return nil, usagef("live: --%s: only with --virtual", name)
		}
	}
	drv, err := live.DriverByName(v.library)
	if err != nil {
		return nil, usagef("live: --library %v", err)
	}
	sc := v.scenario()
	if v.seeds < 2 || v.seeds > 100000 {
		return nil, usagef("live: --seeds %d: want 2 to 100000", v.seeds)
	}
	if err := checkFolderOut("live", v.out); err != nil {
		return nil, err
	}
	if v.seed > 1<<32-1 {
		return nil, usagef("live: --seed %d: want a 32-bit seed", v.seed)
	}
	if v.scale == 0 { // live.Config's 0 means real time; a person typing 0 means no speed at all
		return nil, usagef("live: --scale 0: want 1 (real time) to %d", live.MaxScale)
	}
	if v.grace == 0 && v.scale > 0 {
		v.grace = min(10*time.Millisecond, time.Duration(float64(sc.Tick)/v.scale/10))
	}
	o := &liveRun{cfg: live.Config{Scenario: sc, Driver: drv, Down: live.DownMode(v.down), Grace: v.grace, Seed: uint32(v.seed), MaxAttempts: v.maxAttempts, Scale: v.scale},
		tail: v.tail, out: v.out, asJSON: v.asJSON}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		lim.Cur = 0
	}
	if err := o.cfg.Validate(lim.Cur); err != nil {
		return nil, usagef("live: %v", liveFlagName(err, sc))
	}
	if o.pols, err = livePolicies(drv, v.policies); err != nil {
		return nil, err
	}
	o.seeds = make([]uint32, v.seeds)
	for i := range o.seeds {
		o.seeds[i] = uint32(i + 1)
	}
	return o, nil
}

// scenario is the scenario the flags ask for: the article's with --article
// (the flags given change it), else the flags' own.
func (v *liveFlagValues) scenario() sim.Scenario {
	sc := sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, Spread: 2 * time.Second}
	if v.article {
		sc = sim.Article()
	}
	given := func(name string) bool { return !v.article || v.set[name] }
	if given("clients") {
		sc.Clients = v.clients
	}
	if given("outage") {
		sc.RecoverAt = v.outage
	}
	if given("capacity") {
		sc.Capacity = v.capacity
	}
	if given("tick") {
		sc.Tick = v.tick
	}
	if given("spread") {
		sc.Spread = v.spread
	}
	sc.Horizon, sc.RetryAfter = v.horizon, v.retryAfter
	return sc
}

// livePolicies are the simulated policies to compare against: those
// named, else the library's preset.
func livePolicies(drv live.Driver, names []string) ([]sim.Policy, error) {
	if len(names) == 0 {
		p, err := drv.Policy()
		if err != nil {
			return nil, err
		}
		return []sim.Policy{p}, nil
	}
	var out []sim.Policy
	for _, name := range names {
		p, err := grid.ParsePolicy(name)
		if err != nil {
			return nil, usagef("live: --policy %q: %v", name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// runLive runs o, writes its figures and pages, prints the report and
// returns the verdict as the exit status: nil when every comparison
// agrees.
func runLive(ctx context.Context, o *liveRun, stdout, stderr io.Writer) error {
	cfg, sc := o.cfg, o.cfg.Scenario
	scale := cfg.Scale
	if scale == 0 {
		scale = 1
	}
	drv := cfg.Driver
	if cfg.Seed == 0 {
		var err error
		if cfg.Seed, err = live.MedianSeed(sc, o.pols[0], o.seeds); err != nil {
			return err
		}
	}
	machine, err := live.Measure(ctx, 100)
	if err != nil {
		return err
	}
	realTick := time.Duration(float64(sc.Tick) / scale)
	if err := machine.Check(realTick); err != nil {
		return usagef("live: --tick %v at --scale %g (%v of real time): %v", sc.Tick, scale, realTick, err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil { // once the input is known good: a refusal writes nothing
		return fmt.Errorf("output folder: %w", err)
	}
	fmt.Fprintf(stderr, "live: %s, %d clients, recovery at %v: running in real time, scale %g (at most %v; ^C stops it)\n", drv.Name, sc.Clients, sc.RecoverAt, scale, time.Duration(float64(sc.Horizon)/scale))
	m, err := live.Run(ctx, cfg)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("live: interrupted: server and clients stopped, nothing written: %w", err)
	}
	if err != nil {
		return err
	}
	rep := &live.Report{Machine: machine, Scale: scale, Wall: m.Wall, Seed: cfg.Seed, Grace: cfg.Grace, Errors: m.Errors,
		CloseLateP50: m.CloseLateP50, CloseLateP99: m.CloseLateP99, CloseLateMax: m.CloseLateMax, FirstLateMax: m.FirstLateMax,
		Placed: m.Placed, Misplaced: m.Misplaced}
	for _, a := range m.Server {
		rep.ServerTotal += a
	}
	budget := int(sc.Capacity * sc.Tick.Seconds())
	footer := fmt.Sprintf("herdsweep %s · simulator %s · live %s · seed %d · %d simulated seeds", toolVersion(), sim.Version, drv.Module, cfg.Seed, len(o.seeds))
	var files []string
	for _, p := range o.pols {
		c, err := live.Compare(m, p, o.seeds, o.tail)
		if err != nil {
			return err
		}
		rep.Comparisons = append(rep.Comparisons, c)
		file, err := writeLiveFigure(o.out, c.Figure(budget), footer, c.WriteText)
		if err != nil {
			return err
		}
		files = append(files, file)
	}
	if o.asJSON {
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(stdout); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "figures: %s\n", strings.Join(files, ", "))
	}
	return liveVerdict(rep.Comparisons)
}

// writeLiveFigure writes figure f and a page with it and what text
// writes, which `sweep report` lists when the comparisons sit in the
// dataset's live/ folder; it returns the figure's path.
func writeLiveFigure(out string, f plots.Figure, footer string, text func(io.Writer) error) (string, error) {
	buf := &partBuffer{}
	if err := plots.Render(buf, f, footer, "png"); err != nil {
		return "", err
	}
	if err := writeAtomic(out, f.Name+".png", buf); err != nil {
		return "", err
	}
	page := &partBuffer{}
	fmt.Fprintf(page, "### %s\n\n![%s](%s.png)\n\n%s\n\n```\n", f.Title, f.Title, f.Name, f.Caption)
	if err := text(page); err != nil {
		return "", err
	}
	fmt.Fprintf(page, "```\n")
	if err := writeAtomic(out, f.Name+".md", page); err != nil {
		return "", err
	}
	return filepath.Join(out, f.Name+".png"), nil
}

// liveVerdict is the run's verdict as the command's exit status: nil when
// every comparison agrees, an error (exit 1) when one disagrees, and
// errInconclusive (exit 3) when the evidence does not hold.
func liveVerdict(cs []*live.Comparison) error {
	var names []string
	for _, c := range cs {
		if c.Verdict != live.Agrees {
			names = append(names, c.Name)
		}
	}
	switch live.Overall(cs) {
	case live.Inconclusive:
		return errInconclusive{fmt.Errorf("live: inconclusive: %s", strings.Join(cs[0].Degraded, "; "))}
	case live.Disagrees:
		return fmt.Errorf("live: %s disagrees with the simulated %s", cs[0].Driver, strings.Join(names, ", "))
	}
	return nil
}

// liveFlags are the flags that set the fields of the scenario and the live
// run, by field (sim.FieldError.Field): an error names the flag, never the
// Go field.
var liveFlags = map[sim.Field]string{sim.FieldCapacity: "--capacity", sim.FieldClients: "--clients", sim.FieldRecoverAt: "--outage",
	sim.FieldHorizon: "--horizon", sim.FieldRetryAfter: "--retry-after", sim.FieldTick: "--tick", sim.FieldSpread: "--spread",
	live.FieldScale: "--scale", live.FieldDown: "--down", live.FieldGrace: "--grace", live.FieldMaxAttempts: "--max-attempts"}

// liveFlagName rewrites an error of the scenario sc or of the live run in
// the command's flags.
func liveFlagName(err error, sc sim.Scenario) error {
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	want := fe.Want
	for _, field := range slices.SortedFunc(maps.Keys(liveFlags), func(a, b sim.Field) int { return strings.Compare(a.String(), b.String()) }) {
		want = replaceWord(want, field.String(), liveFlags[field])
	}
	if fe.Field == sim.FieldWindow { // Horizon − RecoverAt: the time clients have after recovery
		return fmt.Errorf("--horizon %v: the time after recovery (--horizon − --outage %v) is %v: want %s", sc.Horizon, sc.RecoverAt, fe.Value, want)
	}
	if n, ok := liveFlags[fe.Field]; ok {
		return fmt.Errorf("%s %v: want %s", n, fe.Value, want)
	}
	return err
}

// replaceWord replaces the whole-word occurrences of old in s by new.
func replaceWord(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		whole := (i == 0 || !isWordByte(s[i-1])) && (end == len(s) || !isWordByte(s[end]))
		b.WriteString(s[:i])
		if whole {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
