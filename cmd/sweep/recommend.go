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
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/dataset/store"
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
server recovers, without burying it, and say how far the answer holds.

The server is part of the question. Without --server the answer is judged
over an envelope of servers at that capacity: the counting server with
free 429s and 429s costing 10, 25 and 50 %% of a request, and queueing
servers (20 ms and 100 ms service, exponential and fixed, client timeouts
of 1, 2 and 5 s, an unbounded queue, no background traffic and 50 %% of
capacity). It must recover on every one (on the counting server: 99 %% of
clients back within the window in every seed, none giving up unless
--allow-give-up, at most --budget requests per client after recovery; on
a queueing server with background traffic: back to its own steady state),
and among those it is the one whose slowest recovery, over the least time
any policy could take on that server, is least. When no policy recovers on
every server, the answer says which servers defeat every policy it tried,
and gives the best over the others. It then states its margins (the
largest rejection cost, the shortest timeout and the highest background
load it still recovers at, by bisection on the simulator, and what to
switch to past each) and what the server's owner can do (a wait bound,
shedding, Retry-After) for a fleet of today's library defaults.

--server SPEC (repeatable) names your server with sweeps.toml's keys:
'reject_cost=0.1', 'concurrency=16 service=exponential service_s=0.02
timeout_s=2 arrival_rps=560 queue_wait_s=0.5' (service and service_s
without concurrency size the workers to --capacity), 'free'. One counting
server is answered on its own, with paired statistics: the best mean on
--objective wins, and the leaders get more seeds (up to --max-seeds) until
the winner is separated from the runner-up, or the answer says "tied
within X %%". 'layers=policy="exponential base_s=1 max_attempts=4"' puts
services in front of a counting server (docs/layers.md; layers takes the
rest of the spec, one service per " | ", fanout=N before it): it is judged
as one of servers, and candidates a chain cannot run are skipped, named.

%s

The candidates run on seeds 1, 2, …; a dataset (--results) saves time only
where it holds exactly those runs, so the answer is the same with or
without one. --library and --mine add a verdict; they never change "use:".

A range (--capacity 250..2000, --clients 2000..20000) answers on one
counting server (free 429s, or --server) with the policy of least
worst-case regret (its t99 over the best t99 at each point of a grid with
steps of at most ×2), among those feasible everywhere; --library and
--mine take a single scenario.

Examples:
  sweep recommend --capacity 300
  sweep recommend --capacity 800 --clients 40000 --outage 2m --json
  sweep recommend --capacity 300 --server free
  sweep recommend --capacity 800 --server 'concurrency=16 service=exponential service_s=0.02 timeout_s=2 arrival_rps=560'
  sweep recommend --capacity 250..2000 --clients 5000
  sweep recommend --capacity 300 --library go-retryablehttp
  sweep recommend --capacity 300 --mine 'full-jitter base=1s cap=30s attempts=5'

Exit codes: 0 answered, 1 no feasible policy or an unreadable dataset, 2 bad input.
`

// recommendOptions are recommend's flags.
type recommendOptions struct {
	capacity, clients             *string
	outage, window, retryAfter    *time.Duration
	objective                     *string
	budget, margin                *float64
	allowGiveUp, asJSON           *bool
	seeds, maxSeeds, top, workers *int
	library, mine, results        *string
	memory                        *string
	servers                       listFlag
	explicit                      map[string]bool
}

func recommendFlags(stderr io.Writer) (*flag.FlagSet, *recommendOptions) {
	fs := newFlagsDoc("recommend", "--capacity RPS|LO..HI [--clients N|LO..HI] [--outage 30s] [--window 20m] [--retry-after 0s] [--server SPEC …] [--objective t99|peak|sent] [--budget 4] [--allow-give-up] [--library NAME] [--mine SPEC] [--seeds 10] [--max-seeds 40] [--margin 0.02] [--top 10] [--results DIR] [--workers N] [--memory SIZE] [--json]",
		fmt.Sprintf(recommendHelp, grid.DescribeSpace()+"\n"+wrap(analysis.DescribeBeyond(), 76)), stderr)
	o := &recommendOptions{}
	o.capacity = fs.String("capacity", "", "requests/s the server serves after recovery, or a range LO..HI (required)")
	o.clients = fs.String("clients", "2000", "clients that failed during the outage, or a range LO..HI")
	o.outage = fs.Duration("outage", 30*time.Second, "outage length (a duration: 30s, 10m)")
	o.window = fs.Duration("window", grid.RecommendWindow, "how long after recovery clients have to come back")
	o.retryAfter = fs.Duration("retry-after", 0, "Retry-After the server sends (0: none); adds the clients that read it")
	fs.Var(&o.servers, "server", "your server, as sweeps.toml keys (repeatable): 'reject_cost=0.1', 'concurrency=16 service=exponential service_s=0.02 timeout_s=2 arrival_rps=560', 'free'; none: the default envelope of servers")
	o.objective = fs.String("objective", "t99", "what to optimise on one counting server: t99 (fastest recovery), peak (gentlest), sent (least traffic)")
	o.budget = fs.Float64("budget", analysis.DefaultBudget, "most requests per client a policy may send after recovery")
	o.allowGiveUp = fs.Bool("allow-give-up", false, "admit policies under which clients give up")
	o.margin = fs.Float64("margin", analysis.DefaultMargin, "relative difference called equivalent, for the confidence statement")
	o.seeds = fs.Int("seeds", analysis.DefaultSeeding.Initial, "seeds every candidate runs on one counting server (over servers: screened on 1, the contenders ranked on 10)")
	o.maxSeeds = fs.Int("max-seeds", analysis.DefaultSeeding.Max, "seeds the leading candidates may reach")
	o.library = fs.String("library", "", "also judge this library preset's defaults (NAME from 'sweep policies')")
	o.mine = fs.String("mine", "", "also judge your policy: a policy_spec ('FAMILY|PRESET key=value …'): keys base, cap, multiplier, jitter (full|equal|decorrelated|none|±25%), width, attempts, max_elapsed, honor_retry_after, or any policy parameter of sweeps.toml")
	o.results = fs.String("results", "out", "dataset whose runs are reused where they are exactly the candidates' runs")
	o.asJSON = fs.Bool("json", false, "print one JSON document (fields in docs/recommend.md)")
	o.top = fs.Int("top", 10, "feasible candidates to list")
	o.workers = fs.Int("workers", 0, fmt.Sprintf("simulations in parallel (0 = one per CPU; at most %d)", maxWorkers))
	o.memory = fs.String("memory", "", "memory the simulations may take in all, as for run")
	return fs, o
}

func cmdRecommend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, o := recommendFlags(stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := location("recommend", "--results", *o.results)
	if err != nil {
		return err
	}
	*o.results = r
	o.explicit = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.explicit[f.Name] = true })
	if err := checkWorkers("recommend", *o.workers); err != nil {
		return err
	}
	lim, err := memoryLimits("recommend", *o.memory, workersOr(*o.workers))
	if err != nil {
		return err
	}
	defer goMemoryLimit(lim)()
	req, err := o.request()
	if err != nil {
		return err
	}
	cells := req.Cells()
	if err := checkRecommendMemory(req, cells, *o.maxSeeds, lim); err != nil {
		return err
	}
	m := &measurer{workers: *o.workers, stderr: stderr}
	if err := m.open(*o.results, o.explicit["results"], cells); err != nil {
		return err
	}
	start := time.Now()
	resp, err := analysis.Answer(ctx, req, m.measure)
	if err != nil {
		return err
	}
	resp.Notes = append(resp.Notes, m.note(time.Since(start)))
	if *o.asJSON {
		err = reports.WriteResponseJSON(stdout, resp)
	} else {
		err = reports.WriteResponse(stdout, resp, *o.top)
	}
	if err != nil {
		return err
	}
	if !resp.Answered() {
		return reported{errors.New("no feasible policy")}
	}
	return nil
}

// request checks the options and says them as the analysis' Request.
func (o *recommendOptions) request() (analysis.Request, error) {
	var req analysis.Request
	if *o.capacity == "" {
		return req, usagef("recommend: --capacity is required: the requests/s your server serves after it recovers (e.g. --capacity 300, or a range --capacity 250..2000)")
	}
	capLo, capHi, err := parseRange("--capacity", *o.capacity)
	if err != nil {
		return req, err
	}
	cliLo, cliHi, err := parseRange("--clients", *o.clients)
	if err != nil {
		return req, err
	}
	if cliLo != math.Trunc(cliLo) || cliHi != math.Trunc(cliHi) {
		return req, usagef("recommend: --clients %s: want a whole number of clients", *o.clients)
	}
	req = analysis.Request{CapacityLo: capLo, CapacityHi: capHi, ClientsLo: int(cliLo), ClientsHi: int(cliHi),
		Outage: *o.outage, Window: *o.window, RetryAfter: *o.retryAfter,
		Query: analysis.Query{Objective: analysis.Objective(*o.objective), Outage: *o.outage, RetryAfter: *o.retryAfter,
			AllowGiveUp: *o.allowGiveUp, Budget: *o.budget, Margin: *o.margin},
		Seeding: analysis.Seeding{Initial: *o.seeds, Max: *o.maxSeeds}}
	if err := o.checkRules(); err != nil {
		return req, err
	}
	for _, sc := range req.Points() {
		if err := checkScenario(sc); err != nil {
			return req, err
		}
	}
	for _, spec := range o.servers {
		s, err := analysis.ParseServer(spec, req.Points()[0])
		if err != nil {
			return req, usagef("recommend: --server %q: %v", spec, err)
		}
		req.Servers = append(req.Servers, s)
	}
	if req.Range() && (len(req.Servers) > 1 || (len(req.Servers) == 1 && req.Servers[0].Queueing())) {
		return req, usagef("recommend: a range answers on one counting server: give a single --capacity and --clients to judge over servers, or one --server 'reject_cost=…'")
	}
	if req.Range() && len(req.Servers) == 1 && req.Servers[0].Chained() {
		return req, usagef("recommend: --server %q: a range answers on one counting server without services in front of it: give a single --capacity and --clients to judge behind layers", o.servers[0])
	}
	if req.Library, err = o.preset(); err != nil {
		return req, err
	}
	if req.Mine, err = o.minePolicy(); err != nil {
		return req, err
	}
	if req.Range() && (*o.library != "" || *o.mine != "") {
		return req, usagef("recommend: --library and --mine judge one scenario, not a range: give a single --capacity and --clients")
	}
	return req, nil
}

// checkRules checks the flags that set the rules of the answer.
func (o *recommendOptions) checkRules() error {
	if _, err := analysis.Objective(*o.objective).Metric(); err != nil {
		return usagef("recommend: --objective %q: want t99, peak or sent", *o.objective)
	}
	if !(*o.budget > 0) || math.IsInf(*o.budget, 0) {
		return usagef("recommend: --budget %g: want a positive number of requests per client", *o.budget)
	}
	if !(*o.margin > 0 && *o.margin < 1) {
		return usagef("recommend: --margin %g: want a fraction in (0, 1), e.g. 0.02", *o.margin)
	}
	if *o.seeds < 2 || *o.seeds > 10000 || *o.maxSeeds < *o.seeds || *o.maxSeeds > 10000 {
		return usagef("recommend: --seeds %d --max-seeds %d: want 2 ≤ seeds ≤ max-seeds ≤ 10000", *o.seeds, *o.maxSeeds)
	}
	if *o.window <= 0 {
		return usagef("recommend: --window %v: want a positive duration, e.g. 20m", *o.window)
	}
	if *o.top < 0 {
		return usagef("recommend: --top %d: want 0 or more", *o.top)
	}
	return nil
}

// checkScenario checks one point of the question.
func checkScenario(sc sim.Scenario) error {
	if err := sc.Validate(); err != nil {
		return usagef("recommend: %v", flagName(err))
	}
	if most := float64(sim.MaxClients) / sc.Tick.Seconds(); sc.Capacity > most {
		// sim serves at most the largest fleet a tick: more is the same
		// answer for a number nobody has
		return usagef("recommend: --capacity %g: want at most %.3g requests/s (the largest fleet, %d clients, in one %v tick)", sc.Capacity, most, sim.MaxClients, sc.Tick)
	}
	return nil
}

// checkRecommendMemory checks, before anything is simulated, what the
// answer may hold: a run of the largest cell, the simulators of every
// cell it may run, and up to its runs' records.
func checkRecommendMemory(req analysis.Request, cells []grid.Cell, maxSeeds int, lim experiments.Limits) error {
	for _, sc := range req.Points() {
		if est := grid.Envelope(grid.CandidateSpace(sc), false).Bytes(); est > lim.RunBytes() {
			return usagef("recommend: --clients %d: a run of this size needs an estimated %s of memory, more than the %s each run may take under %s (--memory %s would take it)",
				sc.Clients, experiments.Bytes(est), experiments.Bytes(lim.RunBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.RunBytes, est)))
		}
	}
	if est := grid.Envelope(cells, false).Bytes(); est > lim.RunBytes() {
		return usagef("recommend: the candidates' runs need an estimated %s a worker (a simulator keeps the largest storage of each kind its runs needed), more than the %s each worker may take under %s (--memory %s would take it)",
			experiments.Bytes(est), experiments.Bytes(lim.RunBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.RunBytes, est)))
	}
	seeds, flag := maxSeeds, fmt.Sprintf("--max-seeds %d", maxSeeds)
	if req.Range() {
		seeds, flag = req.Seeding.Initial, fmt.Sprintf("--seeds %d over %d scenarios", req.Seeding.Initial, len(req.Points()))
	}
	if runs := int64(len(cells)) * int64(seeds); runs*experiments.RecordBytes > lim.HeldBytes() {
		est := runs * experiments.RecordBytes
		return usagef("recommend: %s: up to %d runs' records (%s each), an estimated %s, more than the %s recommend may hold under %s (--memory %s would take it); want fewer seeds",
			flag, runs, experiments.Bytes(experiments.RecordBytes), experiments.Bytes(est), experiments.Bytes(lim.HeldBytes()), lim.Why(), experiments.Bytes(lim.Would(experiments.Limits.HeldBytes, est)))
	}
	return nil
}

// preset is --library's preset, or none.
func (o *recommendOptions) preset() (sim.Preset, error) {
	if *o.library == "" {
		return sim.Preset{}, nil
	}
	if p, ok := sim.PresetByName(*o.library); ok {
		return p, nil
	}
	var names []string
	for _, p := range sim.Presets() {
		names = append(names, p.Name)
	}
	if why, ok := sim.RetiredPreset(*o.library); ok {
		return sim.Preset{}, usagef("recommend: --library %q: retired: %s", *o.library, why)
	}
	return sim.Preset{}, usagef("recommend: --library %q%s: want one of %s", *o.library, didYouMean(*o.library, names), strings.Join(names, ", "))
}

// minePolicy is --mine's policy, or none.
func (o *recommendOptions) minePolicy() (sim.Policy, error) {
	if o.explicit["mine"] && strings.TrimSpace(*o.mine) == "" {
		return sim.Policy{}, usagef("recommend: --mine %q: empty: want a family or preset name, then key=value pairs (e.g. --mine 'full-jitter base=1s cap=30s')", *o.mine)
	}
	if *o.mine == "" {
		return sim.Policy{}, nil
	}
	p, err := grid.ParsePolicy(*o.mine)
	if err != nil {
		if errors.Is(err, grid.ErrScenarioParam) {
			err = fmt.Errorf("%w: recommend's scenario is --capacity, --clients, --outage, --window, --retry-after and --server", err)
		}
		return sim.Policy{}, usagef("recommend: --mine %q: %v", *o.mine, err)
	}
	if err := (grid.Cell{Scenario: sim.Article(), Policy: p.Normalize()}).Validate(); err != nil {
		return sim.Policy{}, usagef("recommend: --mine %q: %v", *o.mine, err)
	}
	return p, nil
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
	if _, err := os.Stat(dir); err != nil && !store.IsObject(dir) {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return usageError{err: fmt.Errorf("recommend: --results %s: %w", dir, err)}
	}
	// A part that cannot be read, or a folder without runs the user named,
	// is bad input (exit 2), as in every command that reads a dataset.
	c, err := analysis.LoadCells(folder(dir), cells)
	if fe := (*analysis.FileError)(nil); errors.As(err, &fe) {
		return usagef("recommend: %s: %v", store.Join(dir, fe.Path), fe.Err)
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
		return runner.Job{Run: runs[todo[i]], StopStuck: true} // recommend asks only whether a run comes back
	}, func(i int, o *runner.Outcome) error {
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

// recommendFlagOf are the flags that set the fields of recommend's
// scenario: an error names the flag, never the Go field.
var recommendFlagOf = map[sim.Field]string{sim.FieldCapacity: "--capacity", sim.FieldClients: "--clients", sim.FieldRecoverAt: "--outage",
	sim.FieldWindow: "--window", sim.FieldRetryAfter: "--retry-after"}

// flagName rewrites a sim field error in terms of the command's flags.
func flagName(err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		if n, ok := recommendFlagOf[fe.Field]; ok {
			return fmt.Errorf("%s %v: want %s", n, fe.Value, fe.Want)
		}
	}
	return err
}

// wrap breaks s into lines of at most width runes at spaces, for help
// text.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		if i > 0 {
			if n+1+l > width {
				b.WriteString("\n")
				n = 0
			} else {
				b.WriteString(" ")
				n++
			}
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
