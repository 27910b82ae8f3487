package reports

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/sim"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func runs(t *testing.T, c experiments.Cell, seeds []uint32) []sim.Result {
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
	return analysis.CompareArticle(experiments.ArticleTables(), func(c experiments.Cell) ([]sim.Result, []sim.Result) {
		return runs(t, c, experiments.ArticleSeeds), runs(t, c, seeds)
	})
}

// The comparison `sweep reproduce` writes, on 30 seeds (the command's
// default is 1,000; 30 keep the test fast and the golden meaningful).
func TestArticleGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteArticle(&b, articleTables(t, 30)); err != nil {
		t.Fatal(err)
	}
	golden(t, "article.golden.md", b.String())
	var text bytes.Buffer
	if err := WriteArticleText(&text, articleTables(t, 0)); err != nil {
		t.Fatal(err)
	}
	golden(t, "article.golden.txt", text.String())
}

// A report over a small dataset with an unfinished cell and too few seeds:
// it renders, with the warnings beside the numbers.
func TestReportGolden(t *testing.T) {
	var recs []analysis.Record
	var groupRows []dataset.GroupRow
	addCell := func(c experiments.Cell, seeds int) {
		for s := 1; s <= seeds; s++ {
			r := experiments.Run{Cell: c, Seed: uint32(s)}
			var sm sim.Sim
			res, err := c.Simulate(&sm, sim.NewMulberry32(r.Seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, analysis.Record{Sweep: "t", Record: dataset.Record{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Label: c.Label(), Cell: c, Result: res}})
			for g, gp := range c.Groups()[:res.NGroups] {
				groupRows = append(groupRows, dataset.GroupRow{RunKey: r.Key(), CellKey: c.Key(), Seed: r.Seed, Group: g, Share: gp.Share,
					Policy: string(gp.Policy.Kind), Label: gp.Policy.Describe(), Result: res.Groups[g]})
			}
		}
	}
	scenario := func(capacity float64) sim.Scenario {
		sc := sim.Article()
		sc.Clients, sc.Capacity, sc.Horizon = 400, capacity, 4*time.Minute
		return sc
	}
	add := func(p sim.Policy, capacity float64, seeds int) {
		addCell(experiments.Cell{Scenario: scenario(capacity), Policy: p.Normalize()}, seeds)
	}
	for _, cp := range []float64{24, 60} {
		add(sim.DefaultPolicy(sim.FullJitter), cp, 6)
		add(sim.DefaultPolicy(sim.Decorrelated), cp, 6)
		add(sim.Policy{Kind: sim.WidthJitter, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.1}, cp, 6)
		add(sim.Policy{Kind: sim.WidthJitter, Base: time.Second, Cap: time.Minute, Multiplier: 2, Width: 0.25}, cp, 6)
		add(sim.Policy{Kind: sim.Exponential, Base: time.Second, Cap: 5 * time.Minute, Multiplier: 2}, cp, 3)
	}
	grpc, _ := sim.PresetByName("grpc")
	add(grpc.Policy, 24, 6)
	mixed := experiments.Cell{Scenario: scenario(24), Policy: sim.DefaultPolicy(sim.Decorrelated)}
	mixed.Mix[0] = sim.Group{Share: 0.25, Policy: sim.Policy{Kind: sim.Fixed, Base: 5 * time.Second}}
	addCell(mixed, 6)
	costly := experiments.Cell{Scenario: scenario(60), Policy: sim.Policy{Kind: sim.Fixed, Base: 2 * time.Second}}
	costly.Scenario.RejectCost = 0.5
	addCell(costly, 3)
	aggs := analysis.Aggregates(recs)
	r := &Report{Provenance: Provenance{Tool: "test", Sim: sim.Version, ConfigHash: "0123abcd", Commands: []string{"sweep run --sweep t"},
		Created: "2026-01-02T03:04:05Z", Sweeps: []string{"t"}, Seeds: "1–6 (t)", Runs: len(recs), Files: 1},
		Warnings: []string{"3 of 10 cells have runs that did not bring 99 % of clients back within the horizon"},
		Plots:    []Plot{{File: "plots/herd.png", Title: "The herd", Caption: "What to see."}}}
	var single []*analysis.Aggregate
	for _, a := range aggs {
		if !a.Cell.Mixed() {
			single = append(single, a)
		}
	}
	for _, q := range analysis.Groups(single) {
		rk, err := analysis.Recommend(single, q)
		if err != nil {
			t.Fatal(err)
		}
		r.Capacities = append(r.Capacities, CapacityTable{Query: q, Situations: analysis.Table5(single, q), Ranking: rk})
		if v := analysis.LibraryVerdicts(single, q); len(v) > 0 {
			r.Library = append(r.Library, LibraryTable{Query: q, Verdicts: v})
		}
	}
	r.Mixed = analysis.MixedFleets(aggs, groupRows)
	r.Recovery = analysis.RecoveryGrids(single)
	if len(r.Library) != 1 || len(r.Mixed) != 1 || len(r.Recovery) != 1 {
		t.Fatalf("library %d, mixed %d, recovery %d: want one of each", len(r.Library), len(r.Mixed), len(r.Recovery))
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"not finished", "seeds: too few for a 95 % interval", "not feasible: ", "did not bring 99 % of clients back within"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	golden(t, "report.golden.md", out)
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
