package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/runner"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce", "[--seeds N] [--out DIR] [--workers N]", stderr)
	many := fs.Int("seeds", 1000, "seeds 1…N for the spread of a 5-seed mean (0: only the article's seeds 206–210)")
	out := fs.String("out", "out", "folder for reproduce.md")
	workers := fs.Int("workers", 0, "simulations in parallel (0 = one per CPU)")
	quiet := fs.Bool("quiet", false, "no progress output")
	asJSON := fs.Bool("json", false, "print the comparison as one JSON document (reproduce.md is still written)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *many < 0 || *many == 1 || *many > 100_000 {
		return usagef("reproduce: --seeds %d: want 0, or 2 to 100000", *many)
	}
	if err := checkWorkers("reproduce", *workers); err != nil {
		return err
	}
	if err := checkFolderOut("reproduce", *out); err != nil {
		return err
	}
	start := time.Now()
	cells, _ := article.Builtin("article")
	per := len(article.Seeds) + *many
	job := func(i int) runner.Job { // each cell on the article's seeds, then on 1 … many
		seed := uint32(i%per - len(article.Seeds) + 1)
		if j := i % per; j < len(article.Seeds) {
			seed = article.Seeds[j]
		}
		return runner.Job{Run: grid.Run{Cell: cells[i/per], Seed: seed}}
	}
	n := len(cells) * per
	five := map[string][]sim.Result{}
	spread := map[string][]sim.Result{}
	prog := newProgress(stderr, "reproduce", n, *quiet)
	err := runner.Execute(ctx, *workers, n, job,
		func(i int, o *runner.Outcome) error {
			prog.add(1)
			if o.Err != nil {
				return o.Err
			}
			k := o.Job.Run.Cell.Key()
			if i%per < len(article.Seeds) {
				five[k] = append(five[k], o.Result)
			} else {
				spread[k] = append(spread[k], o.Result)
			}
			return nil
		})
	prog.finish()
	if err != nil {
		return err
	}
	tables := analysis.CompareArticle(article.Tables(), func(c grid.Cell) ([]sim.Result, []sim.Result) {
		return five[c.Key()], spread[c.Key()]
	})
	if *asJSON {
		if err := writeJSON(stdout, articleJSON(tables, *many)); err != nil {
			return err
		}
	} else {
		if err := reports.WriteArticleText(stdout, tables); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n%s\n", reports.ReproductionNote())
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	buf := &partBuffer{}
	fmt.Fprintf(buf, "# The article's tables, reproduced\n\nherdsweep %s, simulator %s. Published figures beside ours: the article's scenario on seeds 206–210, aggregated as the article does, and over seeds 1–%d as the mean ± the standard deviation of a 5-seed mean; z is how many of those the published figure lies from our mean. Command: `sweep reproduce --seeds %d`.\n\n%s\n\n", toolVersion(), sim.Version, *many, *many, reports.ReproductionNote())
	if err := reports.WriteArticle(buf, tables); err != nil {
		return err
	}
	if err := writeAtomic(*out, "reproduce.md", buf); err != nil {
		return err
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "\n%d runs in %v; markdown: %s\n", n, time.Since(start).Round(time.Millisecond), filepath.Join(*out, "reproduce.md"))
	}
	return nil
}

// articleJSON is `sweep reproduce --json`: per table and row, each
// metric's published figure, ours on seeds 206–210, and the spread over
// seeds 1…many (null where not defined).
func articleJSON(tables []analysis.ArticleTable, many int) any {
	type metric struct {
		Metric             string   `json:"metric"`
		Published          *float64 `json:"published"`
		PublishedNotFinish bool     `json:"published_not_finished"`
		Ours               *float64 `json:"ours"`
		OursNotFinished    bool     `json:"ours_not_finished"`
		ManyMean           *float64 `json:"many_mean"`
		ManySD5            *float64 `json:"many_sd_of_5_seed_mean"`
		ManyUnfinished     int      `json:"many_unfinished"`
		Z                  *float64 `json:"z"`
	}
	type row struct {
		Label   string   `json:"label"`
		Exact   bool     `json:"exact"`
		Metrics []metric `json:"metrics"`
	}
	type table struct {
		ID    string `json:"id"`
		Title string `json:"title"`
		Rows  []row  `json:"rows"`
	}
	f := func(x float64, ok bool) *float64 {
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	var out []table
	for _, t := range tables {
		tb := table{ID: t.ID, Title: t.Title}
		for _, r := range t.Compared {
			rw := row{Label: r.Label, Exact: r.Exact}
			for _, m := range t.Metrics {
				p, hasP := r.Published[m]
				o, hasO := r.Ours[m]
				sp, hasS := r.Many[m]
				rw.Metrics = append(rw.Metrics, metric{Metric: string(m),
					Published: f(p.Value, hasP && !p.NotFinished), PublishedNotFinish: p.NotFinished,
					Ours: f(o.Value, hasO && !o.NotFinished), OursNotFinished: o.NotFinished,
					ManyMean: f(sp.Mean, hasS && sp.Seeds > 0), ManySD5: f(sp.SD5, hasS && sp.Seeds > 0), ManyUnfinished: sp.Unfinished, Z: f(sp.Z, hasS)})
			}
			tb.Rows = append(tb.Rows, rw)
		}
		out = append(out, tb)
	}
	return map[string]any{"many_seeds": many, "article_seeds": article.Seeds, "tables": out, "note": reports.ReproductionNote()}
}
