package reports

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// Decision is the report's first screen: for each scenario family the
// policy to use at each capacity, the policies to avoid with the numbers
// that say why, and the verdict on every library preset measured.
type Decision struct {
	Families   []FamilyRow
	Capacities []float64    // every capacity of any family, ascending: the columns
	Policies   []sim.Policy // the recommended policies, lettered A, B, … in order of first use
	Avoid      []AvoidRow
	Libraries  []LibraryTable
	// Reference is the scenario quoted where one example stands for all,
	// chosen by analysis.Reference (the closest to the article's among
	// those with an answer); -1 when none has one.
	Reference int
}

// FamilyRow is a family with its scenario at each capacity (indexes into
// Report.Scenarios; -1 where the family lacks the capacity).
type FamilyRow struct {
	Family analysis.Family
	At     []int // aligned with Decision.Capacities
}

// AvoidRow is a policy shape (a policy at any cap) that is not fine in
// most scenarios where it was measured: even its best cap there is
// infeasible or slower than FineFactor × the recommended policy.
type AvoidRow struct {
	Shape      sim.Policy
	Measured   int // scenarios with an answer where the shape was measured
	Infeasible int // of which its best cap is not feasible
	Slow       int // of which it is feasible but slower than FineFactor × the best
	// Example is the scenario quoted, and Cell the shape's best cell there.
	Example int
	Cell    *analysis.Aggregate
	Ratio   float64 // Cell's t99 over the recommended's; NaN when it does not finish
}

// LibraryTable is the verdict on every library preset of one family, by
// capacity.
type LibraryTable struct {
	Family   analysis.Family
	Presets  []string
	At       []int                                 // scenario of each capacity, aligned with Decision.Capacities; -1 for none
	Verdicts map[string][]*analysis.LibraryVerdict // preset → aligned with At; nil where not measured
}

// Letter names the recommended policy p in the summary: "A", "B", …, "AA".
func (d *Decision) Letter(p sim.Policy) string {
	for i, q := range d.Policies {
		if q == p {
			return letter(i)
		}
	}
	return "?"
}

func letter(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

func decide(sc []Scenario) Decision {
	d := Decision{}
	d.Capacities, d.Families = familyRows(sc)
	for _, row := range d.Families {
		for _, i := range row.At {
			if i < 0 || sc[i].Rec == nil || sc[i].Rec.Best == nil {
				continue
			}
			if p := sc[i].Rec.Best.Cell.Policy; d.Letter(p) == "?" {
				d.Policies = append(d.Policies, p)
			}
		}
	}
	scenes := make([]analysis.Scene, len(sc))
	for i, s := range sc {
		scenes[i] = analysis.Scene{Query: s.Query, Family: s.Family, Answered: s.Rec != nil && s.Rec.Best != nil}
	}
	d.Reference = analysis.Reference(scenes)
	d.Avoid = avoid(sc, d.Reference)
	for _, row := range d.Families {
		if lt := libraryTable(sc, row); len(lt.Presets) > 0 {
			d.Libraries = append(d.Libraries, lt)
		}
	}
	return d
}

// familyRows lists every capacity of sc, ascending, and each family (in
// analysis.Family's order) with its scenario at each of them.
func familyRows(sc []Scenario) ([]float64, []FamilyRow) {
	var caps []float64
	var fams []analysis.Family
	for _, s := range sc {
		if !slices.Contains(caps, s.Query.Capacity) {
			caps = append(caps, s.Query.Capacity)
		}
		if !slices.Contains(fams, s.Family) {
			fams = append(fams, s.Family)
		}
	}
	sort.Float64s(caps)
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].Less(fams[j]) })
	var rows []FamilyRow
	for _, f := range fams {
		row := FamilyRow{Family: f, At: fill(len(caps))}
		for i, s := range sc {
			if s.Family == f {
				row.At[sort.SearchFloat64s(caps, s.Query.Capacity)] = i
			}
		}
		rows = append(rows, row)
	}
	return caps, rows
}

// libraryTable gathers the verdicts on the library presets measured in a
// family's scenarios, presets in name order.
func libraryTable(sc []Scenario, row FamilyRow) LibraryTable {
	lt := LibraryTable{Family: row.Family, At: row.At, Verdicts: map[string][]*analysis.LibraryVerdict{}}
	for c, i := range row.At {
		if i < 0 {
			continue
		}
		for k := range sc[i].Library {
			v := &sc[i].Library[k]
			name := v.Preset.Cell.Policy.Preset
			if lt.Verdicts[name] == nil {
				lt.Presets = append(lt.Presets, name)
				lt.Verdicts[name] = make([]*analysis.LibraryVerdict, len(row.At))
			}
			lt.Verdicts[name][c] = v
		}
	}
	sort.Strings(lt.Presets)
	return lt
}

func fill(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	return out
}

// avoid finds the shapes (textbook policies at any cap; library presets
// have their own table) that are not fine in more than half of the
// scenarios with an answer where they were measured.
func avoid(sc []Scenario, ref int) []AvoidRow {
	var order []sim.Policy
	rows := map[sim.Policy]*AvoidRow{}
	for i, s := range sc {
		if s.Rec == nil || s.Rec.Best == nil {
			continue
		}
		done := map[sim.Policy]bool{}
		for _, a := range s.All.Ranked { // best first: the first of a shape is its best cap here
			p := a.Cell.Policy
			if p.Preset != "" {
				continue
			}
			sh := analysis.Shape(p)
			if done[sh] {
				continue
			}
			done[sh] = true
			r := rows[sh]
			if r == nil {
				r = &AvoidRow{Shape: sh, Example: -1}
				rows[sh] = r
				order = append(order, sh)
			}
			r.Measured++
			bad := false
			ratio := analysis.T99Ratio(a, s.Rec.Best)
			switch {
			case s.Rec.Query.Infeasible(a) != "":
				r.Infeasible++
				bad = true
			case ratio > analysis.FineFactor:
				r.Slow++
				bad = true
			}
			// The example: the reference scenario if the shape is bad
			// there, else the first scenario where it is bad.
			if bad && (r.Example < 0 || (i == ref && r.Example != ref)) {
				r.Example, r.Cell, r.Ratio = i, a, ratio
			}
		}
	}
	var out []AvoidRow
	for _, sh := range order {
		r := rows[sh]
		if 2*(r.Infeasible+r.Slow) > r.Measured {
			out = append(out, *r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		fa, fb := float64(a.Infeasible+a.Slow)/float64(a.Measured), float64(b.Infeasible+b.Slow)/float64(b.Measured)
		if fa != fb {
			return fa > fb
		}
		if a.Infeasible != b.Infeasible {
			return a.Infeasible > b.Infeasible
		}
		return worse(a.Ratio, b.Ratio)
	})
	return out
}

func worse(a, b float64) bool {
	if math.IsNaN(a) != math.IsNaN(b) {
		return math.IsNaN(a)
	}
	return a > b
}

// shortVerdict is a library verdict in a few words for a summary cell.
func shortVerdict(v *analysis.LibraryVerdict, rec *analysis.Recommendation) string {
	if v == nil {
		return ""
	}
	a := v.Preset
	why := rec.Query.Infeasible(a)
	var parts []string
	if why != "" {
		if strings.Contains(why, "give up") {
			if analysis.AllGaveUp(a) {
				parts = append(parts, "all give up")
			} else {
				parts = append(parts, "some give up")
			}
		}
		if strings.Contains(why, "did not bring") && !analysis.AllGaveUp(a) {
			parts = append(parts, "not finished")
		}
		if strings.Contains(why, "budget") {
			parts = append(parts, "over budget: "+fmt1(perClient(a))+" req/client")
		}
		return strings.Join(parts, ", ")
	}
	if v.Fine {
		return "fine, " + fmt2(v.Ratio) + "×"
	}
	if v.Tied {
		return fmt2(v.Ratio) + "×, not told apart"
	}
	if math.IsNaN(v.Ratio) {
		return "no answer to compare"
	}
	if !a.Cell.Policy.Jittered() {
		// Feasible, but never recommended: its ratio may be below 1.
		return "no jitter, " + fmt2(v.Ratio) + "×"
	}
	return fmt2(v.Ratio) + "× slower"
}
