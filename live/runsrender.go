package live

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/herdsweep/herdsweep/plots"
)

// VirtualReport is `sweep live --virtual`'s answer: one comparison of the
// runs per simulated policy.
type VirtualReport struct {
	Seeds       []uint32          `json:"seeds"` // the runs' seeds (their first send times)
	Wall        float64           `json:"wall_s"`
	Served      []int             `json:"served"` // per run: clients served
	GaveUp      []int             `json:"gave_up"`
	Pending     []int             `json:"pending"`
	Comparisons []*RunsComparison `json:"comparisons"`
}

// WriteJSON writes r as indented JSON.
func (r *VirtualReport) WriteJSON(w io.Writer) error { return writeIndented(w, r) }

// WriteText writes r for people: what ran, then each comparison's table
// and verdict.
func (r *VirtualReport) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, c := range r.Comparisons {
		if i == 0 {
			fmt.Fprintf(&b, "virtual: %s (%s), %s, down: %s\n", c.Driver, c.Module, c.Scenario, c.Down)
			fmt.Fprintf(&b, "time: %s on a bubble's clock (testing/synctest) in %.1f s of real time; requests take no time on an in-memory network, and a tick closes once every request sent by its end has arrived (a request sent at k·tick counts in tick k, as sim counts it)\n",
				Plural(c.Runs, "run"), r.Wall)
			fmt.Fprintf(&b, "clients per run: served %s, gave up %s, pending at the end %s\n", spanInts(r.Served), spanInts(r.GaveUp), spanInts(r.Pending))
		}
		if c.Name == c.Policy {
			fmt.Fprintf(&b, "\nmodel %s\n", c.Name)
		} else {
			fmt.Fprintf(&b, "\nmodel %s: %s\n", c.Name, c.Policy)
		}
		switch c.Method {
		case SameSeed:
			fmt.Fprintf(&b, "seed for seed: each run (seeds %s) must be sim's run of its seed, tick for tick\n", seedSpan(r.Seeds))
		default:
			fmt.Fprintf(&b, "as a distribution: %s (seeds %s; %s) against sim's runs of %d other seeds, by a permutation test at a false-alarm rate of %g (%d relabellings): p = %.4g\n",
				Plural(c.Runs, "run"), seedSpan(r.Seeds), randomness(c), c.Seeds, c.Alpha, c.Permutations, c.P)
		}
		writeRunsTable(&b, c)
		fmt.Fprintf(&b, "verdict: %s — %s\n", c.Verdict, runsVerdictWords(c))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRunsTable writes c's quantities: the runs' and sim's 5th, 50th and
// 95th percentiles, and the distance and p-value or the runs that differ.
func writeRunsTable(w io.Writer, c *RunsComparison) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	simHead, last := "simulated 5–50–95 %", "distance\tp"
	if c.Method == SameSeed {
		simHead, last = "sim, same seeds: min median max", "runs differing"
	}
	fmt.Fprintf(tw, "  quantity\tunit\truns: min median max\t%s\t%s\n", simHead, last)
	three := func(b *Band) string {
		if b == nil {
			return "mean curve"
		}
		return fmt.Sprintf("%s %s %s", num(b.Lo), num(b.Mid), num(b.Hi))
	}
	for _, m := range c.Metrics {
		tail := fmt.Sprintf("%.3g\t%.3g", m.D, m.P)
		if c.Method == SameSeed {
			tail = fmt.Sprintf("%d of %d", m.Differ, c.Runs)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.Name, m.Unit, three(m.Live), three(m.Sim), tail)
	}
	tw.Flush()
}

func runsVerdictWords(c *RunsComparison) string {
	switch c.Verdict {
	case Inconclusive:
		return "the runs' evidence does not hold: " + strings.Join(c.Degraded, "; ")
	case Disagrees:
		if c.Method == SameSeed {
			return "differs from sim's run of the same seed in " + strings.Join(c.Disagree, ", ")
		}
		return fmt.Sprintf("the runs are not draws of the model (p = %.3g ≤ %g), apart in %s", c.P, c.Alpha, strings.Join(c.Disagree, ", "))
	}
	if c.Method == SameSeed {
		return "every run is sim's run of its seed"
	}
	return fmt.Sprintf("the runs could be draws of the model (p = %.3g > %g)", c.P, c.Alpha)
}

// Plural is "1 run", "2 runs".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// randomness says what makes the runs differ beyond their seeds.
func randomness(c *RunsComparison) string {
	if strings.Contains(c.Scenario, "workers") {
		return "the library's own jitter, if any, and the queueing server's service times"
	}
	return "the library's own jitter"
}

func spanInts(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func seedSpan(s []uint32) string {
	if len(s) == 0 {
		return "-"
	}
	contiguous := true
	for i := range s[1:] {
		contiguous = contiguous && s[i+1] == s[i]+1
	}
	if len(s) > 1 && contiguous {
		return fmt.Sprintf("%d–%d", s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// Figure is the arrivals per tick of the first run (first, set against
// sim's band as a real-time run is), titled with the runs' one verdict.
func (c *RunsComparison) Figure(first *Comparison, budget int) plots.Figure {
	f := first.Figure(budget)
	f.Name = "virtual-" + fileName(c.Driver) + "--" + fileName(c.Name)
	word := string(c.Verdict)
	if c.Verdict != Agrees {
		word = strings.ToUpper(word)
	}
	f.Title = fmt.Sprintf("virtual %s against simulated %s: %s", c.Driver, c.Name, word)
	f.Caption = fmt.Sprintf("%s. The first of %d virtual runs (seed %d) over sim's band; the verdict is the %d runs': %s", c.Scenario, c.Runs, first.seed, c.Runs, runsVerdictWords(c))
	if len(f.Panels) > 0 && len(f.Panels[0].Series) > 1 {
		f.Panels[0].Series[1].Name = fmt.Sprintf("virtual %s, seed %d", c.Driver, first.seed)
	}
	return f
}
