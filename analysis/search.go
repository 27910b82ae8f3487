package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"

	"github.com/herdsweep/herdsweep/sim"
)

// Measure returns the records of the given runs, from wherever the caller
// finds them: a dataset that holds exactly those runs, or the simulator.
// The analysis never decides that on its own.
type Measure func(ctx context.Context, runs []grid.Run) ([]Record, error)

// Seeding is how many seeds a search gives its candidates: Initial to every
// candidate, then doubling for the contenders (the best and those not
// separated from it) until the winner is separated or Max is reached.
// Seeds are 1, 2, …: the same runs whatever is cached.
type Seeding struct{ Initial, Max int }

// DefaultSeeding: 10 seeds for every candidate, up to 40 for contenders.
var DefaultSeeding = Seeding{Initial: 10, Max: 40}

// Search answers q over the candidate cells: every candidate runs
// s.Initial seeds; while the best is not separated from a contender, the
// contenders run twice as many seeds, up to s.Max. The answer is
// Recommend's over every run measured.
func Search(ctx context.Context, space []grid.Cell, q Query, s Seeding, measure Measure) (*Recommendation, []*Aggregate, error) {
	return search(ctx, space, q, s, &measuredRuns{measure: measure})
}

// SearchStored is Search over runs already stored: aggs are cells of a
// dataset over their seeds, and a run Search asks for is read from them
// (its cell's seeds 1…n). It answers what `sweep recommend` answers over
// that dataset; ok is false when the dataset lacks a run Search asks for.
func SearchStored(space []grid.Cell, q Query, s Seeding, aggs []*Aggregate) (rec *Recommendation, ok bool, err error) {
	src := &storedRuns{stored: map[string]*Aggregate{}, n: map[string]int{}}
	for _, a := range aggs {
		src.stored[a.CellKey] = a
	}
	rec, _, err = search(context.Background(), space, q, s, src)
	if src.missing {
		return nil, false, nil
	}
	return rec, err == nil, err
}

// runSource is where a search's runs come from: it makes the runs asked
// for available and aggregates every run made available so far.
type runSource interface {
	add(ctx context.Context, runs []grid.Run) error
	aggregates() []*Aggregate
}

// measuredRuns are runs asked of a Measure.
type measuredRuns struct {
	measure Measure
	recs    []*Record // every run measured, where measure put it: records are large
}

func (m *measuredRuns) add(ctx context.Context, runs []grid.Run) error {
	got, err := m.measure(ctx, runs)
	if err != nil {
		return err
	}
	for i := range got {
		m.recs = append(m.recs, &got[i])
	}
	return nil
}

func (m *measuredRuns) aggregates() []*Aggregate { return aggregates(m.recs) }

// storedRuns are runs read from stored aggregates: a cell asked for
// seeds 1…n is its aggregate over those seeds.
type storedRuns struct {
	stored  map[string]*Aggregate // cell key → the cell over every stored seed
	n       map[string]int        // cell key → seeds asked for
	order   []string
	missing bool // a run asked for is not stored
}

func (r *storedRuns) add(_ context.Context, runs []grid.Run) error {
	for _, run := range runs {
		k := run.Cell.Key()
		a := r.stored[k]
		if a == nil || !slices.Contains(a.Seeds, run.Seed) {
			r.missing = true
			return errNotStored
		}
		if _, seen := r.n[k]; !seen {
			r.order = append(r.order, k)
		}
		r.n[k] = max(r.n[k], int(run.Seed))
	}
	return nil
}

func (r *storedRuns) aggregates() []*Aggregate {
	out := make([]*Aggregate, 0, len(r.order))
	for _, k := range r.order {
		out = append(out, r.stored[k].firstSeeds(r.n[k]))
	}
	return out
}

var errNotStored = errors.New("a run the search asks for is not stored")

func search(ctx context.Context, space []grid.Cell, q Query, s Seeding, src runSource) (*Recommendation, []*Aggregate, error) {
	if s.Initial < 2 || s.Max < s.Initial {
		return nil, nil, fmt.Errorf("seeding %d..%d: want 2 ≤ initial ≤ max", s.Initial, s.Max)
	}
	if len(space) == 0 {
		return nil, nil, fmt.Errorf("no candidates")
	}
	m, err := q.Objective.Metric()
	if err != nil {
		return nil, nil, err
	}
	if why := Impossible(space[0].Scenario); why != "" {
		return &Recommendation{Query: q, Scenario: space[0].Scenario, Metric: m, NoAnswer: why, Why: map[string]string{}}, nil, nil
	}
	if err := src.add(ctx, Runs(space, 1, s.Initial)); err != nil {
		return nil, nil, err
	}
	for {
		aggs := src.aggregates()
		rec, err := Recommend(aggs, q)
		if err != nil {
			return nil, nil, err
		}
		if rec.Best == nil || rec.Separated() {
			return rec, aggs, nil
		}
		// The contenders (the best, those not separated from it, and its
		// identical twins) run twice the seeds of the best-seeded one.
		cont := rec.Contenders()
		most := 0
		for _, a := range cont {
			most = max(most, len(a.Seeds))
		}
		next := min(2*most, s.Max)
		var more []grid.Run
		for _, a := range cont {
			more = append(more, Runs([]grid.Cell{a.Cell}, len(a.Seeds)+1, next)...)
		}
		if len(more) == 0 {
			return rec, aggs, nil
		}
		if err := src.add(ctx, more); err != nil {
			return nil, nil, err
		}
	}
}

// Runs lists the runs of cells with seeds from … to, cell by cell.
func Runs(cells []grid.Cell, from, to int) []grid.Run {
	out := make([]grid.Run, 0, len(cells)*(to-from+1))
	for _, c := range cells {
		for s := from; s <= to; s++ {
			out = append(out, grid.Run{Cell: c, Seed: uint32(s)})
		}
	}
	return out
}

// Point is one scenario of a robust recommendation: its best feasible
// candidate and the winner's regret there.
type Point struct {
	Scenario sim.Scenario
	Best     *Aggregate // nil when nothing is feasible there
	Winner   *Aggregate // the robust winner's cell at this point
	Regret   float64    // Winner's t99 over Best's (1 = the best here)
}

// Robust is the answer over a range of scenarios: the candidate feasible
// at every point whose worst ratio to the best t99 (its regret) is least.
type Robust struct {
	Query       Query
	Points      []Point
	Winner      grid.Cell // zero when none is feasible everywhere
	WorstRegret float64
	MeanRegret  float64
	Feasible    int    // candidates feasible at every point
	NoAnswer    string // why none is feasible everywhere
}

// SearchRange answers q for every scenario of points with the candidate
// space of each, on s.Initial seeds, and picks the policy of least
// worst-case regret among those feasible at every point. Candidates are
// matched across points by their policy.
func SearchRange(ctx context.Context, points []sim.Scenario, q Query, s Seeding, measure Measure) (*Robust, error) {
	cands := robustCands{byPolicy: map[sim.Policy]*robustCand{}}
	rb := &Robust{Query: q}
	var recs []*Recommendation
	for _, sc := range points {
		if why := Impossible(sc); why != "" {
			rb.NoAnswer = pointWords(sc) + ": " + why
			return rb, nil
		}
		qp := queryAt(q, sc)
		rec, aggs, err := recommendAt(ctx, sc, qp, s, measure)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		rb.Points = append(rb.Points, Point{Scenario: sc, Best: rec.Best})
		cands.add(aggs, qp, rec)
	}
	best, feasible := cands.best(len(points))
	rb.Feasible = feasible
	if best == nil {
		rb.NoAnswer = noRobustAnswer(points, recs)
		return rb, nil
	}
	rb.Winner = best.cell
	rb.WorstRegret, rb.MeanRegret = best.score()
	for i := range rb.Points {
		rb.Points[i].Winner = best.aggs[i]
		rb.Points[i].Regret = best.regret[i]
	}
	return rb, nil
}

// pointWords names a point of a range: "at 40 req/s and 300 clients".
func pointWords(sc sim.Scenario) string {
	return fmt.Sprintf("at %s req/s and %s", num.Short(sc.Capacity), num.Plural(sc.Clients, "client"))
}

// queryAt is q asked at the point sc: its capacity, clients, outage and
// Retry-After.
func queryAt(q Query, sc sim.Scenario) Query {
	q.Capacity, q.Clients, q.Outage, q.RetryAfter = sc.Capacity, sc.Clients, sc.RecoverAt, sc.RetryAfter
	return q
}

// recommendAt measures the candidate space of sc on s.Initial seeds and
// answers q (asked at sc) over it.
func recommendAt(ctx context.Context, sc sim.Scenario, q Query, s Seeding, measure Measure) (*Recommendation, []*Aggregate, error) {
	rs, err := measure(ctx, Runs(grid.CandidateSpace(sc), 1, s.Initial))
	if err != nil {
		return nil, nil, err
	}
	aggs := Aggregates(rs)
	rec, err := Recommend(aggs, q)
	if err != nil {
		return nil, nil, err
	}
	return rec, aggs, nil
}

// noRobustAnswer says why no policy is feasible at every point of a
// range: the points where none is, or that each point has one but none
// is feasible at all of them.
func noRobustAnswer(points []sim.Scenario, recs []*Recommendation) string {
	var bad []string
	for i, rec := range recs {
		if rec.Best == nil {
			bad = append(bad, pointWords(points[i])+": "+rec.NoAnswer)
		}
	}
	if len(bad) == 0 {
		bad = append(bad, "every point has a feasible policy, but none is feasible at all of them; narrow the range")
	}
	return fmt.Sprint(bad)
}

// robustCand is one policy of a range's candidate spaces: its cell at the
// first point, its aggregate and regret at each point so far, and whether
// it has been feasible at every one.
type robustCand struct {
	cell   grid.Cell
	aggs   []*Aggregate
	ok     bool
	regret []float64 // its t99 over the point's best t99
}

// score is the candidate's worst and mean regret.
func (c *robustCand) score() (worst, mean float64) {
	w, sum := 0.0, 0.0
	for _, r := range c.regret {
		w, sum = math.Max(w, r), sum+r
	}
	return w, sum / float64(len(c.regret))
}

// beats reports whether c is a better robust answer than b: less worst
// regret, then less mean regret, then the first canonical cell.
func (c *robustCand) beats(b *robustCand) bool {
	w, m := c.score()
	bw, bm := b.score()
	return w < bw || (w == bw && (m < bm || (m == bm && c.cell.Canonical() < b.cell.Canonical())))
}

// robustCands are a range's candidates, by policy, in the order first met.
type robustCands struct {
	byPolicy map[sim.Policy]*robustCand
	order    []sim.Policy
}

// add adds a point's aggregates, answered by rec for q, to their policies'
// candidates.
func (cs *robustCands) add(aggs []*Aggregate, q Query, rec *Recommendation) {
	for _, a := range aggs {
		c, seen := cs.byPolicy[a.Cell.Policy]
		if !seen {
			c = &robustCand{cell: a.Cell, ok: true}
			cs.byPolicy[a.Cell.Policy] = c
			cs.order = append(cs.order, a.Cell.Policy)
		}
		c.aggs = append(c.aggs, a)
		if q.Infeasible(a) != "" || rec.Best == nil {
			c.ok = false
			continue
		}
		c.regret = append(c.regret, a.Summary(T99).Mean/rec.Best.Summary(T99).Mean)
	}
}

// best is the candidate that beats every other feasible at all n points
// (nil when none is), and how many are.
func (cs *robustCands) best(n int) (best *robustCand, feasible int) {
	for _, p := range cs.order {
		c := cs.byPolicy[p]
		if !c.ok || len(c.aggs) != n {
			continue
		}
		feasible++
		if best == nil || c.beats(best) {
			best = c
		}
	}
	return best, feasible
}

// Grid returns a sensible grid inside [lo, hi]: lo, hi and geometric steps
// of at most a factor of 2 between them.
func Grid(lo, hi float64) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	n := int(math.Ceil(math.Log2(hi / lo)))
	out := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		x := lo * math.Pow(hi/lo, float64(i)/float64(n))
		out = append(out, math.Round(x*100)/100)
	}
	out[len(out)-1] = hi
	sort.Float64s(out)
	return out
}
