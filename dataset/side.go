package dataset

import "github.com/herdsweep/herdsweep/sim"

// sideKeyColumns begin each side table: its rows' run.
func sideKeyColumns[R any](runKey, cellKey func(*R) *string, seed func(*R) *uint32) []TableColumn[R, R] {
	return []TableColumn[R, R]{
		strCol(ColRunKey, "the run (joins runs.run_key)", runKey),
		strCol(ColCellKey, "the cell (joins runs.cell_key)", cellKey),
		seedCol("the run's seed", seed),
	}
}

// TimelineColumn is a column of the timelines table.
type TimelineColumn = TableColumn[TimelineRow, TimelineRow]

type tl = TimelineRow

// TimelineTable is the timelines table's one column list.
func TimelineTable() []TimelineColumn {
	return append(sideKeyColumns(func(r *tl) *string { return &r.RunKey }, func(r *tl) *string { return &r.CellKey }, func(r *tl) *uint32 { return &r.Seed }),
		intCol(ColTick, "tick index k; ticks where nothing happened (no arrival, answer or client giving up) are left out", func(r *tl) *int { return &r.Tick }),
		floatCol(ColTime, "tick time k·tick, s", func(r *tl) *float64 { return &r.T }),
		intCol(ColArrivals, "requests that arrived in the tick", func(r *tl) *int { return &r.Arrivals }),
		intCol(ColServed, "of which served; on a queueing server, the requests answered in time in the tick, whenever they arrived (goodput but for those in progress at the run's last tick)", func(r *tl) *int { return &r.Served }),
		intCol(ColGaveUp, "of the rejected, clients that gave up", func(r *tl) *int { return &r.GaveUp }),
	)
}

// TimelineFields are the timelines table's columns, in order.
func TimelineFields() []Field { return fieldsOf(TimelineTable()) }

// TimelineColumns documents the timelines table.
func TimelineColumns() []Column { return docsOf(TimelineTable()) }

// GroupsColumn is a column of the groups table.
type GroupsColumn = TableColumn[GroupRow, GroupRow]

type gr = GroupRow

// GroupsTable is the groups table's one column list: a mixed fleet's
// metrics, one row per policy group.
func GroupsTable() []GroupsColumn {
	return append(sideKeyColumns(func(r *gr) *string { return &r.RunKey }, func(r *gr) *string { return &r.CellKey }, func(r *gr) *uint32 { return &r.Seed }),
		intCol(ColGroup, "0 for the cell's policy, 1… for the mix's groups", func(r *gr) *int { return &r.Group }),
		floatCol(ColShare, "the group's fraction of the clients", func(r *gr) *float64 { return &r.Share }),
		strCol(ColPolicy, "the group's policy family", func(r *gr) *string { return &r.Policy }),
		nullable(strCol(ColPreset, "the library preset; null for none (\"\" in parts written before herdsweep stored null)", func(r *gr) *string { return &r.Preset })),
		strCol(ColLabel, "the group's policy in words", func(r *gr) *string { return &r.Label }),
		intCol(ColClients, "clients in the group", func(r *gr) *int { return &r.Result.Clients }),
		intCol(ColSucceeded, "of which served", func(r *gr) *int { return &r.Result.Succeeded }),
		intCol(ColGaveUp, "of which gave up", func(r *gr) *int { return &r.Result.GaveUp }),
		int64Col(ColSent, "requests the group sent", func(r *gr) *int64 { return &r.Result.Sent }),
		int64Col(ColSentAfterRecovery, "of which at or after recovery", func(r *gr) *int64 { return &r.Result.SentAfterRecovery }),
		milestoneCol(ColT50, "first tick time at which 50 % of the group had succeeded, s", func(r *gr) *sim.Milestone { return &r.Result.T50 }),
		milestoneCol(ColT99, "the same for 99 %, s; null = not finished", func(r *gr) *sim.Milestone { return &r.Result.T99 }),
		milestoneCol(ColAllDone, "the same for 100 %, s", func(r *gr) *sim.Milestone { return &r.Result.AllDone }),
	)
}

// GroupsFields are the groups table's columns, in order.
func GroupsFields() []Field { return fieldsOf(GroupsTable()) }

// GroupsColumns documents the groups table.
func GroupsColumns() []Column { return docsOf(GroupsTable()) }
