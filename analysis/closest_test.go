package analysis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// JudgeClosest runs the answer and each closest built-in setting on the
// same seeds, says in each such setting's text the closest one's mean t99
// over the answer's as measured, and leaves every other setting as it was.
func TestJudgeClosest(t *testing.T) {
	t.Parallel()
	sc := smallScenario(40, 300)
	const seeds = 4
	for _, answer := range []sim.Policy{
		{Kind: sim.GRPC, Base: 500 * time.Millisecond, Multiplier: 2, Cap: 10 * time.Second, Width: 0.2},
		{Kind: sim.Decorrelated, Base: time.Second, Cap: 30 * time.Second, RetryTokens: 10, RetryTokenRatio: 0.1, ClientsPerProcess: 100},
	} {
		answer = answer.Normalize()
		var asked []grid.Run
		measure := func(ctx context.Context, runs []grid.Run) ([]Record, error) {
			asked = append(asked, runs...)
			return simulate(ctx, runs)
		}
		got, err := JudgeClosest(context.Background(), sc, answer, seeds, measure)
		if err != nil {
			t.Fatal(err)
		}
		want := answer.Settings()
		cells := []grid.Cell{{Scenario: sc, Policy: answer}}
		for _, s := range want {
			if s.Closest != nil {
				cells = append(cells, grid.Cell{Scenario: sc, Policy: s.Closest.Policy})
			}
		}
		if len(cells) != 2 {
			t.Fatalf("%s: %d closest settings, want 1", answer.Short(), len(cells)-1)
		}
		if len(asked) != len(cells)*seeds {
			t.Errorf("%s: asked for %d runs, want %d", answer.Short(), len(asked), len(cells)*seeds)
		}
		recs, err := simulate(context.Background(), Runs(cells, 1, seeds))
		if err != nil {
			t.Fatal(err)
		}
		aggs := Aggregates(recs)
		ans, closest := aggs[0].Summary(T99), aggs[1].Summary(T99)
		ratio := closest.Mean / ans.Mean
		words := fmt.Sprintf("(t99 %.2f× the answer's, measured over %d seeds)", ratio, seeds)
		if ans.Unfinished > 0 { // clients that give up: t99 is not reached
			ratio, words = 0, fmt.Sprintf("(not compared: the answer's t99 is not reached in %d of %d seeds, measured)", ans.Unfinished, seeds)
		}
		for i, s := range want {
			if s.Closest == nil {
				continue
			}
			if !strings.HasSuffix(got[i].How, words) {
				t.Errorf("%s: %s: %q, want %s", answer.Short(), s.Library, got[i].How, words)
			}
			want[i] = s.Measured(ratio, seeds, closest.Unfinished, ans.Unfinished)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: settings (-want +got):\n%s", answer.Short(), d)
		}
	}
}
