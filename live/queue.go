package live

import (
	"container/heap"
	"math"
	"time"

	"github.com/herdsweep/herdsweep/sim"
)

// virtualQueue is sim's queueing server as a virtual run plays it: FCFS
// with Concurrency workers and no queue bound, each admitted request
// taking a service time drawn from the scenario's fixed or exponential
// distribution. A tick's requests arrive at its close, k·tick, as sim's
// do, in client order; each starts when the earliest worker is free and is
// answered a service time later, which its handler waits for on the
// bubble's clock. Its client stops waiting at k·tick + Timeout (the
// recorder's deadline): the request then counts as timed out, and the
// server still spends the service time on it. The service times come from
// the run's own stream (sim.Mulberry32 of the seed's complement), not
// sim's, so a run on a queueing server is compared as a distribution.
type virtualQueue struct {
	free    timeHeap // when each worker is next free, since the start
	mean    time.Duration
	exp     bool
	rng     *sim.Mulberry32
	timeout time.Duration
}

func newVirtualQueue(sc sim.Scenario, seed uint32) *virtualQueue {
	q := &virtualQueue{free: make(timeHeap, sc.Concurrency), mean: sc.ServiceTime, exp: sc.Service == "exponential",
		rng: sim.NewMulberry32(^seed), timeout: sc.Timeout}
	heap.Init(&q.free)
	return q
}

// admit decides a request arriving at a (since the start): when it is
// answered.
func (q *virtualQueue) admit(a time.Duration) time.Duration {
	start := max(a, q.free[0])
	s := q.mean
	if q.exp {
		s = time.Duration(-float64(q.mean) * math.Log(1-q.rng.Float64()))
	}
	q.free[0] = start + s
	heap.Fix(&q.free, 0)
	return start + s
}

type timeHeap []time.Duration

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
