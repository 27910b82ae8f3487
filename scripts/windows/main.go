// Command windows counts the windows of five consecutive seeds under which
// the article's rows come out to every printed digit, as they do under
// seeds 206–210 (article.Seeds): how many such windows there
// are, and whether the rows reproduced together are independent
// confirmations or one fit.
//
//	go run ./scripts/windows [-to 1000000]
//
// The rows are those that seeds 206–210 reproduce exactly. The first of
// them (fixed 5 s) is run on every seed 1 … to; for each window of five
// consecutive seeds that reproduces it, the other rows are run on the same
// five seeds. It prints the count, the first and last windows, and how many
// of those windows reproduce each other row.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

type row struct {
	name    string
	cell    grid.Cell
	metrics []article.Metric
	pub     map[article.Metric]article.Published
}

var s sim.Sim

func run(c grid.Cell, seed uint32) sim.Result {
	r, err := c.Simulate(&s, sim.NewMulberry32(seed), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return r
}

func (rw *row) exact(res []sim.Result) bool {
	for _, m := range rw.metrics {
		f := analysis.ArticleFigure(m, res)
		p := rw.pub[m]
		if f.NotFinished != p.NotFinished || (!f.NotFinished && f.Value != p.Value) {
			return false
		}
	}
	return true
}

func (rw *row) window(start uint32) []sim.Result {
	var res []sim.Result
	for s := start; s < start+5; s++ {
		res = append(res, run(rw.cell, s))
	}
	return res
}

func main() {
	to := flag.Int("to", 1000000, "last seed")
	flag.Parse()
	// Every row (a cell with every metric any table prints for it) that
	// seeds 206–210 reproduce to the digit.
	var rows []*row
	byKey := map[string]*row{}
	for _, t := range article.Tables() {
		for _, r := range t.Rows {
			k := r.Cell.Key()
			rw := byKey[k]
			if rw == nil {
				rw = &row{name: t.ID + " " + r.Label, cell: r.Cell, pub: map[article.Metric]article.Published{}}
				byKey[k] = rw
				rows = append(rows, rw)
			}
			for _, m := range t.Metrics {
				if _, ok := rw.pub[m]; !ok {
					rw.metrics = append(rw.metrics, m)
					rw.pub[m] = r.Published[m]
				}
			}
		}
	}
	var exact []*row
	for _, rw := range rows {
		if rw.exact(rw.window(article.Seeds[0])) {
			exact = append(exact, rw)
		}
	}
	first := exact[0]
	fmt.Printf("rows seeds 206–210 reproduce exactly: %d\n", len(exact))
	res := make([]sim.Result, *to+1)
	for seed := 1; seed <= *to; seed++ {
		res[seed] = run(first.cell, uint32(seed))
	}
	n := 0
	also := make([]int, len(exact))
	var starts []int
	for start := 1; start+4 <= *to; start++ {
		if !first.exact(res[start : start+5]) {
			continue
		}
		n++
		starts = append(starts, start)
		for i, rw := range exact {
			if i == 0 || rw.exact(rw.window(uint32(start))) {
				also[i]++
			}
		}
	}
	fmt.Printf("windows of five consecutive seeds starting at 1 … %d that reproduce %s: %d\n", *to-4, first.name, n)
	if n > 0 {
		fmt.Printf("first starts at %d, last at %d\n", starts[0], starts[len(starts)-1])
	}
	for i, rw := range exact {
		fmt.Printf("  of those, reproducing %s too: %d\n", rw.name, also[i])
	}
	fmt.Printf("starts: %v\n", starts)
}
