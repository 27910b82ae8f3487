package analysis

import (
	"math"

	"github.com/herdsweep/herdsweep/article"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/sim"
)

// Figure is one number as the article computes it: the mean over seeds of
// the per-seed value, sent and peak rounded to whole numbers, times to
// 0.1 s; a row where any seed does not finish is "not finished".
type Figure struct {
	Value       float64
	NotFinished bool
}

// Spread is a metric over many seeds, set against a published figure.
type Spread struct {
	Seeds      int
	Unfinished int     // seeds that did not reach the milestone
	Mean       float64 // over the finished seeds
	SD5        float64 // standard deviation of a 5-seed mean: sd/√5
	Z          float64 // (published − Mean)/SD5; NaN when not defined
}

// ArticleRow is one row of an article table with our figures beside it.
type ArticleRow struct {
	Label     string
	Cell      grid.Cell
	Published map[article.Metric]article.Published
	Ours      map[article.Metric]Figure // over article.Seeds
	Many      map[article.Metric]Spread // over many seeds
	// Jittered: the row's policy draws its delays at random in its
	// scenario (DrawsDelays), so its figures on the article's five seeds
	// are one draw among many: matching digits there say little, and the
	// row is judged by z against the many-seed mean. A row without jitter
	// is judged by its digits, which the five seeds were searched for.
	Jittered bool
	// Exact: a row without jitter whose every figure equals the
	// published one to every printed digit. Never a jittered row.
	Exact bool
}

// DrawsDelays reports whether c's policy draws its delays at random in
// c's scenario: whether the waits one client draws after 16 rejections
// in a row differ between seeds, with the server down or up, under c's
// Retry-After. Fixed and exponential backoff draw nothing, nor does
// ra-exact against a server that always sends a Retry-After (it waits
// exactly that); a policy that jitters draws from the first rejection.
// The policy's own delays answer, so no list of families can drift from
// what the simulator does.
func DrawsDelays(c grid.Cell) bool {
	const rejections = 16
	for _, up := range []bool{false, true} {
		first, err := c.Policy.Delays(1, rejections, c.Scenario.RetryAfter, up)
		if err != nil {
			return true // not a valid policy: nothing to call exact
		}
		for seed := uint32(2); seed <= 8; seed++ {
			ds, _ := c.Policy.Delays(seed, rejections, c.Scenario.RetryAfter, up)
			for i := range ds {
				if math.Float64bits(ds[i]) != math.Float64bits(first[i]) {
					return true
				}
			}
		}
	}
	return false
}

// ArticleTable is one compared table.
type ArticleTable struct {
	article.Table
	Compared []ArticleRow
}

// Results gives the runs of a cell: on the article's five seeds, and on
// many seeds.
type Results func(c grid.Cell) (five, many []sim.Result)

func articleValue(m article.Metric, r sim.Result) (float64, bool) {
	switch m {
	case article.Sent:
		return float64(r.SentAfterRecovery), true
	case article.Peak:
		return r.PeakRPS, true
	case article.T50:
		return r.T50.At.Seconds(), r.T50.Reached
	case article.T99:
		return r.T99.At.Seconds(), r.T99.Reached
	}
	return math.NaN(), false
}

// ArticleFigure aggregates runs the way the article does.
func ArticleFigure(m article.Metric, rs []sim.Result) Figure {
	sum := 0.0
	for _, r := range rs {
		v, ok := articleValue(m, r)
		if !ok {
			return Figure{NotFinished: true}
		}
		sum += v
	}
	mean := sum / float64(len(rs))
	if m == article.Sent || m == article.Peak {
		return Figure{Value: math.Floor(mean + 0.5)} // JavaScript's Math.round
	}
	return Figure{Value: math.Floor(mean*10+0.5) / 10}
}

func spread(m article.Metric, rs []sim.Result, pub article.Published) Spread {
	var xs []float64
	for _, r := range rs {
		if v, ok := articleValue(m, r); ok {
			xs = append(xs, v)
		}
	}
	s := Summarize(xs, len(rs)-len(xs))
	sp := Spread{Seeds: len(rs), Unfinished: s.Unfinished, Mean: s.Mean, SD5: s.SD / math.Sqrt(5), Z: math.NaN()}
	if !pub.NotFinished && s.N >= 2 && sp.SD5 > 0 {
		sp.Z = (pub.Value - sp.Mean) / sp.SD5
	}
	return sp
}

// CompareArticle sets each row of the tables beside our figures.
func CompareArticle(tables []article.Table, results Results) []ArticleTable {
	var out []ArticleTable
	for _, t := range tables {
		at := ArticleTable{Table: t}
		for _, row := range t.Rows {
			five, many := results(row.Cell)
			ar := ArticleRow{Label: row.Label, Cell: row.Cell, Published: row.Published,
				Ours: map[article.Metric]Figure{}, Many: map[article.Metric]Spread{}, Jittered: DrawsDelays(row.Cell)}
			ar.Exact = !ar.Jittered
			for _, m := range t.Metrics {
				pub := row.Published[m]
				f := ArticleFigure(m, five)
				ar.Ours[m] = f
				if f.NotFinished != pub.NotFinished || (!f.NotFinished && f.Value != pub.Value) {
					ar.Exact = false
				}
				if len(many) > 0 {
					ar.Many[m] = spread(m, many, pub)
				}
			}
			at.Compared = append(at.Compared, ar)
		}
		out = append(out, at)
	}
	return out
}
