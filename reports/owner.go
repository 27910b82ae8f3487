package reports

import (
	"fmt"
	"slices"
	"time"

	"github.com/herdsweep/herdsweep/analysis"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
)

// ownersOf splits a dataset's queueing runs into the owner's views they
// hold whole (analysis.StoredOwners) and the other runs, which the
// queueing section ranks.
func ownersOf(recs []analysis.Record) ([]analysis.StoredOwner, []analysis.Record, error) {
	owners, err := analysis.StoredOwners(recs)
	if err != nil || len(owners) == 0 {
		return nil, recs, err
	}
	theirs := map[grid.Cell]bool{}
	for _, o := range owners {
		for _, opt := range o.View.Options {
			sc := opt.Server.Scenario(o.Base)
			for _, p := range o.View.Fleet {
				theirs[grid.Cell{Scenario: sc, Policy: p}] = true
			}
		}
	}
	rest := slices.DeleteFunc(slices.Clone(recs), func(r analysis.Record) bool { return theirs[r.Cell] })
	return owners, rest, nil
}

// writeOwners is the report's section for the server's owner: for each
// owner's view the dataset holds, what the server can do and how soon
// each option brings a fleet of today's library defaults back, the table
// `sweep recommend` prints for that server (the command that prints it
// is given when the question is one recommend asks).
func writeOwners(ew *errWriter, owners []analysis.StoredOwner) {
	if len(owners) == 0 {
		return
	}
	ew.printf("## For the server's owner\n\n")
	ew.printf("What the server can do that no client policy can (bound the wait in its queue, shed load, send a Retry-After), and how soon each brings back a fleet of today's library defaults: the time back to steady state, s after recovery (*never*: not back in every seed by the horizon), and the goodput, %% of demand, over the seeds measured. ")
	ew.printf("The best option brings the most of the fleet back, then the soonest on average.\n\n")
	for _, o := range owners {
		v, b := o.View, o.Base
		ew.printf("On %s, after a %v outage, %s clients retrying (%s)", v.Server.Label(), b.RecoverAt, thousands(float64(b.Clients)), num.Plural(v.Seeds, "seed"))
		answer := "the answer"
		if p := v.Fleet[len(v.Fleet)-1]; p.Preset == "" {
			answer = p.Short()
		}
		if cmd, ok := ownerCommand(o); ok {
			ew.printf(": the library defaults' columns are what `%s` prints for this server; its last column is that command's own answer (here the sweep's %s)", cmd, answer)
		}
		ew.printf(".\n\n")
		ew.table(ownerTable(v, answer))
		ew.printf("\n")
		if v.Best > 0 {
			back := 0
			for _, r := range v.Back[v.Best] {
				if r.Recovers() {
					back++
				}
			}
			ew.printf("**%s** (`%s`) brings %d of %d back.\n\n", upperFirst(v.Options[v.Best].Name), v.Options[v.Best].Key, back, len(v.Fleet))
		} else if v.Best < 0 {
			ew.printf("No option brings any of the fleet back in every seed.\n\n")
		}
	}
}

// ownerCommand is the `sweep recommend` command whose owner's view is o's,
// when o's question is one recommend asks (its base is a Request's
// scenario) and its fleet ends with recommend's kind of answer.
func ownerCommand(o analysis.StoredOwner) (string, bool) {
	b := o.Base
	window := b.Horizon - b.RecoverAt
	req := analysis.Request{Outage: b.RecoverAt, Window: window}
	if req.Scenario(b.Capacity, b.Clients) != b || o.View.Fleet[len(o.View.Fleet)-1].Preset != "" {
		return "", false
	}
	cmd := fmt.Sprintf("sweep recommend --capacity %s --clients %d --outage %v", num.Short(b.Capacity), b.Clients, b.RecoverAt)
	if window != grid.RecommendWindow {
		cmd += fmt.Sprintf(" --window %v", window.Round(time.Second))
	}
	return cmd + fmt.Sprintf(" --server '%s'", o.View.Server.Spec(b)), true
}
