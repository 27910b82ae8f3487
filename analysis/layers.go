package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/herdsweep/herdsweep/dataset"
	"github.com/herdsweep/herdsweep/grid"
	"github.com/herdsweep/herdsweep/internal/num"
	"github.com/herdsweep/herdsweep/sim"
)

// Chained reports whether a cell has services in front of its server
// (sim.Chain): its metrics are per service, and it is compared with the
// other chains of its scenario (LayerStudies), not with single servers.
func Chained(a *Aggregate) bool { return a.Cell.Chained() }

// LayerAmp[j] is the attempts at service j+1 per client
// (layerN_amplification): the load the clients' requests put on it.
var LayerAmp = func() (ms [sim.MaxLayers]Metric) {
	for j := range ms {
		key := dataset.LayerColumn(j+1, dataset.LayerAmplification)
		ms[j] = Metric{Key: key, Title: fmt.Sprintf("attempts at service %d per client", j+1), Unit: "attempts",
			get: func(r *dataset.Record) (float64, bool) {
				return r.Result.Layers[j].Amplification(r.Result.Clients), true
			},
			reads: []string{dataset.LayerColumn(j+1, dataset.LayerAttempts), dataset.ColClients}}
	}
	return ms
}()

// ServedShare is the share of the clients served by the run's end.
var ServedShare = Metric{Key: "served_share", Title: "clients served", Unit: "share",
	get: func(r *dataset.Record) (float64, bool) {
		if r.Result.Clients == 0 {
			return 0, false
		}
		return float64(r.Result.Succeeded) / float64(r.Result.Clients), true
	},
	reads: []string{dataset.ColSucceeded, dataset.ColClients}}

// LayerAbandoned[j] is the attempts at service j+1 per client that their
// caller abandoned at its timeout (layerN_abandoned; a queued chain's,
// sim/chainq.go).
var LayerAbandoned = func() (ms [sim.MaxLayers]Metric) {
	for j := range ms {
		ms[j] = Metric{Key: dataset.LayerColumn(j+1, dataset.LayerAbandoned) + "_per_client", Title: fmt.Sprintf("abandoned attempts at service %d per client", j+1), Unit: "attempts",
			get: func(r *dataset.Record) (float64, bool) {
				if r.Result.Clients == 0 {
					return 0, false
				}
				return float64(r.Result.Layers[j].Abandoned) / float64(r.Result.Clients), true
			},
			reads: []string{dataset.LayerColumn(j+1, dataset.LayerAbandoned), dataset.ColClients}}
	}
	return ms
}()

// LayerWastedShare is the share of the queueing services' work (all of them,
// the server included) spent on attempts their callers had abandoned:
// Σ layerN_wasted_ms ÷ Σ layerN_busy_ms; none without work.
var LayerWastedShare = Metric{Key: "layers_wasted_share", Title: "the services' work wasted on abandoned attempts", Unit: "share",
	get: func(r *dataset.Record) (float64, bool) {
		var busy, wasted float64
		for _, l := range r.Result.Layers {
			busy, wasted = busy+l.BusyMS, wasted+l.WastedMS
		}
		if busy == 0 {
			return 0, false
		}
		return wasted / busy, true
	},
	reads: func() (cols []string) {
		for n := 1; n <= sim.MaxLayers; n++ {
			cols = append(cols, dataset.LayerColumn(n, dataset.LayerBusy), dataset.LayerColumn(n, dataset.LayerWasted))
		}
		return cols
	}()}

// LayerMetrics are what a chained cell is summarised on besides Metrics.
var LayerMetrics = slices.Concat(LayerAmp[:], LayerAbandoned[:], []Metric{ServedShare, LayerWastedShare})

// LayerScenario is one scenario of chains: the same server, clients and
// policy (the server's failure share in its scenario) and fanout, each chain of services a row, ranked
// by the attempts at the server per client (the deepest service's), then
// by t99.
type LayerScenario struct {
	Scenario sim.Scenario
	Policy   sim.Policy
	Fanout   int
	Services int // the services of its longest chain, the server included
	Rows     []*Aggregate
}

// ChainServer is the deepest service's index in row a's chain.
func ChainServer(a *Aggregate) int {
	ch, err := a.Cell.Chain()
	if err != nil {
		return 0
	}
	return ch.N
}

// ServerAmp is the summary of the attempts at row a's server per client.
func ServerAmp(a *Aggregate) Summary { return a.Summary(LayerAmp[ChainServer(a)]) }

// LayerStudies groups the runs of chained cells by scenario (all but the
// layers), each summarised on Metrics and LayerMetrics; other cells'
// runs are left out. Scenarios come in the order first met.
func LayerStudies(recs []Record) []LayerScenario {
	var ps []*Record
	for i := range recs {
		if recs[i].Cell.Chained() {
			ps = append(ps, &recs[i])
		}
	}
	aggs := aggregatesOf(ps, slices.Concat(Metrics, LayerMetrics))
	var out []LayerScenario
	index := map[string]int{}
	for _, a := range aggs {
		k := withoutLayers(a.Cell)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			c := a.Cell
			out = append(out, LayerScenario{Scenario: c.Scenario, Policy: c.Policy, Fanout: c.Fanout})
		}
		out[i].Rows = append(out[i].Rows, a)
		out[i].Services = max(out[i].Services, ChainServer(a)+1)
	}
	for _, ls := range out {
		slices.SortStableFunc(ls.Rows, func(x, y *Aggregate) int {
			if c := cmp.Compare(ServerAmp(x).Mean, ServerAmp(y).Mean); c != 0 {
				return c
			}
			return cmp.Compare(x.Summary(T99).Mean, y.Summary(T99).Mean)
		})
	}
	return out
}

// withoutLayers is the cell's canonical form without its layers: its
// scenario of chains.
func withoutLayers(c grid.Cell) string {
	c.Layers = ""
	return c.Canonical()
}

// Retrying reports, for row a, which of its callers retry: the clients,
// then each service in front of the server ("clients", "A", "B", …).
func Retrying(a *Aggregate) []string {
	ch, err := a.Cell.Chain()
	if err != nil {
		return nil
	}
	var out []string
	for c := range ch.N + 1 {
		if ch.Retries(c, a.Cell.Policy) {
			out = append(out, CallerName(c))
		}
	}
	return out
}

// CallerName names caller c of a chain: "clients", then the services in
// front of the server "A", "B", "C".
func CallerName(c int) string {
	if c == 0 {
		return "clients"
	}
	return string(rune('A' + c - 1))
}

// ServiceName names service j of a chain of n services (the server
// included): "A", "B", … and "server" for the deepest.
func ServiceName(j, n int) string {
	if j == n-1 {
		return "server"
	}
	return string(rune('A' + j))
}

// Budgeted reports whether some service of row a's chain retries under a
// retry budget.
func Budgeted(a *Aggregate) bool {
	ch, err := a.Cell.Chain()
	if err != nil {
		return false
	}
	for _, l := range ch.Front[:ch.N] {
		if l.Policy.RetryBudget > 0 {
			return true
		}
	}
	return false
}

// ChainWords says row a's chain in words: who retries, and with what
// budget.
func ChainWords(a *Aggregate) string {
	who := Retrying(a)
	var w string
	switch {
	case len(who) == 0:
		w = "nobody retries"
	case len(who) == 1:
		w = who[0] + " retry"
		if who[0] != "clients" {
			w = who[0] + " retries"
		}
	default:
		w = strings.Join(who[:len(who)-1], ", ") + " and " + who[len(who)-1] + " retry"
	}
	if Budgeted(a) {
		w += ", services under a retry budget"
	}
	return w
}

// Words is row a's chain in words (ChainWords), made unique within the
// scenario: rows whose chains read the same (two capacities of A, two
// retry counts) have their services' settings after them.
func (s LayerScenario) Words(a *Aggregate) string {
	w := ChainWords(a)
	for _, b := range s.Rows {
		if b != a && ChainWords(b) == w {
			return w + " (" + ServicesWords(a) + ")"
		}
	}
	return w
}

// ServicesWords says each service in front of the server of row a's chain:
// its capacity, outage and policy ("A 20 req/s, full jitter …; B no
// limit, no retries"), and the fan-out.
func ServicesWords(a *Aggregate) string { return CellServicesWords(a.Cell) }

// CellServicesWords is ServicesWords of cell c's chain.
func CellServicesWords(c grid.Cell) string {
	ch, err := c.Chain()
	if err != nil {
		return c.Layers
	}
	var parts []string
	for i := range ch.N {
		l := ch.Front[i]
		w := CallerName(i+1) + " no limit"
		if l.Capacity > 0 {
			w = fmt.Sprintf("%s %s req/s", CallerName(i+1), num.Short(l.Capacity))
		}
		if l.RecoverAt > l.OutageStart {
			w += fmt.Sprintf(", down %v–%v", l.OutageStart, l.RecoverAt)
		}
		if ch.Retries(i+1, c.Policy) {
			w += ", " + l.Policy.Describe()
		} else {
			w += ", no retries"
		}
		parts = append(parts, w)
	}
	if ch.Fanout > 1 {
		parts = append(parts, fmt.Sprintf("fan-out %d", ch.Fanout))
	}
	return strings.Join(parts, "; ")
}
