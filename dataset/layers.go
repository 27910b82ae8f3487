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
)

// LayerColumn names service n's column of a kind (LayerAttempts …):
// layer2_attempts.
func LayerColumn(n int, kind string) string { return fmt.Sprintf("layer%d_%s", n, kind) }

// The runs table's results end with the chain's columns: added after
// runs/3 parts were written, optional (a part without them reads zeros,
// which is what its runs had).
func init() { runsMetricColumns = append(runsMetricColumns, layerColumns()...) }

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
