package live

import (
	"fmt"
	"time"
)

// Verdict is what a comparison concludes: the one value its text, its
// JSON and its figure say, and `sweep live`'s exit status.
type Verdict string

// The verdicts.
const (
	Agrees       Verdict = "agrees"       // every metric within the band, on evidence that holds
	Disagrees    Verdict = "disagrees"    // a metric outside the band, on evidence that holds
	Inconclusive Verdict = "inconclusive" // the evidence does not hold (Measurement.Degraded), whatever the metrics say
)

// decide is the rule, stated once. A run whose evidence does not hold
// decides nothing, whatever its metrics say: an agreement is inconclusive
// exactly as a disagreement is. Otherwise the comparison agrees when every
// metric lies within its band, and disagrees when one does not.
func decide(degraded, disagree []string) Verdict {
	switch {
	case len(degraded) > 0:
		return Inconclusive
	case len(disagree) > 0:
		return Disagrees
	}
	return Agrees
}

// Overall is the verdict on several comparisons of one run: inconclusive
// when one is (they share the run's evidence), else disagrees when one
// does, else agrees.
func Overall(cs []*Comparison) Verdict {
	v := Agrees
	for _, c := range cs {
		switch c.Verdict {
		case Inconclusive:
			return Inconclusive
		case Disagrees:
			v = Disagrees
		}
	}
	return v
}

// Degraded says why m's evidence does not hold, one reason each; none when
// it does. The live run stands for sim's scenario only where requests
// reach the server in the ticks sim gives them:
//
//   - a request whose tick the harness chose (every client's first
//     request; every request of a sim: client, which the harness places
//     from sim's own rules) must be counted in that tick;
//   - a library times its retries from the answers, so for a library
//     driver the server must answer in time: its tick closes may be late
//     by at most MaxTimerShare of a tick at the 99th percentile (a late
//     answer moves the library's next request later by as much). A sim:
//     client is placed in its tick whatever the answer's time, so the
//     first rule holds it to account directly;
//   - no client may have been stopped by the harness's attempt limit
//     (MaxAttempts), which neither the library nor sim has.
func (m *Measurement) Degraded() []string {
	var why []string
	if m.Misplaced > 0 {
		why = append(why, fmt.Sprintf("%d of %d requests whose tick the harness sets (each client's first; every request of a sim: client) were not counted in the tick sim gives them", m.Misplaced, m.Placed))
	}
	if m.Capped > 0 {
		why = append(why, fmt.Sprintf("%d clients were stopped by the harness's limit of %d attempts (--max-attempts) before their library stopped them, where sim stops none", m.Capped, m.Config.MaxAttempts))
	}
	if real := m.Config.real(m.Config.Scenario.Tick); !m.Config.Driver.stepped && float64(m.CloseLateP99) > MaxTimerShare*float64(real) {
		why = append(why, fmt.Sprintf("the server answered its ticks up to %v late (99th percentile; worst %v), more than %.0f %% of its %v tick",
			m.CloseLateP99.Round(time.Millisecond), m.CloseLateMax.Round(time.Millisecond), 100*MaxTimerShare, real))
	}
	return why
}
