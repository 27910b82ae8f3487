package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"
)

// reported is a failure whose explanation has already been printed as
// the command's output (exit 1, nothing more to say).
type reported struct{ error }

const recommendHelp = `Pick the retry policy that brings every client back fastest after the
server recovers, without burying it, and say how sure that is.

The answer is always feasible: no client gives up (unless --allow-give-up),
99 %% of clients are back within the window after recovery in every seed,
and the policy sends at most --budget requests per client after recovery.
Times are counted from recovery. Among feasible candidates the best mean
on --objective wins; candidates are compared paired, seed by seed, and
the leaders get more seeds (up to --max-seeds) until the winner is
separated from the runner-up, or the answer says "tied within X %%".
With no feasible candidate it says why in numbers and exits 1.

%s

The candidates run on seeds 1, 2, …; a dataset (--results) saves time only
where it holds exactly those runs, so the answer is the same with or
without one. --library and --mine add a verdict; they never change "use:".

A range (--capacity 250..2000, --clients 2000..20000) answers with the
policy of least worst-case regret (its t99 over the best t99 at each point
of a grid with steps of at most ×2), among those feasible everywhere;
--library and --mine take a single scenario.

Examples:
  sweep recommend --capacity 300
  sweep recommend --capacity 120 --clients 10000 --outage 2m --json
  sweep recommend --capacity 250..2000 --clients 5000
  sweep recommend --capacity 300 --library go-retryablehttp
  sweep recommend --capacity 300 --mine 'full-jitter base=1s cap=30s attempts=5'

Exit codes: 0 answered, 1 no feasible policy or an unreadable dataset, 2 bad input.
`

func cmdRecommend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsDoc("recommend", "--capacity RPS|LO..HI [--clients N|LO..HI] [--outage 30s] [--window 20m] [--retry-after 0s] [--objective t99|peak|sent] [--budget 4] [--allow-give-up] [--library NAME] [--mine SPEC] [--seeds 10] [--max-seeds 40] [--margin 0.02] [--top 10] [--results DIR] [--workers N] [--memory SIZE] [--json]",
		fmt.Sprintf(recommendHelp, grid.DescribeSpace()), stderr)
	capacity := fs.String("capacity", "", "requests/s the server serves after recovery, or a range LO..HI (required)")
	clients := fs.String("clients", "2000", "clients that failed during the outage, or a range LO..HI")
	outage := fs.Duration("outage", 30*time.Second, "outage length (a duration: 30s, 10m)")
	window := fs.Duration("window", grid.RecommendWindow, "how long after recovery clients have to come back")
	retryAfter := fs.Duration("retry-after", 0, "Retry-After the server sends (0: none); adds the clients that read it")
	objective := fs.String("objective", "t99", "what to optimise: t99 (fastest recovery), peak (gentlest), sent (least traffic)")
	budget := fs.Float64("budget", analysis.DefaultBudget, "most requests per client a policy may send after recovery")
	allowGiveUp := fs.Bool("allow-give-up", false, "admit policies under which clients give up")
	margin := fs.Float64("margin", analysis.DefaultMargin, "relative difference called equivalent, for the confidence statement")
	seeds := fs.Int("seeds", analysis.DefaultSeeding.Initial, "seeds every candidate runs")
	maxSeeds := fs.Int("max-seeds", analysis.DefaultSeeding.Max, "seeds the leading candidates may reach")
	library := fs.String("library", "", "also judge this library preset's defaults (NAME from 'sweep policies')")
	mine := fs.String("mine", "", "also judge your policy: 'FAMILY|PRESET key=value …', keys base, cap, multiplier, jitter (full|equal|decorrelated|none|±25%), width, attempts, max_elapsed, honor_retry_after, or any policy parameter of sweeps.toml (retry_on, client components: a policy_spec value reads as it is)")
	results := fs.String("results", "out", "dataset whose runs are reused where they are exactly the candidates' runs")
	asJSON := fs.Bool("json", false, "print one JSON document (fields in docs/recommend.md)")
	top := fs.Int("top", 10, "feasible candidates to list")
	workers := fs.Int("workers", 0, fmt.Sprintf("simulations in parallel (0 = one per CPU; at most %d)", maxWorkers))
	memory := fs.String("memory", "", "memory the simulations may take in all, as for run")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkWorkers("recommend", *workers); err != nil {
		return err
	}
	lim, err := memoryLimits("recommend", *memory, workersOr(*workers))
	if err != nil {
		return err
	}
	defer goMemoryLimit(lim)()
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if *capacity == "" {
		return usagef("recommend: --capacity is required: the requests/s your server serves after it recovers (e.g. --capacity 300, or a range --capacity 250..2000)")
	}
	capLo, capHi, err := parseRange("--capacity", *capacity)
	if err != nil {
		return err
	}
	cliLo, cliHi, err := parseRange("--clients", *clients)
	if err != nil {
		return err
	}
	if cliLo != math.Trunc(cliLo) || cliHi != math.Trunc(cliHi) {
		return usagef("recommend: --clients %s: want a whole number of clients", *clients)
	}
	q := analysis.Query{Objective: analysis.Objective(*objective), Outage: *outage, RetryAfter: *retryAfter,
		AllowGiveUp: *allowGiveUp, Budget: *budget, Margin: *margin}
	if _, err := q.Objective.Metric(); err != nil {
		return usagef("recommend: --objective %q: want t99, peak or sent", *objective)
	}
	if !(*budget > 0) || math.IsInf(*budget, 0) {
		return usagef("recommend: --budget %g: want a positive number of requests per client", *budget)
	}
	if !(*margin > 0 && *margin < 1) {
		return usagef("recommend: --margin %g: want a fraction in (0, 1), e.g. 0.02", *margin)
	}
	if *seeds < 2 || *seeds > 10000 || *maxSeeds < *seeds || *maxSeeds > 10000 {
		return usagef("recommend: --seeds %d --max-seeds %d: want 2 ≤ seeds ≤ max-seeds ≤ 10000", *seeds, *maxSeeds)
	}
	if *window <= 0 {
		return usagef("recommend: --window %v: want a positive duration, e.g. 20m", *window)
	}
	if *top < 0 {
		return usagef("recommend: --top %d: want 0 or more", *top)
	}
	scenario := func(capacity, clients float64) (sim.Scenario, error) {
		sc := recommendScenario(capacity, int(clients), *outage, *window, *retryAfter)
		if err := sc.Validate(); err != nil {
			return sc, usagef("recommend: %v", flagName(err))
		}
		if most := float64(sim.MaxClients) / sc.Tick.Seconds(); sc.Capacity > most {
			// sim serves at most the largest fleet a tick: more is the same
			// answer for a number nobody has
			return sc, usagef("recommend: --capacity %g: want at most %.3g requests/s (the largest fleet, %d clients, in one %v tick)", sc.Capacity, most, sim.MaxClients, sc.Tick)
		}
		if est := grid.Envelope(grid.CandidateSpace(sc), false).Bytes(); est > lim.RunBytes() {
			return sc, usagef("recommend: --clients %d: a run of this size needs an estimated %s of memory, more than the %s each run may take under %s (--memory %s would take it)",
				sc.Clients, experiments.Bytes(est), experiments.Bytes(lim.RunBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.RunBytes, est)))
		}
		return sc, nil
	}
	// held checks, before anything is simulated, what the search may hold:
	// the simulators of every cell it may run, and up to runs records.
	held := func(cells []grid.Cell, runs int, flag string) error {
		if est := grid.Envelope(cells, false).Bytes(); est > lim.RunBytes() {
			return usagef("recommend: the candidates' runs need an estimated %s a worker (a simulator keeps the largest storage of each kind its runs needed), more than the %s each worker may take under %s (--memory %s would take it)",
				experiments.Bytes(est), experiments.Bytes(lim.RunBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.RunBytes, est)))
		}
		if est := int64(runs) * experiments.RecordBytes; est > lim.HeldBytes() {
			return usagef("recommend: %s: up to %d runs' records (%s each), an estimated %s, more than the %s recommend may hold under %s (--memory %s would take it); want fewer seeds",
				flag, runs, experiments.Bytes(experiments.RecordBytes), experiments.Bytes(est), experiments.Bytes(lim.HeldBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.HeldBytes, est)))
		}
		return nil
	}
	isRange := capLo != capHi || cliLo != cliHi
	var preset sim.Preset
	if *library != "" {
		var ok bool
		if preset, ok = sim.PresetByName(*library); !ok {
			var names []string
			for _, p := range sim.Presets() {
				names = append(names, p.Name)
			}
			if why, ok := sim.RetiredPreset(*library); ok {
				return usagef("recommend: --library %q: retired: %s", *library, why)
			}
			return usagef("recommend: --library %q%s: want one of %s", *library, didYouMean(*library, names), strings.Join(names, ", "))
		}
	}
	var minePolicy sim.Policy
	if explicit["mine"] && strings.TrimSpace(*mine) == "" {
		return usagef("recommend: --mine %q: empty: want a family or preset name, then key=value pairs (e.g. --mine 'full-jitter base=1s cap=30s')", *mine)
	}
	if *mine != "" {
		if minePolicy, err = grid.ParsePolicy(*mine); err != nil {
			if errors.Is(err, grid.ErrScenarioParam) {
				err = fmt.Errorf("%w: recommend's scenario is --capacity, --clients, --outage, --window and --retry-after", err)
			}
			return usagef("recommend: --mine %q: %v", *mine, err)
		}
	}
	if isRange && (*library != "" || *mine != "") {
		return usagef("recommend: --library and --mine judge one scenario, not a range: give a single --capacity and --clients")
	}

	m := &measurer{workers: *workers, stderr: stderr}
	ans := &reports.Answer{}
	start := time.Now()
	if isRange {
		var points []sim.Scenario
		var cells []grid.Cell // every cell the search may ask for
		for _, c := range analysis.Grid(capLo, capHi) {
			for _, n := range analysis.Grid(cliLo, cliHi) {
				sc, err := scenario(c, math.Round(n))
				if err != nil {
					return err
				}
				points = append(points, sc)
				cells = append(cells, grid.CandidateSpace(sc)...)
			}
		}
		if err := held(cells, len(cells)**seeds, fmt.Sprintf("--seeds %d over %d scenarios", *seeds, len(points))); err != nil {
			return err
		}
		if err := m.open(*results, explicit["results"], cells); err != nil {
			return err
		}
		if ans.Robust, err = analysis.SearchRange(ctx, points, q, analysis.Seeding{Initial: *seeds, Max: *seeds}, m.measure); err != nil {
			return err
		}
		ans.Space = len(grid.CandidateSpace(points[0]))
	} else {
		sc, err := scenario(capLo, cliLo)
		if err != nil {
			return err
		}
		q.Capacity, q.Clients = sc.Capacity, sc.Clients
		space := grid.CandidateSpace(sc)
		ans.Space = len(space)
		cells := slices.Clone(space) // every cell the search and the verdicts may ask for
		for _, p := range []sim.Policy{preset.Policy, minePolicy} {
			if p.Kind != "" {
				cells = append(cells, grid.Cell{Scenario: sc, Policy: p.Normalize()})
			}
		}
		if err := held(cells, len(cells)**maxSeeds, fmt.Sprintf("--max-seeds %d", *maxSeeds)); err != nil {
			return err
		}
		if err := m.open(*results, explicit["results"], cells); err != nil {
			return err
		}
		rec, aggs, err := analysis.Search(ctx, space, q, analysis.Seeding{Initial: *seeds, Max: *maxSeeds}, m.measure)
		if err != nil {
			return err
		}
		ans.Rec = rec
		if sc.RetryAfter > 0 && rec.Best != nil && !analysis.ReadsRetryAfter(rec.Best.Cell.Policy) {
			for _, a := range rec.Ranked[:rec.Feasible] {
				if analysis.ReadsRetryAfter(a.Cell.Policy) {
					ans.Notes = append(ans.Notes, fmt.Sprintf("the answer ignores the server's Retry-After %v: the best client that reads it, %s, takes t99 %.1f s after recovery (%.2f× the answer)",
						sc.RetryAfter, a.Cell.Policy.Plain(), a.Summary(analysis.T99).Mean, a.Summary(analysis.T99).Mean/rec.Best.Summary(analysis.T99).Mean))
					break
				}
			}
		}
		// judge measures a policy outside the decision on the best's seeds
		// (or reuses its runs when the search had it) and judges it.
		judge := func(p sim.Policy) (*analysis.LibraryVerdict, error) {
			cell := grid.Cell{Scenario: sc, Policy: p.Normalize()}
			for _, a := range aggs {
				if a.Cell == cell {
					v := analysis.Judge(rec, a)
					return &v, nil
				}
			}
			if err := cell.Validate(); err != nil {
				return nil, usagef("recommend: --mine %q: %v", *mine, err)
			}
			n := *seeds
			if rec.Best != nil {
				n = len(rec.Best.Seeds)
			}
			recs, err := m.measure(ctx, analysis.Runs([]grid.Cell{cell}, 1, n))
			if err != nil {
				return nil, err
			}
			v := analysis.Judge(rec, analysis.Aggregates(recs)[0])
			return &v, nil
		}
		if preset.Name != "" {
			if ans.Library, err = judge(preset.Policy); err != nil {
				return err
			}
		}
		if *mine != "" {
			if ans.Mine, err = judge(minePolicy); err != nil {
				return err
			}
		}
	}
	ans.Notes = append(ans.Notes, m.note(time.Since(start)))
	if *asJSON {
		err = reports.WriteAnswerJSON(stdout, ans)
	} else {
		err = reports.WriteAnswer(stdout, ans, *top)
	}
	if err != nil {
		return err
	}
	if !ans.Answered() {
		return reported{errors.New("no feasible policy")}
	}
	return nil
}

// recommendScenario is the scenario recommend asks about: the article's,
// with the server's capacity, the fleet, the outage, the window after
// recovery and the Retry-After given. A sweep with candidates = true and
// the same scenario parameters stores exactly its candidates' cells.
func recommendScenario(capacity float64, clients int, outage, window, retryAfter time.Duration) sim.Scenario {
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt, sc.RetryAfter = capacity, clients, outage, retryAfter
	sc.Horizon = sc.RecoverAt + window
	return sc
}

// measurer finds the runs a search asks for: in the dataset when it holds
// exactly that run (same key), else by simulating.
type measurer struct {
	workers           int
	stderr            io.Writer
	cellKeys          map[grid.Cell]string // computed once per cell, not per run
	cached            *analysis.Cached
	dir               string
	reused, simulated int
}

// open reads from the dataset at dir the runs of the given cells, every
// cell the search may ask for, and nothing it can avoid (analysis.LoadCells).
// A dataset the user named must be readable; the default one is used only
// when it exists.
func (m *measurer) open(dir string, explicit bool, cells []grid.Cell) error {
	m.dir = dir
	if _, err := os.Stat(dir); err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return usageError{err: fmt.Errorf("recommend: --results %s: %w", dir, err)}
	}
	// A part that cannot be read, or a folder without runs the user named,
	// is bad input (exit 2), as in every command that reads a dataset.
	c, err := analysis.LoadCells(folder(dir), cells)
	if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
		return usagef("recommend: %s: %v", filepath.Join(dir, filepath.FromSlash(fe.Path)), fe.Err)
	}
	if err != nil {
		return usagef("recommend: --results %s: %v", dir, err)
	}
	if c.Files == 0 {
		if !explicit {
			return nil
		}
		return usagef("recommend: --results %s: no Parquet files under runs/: run `sweep run` first, or point --results at a dataset", dir)
	}
	m.cached = c
	return nil
}

// cellKey is c.Key(), computed once per cell: the dataset finds a run by
// its cell's key and seed, without hashing every run.
func (m *measurer) cellKey(c grid.Cell) string {
	k, ok := m.cellKeys[c]
	if !ok {
		if m.cellKeys == nil {
			m.cellKeys = map[grid.Cell]string{}
		}
		k = c.Key()
		m.cellKeys[c] = k
	}
	return k
}

func (m *measurer) measure(ctx context.Context, runs []grid.Run) ([]analysis.Record, error) {
	out := make([]analysis.Record, len(runs))
	var todo []int
	for i, r := range runs {
		if m.cached != nil && m.cached.Find(m.cellKey(r.Cell), r.Seed, &out[i]) {
			m.reused++
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return out, nil
	}
	var mu sync.Mutex
	prog := newProgress(m.stderr, "simulating candidates", len(todo), false)
	err := runner.Execute(ctx, m.workers, len(todo), func(i int) runner.Job {
		return runner.Job{Run: runs[todo[i]]}
	}, func(i int, o runner.Outcome) error {
		if o.Err != nil {
			return o.Err
		}
		r := o.Job.Run
		mu.Lock()
		out[todo[i]] = analysis.Record{Record: dataset.Record{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed, Label: r.Cell.Label(), Cell: r.Cell, Result: o.Result}}
		mu.Unlock()
		prog.add(1)
		return nil
	})
	prog.finish()
	m.simulated += len(todo)
	return out, err
}

func (m *measurer) note(d time.Duration) string {
	src := "no dataset"
	if c := m.cached; c != nil {
		src = fmt.Sprintf("%d reused from the dataset in %s (%d of its %d row groups read, %d ruled out by their statistics, %d by their cell keys)",
			m.reused, m.dir, c.Read, c.RowGroups, c.Pruned, c.Scanned)
	}
	return fmt.Sprintf("%d runs simulated, %s, in %v", m.simulated, src, d.Round(time.Millisecond))
}

// parseRange reads "300" or "250..2000".
func parseRange(flagName, s string) (lo, hi float64, err error) {
	a, b, isRange := strings.Cut(s, "..")
	lo, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	hi = lo
	var err2 error
	if isRange {
		hi, err2 = strconv.ParseFloat(strings.TrimSpace(b), 64)
	}
	if err1 != nil || err2 != nil || !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return 0, 0, usagef("recommend: %s %q: want a positive number, or a range LO..HI with LO ≤ HI", flagName, s)
	}
	return lo, hi, nil
}

// recommendFlags are the flags that set the fields of recommend's
// scenario: an error names the flag, never the Go field.
var recommendFlags = map[sim.Field]string{sim.FieldCapacity: "--capacity", sim.FieldClients: "--clients", sim.FieldRecoverAt: "--outage",
	sim.FieldWindow: "--window", sim.FieldRetryAfter: "--retry-after"}

// flagName rewrites a sim field error in terms of the command's flags.
func flagName(err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		if n, ok := recommendFlags[fe.Field]; ok {
			return fmt.Errorf("%s %v: want %s", n, fe.Value, fe.Want)
		}
	}
	return err
}
