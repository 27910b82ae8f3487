package sim

import (
	"fmt"
	"slices"
	"time"
)

// A brownout (Scenario.FailShare, FailCurve, AddedLatency): a server that
// is up but fails a share of what it serves, and answers late, whatever
// the load. On both servers:
//
//   - a failed request is served: on the counting server it takes its
//     place in the tick's budget, on a queueing server its worker for its
//     service time; then it is answered with a 503 (a server error, as a
//     failing dependency gives) carrying the scenario's Retry-After as the
//     server's other 503s do, and its client applies its rejection rule
//     (attempt limits, client limits, its policy's delay; a retry_on of
//     5xx retries it, retry-after-only gives up unless a Retry-After is
//     sent). It counts in Result.Failed, not in Succeeded or Goodput;
//   - the brownout applies whenever the server is up: the whole run when
//     RecoverAt is 0 (a pure brownout), after recovery otherwise (and on a
//     queueing server before OutageStart too). A request rejected at once
//     (down, over the budget, queue full) draws nothing;
//   - FailShare 0 draws nothing: such a run's stream, and its results, are
//     those of a run without brownout, bit for bit;
//   - a queueing server answers every admitted request AddedLatency after
//     its service ends, without holding its worker; a client whose timeout
//     comes first has timed out. The counting server answers within the
//     tick, so it has no AddedLatency (Validate refuses one).
//
// Draw order: on the counting server, after the server has counted the
// tick's served requests, one draw each, in index order, before the
// rejections' delays; on a queueing server, one draw per admitted request
// right after its service time's. A draw u in [0, 1) fails the request
// when u < the share at the time it is served (counting: the tick's time;
// queueing: its arrival).

// brownout is a run's failure share and added latency.
type brownout struct {
	share float64   // FailShare
	curve []float64 // FailShare × each slot's multiplier; nil: constant
	slot  float64   // ms: a slot of the curve, Horizon / len(curve)
}

// start sets b for sc (FailShare > 0), reusing b's storage.
func (b *brownout) start(sc Scenario) {
	curve := b.curve[:0]
	*b = brownout{share: sc.FailShare}
	if sc.FailCurve != "" {
		c, _ := parseFailCurve(sc.FailCurve) // valid: Validate parsed it
		for _, m := range c {
			curve = append(curve, float64(sc.FailShare*m))
		}
		b.curve = curve
		b.slot = ms(sc.Horizon) / float64(len(c))
	}
}

// shareAt is the failure share at time t (ms).
func (b *brownout) shareAt(t float64) float64 {
	if len(b.curve) == 0 {
		return b.share
	}
	return b.curve[min(max(int(t/b.slot), 0), len(b.curve)-1)]
}

// fails draws whether a request served at time t (ms) fails: one draw.
func (b *brownout) fails(t float64, rng *Mulberry32) bool {
	return rng.Float64() < b.shareAt(t)
}

// parseFailCurve reads Scenario.FailCurve (ParseCurve's syntax).
func parseFailCurve(text string) ([]float64, error) {
	return parseMultipliers(text, "FailShare, one per equal slot of the run (from 0 to the horizon)")
}

// FailShareAt is the failure share of the brownout at time t of a run:
// FailShare, or with a FailCurve its value in t's slot; 0 for a scenario
// whose FailCurve does not parse.
func (s Scenario) FailShareAt(t time.Duration) float64 {
	if s.FailShare <= 0 {
		return 0
	}
	var b brownout
	if s.FailCurve != "" {
		if _, err := parseFailCurve(s.FailCurve); err != nil {
			return 0
		}
	}
	b.start(s)
	return b.shareAt(ms(t))
}

// validateBrownout checks the brownout's fields: the share, its curve,
// and the added latency, which only a queueing server has.
func (s Scenario) validateBrownout() error {
	if !(s.FailShare >= 0 && s.FailShare <= 1) {
		return &FieldError{FieldFailShare, s.FailShare, "a share of the requests served in [0, 1] that fail whatever the load; 0 = none"}
	}
	if s.FailCurve != "" {
		c, err := parseFailCurve(s.FailCurve)
		if err != nil {
			return &FieldError{FieldFailCurve, s.FailCurve, err.Error()}
		}
		if peak := slices.Max(c); s.FailShare*peak > 1 {
			return &FieldError{FieldFailCurve, s.FailCurve, fmt.Sprintf("multipliers whose largest (now %g) times FailShare (%g) is at most 1: a share of the requests", peak, s.FailShare)}
		}
	}
	if err := wholeMS(FieldAddedLatency, s.AddedLatency, 0); err != nil {
		return err
	}
	if s.AddedLatency != 0 && s.Server() == CountingServer {
		return &FieldError{FieldAddedLatency, s.AddedLatency, "0 unless Concurrency > 0: the counting server answers within the tick a request arrives in, so only a queueing server adds latency"}
	}
	if s.QueueOrder == "lifo" && (s.FailShare > 0 || s.AddedLatency > 0) {
		return &FieldError{FieldQueueOrder, s.QueueOrder, `"fifo" (or "") with a brownout (fail_share, added_latency_s): a LIFO server's brownout is not modelled`}
	}
	return nil
}

// brownTick fails each of tick k's served requests (the first served of
// list, in index order), one draw each in index order at the tick's time t
// (ms), and moves the failed ones after those still served, each part in
// index order (the failed have lower indices than the requests over the
// budget, so list[ok:] stays in index order). It returns how many were
// served successfully and how many failed.
func (s *Sim) brownTick(st *runState, list []int32, served int, t float64) (ok, failed int) {
	b, rng := st.brown, st.rng
	fl := s.failBuf[:0]
	for _, i := range list[:served] {
		if b.fails(t, rng) {
			fl = append(fl, i)
		} else {
			list[ok] = i
			ok++
		}
	}
	copy(list[ok:served], fl)
	s.failBuf = fl
	failed = served - ok
	st.ok -= failed
	st.r.Failed += int64(failed)
	if st.backlog != nil { // the backlog counts the failed ones as still waiting
		st.resp.retryAfter = st.backlog.retryAfter(t, st.n-st.ok-st.gaveUp)
	}
	return ok, failed
}

// Logical is the run's logical requests: each client's of the cohort and
// each open-loop request.
func (r *Result) Logical() int64 { return int64(r.Clients) + r.Offered }

// SuccessRate is the share of the logical requests that succeeded by the
// horizon: the cohort's clients served and the open-loop requests answered
// in time, over the clients and the open-loop requests; 0 for none.
func (r *Result) SuccessRate() float64 {
	if r.Logical() == 0 {
		return 0
	}
	return float64(int64(r.Succeeded)+r.OfferedSucceeded) / float64(r.Logical())
}

// Amplification is the load amplification: requests sent (attempts that
// reached the server) over logical requests; 0 for none.
func (r *Result) Amplification() float64 {
	if r.Logical() == 0 {
		return 0
	}
	return float64(r.Sent) / float64(r.Logical())
}
