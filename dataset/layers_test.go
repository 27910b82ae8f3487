package dataset

import (
	"testing"

	"github.com/herdsweep/herdsweep/sim"
)

// A chain's per-service results go out in their columns and come back,
// NLayers with them; amplification is attempts over clients.
func TestLayerColumnsRoundTrip(t *testing.T) {
	t.Parallel()
	res := sim.Result{Clients: 200, NLayers: 3}
	res.Layers[0] = sim.LayerResult{Attempts: 600, Rejected: 10, Served: 150}
	res.Layers[1] = sim.LayerResult{Attempts: 1800, Rejected: 0, Served: 150}
	res.Layers[2] = sim.LayerResult{Attempts: 5400, Rejected: 5200, Served: 150, Abandoned: 30, BusyMS: 5400.5, WastedMS: 300.25}
	w := &RunRow{Result: &res}
	var r Record
	r.Result.Clients = 200
	found := 0
	for _, c := range RunsTable() {
		for n := 1; n <= sim.MaxLayers; n++ {
			for _, kind := range []string{LayerAttempts, LayerRejected, LayerServed, LayerAmplification, LayerAbandoned, LayerBusy, LayerWasted} {
				if c.Name != LayerColumn(n, kind) {
					continue
				}
				found++
				var v Value
				c.Get(w, &v)
				if kind == LayerAmplification {
					if want := float64(res.Layers[n-1].Attempts) / 200; v.Float != want {
						t.Errorf("%s = %g, want %g", c.Name, v.Float, want)
					}
					continue
				}
				if !OptionalColumn(c.Name) || !IsMetric(c.Name) {
					t.Errorf("%s: want an optional metric", c.Name)
				}
				if err := c.Set(&r, v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if found != 7*sim.MaxLayers {
		t.Fatalf("%d layer columns, want %d", found, 7*sim.MaxLayers)
	}
	if r.Result.Layers != res.Layers || r.Result.NLayers != 3 {
		t.Errorf("read back %+v (%d layers), want %+v (3)", r.Result.Layers, r.Result.NLayers, res.Layers)
	}
}
