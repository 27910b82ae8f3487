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
	var pols []sim.Policy
	ticks := map[float64]bool{}
	horizon := 0.0
	for _, qs := range byPanel {
		for _, q := range qs {
			for _, a := range q.Ranked {
				if !slices.Contains(pols, a.Cell.Policy) {
					pols = append(pols, a.Cell.Policy)
				}
			}
		}
	}
	// lines[pi][i]: policy i's points in panel pi; stuck[pi]: the hollow dots.
	lines := make([][]Series, len(byPanel))
	stuck := make([]Series, len(byPanel))
	for pi, qs := range byPanel {
		lines[pi] = make([]Series, len(pols))
		for i, p := range pols {
			lines[pi][i] = Series{Name: name(p), Colour: i, Mark: Line}
		}
		stuck[pi] = Series{Name: "not back in some seed (drawn at the horizon)", Colour: -1, Mark: Hollow}
		for _, q := range qs {
			sc := q.Scenario
			x := (sc.RecoverAt - sc.OutageStart).Seconds()
			w := (sc.Horizon - sc.RecoverAt).Seconds()
			horizon = max(horizon, w)
			ticks[x] = true
			for _, a := range q.Ranked {
				i := slices.Index(pols, a.Cell.Policy)
				f.from(a)
				if b, n := analysis.Back(a); b < n {
					stuck[pi].Points = append(stuck[pi].Points, Point{X: x, Y: w, Lo: nan(), Hi: nan()})
					continue
				}
				s := a.Summary(analysis.Recovered)
				lo, hi, _ := s.Bounds()
				lines[pi][i].Points = append(lines[pi][i].Points, Point{X: x, Y: s.Mean, Lo: lo, Hi: hi})
			}
		}
	}
	// Policies with the same points in every panel would hide each other:
	// one line stands for them, its legend says so and the caption names
	// them.
	same := make([]int, len(pols)) // the first policy with i's points everywhere
	var shared []string
	for i := range pols {
		same[i] = i
		for j := range i {
			if same[j] == j && samePoints(lines, i, j) {
				same[i] = j
				break
			}
		}
	}
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
	for pi := range byPanel {
		pn := Panel{Title: panels[pi]}
		for i, s := range lines[pi] {
			if same[i] == i && len(s.Points) > 0 {
				pn.Series = append(pn.Series, s)
			}
		}
		if len(stuck[pi].Points) > 0 {
			pn.Series = append(pn.Series, stuck[pi])
		}
		f.Panels = append(f.Panels, pn)
	}
	f.X.Ticks = sortedKeys(ticks)
	f.HLines = []Ref{{horizon, fmt.Sprintf("horizon: %g s after recovery", horizon)}}
	f.Caption = fmt.Sprintf("%s: the mean time after recovery until back to steady state (the outage's waiting clients answered or given up, the queue at its ordinary length, not stuck; in whole %v windows), against the outage's length, a line per policy, a panel per load; bands are 95 %% intervals over the seeds. Grey hollow dots at the horizon are policies not back in some seed (the table above names them): stuck, or still draining.", server, sim.RecoveryWindow)
	if len(shared) > 0 {
		f.Caption += " " + SharedLines + strings.Join(shared, "; ") + "."
	}
	return f
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
