package sim

import (
	"math"
	"testing"
	"time"
)

// MeanService is the mean of the service times the queueing server draws:
// for a lognormal (median 30 ms, p99 200 ms) the median's e^(σ²/2),
// 41.8 ms, not the median; 200,000 draws agree within 4 standard errors.
func TestMeanServiceIsTheDrawsMean(t *testing.T) {
	for _, sc := range []Scenario{
		{Concurrency: 4, Service: "lognormal", ServiceTime: 30 * time.Millisecond, ServiceP99: 200 * time.Millisecond},
		{Concurrency: 4, Service: "lognormal", ServiceTime: 10 * time.Millisecond, ServiceP99: 20 * time.Millisecond},
		{Concurrency: 2, Service: "exponential", ServiceTime: 25 * time.Millisecond},
		{Concurrency: 2, Service: "fixed", ServiceTime: 25 * time.Millisecond},
	} {
		var q queueRun
		q.kind, q.svc = serviceKind(sc.Service), ms(sc.ServiceTime)
		if q.kind == 2 {
			q.mu, q.sigma = logPure(q.svc), sc.logSigma()
		}
		rng := NewMulberry32(7)
		const n = 200_000
		var sum, sq float64
		for range n {
			x := q.service(rng)
			sum += x
			sq += x * x
		}
		mean := sum / n
		se := math.Sqrt((sq/n - mean*mean) / n)
		want := ms(sc.MeanService())
		if math.Abs(mean-want) > 4*se+1e-9 {
			t.Errorf("%s %v/%v: draws' mean %.3f ms ± %.3f, MeanService %.3f ms", sc.Service, sc.ServiceTime, sc.ServiceP99, mean, se, want)
		}
	}
	if m := (Scenario{Concurrency: 4, Service: "lognormal", ServiceTime: 30 * time.Millisecond, ServiceP99: 200 * time.Millisecond}).MeanService(); m < 41*time.Millisecond || m > 43*time.Millisecond {
		t.Errorf("lognormal 30/200 ms: mean %v, want 41.8 ms", m)
	}
	if (Scenario{}).MeanService() != 0 {
		t.Error("the counting server has a mean service time")
	}
}
