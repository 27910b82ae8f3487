package sim

import "math"

// Footprint is an upper estimate of the storage a Sim takes for a run, by
// kind of storage (tested against what it holds after runs). A Sim keeps
// its storage from one run to the next and grows each kind to the largest
// any run needed, so a Sim that runs several scenarios holds at most the
// sum over kinds of their largest (Max), which may be more than the
// largest run's Bytes. Callers compare it with a memory budget before
// running.
type Footprint struct {
	// Clients: 40 bytes per client (its state, the calendar's entries
	// with the slack of growing slices, the sort and fleet tables), 4 more
	// in a brownout (a tick's failed requests, brownTick).
	Clients int64
	// Ticks: 32 per tick and 272 per tick that can hold a client (a
	// sparse calendar's slots, and its partly filled blocks: 256 bytes of
	// indices, 4 of link and up to 8 on the free list, reserved when the
	// run starts, calendar.reset).
	Ticks int64
	// Dense: a dense calendar's bitmap, summaries and counts, exactly (at
	// most 16 MiB of bitmap); 0 for a sparse one.
	Dense int64
	// Queue: a queueing server's 16 bytes per worker, 16 per place in a
	// bounded queue, 12 per tick (21 with open-loop traffic: the time back
	// to steady state's, recovery.go), 80 per open-loop request expected
	// and its latency histogram.
	Queue int64
	// Timeline: 12 bytes per tick, allocated whole when the run starts;
	// 0 without a timeline. The caller's Timeline, not the Sim's.
	Timeline int64
	// Components: the client components' (ComponentBytes), set by the
	// caller, who knows the policy.
	Components int64
	// Chain: a chain of services' (ChainBytes), set by the caller, who
	// knows the chain.
	Chain int64
}

// Footprint is s's Footprint, with the per-tick timeline when timeline is
// set, without the client components' storage.
func (s Scenario) Footprint(timeline bool) Footprint {
	clients, ticks := int64(max(s.Clients, 0)), int64(max(s.ticks(), 0))
	f := Footprint{Clients: 40 * clients, Ticks: 32*ticks + 272*min(ticks, clients)}
	if s.FailShare > 0 {
		f.Clients += 4 * clients
	}
	if words := (clients + 63) / 64; ticks*words*8 <= denseLimit && s.ArrivalRate == 0 { // calendar.reset's choice
		f.Dense = ticks*words*8 + ticks*((words+63)/64)*8 + ticks*4
	}
	if timeline {
		f.Timeline = 12 * ticks
	}
	if s.Server() == QueueingServer { // see queueRun: workers, the waiting queue, per-tick counters
		offered := int64(math.Ceil(max(s.ArrivalRate, 0) * s.curvePeak() * s.Horizon.Seconds()))
		f.Queue = 16*int64(min(s.Concurrency, MaxConcurrency)) + 16*int64(min(s.QueueLimit, MaxQueueLimit)) + 12*ticks + 80*offered + queueFixedBytes
		if s.QueueOrder == "lifo" { // lifo.go: 16 bytes a request whose client waits, at most one a client; the slice's room at most 4 times that
			f.Queue += 64 * (offered + clients)
		}
		if s.Limiter != "" { // limiter.go: a permit (24 bytes) per request in flight, at most LimitMax; the slice's room at most twice that
			f.Queue += 48 * int64(min(orInt(s.LimitMax, LimitMaxDefault), MaxLimit))
		}
		if s.ArrivalRate > 0 { // recovery.go: herdDone, the late answers per window (a tick at most), the calm bits
			f.Queue += 9 * ticks
		}
	}
	return f
}

// Bytes is the footprint in all.
func (f Footprint) Bytes() int64 {
	return f.Clients + f.Ticks + f.Dense + f.Queue + f.Timeline + f.Components + f.Chain
}

// Max is the footprint of a Sim that ran both f's run and g's: each kind
// at the larger of the two.
func (f Footprint) Max(g Footprint) Footprint {
	return Footprint{Clients: max(f.Clients, g.Clients), Ticks: max(f.Ticks, g.Ticks), Dense: max(f.Dense, g.Dense),
		Queue: max(f.Queue, g.Queue), Timeline: max(f.Timeline, g.Timeline), Components: max(f.Components, g.Components),
		Chain: max(f.Chain, g.Chain)}
}

// MemoryBytes is Footprint(timeline).Bytes(): an upper estimate of the
// memory a Sim takes for one run of s, with the per-tick timeline when
// timeline is set (the client components' storage is ComponentBytes).
func (s Scenario) MemoryBytes(timeline bool) int64 { return s.Footprint(timeline).Bytes() }
