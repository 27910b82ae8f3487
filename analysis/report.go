package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/internal/num"

	"github.com/herdsweep/herdsweep/sim"
)

// What the report asks of the analysis beyond a recommendation: scenario
// families, fronts on two metrics, and the shape of a policy (everything
// but its cap). Nothing here decides; the report quotes these.

// Family is a scenario without its capacity: the fleet, the outage, the
// server's Retry-After and the kind of server. The report's summary has a
// row per family and a column per capacity.
type Family struct {
	Clients    int
	Outage     time.Duration
	RetryAfter time.Duration
	Server     string
	Window     time.Duration // the run's length after recovery
}

// DefaultWindow is the window a family's name leaves unsaid.
const DefaultWindow = 20 * time.Minute

// FamilyOf is sc's family.
func FamilyOf(sc sim.Scenario) Family {
	return Family{Clients: sc.Clients, Outage: sc.RecoverAt, RetryAfter: sc.RetryAfter, Server: serverLabel(sc), Window: sc.Horizon - sc.RecoverAt}
}

// String names the family: "2,000 clients, 30s outage", and the window
// when it is not DefaultWindow.
func (f Family) String() string {
	s := fmt.Sprintf("%s, %v outage", num.Plural(f.Clients, "client"), f.Outage)
	if f.RetryAfter > 0 {
		s += fmt.Sprintf(", Retry-After %v", f.RetryAfter)
	}
	if f.Window != DefaultWindow {
		s += fmt.Sprintf(", window %v", f.Window)
	}
	if f.Server != "" {
		s += "; " + f.Server
	}
	return s
}

// Less orders families: counting servers first, then by clients, outage
// and Retry-After.
func (f Family) Less(g Family) bool {
	if f.Server != g.Server {
		return f.Server < g.Server
	}
	if f.Clients != g.Clients {
		return f.Clients < g.Clients
	}
	if f.Outage != g.Outage {
		return f.Outage < g.Outage
	}
	if f.RetryAfter != g.RetryAfter {
		return f.RetryAfter < g.RetryAfter
	}
	return f.Window > g.Window
}

// Front returns the aggregates that no other beats on the means of every
// metric in ms (as good on all, better on one), in ascending order of the
// first metric. An aggregate without a value on a metric (a run did not
// finish) is never on the front. Pass feasible candidates only.
func Front(as []*Aggregate, ms ...Metric) []*Aggregate {
	vals := func(a *Aggregate) []float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = value(a, m)
		}
		return v
	}
	var front []*Aggregate
	for _, a := range as {
		va := vals(a)
		if math.IsInf(va[0], 1) {
			continue
		}
		dominated := false
		for _, b := range as {
			if Dominates(vals(b), va) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, a)
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return value(front[i], ms[0]) < value(front[j], ms[0]) })
	return front
}

// Dominates reports whether b is as good as a on every value and better on
// one (smaller is better).
func Dominates(b, a []float64) bool {
	better := false
	for i := range a {
		if b[i] > a[i] {
			return false
		}
		if b[i] < a[i] {
			better = true
		}
	}
	return better
}

// Shape is a policy without its cap: what a report groups when it asks
// whether a kind of policy is worth using at any cap.
func Shape(p sim.Policy) sim.Policy {
	p.Cap = 0
	return p
}

// ShapeLabel names a shape in a few words: "fixed 5s", "exp 2s ×2, no
// jitter", "exp 2s ×2 ±10 %".
func ShapeLabel(p sim.Policy) string {
	cs := p.ComponentsShort()
	p = Shape(p).WithoutComponents()
	if p.Preset != "" {
		return p.Preset + " defaults"
	}
	s := strings.Replace(p.Short(), " no cap", "", 1)
	if p.Short() == p.String() { // a family Short does not name: its own words
		s = string(p.Kind)
		if p.Base > 0 {
			s += " " + p.Base.String()
		}
		if p.Multiplier > 0 && p.Multiplier != 1 {
			s += fmt.Sprintf(" ×%g", p.Multiplier)
		}
		switch {
		case p.Width > 0 || p.Kind == sim.WatchDog || p.Kind == sim.HTTPRetry:
			s += " jitter " + sim.Percent(p.JitterFraction())
		}
		s += p.LimitsShort() // Short names them for the families it names
	}
	return s + cs
}

// T99Ratio is a's mean t99 after recovery over b's; NaN when either did
// not finish in every run.
func T99Ratio(a, b *Aggregate) float64 {
	x, y := a.Summary(T99), b.Summary(T99)
	if !x.Finished() || !y.Finished() {
		return math.NaN()
	}
	return x.Mean / y.Mean
}

// AllGaveUp reports whether every client gave up in every run of a: its
// peak and traffic then say nothing about how gentle it is.
func AllGaveUp(a *Aggregate) bool {
	return a.Summary(GaveUp).N > 0 && a.Summary(GaveUp).Min >= float64(a.Cell.Scenario.Clients)
}

// ShortName names a policy in a few words for a legend or a table row:
// sim.Policy.Short where it has words for the family, else the shape's
// words and the cap.
func ShortName(p sim.Policy) string {
	if s := p.Short(); s != p.String() {
		return s
	}
	s := ShapeLabel(p)
	if p.Cap > 0 {
		s += " ≤" + p.Cap.String()
	}
	return s
}
