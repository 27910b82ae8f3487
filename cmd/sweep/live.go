package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/herdsweep/herdsweep/live"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdLive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("live", "--library NAME [--clients 300] [--outage 5s] [--capacity 100] [--policy P,…] [--out out/live] [--json]", stderr)
	library := fs.String("library", "", "the client: a library with its defaults, or sim:PRESET for a preset in a plain loop (--library list lists them)")
	article := fs.Bool("article", false, "the article's scenario (2,000 clients, 30 s outage, 120 requests/s, 2 s spread); the flags below then change it")
	clients := fs.Int("clients", 300, "clients that failed during the outage (goroutines, a connection each)")
	outage := fs.Duration("outage", 5*time.Second, "outage length: the server recovers at this time (real time)")
	capacity := fs.Float64("capacity", 100, "requests/s served after recovery: floor(capacity × tick) per tick")
	tick := fs.Duration("tick", 100*time.Millisecond, "the server's tick")
	spread := fs.Duration("spread", 2*time.Second, "clients first send at U(0, spread)")
	horizon := fs.Duration("horizon", 5*time.Minute, "the run stops at this time at the latest (the simulator stops there too)")
	retryAfter := fs.Duration("retry-after", 0, "Retry-After the server sends with every rejection, whole seconds (0: none)")
	down := fs.String("down", "503", "how the server is down before recovery: 503 or refused (connection refused)")
	grace := fs.Duration("grace", 0, "a request this late after a tick boundary still counts in that tick (0: 10ms, or a tenth of the tick in real time if less)")
	seed := fs.Uint("seed", 0, "the clients' first send times are sim's draws for this seed; 0: the simulated seed nearest the median of t99 and sent")
	seeds := fs.Int("seeds", 200, "simulated seeds to compare against")
	tail := fs.Float64("band", 5, "the band runs from this percentile to 100 minus it")
	var policies listFlag
	fs.Var(&policies, "policy", "simulated policies to compare against: presets, or family:NAME for a family's defaults (default: the library's preset)")
	out := fs.String("out", "out/live", "folder for the figures")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	maxAttempts := fs.Int("max-attempts", live.DefaultMax, "requests per client at most in the run, whatever its library does")
	scale := fs.Float64("scale", 1, "run this many times faster than real time: only for clients on a clock we can hand them (cenkalti-backoff-v4, sim:*); the tick must stay above the timer error")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *library == "list" {
		for _, d := range live.Drivers() {
			fmt.Fprintf(stdout, "%s — model %s, %s\n  %s\n  source: %s\n", d.Name, d.ModelName(), d.Module, d.Note, d.Source)
		}
		fmt.Fprintln(stdout, "not here: Polly (.NET), Envoy (C++ proxy) and the second source's Delphi component cannot run in a Go process; their presets run only as sim:NAME.")
		return nil
	}
	if *library == "" {
		return usagef("live: --library is required (--library list lists them)")
	}
	drv, err := live.DriverByName(*library)
	if err != nil {
		return usagef("live: --library %v", err)
	}
	sc := sim.Scenario{Clients: 300, Tick: 100 * time.Millisecond, Spread: 2 * time.Second}
	if *article {
		sc = sim.Article()
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !*article || set["clients"] {
		sc.Clients = *clients
	}
	if !*article || set["outage"] {
		sc.RecoverAt = *outage
	}
	if !*article || set["capacity"] {
		sc.Capacity = *capacity
	}
	if !*article || set["tick"] {
		sc.Tick = *tick
	}
	if !*article || set["spread"] {
		sc.Spread = *spread
	}
	sc.Horizon, sc.RetryAfter = *horizon, *retryAfter
	if *seeds < 2 || *seeds > 100000 {
		return usagef("live: --seeds %d: want 2 to 100000", *seeds)
	}
	if *seed > 1<<32-1 {
		return usagef("live: --seed %d: want a 32-bit seed", *seed)
	}
	if *scale == 0 { // live.Config's 0 means real time; a person typing 0 means no speed at all
		return usagef("live: --scale 0: want 1 (real time) to %d", live.MaxScale)
	}
	if *grace == 0 && *scale > 0 {
		*grace = min(10*time.Millisecond, time.Duration(float64(sc.Tick) / *scale / 10))
	}
	cfg := live.Config{Scenario: sc, Driver: drv, Down: live.DownMode(*down), Grace: *grace, Seed: uint32(*seed), MaxAttempts: *maxAttempts, Scale: *scale}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		lim.Cur = 0
	}
	if err := cfg.Validate(lim.Cur); err != nil {
		return usagef("live: %v", liveFlagName(err))
	}
	var pols []sim.Policy
	if len(policies) == 0 {
		p, err := drv.Policy()
		if err != nil {
			return err
		}
		pols = append(pols, p)
	}
	for _, name := range policies {
		p, err := livePolicy(name)
		if err != nil {
			return usagef("live: --policy %v", err)
		}
		pols = append(pols, p)
	}
	simSeeds := make([]uint32, *seeds)
	for i := range simSeeds {
		simSeeds[i] = uint32(i + 1)
	}
	if cfg.Seed == 0 {
		if cfg.Seed, err = live.MedianSeed(sc, pols[0], simSeeds); err != nil {
			return err
		}
	}
	machine, err := live.Measure(ctx, 100)
	if err != nil {
		return err
	}
	realTick := time.Duration(float64(sc.Tick) / *scale)
	if err := machine.Check(realTick); err != nil {
		return usagef("live: --tick %v at --scale %g (%v of real time): %v", sc.Tick, *scale, realTick, err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil { // once the input is known good: a refusal writes nothing
		return fmt.Errorf("output folder: %w", err)
	}
	fmt.Fprintf(stderr, "live: %s, %d clients, recovery at %v: running in real time, scale %g (at most %v; ^C stops it)\n", drv.Name, sc.Clients, sc.RecoverAt, *scale, time.Duration(float64(sc.Horizon) / *scale))
	m, err := live.Run(ctx, cfg)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("live: interrupted: server and clients stopped, nothing written: %w", err)
	}
	if err != nil {
		return err
	}
	rep := &live.Report{Machine: machine, Scale: *scale, Wall: m.Wall, Seed: cfg.Seed, Grace: cfg.Grace, Errors: m.Errors,
		CloseLateP50: m.CloseLateP50, CloseLateP99: m.CloseLateP99, CloseLateMax: m.CloseLateMax, FirstLateMax: m.FirstLateMax}
	for _, a := range m.Server {
		rep.ServerTotal += a
	}
	budget := int(sc.Capacity * sc.Tick.Seconds())
	footer := fmt.Sprintf("herdsweep %s · simulator %s · live %s · seed %d · %d simulated seeds", toolVersion(), sim.Version, drv.Module, cfg.Seed, *seeds)
	var files []string
	for _, p := range pols {
		c, err := live.Compare(m, p, simSeeds, *tail)
		if err != nil {
			return err
		}
		rep.Comparisons = append(rep.Comparisons, c)
		f := c.Figure(budget)
		buf := &partBuffer{}
		if err := plots.Render(buf, f, footer, "png"); err != nil {
			return err
		}
		if err := writeAtomic(*out, f.Name+".png", buf); err != nil {
			return err
		}
		files = append(files, filepath.Join(*out, f.Name+".png"))
		// A page per comparison, which `sweep report` lists when the
		// comparisons sit in the dataset's live/ folder.
		page := &partBuffer{}
		fmt.Fprintf(page, "### %s\n\n![%s](%s.png)\n\n%s\n\n```\n", f.Title, f.Title, f.Name, f.Caption)
		if err := c.WriteText(page); err != nil {
			return err
		}
		fmt.Fprintf(page, "```\n")
		if err := writeAtomic(*out, f.Name+".md", page); err != nil {
			return err
		}
	}
	if *asJSON {
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(stdout); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "figures: %s\n", strings.Join(files, ", "))
	}
	return nil
}

// livePolicy reads a preset name or family:NAME.
func livePolicy(name string) (sim.Policy, error) {
	if fam, ok := strings.CutPrefix(name, "family:"); ok {
		p := sim.DefaultPolicy(sim.Kind(fam))
		if err := p.Validate(); err != nil {
			return sim.Policy{}, fmt.Errorf("%q: %v", name, err)
		}
		return p, nil
	}
	pr, ok := sim.PresetByName(name)
	if !ok {
		var names []string
		for _, p := range sim.Presets() {
			names = append(names, p.Name)
		}
		return sim.Policy{}, fmt.Errorf("%q: want a preset (%s) or family:NAME", name, strings.Join(names, ", "))
	}
	return pr.Policy, nil
}

func liveFlagName(err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		names := map[string]string{"Capacity": "--capacity", "Clients": "--clients", "RecoverAt": "--outage", "Horizon": "--horizon", "RetryAfter": "--retry-after", "Tick": "--tick", "Spread": "--spread"}
		if n, ok := names[fe.Field]; ok {
			return fmt.Errorf("%s %v: want %s", n, fe.Value, fe.Want)
		}
	}
	return err
}
