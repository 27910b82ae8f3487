package plots

import (
	"fmt"
	"slices"

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
	for pi, qs := range byPanel {
		pn := Panel{Title: panels[pi]}
		lines := make([]Series, len(pols))
		for i, p := range pols {
			lines[i] = Series{Name: name(p), Colour: i, Mark: Line}
		}
		stuck := Series{Name: "not back in some seed (drawn at the horizon)", Colour: -1, Mark: Hollow}
		for _, q := range qs {
			sc := q.Scenario
			x := (sc.RecoverAt - sc.OutageStart).Seconds()
			w := (sc.Horizon - sc.RecoverAt).Seconds()
			horizon = max(horizon, w)
			ticks[x] = true
			for _, a := range q.Ranked {
				i := slices.Index(pols, a.Cell.Policy)
				if b, n := analysis.Back(a); b < n {
					stuck.Points = append(stuck.Points, Point{X: x, Y: w, Lo: nan(), Hi: nan()})
					continue
				}
				s := a.Summary(analysis.Recovered)
				lo, hi, _ := s.Bounds()
				lines[i].Points = append(lines[i].Points, Point{X: x, Y: s.Mean, Lo: lo, Hi: hi})
			}
		}
		for _, s := range lines {
			if len(s.Points) > 0 {
				pn.Series = append(pn.Series, s)
			}
		}
		if len(stuck.Points) > 0 {
			pn.Series = append(pn.Series, stuck)
		}
		f.Panels = append(f.Panels, pn)
	}
	f.X.Ticks = sortedKeys(ticks)
	f.HLines = []Ref{{horizon, fmt.Sprintf("horizon: %g s after recovery", horizon)}}
	f.Caption = fmt.Sprintf("%s: the mean time after recovery from which goodput stays within %g %% of demand, against the outage's length, a line per policy, a panel per load; bands are 95 %% intervals over the seeds. Grey hollow dots at the horizon are policies not back in some seed (the table above names them): stuck, or still draining.", server, 100*sim.RecoveryBand)
	return f
}
