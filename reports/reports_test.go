package reports

import (
	"bytes"
	"math"
	"testing"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/golden"
	"github.com/herdsweep/herdsweep/sim"
)

func runs(t *testing.T, c grid.Cell, seeds []uint32) []sim.Result {
	t.Helper()
	var out []sim.Result
	var s sim.Sim
	for _, seed := range seeds {
		r, err := s.Run(c.Scenario, c.Policy, sim.NewMulberry32(seed), nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func articleTables(t *testing.T, many int) []analysis.ArticleTable {
	var seeds []uint32
	for s := 1; s <= many; s++ {
		seeds = append(seeds, uint32(s))
	}
	return analysis.CompareArticle(article.Tables(), func(c grid.Cell) ([]sim.Result, []sim.Result) {
		return runs(t, c, article.Seeds), runs(t, c, seeds)
	})
}

// The comparison `sweep reproduce` writes, on 30 seeds (the command's
// default is 1,000; 30 keep the test fast and the golden meaningful).
func TestArticleGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteArticle(&b, articleTables(t, 30)); err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "testdata/article.golden.md", b.String())
	var text bytes.Buffer
	if err := WriteArticleText(&text, articleTables(t, 0)); err != nil {
		t.Fatal(err)
	}
	golden.CheckString(t, "testdata/article.golden.txt", text.String())
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		got, want string
	}{
		{thousands(9423), "9,423"}, {thousands(1174.4), "1,174"}, {thousands(1000000), "1,000,000"}, {thousands(12), "12"},
		{thousands(-2500), "−2,500"}, {signed(0.04, 1), "0.0"}, {signed(-1.25, 1), "−1.2"}, {signed(3, 0), "+3"},
		{summary(analysis.T99, analysis.Summary{N: 2, Mean: 10, Lo: 9, Hi: 11, Unfinished: 1}), "10.0 [9.0, 11.0] (1 not finished)"},
		{summary(analysis.Peak, analysis.Summary{N: 1, Mean: 1174, Lo: math.NaN()}), "1,174"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
