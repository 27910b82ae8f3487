package reports

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
)

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

// Plot is a figure embedded in the report.
type Plot struct {
	File, Title, Caption string
}

// CapacityTable is the article's table 5 regenerated for one scenario
// (capacity, clients, outage), with the ranking behind it.
type CapacityTable struct {
	Query      analysis.Query
	Situations []analysis.Situation
	Ranking    *analysis.Recommendation // by t99; nil when no cell matches
}

// LibraryTable is the verdict on every library preset in one scenario.
type LibraryTable struct {
	Query    analysis.Query
	Verdicts []analysis.LibraryVerdict
}

// Report is everything report.md says.
type Report struct {
	Provenance Provenance
	Article    []analysis.ArticleTable // empty when the dataset lacks the article's cells
	Capacities []CapacityTable
	Library    []LibraryTable
	Mixed      []analysis.MixedFleet
	Recovery   []analysis.RecoveryGrid
	Plots      []Plot
	Warnings   []string // dataset-wide; per-cell warnings are in the tables
}

// Write writes report.md.
func Write(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	p := r.Provenance
	ew.printf("# herdsweep report\n\n")
	ew.printf("Which retry policy brings every client back fastest after an outage without burying the server that just recovered? Measured, not argued: every figure below is a mean over seeds of a deterministic simulation, with its 95 %% interval (Student t) where there are enough seeds.\n\n")
	ew.printf("| | |\n|---|---|\n")
	ew.printf("| tool | herdsweep %s |\n| simulator | %s |\n| config sha256 | `%s` |\n", p.Tool, p.Sim, p.ConfigHash)
	ew.printf("| sweeps | %s |\n| seeds | %s |\n| runs | %s in %d part files |\n| created | %s |\n",
		strings.Join(p.Sweeps, ", "), p.Seeds, thousands(float64(p.Runs)), p.Files, p.Created)
	for _, c := range p.Commands {
		ew.printf("| command | `%s` |\n", c)
	}
	ew.printf("\n")

	if len(r.Warnings) > 0 {
		ew.printf("## Warnings\n\n")
		for _, w := range r.Warnings {
			ew.printf("- %s\n", w)
		}
		ew.printf("\n")
	}

	ew.printf("## Recommendation by capacity\n\n")
	ew.printf("The article's table 5 (\"situation → recommended → reason\"), regenerated from this dataset for each scenario it holds. Reasons quote the cell's mean over its seeds; times are counted from recovery. Every row picks among feasible policies only: no client gives up, 99 %% are back within the window in every seed, and at most %g requests per client are sent after recovery, so that a policy cannot win by burying the server.\n\n", float64(analysis.DefaultBudget))
	for _, ct := range r.Capacities {
		ew.printf("### %s\n\n", heading(ct.Query))
		if len(ct.Situations) > 0 {
			ew.printf("| situation | recommended | reason |\n|---|---|---|\n")
			for _, s := range ct.Situations {
				ew.printf("| %s | %s | %s |\n", cell(s.Situation), cell(s.Recommended), cell(s.Reason))
			}
			ew.printf("\n")
		}
		if rk := ct.Ranking; rk != nil {
			writeRanking(ew, rk, 8)
		}
	}

	writeLibrary(ew, r.Library)
	writeMixed(ew, r.Mixed)
	writeRecovery(ew, r.Recovery)

	if len(r.Article) > 0 {
		ew.printf("## The article's tables beside ours\n\n")
		ew.printf("Published figures against this dataset's runs on the article's scenario with seeds 206–210, aggregated as the article does (mean of per-seed values; sent and peak rounded, times to 0.1 s). `sweep reproduce` adds the spread over many seeds.\n\n")
		if ew.err == nil {
			ew.err = WriteArticle(ew.w, r.Article)
		}
	}

	if len(r.Plots) > 0 {
		ew.printf("## Figures\n\n")
		for _, pl := range r.Plots {
			ew.printf("### %s\n\n![%s](%s)\n\n%s\n\n", pl.Title, pl.Title, pl.File, pl.Caption)
		}
	}
	return ew.err
}

// writeRanking writes the top candidates of a recommendation.
func writeRanking(ew *errWriter, rk *analysis.Recommendation, top int) {
	front := map[*analysis.Aggregate]bool{}
	for _, a := range rk.Pareto {
		front[a] = true
	}
	ew.printf("<details><summary>ranking by t99 after recovery (%d candidates, %d feasible; * = on the Pareto front of t99, peak and traffic among the feasible)</summary>\n\n", len(rk.Ranked), rk.Feasible)
	ew.printf("| # | policy | t99 after recovery (s) | peak (req/s) | sent after recovery | seeds | notes |\n|--:|---|--:|--:|--:|--:|---|\n")
	for i, a := range rk.Ranked {
		if i >= top && !front[a] {
			continue
		}
		mark := ""
		if front[a] {
			mark = " *"
		}
		notes := strings.Join(a.Warnings, "; ")
		if why := rk.Why[a.CellKey]; why != "" {
			notes = "not feasible: " + why + " (" + notes + ")"
		}
		ew.printf("| %d | %s%s | %s | %s | %s | %d | %s |\n", i+1, cell(analysis.PolicyLabel(a.Cell)), mark,
			summary(analysis.T99, a.Summary(analysis.T99)), summary(analysis.Peak, a.Summary(analysis.Peak)),
			summary(analysis.Sent, a.Summary(analysis.Sent)), len(a.Seeds), cell(notes))
	}
	ew.printf("\n</details>\n\n")
	if rk.Best == nil {
		ew.printf("- no feasible policy: %s\n", rk.NoAnswer)
	}
	for _, w := range rk.Warnings {
		ew.printf("- %s\n", w)
	}
	if len(rk.Warnings) > 0 || rk.Best == nil {
		ew.printf("\n")
	}
}

// Sprint is a helper for callers that need a figure as text.
func Sprint(m analysis.Metric, s analysis.Summary) string { return fmt.Sprint(summary(m, s)) }

func writeLibrary(ew *errWriter, tables []LibraryTable) {
	if len(tables) == 0 {
		return
	}
	ew.printf("## Library defaults at each capacity\n\n")
	ew.printf("Each library's retry defaults (`sweep policies` cites where they come from) against the recommended policy of the same scenario (feasible, within the traffic budget): \"fine here\" when it is feasible and its t99 after recovery is within %g× of the best; otherwise the change that the data shows helps most.\n\n", analysis.FineFactor)
	for _, t := range tables {
		ew.printf("### %s\n\n", heading(t.Query))
		ew.printf("| library | recovery time t99 (s) | peak load (req/s) | verdict |\n|---|--:|--:|---|\n")
		for _, v := range t.Verdicts {
			a := v.Preset
			name := a.Cell.Policy.Preset
			if a.Cell.Scenario.RetryAfter > 0 {
				name += fmt.Sprintf(" (server sends Retry-After %v)", a.Cell.Scenario.RetryAfter)
			}
			peak := summary(analysis.Peak, a.Summary(analysis.Peak))
			if a.Summary(analysis.GaveUp).Min >= float64(a.Cell.Scenario.Clients) {
				peak = "— (every client gave up)"
			}
			ew.printf("| %s | %s | %s | %s |\n", cell(name), summary(analysis.T99, a.Summary(analysis.T99)), peak, cell(v.Verdict))
		}
		ew.printf("\n")
	}
}

func writeMixed(ew *errWriter, fleets []analysis.MixedFleet) {
	if len(fleets) == 0 {
		return
	}
	ew.printf("## Mixed fleets: what an old client costs everyone else\n\n")
	ew.printf("Each fleet splits its clients between policies (interleaved, so no group is served first). t99 per group is after recovery, over the seeds where the group reached 99 %%; \"alone\" is the same scenario with every client on the main policy; \"cost\" is the main group's t99 minus alone's, paired seed by seed, with its 95 %% interval.\n\n")
	ew.printf("| fleet | group | share | group t99 (s) | gave up | main policy alone: t99 (s) | cost, paired (s) |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, f := range fleets {
		sc := f.Cell.Cell.Scenario
		name := fmt.Sprintf("%s req/s, %s clients", thousands(sc.Capacity), thousands(float64(sc.Clients)))
		for i, g := range f.Groups {
			alone, cost := "", ""
			if g.Alone != nil {
				alone = summary(analysis.T99, g.Alone.Summary(analysis.T99))
			}
			if e := g.Effect; e.Seeds >= 2 {
				cost = fmt.Sprintf("%s [%s, %s] over %d seeds", signed(e.Diff, 2), signed(e.Lo, 2), signed(e.High, 2), e.Seeds)
			}
			label := ""
			if i == 0 {
				label = name
			}
			ew.printf("| %s | %s | %.0f %% | %s | %s | %s | %s |\n", cell(label), cell(g.Label), 100*g.Share, summary(analysis.T99, g.T99), thousands(g.GaveUp.Mean), alone, cost)
		}
	}
	ew.printf("\n")
}

func writeRecovery(ew *errWriter, grids []analysis.RecoveryGrid) {
	if len(grids) == 0 {
		return
	}
	ew.printf("## Servers that do more than count: does it ever recover?\n\n")
	ew.printf("Share of seeds in which 99 %% of clients came back before the horizon, by outage length (rows) and capacity (columns). **0 %%** marks a cell that never recovers: with 429s that cost work, a herd large enough keeps the server busy rejecting — the metastable failure.\n\n")
	for _, g := range grids {
		ew.printf("### %s — %s\n\n| outage \\ capacity |", g.Policy, g.Server)
		for _, c := range g.Capacities {
			ew.printf(" %s |", thousands(c))
		}
		ew.printf("\n|---|")
		for range g.Capacities {
			ew.printf("--:|")
		}
		ew.printf("\n")
		for i, o := range g.Outages {
			ew.printf("| %v |", o)
			for _, v := range g.Recovered[i] {
				switch {
				case math.IsNaN(v):
					ew.printf(" — |")
				case v == 0:
					ew.printf(" **0 %%** |")
				default:
					ew.printf(" %.0f %% |", 100*v)
				}
			}
			ew.printf("\n")
		}
		ew.printf("\n")
	}
}

// heading names a scenario group.
func heading(q analysis.Query) string {
	h := fmt.Sprintf("%s requests/s, %s clients, %v outage", thousands(q.Capacity), thousands(float64(q.Clients)), q.Outage)
	if q.RetryAfter > 0 {
		h += fmt.Sprintf(", server sends Retry-After %v", q.RetryAfter)
	}
	if q.Server != "" {
		h += "; " + q.Server
	}
	return h
}
