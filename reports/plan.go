package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/herdsweep/herdsweep/reports/table"
	"github.com/herdsweep/herdsweep/runner"
)

// PlannedSweep is one sweep of `sweep plan`: its size, the runs to do and
// the estimate of their time. Its fields are `sweep plan --json`'s keys.
type PlannedSweep struct {
	Sweep     string  `json:"sweep"`
	Cells     int     `json:"cells"`
	Seeds     int     `json:"seeds"`
	Runs      int     `json:"runs"`
	Stored    *int    `json:"stored,omitempty"` // with --out: runs the dataset holds already
	ToRun     int     `json:"to_run"`
	Rolling   int     `json:"rolling,omitempty"` // with --add-seeds: of to_run, runs of rolling seeds
	MSPerRun  float64 `json:"ms_per_run"`
	EstimateS float64 `json:"estimate_s"`     // on free cores
	NowS      float64 `json:"estimate_now_s"` // at the load the calibration met
	Workers   int     `json:"workers"`
	AtLeast   bool    `json:"at_least,omitempty"` // the calibration was cut short (--calibration): the times are lower bounds
	// Estimate and Now are EstimateS and NowS as durations, for the text.
	Estimate, Now time.Duration `json:"-"`
}

// Plan is `sweep plan`'s answer: a row per sweep and what the text says
// around them.
type Plan struct {
	Sweeps      []PlannedSweep
	Out         string        // the dataset planned into (--out), or ""
	Workers     int           // the workers the estimate assumes
	Calibration time.Duration // the calibration's budget (--calibration)
	AddSeeds    int           // --add-seeds
	OnDemand    []string      // sweeps a bare plan left out: run only when named
}

// WritePlanText writes the plan for a terminal: a table of the sweeps,
// then what the estimate means.
func WritePlanText(w io.Writer, p *Plan) error {
	cols := []table.Column{table.R("sweep"), table.R("cells"), table.R("seeds"), table.R("runs")}
	if p.Out != "" {
		cols = append(cols, table.R("in "+p.Out), table.R("to run"))
	}
	t := table.New("", append(cols, table.R("ms/run"), table.R(fmt.Sprintf("est. time (%d workers)", p.Workers)), table.R("at this load"))...)
	for _, s := range p.Sweeps {
		row := []string{s.Sweep, strconv.Itoa(s.Cells), strconv.Itoa(s.Seeds), strconv.Itoa(s.Runs)}
		if p.Out != "" {
			row = append(row, strconv.Itoa(*s.Stored), strconv.Itoa(s.ToRun))
		}
		ge := "" // a lower bound
		if s.AtLeast {
			ge = "≥ "
		}
		t.Add(append(row, fmt.Sprintf("%s%.2f", ge, s.MSPerRun), ge+s.Estimate.Round(100*time.Millisecond).String(), ge+s.Now.Round(100*time.Millisecond).String())...)
	}
	ew := &errWriter{w: w}
	if err := t.Text(w, table.TextStyle{PadLast: true}); err != nil {
		return err
	}
	for _, s := range p.Sweeps {
		if s.AtLeast {
			ew.printf("%s: the calibration was stopped after --calibration %v, before its sample of runs finished: its times are lower bounds (≥); give it longer to time them.\n", s.Sweep, p.Calibration)
		}
	}
	if p.AddSeeds > 0 {
		for _, s := range p.Sweeps {
			ew.printf("%s: %d of the runs to do are rolling seeds (--add-seeds %d: the next seeds past the config's, per cell)\n", s.Sweep, s.Rolling, p.AddSeeds)
		}
	}
	if len(p.OnDemand) > 0 {
		ew.printf("Not planned: %s, on demand (sweep run runs them only when named: sweep plan --sweep NAME).\n", strings.Join(p.OnDemand, ", "))
	}
	ew.printf("The estimate is the CPU time of a sample of the runs to do (spread over all of them) plus what building and committing Parquet costs per run beside it (%v), divided by the workers at %.0f %% efficiency, plus the end-of-run check (%v per run): the wall time on free cores. At this load scales the sample's wall time instead: what other jobs on the machine made of it.\n",
		runner.ParquetCPUPerRun, 100*runner.ParallelEfficiency, runner.CheckPerRun)
	return ew.err
}
