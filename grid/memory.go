package grid

import "github.com/herdsweep/herdsweep/sim"

// What a run's results take in memory until they are written, measured on
// the writers of dataset/parquetio (cmd/sweep TestRowBytesBoundTheWriters):
// upper bounds, with the slack of builders that double as they grow.
const (
	// RunRowBytes is a runs row, beside its strings (RowBytes adds them).
	RunRowBytes = 1536
	// TimelineRowBytes is a timelines row: a tick with arrivals.
	TimelineRowBytes = 176
	// GroupRowBytes is a groups row, beside its policy's words.
	GroupRowBytes = 512
	// OutcomeBytes is a finished run waiting to be written, beside its
	// timeline.
	OutcomeBytes = 2048
)

// Footprint is what a run of c takes in its worker's simulator, with the
// timeline when timeline is set: sim.Scenario.Footprint, the client
// components' storage and a chain's.
func (c Cell) Footprint(timeline bool) sim.Footprint {
	f := c.Scenario.Footprint(timeline)
	f.Components = sim.ComponentBytes(c.Policy, c.Scenario)
	if ch, err := c.Chain(); err == nil {
		f.Chain = sim.ChainBytes(c.Scenario, ch)
	}
	return f
}

// Envelope is what a simulator that runs every cell of cells holds: each
// kind of storage at its largest (sim.Footprint.Max).
func Envelope(cells []Cell, timeline bool) sim.Footprint {
	var env sim.Footprint
	for _, c := range cells {
		env = env.Max(c.Footprint(timeline))
	}
	return env
}

// WaitBytes is what a finished run of c holds while it waits to be
// written: its outcome and its timeline.
func (c Cell) WaitBytes(timeline bool) int64 {
	if !timeline {
		return OutcomeBytes
	}
	return OutcomeBytes + c.Scenario.Footprint(true).Timeline
}

// RowBytes is what a run of c takes in a part until the part is written,
// at most: its runs row, a timelines row for every tick (when timeline is
// set) and a groups row per group of a mixed fleet. RowBytes(false) plus
// TimelineRows is the same for a run's actual timeline.
func (c Cell) RowBytes(timeline bool) int64 {
	b := c.rowBytes()
	if timeline {
		b += TimelineRowBytes * (c.Scenario.Footprint(true).Timeline / 12)
	}
	return b
}

// rowBytes is a run's runs and groups rows: their fixed part, and their
// strings twice over (a builder that doubled holds up to twice them): the
// label, the policy's spec, and the parameters' strings (an arrival
// curve, a mix), which the label holds too, so counted as it again.
func (c Cell) rowBytes() int64 {
	b := RunRowBytes + 2*int64(2*len(c.Label())+len(c.PolicySpec()))
	if c.Mixed() {
		for _, g := range c.Groups() {
			b += GroupRowBytes + 3*int64(len(g.Policy.Describe()))
		}
	}
	return b
}

// TimelineRows is what timeline tl (nil: none) takes in a part: a row
// for each tick with arrivals, those the timelines table holds.
func TimelineRows(tl *sim.Timeline) int64 {
	if tl == nil {
		return 0
	}
	n := int64(0)
	for _, a := range tl.Arrivals {
		if a != 0 {
			n++
		}
	}
	return TimelineRowBytes * n
}
