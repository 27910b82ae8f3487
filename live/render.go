package live

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/herdsweep/herdsweep/plots"
)

// Report is a live run with its machine, its measurement and its
// comparisons (one per simulated policy), as the command prints it.
type Report struct {
	Machine Machine       `json:"machine"`
	Scale   float64       `json:"scale"` // simulated seconds per real second: 1 is real time
	Wall    time.Duration `json:"wall_ns"`
	Seed    uint32        `json:"seed"`
	Grace   time.Duration `json:"grace_ns"`
	// CloseLate: how late the server closed its ticks in the run.
	CloseLateP50 time.Duration `json:"close_late_p50_ns"`
	CloseLateP99 time.Duration `json:"close_late_p99_ns"`
	CloseLateMax time.Duration `json:"close_late_max_ns"`
	// FirstLateMax: the latest a client's first request went out.
	FirstLateMax time.Duration `json:"first_late_max_ns"`
	// Placed: requests whose tick the harness chose, as sim's; Misplaced:
	// those not counted in it (Measurement).
	Placed      int            `json:"placed"`
	Misplaced   int            `json:"misplaced"`
	Errors      map[string]int `json:"client_errors"`
	ServerTotal int            `json:"server_arrivals"` // requests the server counted (refused ones never reach it)
	Comparisons []*Comparison  `json:"comparisons"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// writeIndented writes v as JSON indented by two spaces, as every report
// of the package does.
func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes r for people: the limits, then each comparison.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "machine: 10 ms timers fire %v late (median), %v (90th percentile), %v (99th), %v at worst of %d; loopback round trip %v (median), %v (99th percentile)\n",
		m.TimerLateP50.Round(time.Microsecond), m.TimerLateP90.Round(time.Microsecond), m.TimerLateP99.Round(time.Microsecond), m.TimerLateMax.Round(time.Microsecond), m.Samples,
		m.RTTP50.Round(time.Microsecond), m.RTTP99.Round(time.Microsecond))
	fmt.Fprintf(&b, "time: scale %g (1 is real time), run took %v of real time; the server closed its ticks %v late (median), %v (99th percentile), %v at worst; the latest first request went %v late; a request up to %v after a tick boundary counts in that tick; first sends from sim's stream of seed %d\n",
		r.Scale, r.Wall.Round(time.Millisecond), r.CloseLateP50.Round(time.Microsecond), r.CloseLateP99.Round(time.Microsecond), r.CloseLateMax.Round(time.Microsecond), r.FirstLateMax.Round(time.Microsecond), r.Grace, r.Seed)
	fmt.Fprintf(&b, "placement: %d of %d requests whose tick the harness sets (each client's first; every request of a sim: client) counted in another tick than sim's\n", r.Misplaced, r.Placed)
	for i, c := range r.Comparisons {
		if i == 0 {
			fmt.Fprintf(&b, "live: %s (%s), %s, down: %s\n", c.Driver, c.Module, c.Scenario, c.Down)
			fmt.Fprintf(&b, "clients: %d served, %d gave up, %d pending at the end", c.Succeeded, c.GaveUp, c.Pending)
			if len(r.Errors) > 0 {
				fmt.Fprintf(&b, " (%s)", errorList(r.Errors))
			}
			fmt.Fprintf(&b, "; the server counted %d requests\n", r.ServerTotal)
		}
		b.WriteString("\n")
		c.writeText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func errorList(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%d× %s", m[k], k))
	}
	return strings.Join(parts, "; ")
}

func num(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "never"
	case x == math.Trunc(x):
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// Figure is the arrivals per tick: the simulated band and median, the live
// curve over them, and the budget per tick.
func (c *Comparison) Figure(budget int) plots.Figure {
	var simS, liveS plots.Series
	simS.Name = fmt.Sprintf("simulated %s: median, %g–%g %% band", c.Name, c.BandPct[0], c.BandPct[1]) // the seeds: in the footer
	liveS.Name = "live " + c.Driver
	for _, t := range c.Ticks {
		simS.Points = append(simS.Points, plots.Point{X: t.T, Y: t.Mid, Lo: t.Lo, Hi: t.Hi})
		liveS.Points = append(liveS.Points, plots.Point{X: t.T, Y: float64(t.Live), Lo: math.NaN(), Hi: math.NaN()})
	}
	simS.Mark, simS.Colour = plots.Line, 0
	liveS.Mark, liveS.Colour = plots.Line, 1
	return plots.Figure{
		Name:    "live-" + fileName(c.Driver) + "--" + fileName(c.Name),
		Title:   fmt.Sprintf("live %s against simulated %s: %s", c.Driver, c.Name, c.verdictWord()),
		Caption: c.Scenario + ". " + c.verdictLine(),
		X:       plots.Axis{Label: fmt.Sprintf("time since the clients' start (s); the server is down until %s", c.Recover)},
		Y:       plots.Axis{Label: "arrivals per tick"},
		Panels:  []plots.Panel{{Series: []plots.Series{simS, liveS}}},
		HLines:  []plots.Ref{{Value: float64(budget), Name: "served per tick after recovery"}},
	}
}

func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// WriteText writes one comparison: the metrics against the band, then the
// verdict.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	c.writeText(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (c *Comparison) writeText(b *strings.Builder) {
	fmt.Fprintf(b, "simulated: %s over %d seeds, band %g–%g %%\n", c.Policy, c.Seeds, c.BandPct[0], c.BandPct[1])
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "metric\tlive\tband lo\tmedian\tband hi\trank %%\tsame seed\t\n")
	for _, mt := range c.Metrics {
		mark := ""
		if !mt.Agree {
			mark = "  ← outside"
		}
		fmt.Fprintf(tw, "%s (%s)\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\n", mt.Name, mt.Unit, num(mt.Live), num(mt.Band.Lo), num(mt.Band.Mid), num(mt.Band.Hi), mt.Rank, num(mt.SameSeed), mark)
	}
	tw.Flush()
	fmt.Fprintf(b, "arrivals per tick after recovery: %d of %d ticks outside the band\n", c.Outside, c.TicksUp)
	fmt.Fprintf(b, "%s\n", c.verdictLine())
}

// verdictWord is the verdict in a word, as the figure's title says it.
func (c *Comparison) verdictWord() string {
	if c.Verdict == Agrees {
		return string(c.Verdict)
	}
	return strings.ToUpper(string(c.Verdict))
}

// verdictLine is the verdict with its reasons, as the text and the
// figure's caption say it.
func (c *Comparison) verdictLine() string {
	metrics := "every metric within the band"
	if len(c.Disagree) > 0 {
		metrics = "outside the band: " + strings.Join(c.Disagree, ", ")
	}
	switch c.Verdict {
	case Agrees:
		return "verdict: agrees (" + metrics + ")"
	case Disagrees:
		return "verdict: DISAGREES on " + strings.Join(c.Disagree, ", ")
	}
	return "verdict: INCONCLUSIVE: " + strings.Join(c.Degraded, "; ") + ". The machine did not keep sim's clock, so the run decides nothing, whatever its metrics say (alone, " + metrics + ")"
}
