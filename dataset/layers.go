package dataset

import (
	"fmt"

	"github.com/herdsweep/herdsweep/sim"
)

// A chain's per-service columns (sim.Result.Layers): for service n, 1 the
// one the clients call … sim.MaxLayers, those of LayerColumn(n, …). A run
// without a chain has zeros there; a service beyond its chain too.
const (
	LayerAttempts      = "attempts"
	LayerRejected      = "rejected"
	LayerServed        = "served"
	LayerAmplification = "amplification"
	// A queued chain's (sim/chainq.go), after every service's four above.
	LayerAbandoned = "abandoned"
	LayerBusy      = "busy_ms"
	LayerWasted    = "wasted_ms"
)

// LayerColumn names service n's column of a kind (LayerAttempts …):
// layer2_attempts.
func LayerColumn(n int, kind string) string { return fmt.Sprintf("layer%d_%s", n, kind) }

// The runs table's results end with the chain's columns: added after
// runs/3 parts were written, optional (a part without them reads zeros,
// which is what its runs had).
func init() {
	for _, c := range append(layerColumns(), layerWorkColumns()...) {
		var n int
		if _, err := fmt.Sscanf(c.Name, "layer%d_", &n); err != nil {
			panic("dataset: a layer column named " + c.Name)
		}
		// a run's result holds a layer for each service of its cell's chain
		c.Zero = func(w *RunRow) bool { return w.Cell.Services < n }
		runsMetricColumns = append(runsMetricColumns, c)
	}
}

// layerWorkColumns are a queued chain's per-service columns: abandoned
// attempts and the work done, and wasted, by a queueing service; zeros
// on ticks (counting services whose callers wait).
func layerWorkColumns() []RunsColumn {
	var cols []RunsColumn
	for n := 1; n <= sim.MaxLayers; n++ {
		j := n - 1
		cols = append(cols,
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerAbandoned), Type: Int64}, Optional: true,
				Doc: fmt.Sprintf("service %d: attempts whose caller stopped waiting (its timeout_s) before their answer; the service worked on them to the end", n),
				Get: func(w *RunRow, out *Value) { *out = Value{Int: w.Result.Layers[j].Abandoned} },
				Set: func(r *Record, v Value) error { r.Result.Layers[j].Abandoned = v.Int; return nil }},
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerBusy), Type: Float64}, Optional: true,
				Doc: fmt.Sprintf("service %d, a queueing one: its own work, the service times of the attempts it started, ms", n),
				Get: func(w *RunRow, out *Value) { *out = Value{Float: w.Result.Layers[j].BusyMS} },
				Set: func(r *Record, v Value) error { r.Result.Layers[j].BusyMS = v.Float; return nil }},
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerWasted), Type: Float64}, Optional: true,
				Doc: fmt.Sprintf("service %d: the part of layer%d_busy_ms spent on abandoned attempts (an attempt's service time once it is both begun and abandoned, finished by the window's end or not), ms", n, n),
				Get: func(w *RunRow, out *Value) { *out = Value{Float: w.Result.Layers[j].WastedMS} },
				Set: func(r *Record, v Value) error { r.Result.Layers[j].WastedMS = v.Float; return nil }},
		)
	}
	return cols
}

func layerColumns() []RunsColumn {
	var cols []RunsColumn
	for n := 1; n <= sim.MaxLayers; n++ {
		j := n - 1
		which := fmt.Sprintf("layers: service %d (1: the one the clients call; the last of a chain: the server)", n)
		if n > 1 {
			which = fmt.Sprintf("service %d", n)
		}
		cols = append(cols,
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerAttempts), Type: Int64}, Optional: true,
				Doc: which + ": attempts that reached it (every copy's, with fanout); 0 beyond the chain",
				Get: func(w *RunRow, out *Value) { *out = Value{Int: w.Result.Layers[j].Attempts} },
				Set: func(r *Record, v Value) error {
					r.Result.Layers[j].Attempts = v.Int
					if v.Int > 0 {
						r.Result.NLayers = max(r.Result.NLayers, n)
					}
					return nil
				}},
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerRejected), Type: Int64}, Optional: true,
				Doc: fmt.Sprintf("service %d: attempts it refused itself (down, over its capacity, its failure share)", n),
				Get: func(w *RunRow, out *Value) { *out = Value{Int: w.Result.Layers[j].Rejected} },
				Set: func(r *Record, v Value) error { r.Result.Layers[j].Rejected = v.Int; return nil }},
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerServed), Type: Int64}, Optional: true,
				Doc: fmt.Sprintf("service %d: attempts it answered with success (its callees succeeded; the server: each copy that answered)", n),
				Get: func(w *RunRow, out *Value) { *out = Value{Int: w.Result.Layers[j].Served} },
				Set: func(r *Record, v Value) error { r.Result.Layers[j].Served = v.Int; return nil }},
			RunsColumn{Field: Field{Name: LayerColumn(n, LayerAmplification), Type: Float64}, Optional: true,
				Doc: fmt.Sprintf("service %d: its attempts per client (layer%d_attempts ÷ clients): the load the clients' requests put on it", n, n),
				Get: func(w *RunRow, out *Value) { *out = Value{Float: w.Result.Layers[j].Amplification(w.Result.Clients)} }},
		)
	}
	return cols
}
