package plots

import (
	"fmt"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/sim"
)

// Brownout is a brownout scenario (analysis.Brownouts) in one figure: the
// success rate and the load amplification against the failure share, a
// panel each with its own y axis, a line per policy, bands the 95 %
// intervals over the seeds. name names a policy in the legend; server says
// in words what the server is.
func Brownout(server string, b analysis.BrownoutScenario, name func(sim.Policy) string) Figure {
	f := Figure{Name: "brownout", Title: "Brownout — " + server, X: Axis{Label: "failure share (% of the requests served)"}}
	succ := Panel{Title: "success rate", Y: &Axis{Label: "requests that succeeded (%)"}}
	amp := Panel{Title: "load amplification", Y: &Axis{Label: "attempts sent per request"}}
	for i, p := range b.Policies {
		s := Series{Name: name(p), Colour: i, Mark: Line}
		a := s
		for j, share := range b.Shares {
			c := b.Cells[i][j]
			if c == nil {
				continue
			}
			f.from(c)
			x := 100 * share
			ss := c.Summary(analysis.SuccessRate)
			lo, hi, _ := ss.Bounds()
			s.Points = append(s.Points, Point{X: x, Y: 100 * ss.Mean, Lo: 100 * lo, Hi: 100 * hi})
			as := c.Summary(analysis.Amplification)
			lo, hi, _ = as.Bounds()
			a.Points = append(a.Points, Point{X: x, Y: as.Mean, Lo: lo, Hi: hi})
		}
		succ.Series = append(succ.Series, s)
		amp.Series = append(amp.Series, a)
	}
	f.Panels = []Panel{succ, amp}
	for _, share := range b.Shares {
		f.X.Ticks = append(f.X.Ticks, 100*share)
	}
	overload := "where that load exceeds the server's capacity, requests wait past their clients' timeout and success falls."
	if b.Scenario.Server() == sim.CountingServer {
		overload = "where that load exceeds the server's capacity, the excess is turned away at once (429s) and retried, and attempt limits run out sooner."
	}
	f.Caption = fmt.Sprintf("%s, failing a share of the requests it serves whatever the load (a 503): left, the share of requests that succeeded by the horizon; right, the attempts sent per request (load amplification); a line per policy against the failure share, bands are 95 %% intervals over the seeds. A policy of at most N retries sends (1 − p^(N+1))/(1 − p) attempts per request while the server keeps up (N + 1 at 100 %%); %s", server, overload)
	return f
}
