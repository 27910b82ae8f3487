package analysis

import (
	"context"
	"fmt"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// JudgeClosest is answer's library settings (sim.Policy.Settings) with
// each closest built-in setting they offer measured against the answer:
// both run on sc with seeds 1 … seeds (the runs the answer's search
// measured, so a cached measure pays only for the closest ones), and the
// setting's text says the closest one's mean t99 as a multiple of the
// answer's, and in how many seeds it was not back. Where the answer itself
// is not back in some seed (its clients give up: a budget, throttling or
// an attempt limit), t99 compares nothing and the text says so. Settings
// without a closest one come back as they are.
func JudgeClosest(ctx context.Context, sc sim.Scenario, answer sim.Policy, seeds int, measure Measure) ([]sim.Setting, error) {
	if seeds < 1 {
		return nil, fmt.Errorf("judging the closest settings: %d seeds, want at least 1", seeds)
	}
	settings := answer.Settings()
	cells := append([]grid.Cell{{Scenario: sc, Policy: answer}}, grid.ClosestCells(sc, answer)...)
	if len(cells) == 1 {
		return settings, nil
	}
	recs, err := measure(ctx, Runs(cells, 1, seeds))
	if err != nil {
		return nil, err
	}
	t99 := map[sim.Policy]Summary{}
	for _, a := range Aggregates(recs) {
		t99[a.Cell.Policy] = a.Summary(T99)
	}
	ans, ok := t99[answer]
	if !ok {
		return nil, fmt.Errorf("judging the closest settings: no runs of %s", answer.Short())
	}
	for i, s := range settings {
		if c := s.Closest; c != nil {
			got, ok := t99[c.Policy]
			if !ok {
				return nil, fmt.Errorf("judging the closest settings: no runs of %s", c.Policy.Short())
			}
			ratio := 0.0
			if got.N > 0 && ans.Unfinished == 0 {
				ratio = got.Mean / ans.Mean
			}
			settings[i] = s.Measured(ratio, seeds, got.Unfinished, ans.Unfinished)
		}
	}
	return settings, nil
}
