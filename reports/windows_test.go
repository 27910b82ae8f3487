package reports

import (
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/sim"
)

// What ReproductionNote says of the seeds, on the first thousand: seeds
// 206–210 are the first window of five consecutive seeds that reproduces
// the fixed-5 s row to every printed digit, and the same window reproduces
// every other row that is exact. (The count over a million seeds is
// measured by scripts/windows.)
func TestArticleSeedsAreTheFirstWindow(t *testing.T) {
	t1 := article.Tables()[0]
	row := t1.Rows[0] // fixed 5 s
	if row.Label != "fixed 5 s" {
		t.Fatalf("table 1 row 1 is %q", row.Label)
	}
	var res []sim.Result
	var s sim.Sim
	for seed := uint32(1); seed <= 214; seed++ {
		r, err := row.Cell.Simulate(&s, sim.NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	exact := func(rs []sim.Result, pub map[article.Metric]article.Published, ms []article.Metric) bool {
		for _, m := range ms {
			f := analysis.ArticleFigure(m, rs)
			if f.NotFinished != pub[m].NotFinished || (!f.NotFinished && f.Value != pub[m].Value) {
				return false
			}
		}
		return true
	}
	first := 0
	for start := 1; start+4 <= len(res) && first == 0; start++ {
		if exact(res[start-1:start+4], row.Published, t1.Metrics) {
			first = start
		}
	}
	if first != int(article.Seeds[0]) {
		t.Fatalf("the first window reproducing fixed 5 s starts at %d, want %d", first, article.Seeds[0])
	}
	for _, tb := range articleTables(t, 0) {
		for _, r := range tb.Compared {
			if r.Cell.Policy.Jittered() && r.Cell.Policy.Kind != sim.RAExact {
				continue
			}
			if !r.Exact {
				t.Errorf("%s %s: not exact with seeds 206–210", tb.ID, r.Label)
			}
		}
	}
}
