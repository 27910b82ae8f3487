package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/reports"
	"github.com/herdsweep/herdsweep/sim"
)

func cmdRecommend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("recommend", "--capacity RPS [--clients N] [--outage 30s] [--objective t99|peak|sent] [--results DIR]", stderr)
	capacity := fs.Float64("capacity", 0, "requests/s the server serves after recovery (required)")
	clients := fs.Int("clients", 2000, "clients that failed during the outage")
	outage := fs.Duration("outage", 30*time.Second, "outage length: the server recovers at this time")
	objective := fs.String("objective", "t99", "what to optimise: t99 (fastest recovery), peak (gentlest on the server), sent (least traffic)")
	results := fs.String("results", "out", "dataset to answer from; when it has no cell for the scenario, the candidates are simulated")
	retryAfter := fs.Duration("retry-after", 0, "Retry-After the server sends (0: none); adds the clients that read it")
	seeds := fs.Int("seeds", 10, "seeds per candidate when simulating")
	library := fs.String("library", "", "also judge this library's defaults (a preset: see `sweep policies`)")
	workers := fs.Int("workers", 0, "simulations in parallel (0 = one per CPU)")
	if err := parse(fs, args); err != nil {
		return err
	}
	q := analysis.Query{Capacity: *capacity, Clients: *clients, Outage: *outage, Objective: analysis.Objective(*objective)}
	if _, err := q.Objective.Metric(); err != nil {
		return usageError{err: err}
	}
	if *seeds < 2 || *seeds > 10000 {
		return usagef("recommend: --seeds %d: want 2 to 10000", *seeds)
	}
	sc := sim.Article()
	sc.Capacity, sc.Clients, sc.RecoverAt, sc.RetryAfter = *capacity, *clients, *outage, *retryAfter
	if sc.Horizon <= sc.RecoverAt {
		sc.Horizon = sc.RecoverAt + 20*time.Minute
	}
	if err := sc.Validate(); err != nil {
		return usagef("recommend: %v", flagName(err))
	}

	var preset sim.Preset
	if *library != "" {
		var ok bool
		if preset, ok = sim.PresetByName(*library); !ok {
			var names []string
			for _, p := range sim.Presets() {
				names = append(names, p.Name)
			}
			return usagef("recommend: --library %q: want one of %s", *library, strings.Join(names, ", "))
		}
	}
	var note string
	aggs, rk, err := fromDataset(*results, q, *retryAfter)
	if err == nil && preset.Name != "" && !hasPreset(aggs, preset.Name, q) {
		err = fmt.Errorf("the dataset lacks %s at this scenario", preset.Name)
	}
	if err != nil {
		start := time.Now()
		cands := experiments.Candidates(sc)
		if preset.Name != "" {
			cands = append(cands, experiments.Cell{Scenario: sc, Policy: preset.Policy})
		}
		var recs []analysis.Record
		n := len(cands) * *seeds
		err := experiments.Execute(ctx, *workers, n, func(i int) experiments.Job {
			return experiments.Job{Run: experiments.Run{Cell: cands[i / *seeds], Seed: uint32(i%*seeds + 1)}}
		}, func(i int, o experiments.Outcome) error {
			if o.Err != nil {
				return o.Err
			}
			r := o.Job.Run
			recs = append(recs, analysis.Record{Record: dataset.Record{RunKey: r.Key(), CellKey: r.Cell.Key(), Seed: r.Seed, Label: r.Cell.Label(), Cell: r.Cell, Result: o.Result}})
			return nil
		})
		if err != nil {
			return err
		}
		aggs = analysis.Aggregates(recs)
		rk, err = analysis.Recommend(aggs, q)
		if err != nil {
			return err
		}
		note = fmt.Sprintf("no cell of the dataset in %s covers this scenario: simulated %d candidate policies × %d seeds (%d runs) in %v",
			*results, len(cands), *seeds, n, time.Since(start).Round(time.Millisecond))
	} else {
		note = fmt.Sprintf("answered from the dataset in %s", *results)
	}
	if err := reports.WriteRecommendation(stdout, rk, note); err != nil {
		return err
	}
	if preset.Name != "" {
		for _, v := range analysis.LibraryVerdicts(aggs, q) {
			if v.Preset.Cell.Policy.Preset == preset.Name && v.Preset.Cell.Scenario.RetryAfter == *retryAfter {
				fmt.Fprintf(stdout, "\n%s defaults: t99 %s, peak %s req/s.\nverdict: %s\n", preset.Name,
					reports.Sprint(analysis.T99, v.Preset.Summary(analysis.T99)), reports.Sprint(analysis.Peak, v.Preset.Summary(analysis.Peak)), v.Verdict)
			}
		}
	}
	return nil
}

func hasPreset(aggs []*analysis.Aggregate, name string, q analysis.Query) bool {
	for _, a := range aggs {
		if a.Cell.Policy.Preset == name && q.Matches(a) {
			return true
		}
	}
	return false
}

// fromDataset answers from a dataset when it has cells for the scenario:
// fleets of one policy, with the server sending Retry-After ra.
func fromDataset(dir string, q analysis.Query, ra time.Duration) ([]*analysis.Aggregate, *analysis.Recommendation, error) {
	ds, err := analysis.Load(os.DirFS(dir))
	if err != nil {
		return nil, nil, err
	}
	var aggs []*analysis.Aggregate
	for _, a := range analysis.Aggregates(ds.Records) {
		if a.Cell.Scenario.RetryAfter == ra && !a.Cell.Mixed() {
			aggs = append(aggs, a)
		}
	}
	rk, err := analysis.Recommend(aggs, q)
	return aggs, rk, err
}

// flagName rewrites a sim field error in terms of the command's flags.
func flagName(err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		names := map[string]string{"Capacity": "--capacity", "Clients": "--clients", "RecoverAt": "--outage", "Horizon": "--outage", "RetryAfter": "--retry-after"}
		if n, ok := names[fe.Field]; ok {
			return fmt.Errorf("%s %v: want %s", n, fe.Value, fe.Want)
		}
	}
	return err
}
