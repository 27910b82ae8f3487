package dataset

import (
	"fmt"
	"slices"

	"github.com/herdsweep/herdsweep/grid"
)

// Schema versions, stored in every file under the key "herdsweep.schema".
// Readers refuse files of another version.
const (
	RunsSchema     = "runs/3"
	TimelineSchema = "timelines/1"
	GroupsSchema   = "groups/1"
)

// Metadata keys every file carries.
const (
	KeySchema     = "herdsweep.schema"
	KeyTool       = "herdsweep.tool_version"
	KeySim        = "herdsweep.sim_version"
	KeyConfigHash = "herdsweep.config_sha256"
	KeyCommand    = "herdsweep.command"
	KeyCreated    = "herdsweep.created"
	KeySweep      = "herdsweep.sweep"

	// The manifest of a runs part: how many rows its side-table parts of
	// the same name hold. A runs part is the commit of its side parts;
	// `sweep check` verifies that they are whole.
	KeyPartTimelines = "herdsweep.part.timelines_rows"
	KeyPartGroups    = "herdsweep.part.groups_rows"

	// KeyPartSHA256 seals every part when it is written: the SHA-256 of
	// the file read with this value's 64 hex digits as zeros, so that a
	// part that changed since is found without decoding it (`sweep
	// check`, a resumed `sweep run`). Parts written before 2026-12 carry
	// none and are read strictly instead.
	KeyPartSHA256 = "herdsweep.part.sha256"
)

// Meta is where a file came from.
type Meta struct {
	Schema     string
	Tool       string // herdsweep's version
	Sim        string // sim.Version of the rows
	ConfigHash string // SHA-256 of the config file
	Command    string // the command that wrote it, without options that do not change the data
	Created    string // RFC 3339; SOURCE_DATE_EPOCH when set, for reproducible files
	Sweep      string

	// Rows of the side-table parts committed with a runs part (its
	// manifest); -1 when the file carries none (side tables, older parts).
	TimelineRows, GroupRows int
}

// KeyValues is the file metadata of m for a file of the given schema.
func (m Meta) KeyValues(schema string) (keys, values []string) {
	return []string{KeySchema, KeyTool, KeySim, KeyConfigHash, KeyCommand, KeyCreated, KeySweep},
		[]string{schema, m.Tool, m.Sim, m.ConfigHash, m.Command, m.Created, m.Sweep}
}

// Metric columns of the runs table, after the key, seed and parameter columns.
const (
	ColRunKey            = "run_key"
	ColCellKey           = "cell_key"
	ColSeed              = "seed"
	ColLabel             = "label"
	ColPolicySpec        = "policy_spec"
	ColSent              = "sent"
	ColSentAfterRecovery = "sent_after_recovery"
	ColPeakArrivals      = "peak_arrivals"
	ColPeakRPS           = "peak_rps"
	ColT50               = "t50_s"
	ColT90               = "t90_s"
	ColT99               = "t99_s"
	ColAllDone           = "all_done_s"
	// The same milestones counted from recovery: what a user acts on.
	ColT50After     = "t50_after_s"
	ColT90After     = "t90_after_s"
	ColT99After     = "t99_after_s"
	ColAllDoneAfter = "all_done_after_s"
	ColSucceeded    = "succeeded"
	ColGaveUp       = "gave_up"
	ColPending      = "pending"
	ColEnd          = "end_s"
)

// Column documents one column for the README and `sweep schema`.
type Column struct {
	Name string
	Type string
	Doc  string
}

// Type is a column's type, named as Arrow names it.
type Type string

// The types of the tables' columns.
const (
	Int64   Type = "int64"
	Float64 Type = "float64"
	Utf8    Type = "utf8"
	Bool    Type = "bool"
)

// Field is a column of a table: its name, type and whether it holds nulls.
// The file format's schema is built from the tables' fields (RunsFields,
// TimelineFields, GroupsFields, CellsFields).
type Field struct {
	Name     string
	Type     Type
	Nullable bool
}

func paramType(t grid.Type) Type {
	switch t {
	case grid.Int:
		return Int64
	case grid.Float:
		return Float64
	case grid.String:
		return Utf8
	case grid.Bool:
		return Bool
	}
	panic(fmt.Sprintf("dataset: parameter type %d", t))
}

var metricColumns = []struct {
	name     string
	typ      Type
	nullable bool
	doc      string
}{
	{ColSent, Int64, false, "requests sent during the whole run"},
	{ColSentAfterRecovery, Int64, false, "requests that arrived at or after recovery (the article's \"sent\")"},
	{ColPeakArrivals, Int64, false, "most arrivals in one tick at or after recovery"},
	{ColPeakRPS, Float64, false, "peak_arrivals as requests/s (the article's \"peak\")"},
	{ColT50, Float64, true, "first tick time at which 50 % of clients had succeeded, s; null = never"},
	{ColT90, Float64, true, "the same for 90 %, s; null = never"},
	{ColT99, Float64, true, "the same for 99 %, s; null = not finished within the horizon"},
	{ColAllDone, Float64, true, "the same for 100 %, s; null = never"},
	{ColT50After, Float64, true, "t50_s − recover_s: time after the server is back, s; null = never"},
	{ColT90After, Float64, true, "t90_s − recover_s, s; null = never"},
	{ColT99After, Float64, true, "t99_s − recover_s: how long after recovery 99 % of clients were back, s; null = not within window_s"},
	{ColAllDoneAfter, Float64, true, "all_done_s − recover_s, s; null = never"},
	{ColSucceeded, Int64, false, "clients served"},
	{ColGaveUp, Int64, false, "clients that reached max_attempts"},
	{ColPending, Int64, false, "clients neither served nor given up at the end"},
	{ColEnd, Float64, false, "the last tick simulated, s"},
}

// Metric columns of a queueing server (sim.Result's queueing metrics);
// zero for the counting server.
const (
	ColGoodput        = "goodput"
	ColTimedOut       = "timed_out"
	ColRejected       = "rejected"
	ColOffered        = "offered"
	ColOfferedGaveUp  = "offered_gave_up"
	ColBusy           = "busy_ms"
	ColWasted         = "wasted_ms"
	ColLatencyMean    = "latency_mean_ms"
	ColLatencyP50     = "latency_p50_ms"
	ColLatencyP90     = "latency_p90_ms"
	ColLatencyP99     = "latency_p99_ms"
	ColRecoveredAfter = "recovered_after_s"
	// Client components (sim/components.go).
	ColLocalRejections = "local_rejections"
)

// queueColumns (and the client components' local_rejections) were added
// after runs/3 parts were first written: a part
// without them (nor the parameters marked OmitZero) reads them as zero or
// null, which is what those runs had (see OptionalColumn).
var queueColumns = []struct {
	name     string
	typ      Type
	nullable bool
	doc      string
}{
	{ColGoodput, Int64, false, "queueing server: requests answered within their client's timeout (cohort and open loop)"},
	{ColTimedOut, Int64, false, "queueing server: requests answered after their client had stopped waiting"},
	{ColRejected, Int64, false, "queueing server: requests refused at once (down, queue full, waited too long, shed)"},
	{ColOffered, Int64, false, "queueing server: open-loop requests that arrived new"},
	{ColOfferedGaveUp, Int64, false, "queueing server: open-loop clients that gave up"},
	{ColBusy, Float64, false, "queueing server: worker time spent serving, ms"},
	{ColWasted, Float64, false, "queueing server: of which on requests whose client had timed out (wasted_ms / busy_ms: the share wasted), ms"},
	{ColLatencyMean, Float64, false, "queueing server: mean latency of requests answered in time, ms; 0 = none"},
	{ColLatencyP50, Float64, false, "the same, median (within 0.8 %), ms"},
	{ColLatencyP90, Float64, false, "the same, 90th percentile, ms"},
	{ColLatencyP99, Float64, false, "the same, 99th percentile, ms"},
	{ColRecoveredAfter, Float64, true, "open loop: time after recovery until back to its own steady state (the clients the outage left waiting answered or given up, the queue at its ordinary length, no later window answering more requests late than in time), in whole 10 s windows, s; null = no open loop, or not back by the horizon"},
	{ColLocalRejections, Int64, false, "client components: requests refused before they were sent (an open circuit breaker, adaptive throttling); not in sent"},
}

func init() { metricColumns = append(metricColumns, queueColumns...) }

// IsMetric reports whether the runs table's column is a metric (a result
// of the run, not its key, seed or parameters).
func IsMetric(name string) bool {
	for _, m := range metricColumns {
		if m.name == name {
			return true
		}
	}
	return false
}

// OptionalColumn reports whether a runs part may lack the column: one
// added after parts were written, whose zero value is what those runs had.
func OptionalColumn(name string) bool {
	if name == ColPolicySpec {
		return true // derived from the parameters; added after runs/3 parts were written
	}
	for _, c := range queueColumns {
		if c.name == name {
			return true
		}
	}
	p := grid.ParamByKey(name)
	return p != nil && p.OmitZero
}

// column is a column of a table and its documentation: each table's
// fields and its documentation come from one list of them.
type column struct {
	Field
	doc string
}

// docType is the column's type as `sweep schema` shows it.
func (c column) docType() string {
	t := string(c.Type)
	if c.Type == Utf8 {
		t = "string"
	}
	if c.Nullable {
		t += " (null)"
	}
	return t
}

func fieldsOf(cols []column) []Field {
	out := make([]Field, len(cols))
	for i, c := range cols {
		out[i] = c.Field
	}
	return out
}

func docsOf(cols []column) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = Column{c.Name, c.docType(), c.doc}
	}
	return out
}

// runsKeyColumns are the runs table's columns before the parameters.
var runsKeyColumns = []column{
	{Field{Name: ColRunKey, Type: Utf8}, "hash of sim version, every parameter and the seed: the run's identity"},
	{Field{Name: ColCellKey, Type: Utf8}, "hash of sim version and every parameter: groups a cell's seeds"},
	{Field{Name: ColSeed, Type: Int64}, "the Mulberry32 seed of the run"},
	{Field{Name: ColLabel, Type: Utf8}, "the policy in words, and scenario parameters that differ from the article's"},
	{Field{Name: ColPolicySpec, Type: Utf8}, "exactly the policy that ran (the first group's, for a mixed fleet): a preset's name (`grpc`, `cenkalti-backoff`), else the family and its non-zero parameters, `grpc base_s=1 cap_s=30 multiplier=2 width=0.2`; filter on this, not on `policy` (a family, which its presets share); absent (null) in parts written before it"},
}

// RunsFields are the runs table's columns, in order.
func RunsFields() []Field {
	fs := fieldsOf(runsKeyColumns)
	for _, p := range grid.Params {
		fs = append(fs, Field{Name: p.Key, Type: paramType(p.Type), Nullable: p.NullZero})
	}
	for _, m := range metricColumns {
		fs = append(fs, Field{Name: m.name, Type: m.typ, Nullable: m.nullable})
	}
	return fs
}

// RunsColumns documents the runs table, column by column.
func RunsColumns() []Column {
	cols := docsOf(runsKeyColumns)
	for _, p := range grid.Params {
		t := string(paramType(p.Type))
		if p.NullZero {
			t += " (null)"
		}
		cols = append(cols, Column{p.Key, t, p.Doc})
	}
	for _, m := range metricColumns {
		t := string(m.typ)
		if m.nullable {
			t += " (null)"
		}
		cols = append(cols, Column{m.name, t, m.doc})
	}
	return cols
}

// Timeline columns.
const (
	ColTick     = "tick"
	ColTime     = "t_s"
	ColArrivals = "arrivals"
	ColServed   = "served"
)

// sideKeyColumns begin each side table: its rows' run.
var sideKeyColumns = []column{
	{Field{Name: ColRunKey, Type: Utf8}, "the run (joins runs.run_key)"},
	{Field{Name: ColCellKey, Type: Utf8}, "the cell (joins runs.cell_key)"},
	{Field{Name: ColSeed, Type: Int64}, "the run's seed"},
}

var timelineColumns = append(slices.Clip(sideKeyColumns),
	column{Field{Name: ColTick, Type: Int64}, "tick index k; ticks where nothing happened (no arrival, answer or client giving up) are left out"},
	column{Field{Name: ColTime, Type: Float64}, "tick time k·tick, s"},
	column{Field{Name: ColArrivals, Type: Int64}, "requests that arrived in the tick"},
	column{Field{Name: ColServed, Type: Int64}, "of which served; on a queueing server, the requests answered in time in the tick, whenever they arrived (goodput but for those in progress at the run's last tick)"},
	column{Field{Name: ColGaveUp, Type: Int64}, "of the rejected, clients that gave up"},
)

// TimelineFields are the timelines table's columns, in order.
func TimelineFields() []Field { return fieldsOf(timelineColumns) }

// TimelineColumns documents the timelines table.
func TimelineColumns() []Column { return docsOf(timelineColumns) }

// Groups columns: a mixed fleet's metrics, one row per policy group.
const (
	ColGroup   = "group"
	ColShare   = "share"
	ColPolicy  = "policy"
	ColPreset  = "preset"
	ColClients = "clients"
)

var groupsColumns = append(slices.Clip(sideKeyColumns),
	column{Field{Name: ColGroup, Type: Int64}, "0 for the cell's policy, 1… for the mix's groups"},
	column{Field{Name: ColShare, Type: Float64}, "the group's fraction of the clients"},
	column{Field{Name: ColPolicy, Type: Utf8}, "the group's policy family"},
	column{Field{Name: ColPreset, Type: Utf8, Nullable: true}, "the library preset; null for none (\"\" in parts written before herdsweep stored null)"},
	column{Field{Name: ColLabel, Type: Utf8}, "the group's policy in words"},
	column{Field{Name: ColClients, Type: Int64}, "clients in the group"},
	column{Field{Name: ColSucceeded, Type: Int64}, "of which served"},
	column{Field{Name: ColGaveUp, Type: Int64}, "of which gave up"},
	column{Field{Name: ColSent, Type: Int64}, "requests the group sent"},
	column{Field{Name: ColSentAfterRecovery, Type: Int64}, "of which at or after recovery"},
	column{Field{Name: ColT50, Type: Float64, Nullable: true}, "first tick time at which 50 % of the group had succeeded, s"},
	column{Field{Name: ColT99, Type: Float64, Nullable: true}, "the same for 99 %, s; null = not finished"},
	column{Field{Name: ColAllDone, Type: Float64, Nullable: true}, "the same for 100 %, s"},
)

// GroupsFields are the groups table's columns, in order.
func GroupsFields() []Field { return fieldsOf(groupsColumns) }

// GroupsColumns documents the groups table.
func GroupsColumns() []Column { return docsOf(groupsColumns) }
