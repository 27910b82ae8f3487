package plots

import (
	"fmt"

	"github.com/herdsweep/herdsweep/analysis"
)

// LayerAmplification is the attempts per client at each service of a
// chain (A, B, …, the server: a categorical x), on a log scale, a line
// per chain (named by who retries) with its 95 % interval, a panel per
// scenario of chains (panels names them). Only scenarios whose chains
// have the same number of services share a figure; the caller groups
// them.
func LayerAmplification(panels []string, studies []analysis.LayerScenario) Figure {
	n := 0
	for _, ls := range studies {
		n = max(n, ls.Services)
	}
	f := Figure{Name: "layers", Title: "Retries across layers: attempts at each service per client",
		X: Axis{Label: "service (the clients call the first)"}, Y: Axis{Label: "attempts per client", Log: true}}
	for j := range n {
		f.X.Categories = append(f.X.Categories, analysis.ServiceName(j, n))
	}
	var names []string
	for i, ls := range studies {
		p := Panel{Title: panels[i]}
		for _, a := range ls.Rows {
			name := ls.Words(a)
			colour := index(&names, name)
			s := Series{Name: name, Colour: colour, Mark: Line}
			last := analysis.ChainServer(a)
			for j := range last + 1 {
				sum := a.Summary(analysis.LayerAmp[j])
				lo, hi, _ := sum.Bounds()
				x := j
				if j == last { // a shorter chain's server is the server all the same
					x = n - 1
				}
				s.Points = append(s.Points, Point{X: float64(x), Y: sum.Mean, Lo: lo, Hi: hi})
			}
			f.from(a)
			p.Series = append(p.Series, s)
		}
		f.Panels = append(f.Panels, p)
	}
	f.Caption = fmt.Sprintf("Attempts per client that reach each service of the chain clients → %s, a line per chain (who retries), a panel per server; log scale, bands are 95 %% intervals over the seeds.", chainArrow(n))
	for i, ls := range studies {
		if len(ls.Rows) < 2 {
			continue
		}
		lo, hi := ls.Rows[0], ls.Rows[len(ls.Rows)-1] // ranked by the attempts at the server
		f.Caption += fmt.Sprintf(" %s: the server receives %s attempts per client when %s, %s when %s.", panels[i],
			Amp(analysis.ServerAmp(hi).Mean), ls.Words(hi), Amp(analysis.ServerAmp(lo).Mean), ls.Words(lo))
	}
	return f
}

// Amp writes attempts per client as the report and the figures say them:
// one decimal.
func Amp(x float64) string { return fmt.Sprintf("%.1f", x) }

// index returns name's index in names, adding it when it is not there.
func index(names *[]string, name string) int {
	for i, n := range *names {
		if n == name {
			return i
		}
	}
	*names = append(*names, name)
	return len(*names) - 1
}

// chainArrow writes the services of a chain of n: "A → B → server".
func chainArrow(n int) string {
	s := ""
	for j := range n {
		if j > 0 {
			s += " → "
		}
		s += analysis.ServiceName(j, n)
	}
	return s
}
