package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce", "[--seeds N] [--out DIR] [--workers N]", stderr)
	many := fs.Int("seeds", 1000, "seeds 1…N for the spread of a 5-seed mean (0: only the article's seeds 206–210)")
	out := fs.String("out", "out", "folder for reproduce.md")
	workers := fs.Int("workers", 0, "simulations in parallel (0 = one per CPU)")
	quiet := fs.Bool("quiet", false, "no progress output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *many < 0 || *many == 1 || *many > 100_000 {
		return usagef("reproduce: --seeds %d: want 0, or 2 to 100000", *many)
	}
	if err := checkWorkers("reproduce", *workers); err != nil {
		return err
	}
	start := time.Now()
	cells, _ := experiments.Builtin("article")
	per := len(experiments.ArticleSeeds) + *many
	job := func(i int) experiments.Job { // each cell on the article's seeds, then on 1 … many
		seed := uint32(i%per - len(experiments.ArticleSeeds) + 1)
		if j := i % per; j < len(experiments.ArticleSeeds) {
			seed = experiments.ArticleSeeds[j]
		}
		return experiments.Job{Run: experiments.Run{Cell: cells[i/per], Seed: seed}}
	}
	n := len(cells) * per
	five := map[string][]sim.Result{}
	spread := map[string][]sim.Result{}
	prog := newProgress(stderr, "reproduce", n, *quiet)
	err := experiments.Execute(ctx, *workers, n, job,
		func(i int, o experiments.Outcome) error {
			prog.add(1)
			if o.Err != nil {
				return o.Err
			}
			k := o.Job.Run.Cell.Key()
			if i%per < len(experiments.ArticleSeeds) {
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
	tables := analysis.CompareArticle(experiments.ArticleTables(), func(c experiments.Cell) ([]sim.Result, []sim.Result) {
		return five[c.Key()], spread[c.Key()]
	})
	if err := reports.WriteArticleText(stdout, tables); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%s\n", reports.ReproductionNote())
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
	fmt.Fprintf(stdout, "\n%d runs in %v; markdown: %s\n", n, time.Since(start).Round(time.Millisecond), filepath.Join(*out, "reproduce.md"))
	return nil
}
