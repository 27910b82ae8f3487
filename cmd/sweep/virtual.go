package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/herdsweep/herdsweep/live"
	"github.com/herdsweep/herdsweep/sim"
)

// virtualRun is one `sweep live --virtual` once its flags are read.
type virtualRun struct {
	cfg     live.Config // Seed unset: each run has its own
	drivers []live.Driver
	pols    []sim.Policy // nil: each driver's own model (--grid)
	seeds   []uint32     // the runs'
	test    live.DistributionTest
	grid    bool
	tail    float64 // the figure's band: tail to 100 − tail %
	out     string
	asJSON  bool
}

// virtualRefFirst is the first simulated seed a sample is set against;
// runs' seeds stay below it, so the two never share a seed.
const virtualRefFirst = 1_000_001

// parseVirtual reads the flags of `sweep live --virtual`.
func parseVirtual(v *liveFlagValues) (*liveRun, error) {
	for _, name := range []string{"scale", "grace"} {
		if v.set[name] {
			return nil, usagef("live: --%s: not with --virtual (a virtual run takes no real time, and its requests none on the network)", name)
		}
	}
	if err := checkFolderOut("live", v.out); err != nil {
		return nil, err
	}
	if !(v.tail >= 0 && v.tail < 50) {
		return nil, usagef("live: --band %g: want a percentile in [0, 50)", v.tail)
	}
	if v.runs < 1 || v.runs > 1000 {
		return nil, usagef("live: --runs %d: want 1 to 1000", v.runs)
	}
	if !(v.alpha >= 1e-5 && v.alpha <= 0.5) {
		return nil, usagef("live: --alpha %g: want a false-alarm rate from 0.00001 to 0.5", v.alpha)
	}
	first := max(uint64(v.seed), 1)
	if first >= virtualRefFirst || first+uint64(v.runs) > virtualRefFirst {
		return nil, usagef("live: --seed %d: want at most %d with --runs %d: the runs' seeds stay below %d, where the simulated seeds they are set against begin", v.seed, virtualRefFirst-v.runs, v.runs, virtualRefFirst)
	}
	nRef := 2000
	if v.set["seeds"] {
		nRef = v.seeds
	}
	if nRef < 2 || nRef > 100000 {
		return nil, usagef("live: --seeds %d: want 2 to 100000", nRef)
	}
	r := &virtualRun{grid: v.grid, tail: v.tail, out: v.out, asJSON: v.asJSON}
	if err := r.pickDrivers(v); err != nil {
		return nil, err
	}
	sc := v.scenario()
	if v.article && !v.set["horizon"] { // no wall time to bound: the article's own horizon
		sc.Horizon = sim.Article().Horizon
	}
	r.cfg = live.Config{Scenario: sc, Driver: r.drivers[0], Down: live.DownMode(v.down), MaxAttempts: v.maxAttempts}
	if !r.grid {
		if err := r.cfg.ValidateVirtual(); err != nil {
			return nil, usagef("live: %v", liveFlagName(err, sc))
		}
		var err error
		if r.pols, err = livePolicies(r.drivers[0], v.policies); err != nil {
			return nil, err
		}
	}
	for i := range v.runs {
		r.seeds = append(r.seeds, uint32(first)+uint32(i))
	}
	perms := int(math.Ceil(2/v.alpha)) - 1
	r.test = live.DistributionTest{Alpha: v.alpha, Permutations: perms}
	for i := range nRef {
		r.test.Seeds = append(r.test.Seeds, uint32(virtualRefFirst+i))
	}
	if err := r.checkRuns(); err != nil {
		return nil, err
	}
	return &liveRun{virtual: r}, nil
}

// checkRuns refuses runs too few for the test to ever call a model wrong,
// wherever a run is judged as a distribution.
func (r *virtualRun) checkRuns() error {
	n := r.test.MinRuns()
	if len(r.seeds) >= n {
		return nil
	}
	distribution := r.grid || r.cfg.Scenario.Server() == sim.QueueingServer
	for _, p := range r.pols {
		distribution = distribution || p.Jittered()
	}
	if !distribution {
		return nil
	}
	return usagef("live: --runs %d against --seeds %d: a jittered library's runs are judged as a distribution, and %s against %d simulated seeds could never be called different at --alpha %g: want --runs %d or more (or more --seeds, or a larger --alpha)",
		len(r.seeds), len(r.test.Seeds), live.Plural(len(r.seeds), "run"), len(r.test.Seeds), r.test.Alpha, n)
}

// pickDrivers reads --library (and --grid): one library, or with --grid
// also "all" the real ones.
func (r *virtualRun) pickDrivers(v *liveFlagValues) error {
	if r.grid && len(v.policies) > 0 {
		return usagef("live: --policy: not with --grid (each library is set against its own model)")
	}
	if r.grid {
		for _, name := range []string{"clients", "outage", "capacity", "tick", "spread", "horizon", "retry-after", "down", "article"} {
			if v.set[name] {
				return usagef("live: --%s: not with --grid, whose scenarios are fixed (sweep live -h)", name)
			}
		}
	}
	if v.library == "all" {
		if !r.grid {
			return usagef("live: --library all: only with --grid")
		}
		for _, d := range live.Drivers() {
			if !strings.HasPrefix(d.Name, "sim:") {
				r.drivers = append(r.drivers, d)
			}
		}
		return nil
	}
	d, err := live.DriverByName(v.library)
	if err != nil {
		return usagef("live: --library %v", err)
	}
	r.drivers = []live.Driver{d}
	return nil
}

// runVirtual runs r and prints its report; its error is the verdict as
// the exit status, as runLive's.
func runVirtual(ctx context.Context, r *virtualRun, stdout, stderr io.Writer) error {
	if r.grid {
		return runVirtualGrid(ctx, r, stdout, stderr)
	}
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	sc := r.cfg.Scenario
	start := time.Now()
	var ms []*live.Measurement
	err := live.InProcess(func(b live.Bubble) error {
		var err error
		ms, err = live.RunsVirtual(ctx, b, r.cfg, r.seeds, func(i int) {
			fmt.Fprintf(stderr, "virtual: %s, %d clients, recovery at %v: run %d of %d (seed %d)\n", r.cfg.Driver.Name, sc.Clients, sc.RecoverAt, i+1, len(r.seeds), r.seeds[i])
		})
		return err
	})
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("live: interrupted: nothing written: %w", err)
	}
	if err != nil {
		return err
	}
	rep := &live.VirtualReport{Seeds: r.seeds, Wall: time.Since(start).Seconds()}
	for _, m := range ms {
		rep.Served, rep.GaveUp, rep.Pending = append(rep.Served, m.Result.Succeeded), append(rep.GaveUp, m.Result.GaveUp), append(rep.Pending, m.Result.Pending)
	}
	var files []string
	footer := fmt.Sprintf("herdsweep %s · simulator %s · virtual %s · seed %d of %d runs · band over %d of the %d simulated seeds", toolVersion(), sim.Version, r.cfg.Driver.Module, r.seeds[0], len(r.seeds), min(200, len(r.test.Seeds)), len(r.test.Seeds))
	for _, p := range r.pols {
		c, err := live.CompareRuns(ms, p, r.test)
		if err != nil {
			return err
		}
		rep.Comparisons = append(rep.Comparisons, c)
		// The figure: the first run against sim's band (--band) over the
		// first 200 reference seeds, as a real-time run's.
		band, err := live.Compare(ms[0], p, r.test.Seeds[:min(200, len(r.test.Seeds))], r.tail)
		if err != nil {
			return err
		}
		file, err := writeLiveFigure(r.out, c.Figure(band, int(sc.Capacity*sc.Tick.Seconds())), footer, func(w io.Writer) error {
			return (&live.VirtualReport{Seeds: rep.Seeds, Wall: rep.Wall, Served: rep.Served, GaveUp: rep.GaveUp, Pending: rep.Pending, Comparisons: []*live.RunsComparison{c}}).WriteText(w)
		})
		if err != nil {
			return err
		}
		files = append(files, file)
	}
	if r.asJSON {
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(stdout); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "figures (the first run against the simulated band): %s\n", strings.Join(files, ", "))
	}
	return runsVerdict(rep.Comparisons)
}

// runsVerdict is the comparisons' verdict as the exit status: nil when
// each agrees, exit 3 when one is inconclusive, else exit 1 when one
// disagrees.
func runsVerdict(cs []*live.RunsComparison) error {
	var names []string
	inconclusive := false
	for _, c := range cs {
		if c.Verdict != live.Agrees {
			names = append(names, c.Driver+" against "+c.Name)
		}
		inconclusive = inconclusive || c.Verdict == live.Inconclusive
	}
	switch {
	case inconclusive:
		return errInconclusive{fmt.Errorf("live: inconclusive: %s", strings.Join(names, ", "))}
	case len(names) > 0:
		return fmt.Errorf("live: disagrees: %s", strings.Join(names, ", "))
	}
	return nil
}

// runVirtualGrid runs each driver over live.VirtualGrid, --runs runs each
// (one for a model without jitter, whose runs must each be sim's), and
// prints a line per driver and scenario.
func runVirtualGrid(ctx context.Context, r *virtualRun, stdout, stderr io.Writer) error {
	var all []gridRow
	err := live.InProcess(func(b live.Bubble) error {
		var err error
		all, err = gridRows(ctx, b, r, stderr)
		return err
	})
	if err != nil {
		return err
	}
	var cs []*live.RunsComparison
	for _, g := range all {
		if g.Comparison != nil {
			cs = append(cs, g.Comparison)
		}
	}
	if r.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return err
		}
		return runsVerdict(cs)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "library\tmodel\tscenario\tmethod\truns\tp\tverdict\tapart in\n")
	for _, g := range all {
		if c := g.Comparison; c == nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\tnot run\t%s\n", g.Driver, g.Model, g.Scenario, g.NotRun)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", g.Driver, c.Name, g.Scenario, c.Method, c.Runs, pWords(c), c.Verdict, strings.Join(c.Disagree, ", "))
		}
	}
	tw.Flush()
	fmt.Fprintf(stdout, "on the counting server a library without jitter must give sim's run of each seed (same seed); a jittered one, and any on the queueing server (whose service times are the run's own), is a sample set against %d simulated seeds at a false-alarm rate of %g each (distribution)\n", len(r.test.Seeds), r.test.Alpha)
	return runsVerdict(cs)
}

// gridRow is one library on one scenario of the grid: its comparison, or
// why it was not run.
type gridRow struct {
	Driver     string               `json:"driver"`
	Model      string               `json:"model"`
	Scenario   string               `json:"scenario"`
	NotRun     string               `json:"not_run,omitempty"`
	Comparison *live.RunsComparison `json:"comparison,omitempty"`
}

// gridRows runs the grid in bubbles b makes.
func gridRows(ctx context.Context, b live.Bubble, r *virtualRun, stderr io.Writer) ([]gridRow, error) {
	var all []gridRow
	for _, d := range r.drivers {
		p, err := d.Policy()
		if err != nil {
			return nil, err
		}
		for _, g := range live.VirtualGrid() {
			row := gridRow{Driver: d.Name, Model: d.ModelName(), Scenario: g.Name}
			cfg := r.cfg
			cfg.Driver, cfg.Scenario, cfg.Down = d, g.Scenario, g.Down
			if err := cfg.ValidateVirtual(); err != nil {
				row.NotRun = liveFlagName(err, cfg.Scenario).Error()
				all = append(all, row)
				continue
			}
			seeds := r.seeds
			if !p.Jittered() && g.Scenario.Server() != sim.QueueingServer {
				seeds = seeds[:min(2, len(seeds))]
			}
			ms, err := live.RunsVirtual(ctx, b, cfg, seeds, func(i int) {
				fmt.Fprintf(stderr, "virtual grid: %s, %s: run %d of %d\n", d.Name, g.Name, i+1, len(seeds))
			})
			if err != nil {
				return nil, err
			}
			if row.Comparison, err = live.CompareRuns(ms, p, r.test); err != nil {
				return nil, err
			}
			all = append(all, row)
		}
	}
	return all, nil
}

func pWords(c *live.RunsComparison) string {
	if c.Method == live.SameSeed {
		return "-"
	}
	return fmt.Sprintf("%.3g", c.P)
}
