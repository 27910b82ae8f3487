package reports

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/plots"
	"github.com/herdsweep/herdsweep/sim"

	"github.com/herdsweep/herdsweep/internal/num"
)

// Input is what a report is built from: the dataset's runs, the groups of
// mixed fleets, and a way to read the timelines of some runs (nil: none).
type Input struct {
	Dataset   *analysis.Dataset
	Groups    []dataset.GroupRow
	Timelines func(runKeys map[string]bool) (map[string][]dataset.TimelineRow, error)
	// Scanned, when set, is the dataset streamed (analysis.Scan): its
	// aggregates and counts replace Dataset's records, which then hold only
	// the article's cells.
	Scanned *analysis.Scanned
	// Live lists the comparisons `sweep live` wrote beside the dataset.
	Live []LiveCheck
	// QueueRuns, when Scanned is set, reads whole the runs of the given
	// queueing cells from the given sweeps' parts (analysis.LoadRunsOf):
	// their metrics are not among the streamed ones. Nil: queueing cells
	// are not ranked, and the report says so.
	QueueRuns func(sweeps []string, cellKeys map[string]bool) ([]analysis.Record, error)
}

// LiveCheck is one `sweep live` comparison: a real library against the
// simulator, with its page (text and figure) relative to the report.
type LiveCheck struct {
	Title string // "live cenkalti-backoff against simulated cenkalti-backoff: agrees"
	Page  string // "live/live-cenkalti-backoff--cenkalti-backoff.md"
}

// Scenario is one scenario of the dataset (a capacity of a family) with its
// decision: the recommendation, the article's table 5 and the verdicts on
// the library presets measured there. Its page is File.
type Scenario struct {
	Query  analysis.Query
	Family analysis.Family
	// Rec is the decision among the policies that jitter (nil when none
	// was measured here): as `sweep recommend`, the report never
	// recommends a policy that keeps a herd in step. All ranks every
	// single-policy cell by the same rules, for the ranking and the
	// verdicts on the others.
	Rec *analysis.Recommendation
	// Recommended: Rec is what `sweep recommend --server SERVER` answers
	// for this scenario over the dataset (its cells hold recommend's whole
	// candidate space on the seeds its search asks for, and Rec is that
	// search's answer); otherwise Rec is the best of the policies measured
	// here, and the report says so.
	Recommended bool
	All         *analysis.Recommendation
	Situations  []analysis.Situation // without Retry-After only
	Library     []analysis.LibraryVerdict
	File        string // "scenarios/NAME.md"
}

// Figure is a figure of the report: its data, and the files it is drawn to.
type Figure struct {
	plots.Figure
	PNG, SVG string // "plots/NAME.png", "plots/NAME.svg"
	// Server is, for a queueing figure, the index of its server among the
	// report's queueing servers (byServer's order).
	Server int
}

// Report is everything the report says, built from a dataset by Build and
// rendered by Files: report.md, a page per scenario, the article's tables
// and every figure.
type Report struct {
	Provenance Provenance
	Scenarios  []Scenario
	Decision   Decision
	Article    []analysis.ArticleTable // empty when the dataset lacks the article's cells
	Mixed      []analysis.MixedFleet
	Recovery   []analysis.RecoveryGrid
	Controls   []analysis.ControlTable  // client components beside the same backoff without them
	Queueing   []analysis.QueueScenario // queueing servers: policies ranked by the time back to steady state
	Owners     []analysis.StoredOwner   // the owner's views the dataset holds, not in Queueing
	// QueueFigures are drawn in the queueing section, a figure per server.
	QueueFigures []Figure
	// Layers: chains of services in front of the server (retries across
	// layers), by scenario; LayerFigures are drawn in their section.
	Layers       []analysis.LayerScenario
	LayerFigures []Figure
	// Limits are the servers measured under several server-side limits,
	// LimitFigures their figures (limiters.go).
	Limits       []LimitGroup
	LimitFigures []Figure
	Figures      []Figure
	Warnings     []string // dataset-wide; per-cell warnings are in the tables
	Footer       string   // provenance of the dataset: tool, simulator, config and every seed
	footerBase   string   // Footer without the seeds: a figure's footer names its own (footer)
	Live         []LiveCheck

	// Brownouts are the servers measured under brownouts (fail_share),
	// left out of every other section; BrownoutFigures are aligned with
	// them (brownout.go).
	Brownouts       []analysis.BrownoutScenario
	BrownoutFigures []Figure
}

// Build builds the report of a dataset. It reads nothing but through in;
// when ctx is done it stops and returns ctx's error.
func Build(ctx context.Context, in Input) (*Report, error) {
	ds, aggs, sweeps, runs := measured(in)
	r := &Report{Provenance: provenance(ds, runs, sweeps), Live: in.Live}
	var bwarn []string
	var err error
	if r.Brownouts, aggs, in, bwarn, err = brownouts(in, aggs); err != nil {
		return nil, err
	}
	r.BrownoutFigures = brownoutFigures(r.Brownouts)
	// The dataset's warnings are about the counting server's metrics;
	// queueing cells have their own (queueingWarnings).
	counting := filter(aggs, func(a *analysis.Aggregate) bool { return !analysis.Queueing(a) })
	r.Warnings = append(datasetWarnings(r.Provenance, counting), ds.Warnings...)
	r.Warnings = append(r.Warnings, bwarn...)
	r.Article = articleFromDataset(ds)
	single, jittered := singlePolicy(aggs)
	qs, owners, warn, err := queueing(in, aggs)
	if err != nil {
		return nil, err
	}
	r.Queueing, r.QueueFigures, r.Owners = qs, queueFigures(qs), owners
	r.Limits = limitGroups(qs)
	r.LimitFigures = limitFigures(r.Limits)
	r.Warnings = append(r.Warnings, warn...)
	ls, warn, err := layersOf(in, aggs)
	if err != nil {
		return nil, err
	}
	r.Layers, r.LayerFigures = ls, layerFigures(ls)
	r.Warnings = append(r.Warnings, warn...)
	if r.Scenarios, err = scenarios(ctx, single, jittered); err != nil {
		return nil, err
	}
	nameFiles(r.Scenarios)
	r.Decision = decide(r.Scenarios)
	r.Mixed = analysis.MixedFleets(aggs, in.Groups)
	r.Recovery = analysis.RecoveryGrids(single)
	r.Controls = analysis.ClientControls(single)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.Footer, r.footerBase = footers(r.Provenance, sweeps)
	figs, err := chooseFigures(single, r, in.Timelines)
	if err != nil {
		return nil, err
	}
	r.Figures = figs
	return r, nil
}

// measured is what in holds: the dataset, its aggregates, each sweep's
// seeds and how many runs, from the streamed dataset (in.Scanned) when
// there is one, else from the dataset's records.
func measured(in Input) (*analysis.Dataset, []*analysis.Aggregate, []analysis.SweepSeeds, int) {
	if sc := in.Scanned; sc != nil {
		return &sc.Dataset, sc.Aggregates, sc.Sweeps, sc.Runs
	}
	ds := in.Dataset
	return ds, analysis.Aggregates(ds.Records), sweepSeeds(ds.Records), len(ds.Records)
}

// singlePolicy returns the counting server's cells of fleets of one policy,
// which the recommendation compares, and of those the policies that
// jitter. Queueing cells have their own metrics and ranking (queueing.go),
// not the counting server's rules, and chains of services theirs (layers.go).
func singlePolicy(aggs []*analysis.Aggregate) (single, jittered []*analysis.Aggregate) {
	single = make([]*analysis.Aggregate, 0, len(aggs))
	for _, a := range aggs {
		if analysis.Queueing(a) || a.Cell.Mixed() || analysis.Chained(a) {
			continue
		}
		single = append(single, a)
		if a.Cell.Policy.Jittered() {
			jittered = append(jittered, a)
		}
	}
	return single, jittered
}

// scenarios decides each scenario of the single-policy cells: a query
// group (analysis.Groups) for each window its cells were run for, the
// longest first. When ctx is done it stops and returns ctx's error.
func scenarios(ctx context.Context, single, jittered []*analysis.Aggregate) ([]Scenario, error) {
	var out []Scenario
	for _, q := range analysis.Groups(single) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, w := range windows(q, single) {
			in := func(a *analysis.Aggregate) bool { return a.Cell.Scenario.Horizon-a.Cell.Scenario.RecoverAt == w }
			out = append(out, scenario(q, filter(single, in), filter(jittered, in)))
		}
	}
	return out, nil
}

// windows are the times after recovery the cells of query group q were
// run for, the longest first. A query group can hold cells run for
// different windows (the article's 20 minutes from the start beside a
// sweep's 20 minutes after recovery): each window is a scenario of its
// own.
func windows(q analysis.Query, single []*analysis.Aggregate) []time.Duration {
	var ws []time.Duration
	for _, a := range single {
		if w := a.Cell.Scenario.Horizon - a.Cell.Scenario.RecoverAt; q.Matches(a) && !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	slices.SortFunc(ws, func(a, b time.Duration) int { return int(b - a) })
	return ws
}

// nameFiles names each scenario's page, "scenarios/NAME.md" (slug), a
// name taken before followed by "-2", "-3" ….
func nameFiles(ss []Scenario) {
	names := map[string]int{}
	for i := range ss {
		s := &ss[i]
		name := slug(s.Query, s.All.Scenario)
		names[name]++
		if n := names[name]; n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		s.File = "scenarios/" + name + ".md"
	}
}

// footers are the provenance printed under the figures: the dataset's
// tool, simulator and config with every seed of its sweeps (Report.Footer),
// and without the seeds (Report.footerBase).
func footers(p Provenance, sweeps []analysis.SweepSeeds) (footer, base string) {
	var all []uint32
	for _, sw := range sweeps {
		all = append(all, sw.Seeds...)
	}
	slices.Sort(all)
	footer = fmt.Sprintf("herdsweep %s · simulator %s · config %s · seeds %s", p.Tool, p.Sim, short(p.ConfigHash), ranges(slices.Compact(all)))
	base = fmt.Sprintf("herdsweep %s · simulator %s · config %s", p.Tool, p.Sim, short(p.ConfigHash))
	return footer, base
}

// scenario decides one scenario: q among single (every single-policy
// cell run for one window), the recommendation among those that jitter.
func scenario(q analysis.Query, single, jittered []*analysis.Aggregate) Scenario {
	s := Scenario{Query: q}
	s.All, _ = analysis.Recommend(single, q) // q comes from these cells: never an error
	s.Family = analysis.FamilyOf(s.All.Scenario)
	if rk, err := analysis.Recommend(jittered, q); err == nil {
		s.Rec = rk
		if rs, ok := recommendOver(s.All.Scenario, q, jittered); ok {
			s.Rec, s.Recommended = rs, true
		}
		if q.RetryAfter == 0 { // table 5 has its own Retry-After row
			s.Situations = analysis.Table5(jittered, q)
		}
		for _, a := range s.All.Ranked {
			if a.Cell.Policy.Preset != "" {
				s.Library = append(s.Library, analysis.Judge(rk, a))
			}
		}
		sort.SliceStable(s.Library, func(i, j int) bool {
			return s.Library[i].Preset.Cell.Policy.Preset < s.Library[j].Preset.Cell.Policy.Preset
		})
	}
	return s
}

// recommendOver is recommend's answer for scenario sc over the cells
// measured (analysis.SearchStored, with recommend's defaults), when they
// hold every run its search asks for.
func recommendOver(sc sim.Scenario, q analysis.Query, cells []*analysis.Aggregate) (*analysis.Recommendation, bool) {
	space := grid.CandidateSpace(sc)
	if len(cells) < len(space) {
		return nil, false
	}
	q.Budget, q.Margin, q.AllowGiveUp = 0, 0, false // recommend's defaults
	rec, ok, err := analysis.SearchStored(space, q, analysis.DefaultSeeding, cells)
	if err != nil || !ok {
		return nil, false
	}
	return rec, true
}

func filter(as []*analysis.Aggregate, keep func(*analysis.Aggregate) bool) []*analysis.Aggregate {
	var out []*analysis.Aggregate
	for _, a := range as {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// File is one file of a rendered report, relative to its folder.
type File struct {
	Name  string // slash-separated: "report.md", "scenarios/x.md", "plots/x.png"
	Write func(io.Writer) error
}

// Files lists every file of the report in a fixed order: report.md, the
// article's tables, a page per scenario, then each figure as PNG and SVG.
func (r *Report) Files() []File {
	out := []File{{"report.md", r.WriteMarkdown}}
	if len(r.Article) > 0 {
		out = append(out, File{"article.md", r.writeArticlePage})
	}
	if len(r.Queueing) > 0 {
		out = append(out, File{QueueingPage, r.writeQueueingPage})
	}
	for i := range r.Scenarios {
		out = append(out, File{r.Scenarios[i].File, func(w io.Writer) error { return r.writeScenario(w, i) }})
	}
	for _, f := range slices.Concat(r.Figures, r.QueueFigures, r.LimitFigures, r.LayerFigures, r.BrownoutFigures) {
		if f.PNG == "" {
			continue // a brownout scenario without a figure
		}
		foot := r.footer(f)
		out = append(out,
			File{f.PNG, func(w io.Writer) error { return plots.Render(w, f.Figure, foot, "png") }},
			File{f.SVG, func(w io.Writer) error { return plots.Render(w, f.Figure, foot, "svg") }})
	}
	return out
}

// slug names a scenario's page: "c120-n2000-o30s", "-ra30s", "-cost0.5".
func slug(q analysis.Query, sc sim.Scenario) string {
	s := fmt.Sprintf("c%s-n%d-o%gs", strconv.FormatFloat(q.Capacity, 'g', -1, 64), q.Clients, q.Outage.Seconds())
	if q.RetryAfter > 0 {
		s += fmt.Sprintf("-ra%gs", q.RetryAfter.Seconds())
	}
	if sc.RejectCost > 0 {
		s += fmt.Sprintf("-cost%g", sc.RejectCost)
	}
	if sc.RampUp > 0 {
		s += fmt.Sprintf("-ramp%gs-from%g", sc.RampUp.Seconds(), sc.RampFrom)
	}
	if sc.RetryAfterBacklog {
		s += "-rabacklog"
	}
	if sc.RetryAfterMax > 0 {
		s += fmt.Sprintf("-ramax%gs", sc.RetryAfterMax.Seconds())
	}
	if w := sc.Horizon - sc.RecoverAt; w != analysis.DefaultWindow {
		s += fmt.Sprintf("-w%gs", w.Seconds())
	}
	return s
}

// Provenance says where a report's data came from.
type Provenance struct {
	Tool       string
	Sim        string
	ConfigHash string
	Commands   []string
	Created    string
	Sweeps     []string
	Seeds      string // e.g. "1–10 (default); 206–210 (article)"
	Runs       int
	Files      int
}

// provenance sums up the metadata of every part.
func provenance(ds *analysis.Dataset, runs int, sweeps []analysis.SweepSeeds) Provenance {
	p := Provenance{Runs: runs, Files: ds.Files}
	var tools, sims, hashes []string
	for _, m := range ds.Metas {
		tools, sims, hashes = addUniq(tools, m.Tool), addUniq(sims, m.Sim), addUniq(hashes, m.ConfigHash)
		p.Commands = addUniq(p.Commands, m.Command)
		if m.Created > p.Created {
			p.Created = m.Created
		}
	}
	p.Tool, p.Sim, p.ConfigHash = strings.Join(tools, ", "), strings.Join(sims, ", "), strings.Join(hashes, ", ")
	var parts []string
	for _, s := range sweeps {
		p.Sweeps = append(p.Sweeps, s.Sweep)
		parts = append(parts, fmt.Sprintf("%s (%s)", ranges(s.Seeds), s.Sweep))
	}
	p.Seeds = strings.Join(parts, "; ")
	return p
}

// sweepSeeds lists each sweep's seeds (ascending, each once), sweeps in
// the order their first record comes, as analysis.Scan gives them.
func sweepSeeds(recs []analysis.Record) []analysis.SweepSeeds {
	var out []analysis.SweepSeeds
	at := map[string]int{}
	for _, r := range recs {
		i, ok := at[r.Sweep]
		if !ok {
			i = len(out)
			at[r.Sweep] = i
			out = append(out, analysis.SweepSeeds{Sweep: r.Sweep})
		}
		out[i].Seeds = append(out[i].Seeds, r.Seed)
	}
	for i := range out {
		slices.Sort(out[i].Seeds)
		out[i].Seeds = slices.Compact(out[i].Seeds)
	}
	return out
}

func addUniq(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// ranges writes ascending distinct seeds as "1–10, 206–210".
func ranges(s []uint32) string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.FormatUint(uint64(s[i]), 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func datasetWarnings(p Provenance, aggs []*analysis.Aggregate) []string {
	var w []string
	if strings.Contains(p.ConfigHash, ",") {
		w = append(w, "the dataset mixes parts written from different configs: "+p.ConfigHash)
	}
	few, unfinished, clamped, counting := 0, 0, 0, 0
	for _, a := range aggs {
		if len(a.Seeds) < analysis.MinSeedsForInterval {
			few++
		}
		if a.Clamped() {
			clamped++
		}
		if analysis.Queueing(a) { // judged on the time back to steady state, not on its cohort's t99
			continue
		}
		counting++
		if a.Summary(analysis.T99).Unfinished > 0 {
			unfinished++
		}
	}
	if few > 0 {
		w = append(w, fmt.Sprintf("%d of %s %s fewer than %d seeds: too few for a 95 %% interval", few, num.Plural(len(aggs), "cell"), num.Agree(few, "has", "have"), analysis.MinSeedsForInterval))
	}
	if clamped > 0 {
		w = append(w, fmt.Sprintf("%d of %s %s a 95 %% interval that reaches below 0 (few seeds, or seeds far apart): no metric is negative, so it is printed from 0", clamped, num.Plural(len(aggs), "cell"), num.Agree(clamped, "has", "have")))
	}
	if unfinished > 0 {
		w = append(w, fmt.Sprintf("%d of %s %s runs that did not bring 99 %% of clients back within the window; their t99 is \"not finished\", never a number", unfinished, num.Plural(counting, "cell"), num.Agree(unfinished, "has", "have")))
	}
	return w
}

// articleFromDataset compares the article's tables with the dataset's runs
// of the same cells on the article's seeds; none when the dataset lacks them.
func articleFromDataset(ds *analysis.Dataset) []analysis.ArticleTable {
	want := map[string]bool{}
	for _, t := range article.Tables() {
		for _, row := range t.Rows {
			want[row.Cell.Key()] = true
		}
	}
	byCell := map[string]map[uint32]sim.Result{}
	for _, r := range ds.Records {
		if !want[r.CellKey] {
			continue
		}
		if byCell[r.CellKey] == nil {
			byCell[r.CellKey] = map[uint32]sim.Result{}
		}
		byCell[r.CellKey][r.Seed] = r.Result
	}
	complete := true
	results := func(c grid.Cell) ([]sim.Result, []sim.Result) {
		runs := byCell[c.Key()]
		var five, many []sim.Result
		for _, s := range article.Seeds {
			res, ok := runs[s]
			if !ok {
				complete = false
				return nil, nil
			}
			five = append(five, res)
		}
		if len(runs) >= 20 {
			var seeds []uint32
			for s := range runs {
				seeds = append(seeds, s)
			}
			sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
			for _, s := range seeds {
				many = append(many, runs[s])
			}
		}
		return five, many
	}
	for _, t := range article.Tables() {
		for _, row := range t.Rows {
			results(row.Cell)
		}
	}
	if !complete {
		return nil
	}
	return analysis.CompareArticle(article.Tables(), results)
}

// footer is the provenance printed under figure f: Footer with the seeds
// of the runs f draws (a figure of a sweep with fewer seeds than the
// dataset's widest must not claim them).
func (r *Report) footer(f Figure) string {
	seeds := f.Seeds()
	if len(seeds) == 0 {
		return r.Footer
	}
	return r.footerBase + " · seeds " + ranges(seeds)
}
