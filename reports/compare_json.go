package reports

import (
	"math"

	"github.com/herdsweep/herdsweep/analysis"
)

// The document `sweep compare --json` prints (CompareJSON); its keys are
// documented in docs/ and must not move.
type (
	compareSide struct {
		Dir   string `json:"dir"`
		Runs  int    `json:"runs"`
		Cells int    `json:"cells"`
		Sim   string `json:"sim_version"`
	}
	compareChange struct {
		Cell          string   `json:"cell"` // the parameters, as sweep run keys them (without the simulator version)
		Label         string   `json:"label"`
		Metric        string   `json:"metric"` // the dataset's column
		Test          string   `json:"test"`   // paired or welch
		N             int      `json:"n"`
		Shared        int      `json:"shared_seeds"`   // seeds both sides hold
		Unpaired      int      `json:"unpaired_seeds"` // seeds one side only holds: left out of a paired test
		Old           *float64 `json:"old_mean"`
		New           *float64 `json:"new_mean"`
		Diff          *float64 `json:"diff"`
		Lo            *float64 `json:"lo"`
		Hi            *float64 `json:"hi"`
		Rel           *float64 `json:"rel"`
		RelLo         *float64 `json:"rel_lo"`
		RelHi         *float64 `json:"rel_hi"`
		Significant   bool     `json:"significant"`
		Beyond        bool     `json:"beyond_threshold"`
		UnfinishedOld int      `json:"unfinished_old"`
		UnfinishedNew int      `json:"unfinished_new"`
	}
	compareShort struct {
		Cell    string   `json:"cell_key"`
		Label   string   `json:"label"`
		Asked   int      `json:"asked_seeds"`   // seeds its dataset was meant to hold
		Missing []uint32 `json:"missing_seeds"` // of those, the seeds without a run
	}
	compareDoc struct {
		Old          compareSide     `json:"old"`
		New          compareSide     `json:"new"`
		Alpha        float64         `json:"alpha"`
		Threshold    float64         `json:"threshold"` // relative: 0.05 = 5 %
		Matched      int             `json:"matched_cells"`
		OnlyOld      []string        `json:"only_old"`
		OnlyNew      []string        `json:"only_new"`
		ShortOld     []compareShort  `json:"short_old"` // cells with fewer seeds than old was meant to hold
		ShortNew     []compareShort  `json:"short_new"`
		AllowMissing bool            `json:"allow_missing"`
		Tests        int             `json:"comparisons"`
		Changed      int             `json:"changed"`
		Changes      []compareChange `json:"changes"`
	}
)

// CompareJSON is `sweep compare --json`'s document: every matched cell and
// metric.
func CompareJSON(v *Compared) any {
	c := v.C
	var doc compareDoc
	for i, d := range []*compareSide{&doc.Old, &doc.New} {
		*d = compareSide{v.Dirs[i], v.Sides[i].Runs, len(v.Sides[i].Aggregates), sims(v.Sides[i])}
	}
	doc.Alpha, doc.Threshold, doc.Matched, doc.Tests, doc.Changed = c.Alpha, c.Threshold, c.Matched, c.Tests, c.Changed()
	doc.OnlyOld, doc.OnlyNew = labels(c.OnlyOld), labels(c.OnlyNew)
	doc.ShortOld, doc.ShortNew, doc.AllowMissing = shorts(c.ShortOld), shorts(c.ShortNew), v.AllowMissing
	f := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	doc.Changes = []compareChange{}
	for _, ch := range c.Changes {
		test := "welch"
		if ch.Paired {
			test = "paired"
		}
		doc.Changes = append(doc.Changes, compareChange{ch.New.Cell.Canonical(), ch.New.Label, ch.Metric.Key, test, ch.N, ch.Shared, ch.Unpaired,
			f(ch.OldMean), f(ch.NewMean), f(ch.Diff), f(ch.Lo), f(ch.Hi), f(ch.Rel), f(ch.RelLo), f(ch.RelHi),
			ch.Significant, ch.Beyond, ch.UnfinishedOld, ch.UnfinishedNew})
	}
	return doc
}

func labels(as []*analysis.Aggregate) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.Label)
	}
	return out
}

func shorts(sfs []analysis.Shortfall) []compareShort {
	out := []compareShort{}
	for _, sf := range sfs {
		out = append(out, compareShort{sf.CellKey, sf.Label, sf.Asked, sf.Missing})
	}
	return out
}
