package plots

import (
	"fmt"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// QueueRecovery is the time back to steady state against the outage's
// length, a line per policy and a panel per load, for the scenarios of one
// queueing server (analysis.SameServer), each a label and its scenarios
// in order. A policy back in every seed is a point with its 95 % interval;
// one not back in some seed is a hollow grey dot at the horizon: never
// drawn as fast. name names a policy in the legend.
func QueueRecovery(server string, panels []string, byPanel [][]analysis.QueueScenario, name func(sim.Policy) string) Figure {
	f := Figure{Name: "queue-recovery", Title: "Back to steady state after an outage — " + server,
		X: Axis{Label: "outage (s)"}, Y: Axis{Label: "back to steady state (s after recovery)"}}
	pols := queuePolicies(byPanel)
	ql := newQueueLines(&f, byPanel, pols, name)
	// Policies with the same points in every panel would hide each other:
	// one line stands for them, its legend says so and the caption names
	// them.
	same := sameLines(ql.lines, len(pols))
	shared := shareLines(ql.lines, same, pols, name)
	for pi := range byPanel {
		f.Panels = append(f.Panels, ql.panel(pi, panels[pi], same))
	}
	f.X.Ticks = sortedKeys(ql.ticks)
	f.HLines = []Ref{{ql.horizon, fmt.Sprintf("horizon: %g s after recovery", ql.horizon)}}
	f.Caption = fmt.Sprintf("%s: the mean time after recovery until back to steady state (the outage's waiting clients answered or given up, the queue at its ordinary length, not stuck; in whole %v windows), against the outage's length, a line per policy, a panel per load; bands are 95 %% intervals over the seeds. Grey hollow dots at the horizon are policies not back in some seed (the table above names them): stuck, or still draining.", server, sim.RecoveryWindow)
	if len(shared) > 0 {
		f.Caption += " " + SharedLines + strings.Join(shared, "; ") + "."
	}
	return f
}

// queueLines are QueueRecovery's series before they are put in panels.
type queueLines struct {
	lines   [][]Series       // lines[pi][i]: policy i's points in panel pi
	stuck   []Series         // stuck[pi]: panel pi's hollow dots
	ticks   map[float64]bool // the outages' lengths (s)
	horizon float64          // the longest time observed after recovery (s)
}

// queuePolicies are the policies ranked in the scenarios of byPanel, in
// the order first met.
func queuePolicies(byPanel [][]analysis.QueueScenario) []sim.Policy {
	var pols []sim.Policy
	for _, qs := range byPanel {
		for _, q := range qs {
			for _, a := range q.Ranked {
				if !slices.Contains(pols, a.Cell.Policy) {
					pols = append(pols, a.Cell.Policy)
				}
			}
		}
	}
	return pols
}

// newQueueLines draws each policy of pols in each scenario of byPanel at
// the outage's length: a point with its 95 % interval on the policy's
// line when it is back in every seed, else a hollow dot at the horizon.
// f records the runs drawn.
func newQueueLines(f *Figure, byPanel [][]analysis.QueueScenario, pols []sim.Policy, name func(sim.Policy) string) queueLines {
	ql := queueLines{lines: make([][]Series, len(byPanel)), stuck: make([]Series, len(byPanel)), ticks: map[float64]bool{}}
	for pi, qs := range byPanel {
		ql.lines[pi] = make([]Series, len(pols))
		for i, p := range pols {
			ql.lines[pi][i] = Series{Name: name(p), Colour: i, Mark: Line}
		}
		ql.stuck[pi] = Series{Name: "not back in some seed (drawn at the horizon)", Colour: -1, Mark: Hollow}
		for _, q := range qs {
			sc := q.Scenario
			x := (sc.RecoverAt - sc.OutageStart).Seconds()
			w := (sc.Horizon - sc.RecoverAt).Seconds()
			ql.horizon = max(ql.horizon, w)
			ql.ticks[x] = true
			for _, a := range q.Ranked {
				i := slices.Index(pols, a.Cell.Policy)
				f.from(a)
				if b, n := analysis.Back(a); b < n {
					ql.stuck[pi].Points = append(ql.stuck[pi].Points, Point{X: x, Y: w, Lo: nan(), Hi: nan()})
					continue
				}
				s := a.Summary(analysis.Recovered)
				lo, hi, _ := s.Bounds()
				ql.lines[pi][i].Points = append(ql.lines[pi][i].Points, Point{X: x, Y: s.Mean, Lo: lo, Hi: hi})
			}
		}
	}
	return ql
}

// sameLines returns, for each of n policies, the first policy with its
// points in every panel of lines (itself when none before it has them):
// one line stands for them all.
func sameLines(lines [][]Series, n int) []int {
	same := make([]int, n)
	for i := range n {
		same[i] = i
		for j := range i {
			if same[j] == j && samePoints(lines, i, j) {
				same[i] = j
				break
			}
		}
	}
	return same
}

// shareLines adds to the legend of each drawn line that stands for others
// (same) how many, "A (+2)", and returns the sets it stands for, "A = B =
// C", for the caption.
func shareLines(lines [][]Series, same []int, pols []sim.Policy, name func(sim.Policy) string) []string {
	var shared []string
	for j := range pols {
		var others []string
		for i := j + 1; i < len(pols); i++ {
			if same[i] == j {
				others = append(others, name(pols[i]))
			}
		}
		if same[j] != j || len(others) == 0 || !drawn(lines, j) {
			continue
		}
		for pi := range lines {
			lines[pi][j].Name += fmt.Sprintf(" (+%d)", len(others))
		}
		shared = append(shared, name(pols[j])+" = "+strings.Join(others, " = "))
	}
	return shared
}

// panel is panel pi, titled title: the lines with points there but those
// another line stands for (same), then the hollow dots, if any.
func (ql queueLines) panel(pi int, title string, same []int) Panel {
	pn := Panel{Title: title}
	for i, s := range ql.lines[pi] {
		if same[i] == i && len(s.Points) > 0 {
			pn.Series = append(pn.Series, s)
		}
	}
	if len(ql.stuck[pi].Points) > 0 {
		pn.Series = append(pn.Series, ql.stuck[pi])
	}
	return pn
}

// SharedLines opens the caption's list of policies drawn as one line
// (each set "A = B = C", sets separated by "; "), after the legend's
// "A (+2)".
const SharedLines = "(+N): a line that stands for N more policies with the same times everywhere: "

// samePoints reports whether policies i and j have the same points in
// every panel.
func samePoints(lines [][]Series, i, j int) bool {
	for _, l := range lines {
		if !slices.Equal(l[i].Points, l[j].Points) {
			return false
		}
	}
	return true
}

// drawn reports whether policy i has a point in some panel.
func drawn(lines [][]Series, i int) bool {
	for _, l := range lines {
		if len(l[i].Points) > 0 {
			return true
		}
	}
	return false
}
