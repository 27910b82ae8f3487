package dataset

import (
	"fmt"

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
	// A queueing server's adaptive concurrency limiter (sim/limiter.go).
	ColLimitFinal      = "limit_final"
	ColLimitLowest     = "limit_lowest"
	ColLimiterRejected = "limiter_rejected"
	// A brownout (sim/brownout.go), and what every run has: its success
	// rate and load amplification.
	ColFailed           = "failed"
	ColOfferedSucceeded = "offered_succeeded"
	ColSuccessRate      = "success_rate"
	ColAmplification    = "amplification"
)

// Timeline columns.
const (
	ColTick     = "tick"
	ColTime     = "t_s"
	ColArrivals = "arrivals"
	ColServed   = "served"
)

// Groups columns: a mixed fleet's metrics, one row per policy group.
const (
	ColGroup   = "group"
	ColShare   = "share"
	ColPolicy  = "policy"
	ColPreset  = "preset"
	ColClients = "clients"
)
