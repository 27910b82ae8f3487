package sim

import (
	"testing"
	"time"
)

// BenchmarkLimiter is BenchmarkQueue's open-loop run (20 workers × 100 ms,
// 100 requests/s of new traffic, 1 s timeouts, the article's herd) with
// each adaptive limiter in front, and served LIFO: what each costs per
// event beside BenchmarkQueue/open-loop.
func BenchmarkLimiter(b *testing.B) {
	sc := Article()
	sc.Concurrency, sc.Service, sc.ServiceTime = 20, "exponential", 100*time.Millisecond
	sc.ArrivalRate, sc.Timeout = 100, time.Second
	for _, lim := range Limiters {
		l := sc
		l.Limiter, l.QueueWait = lim, 100*time.Millisecond
		b.Run(lim, func(b *testing.B) { benchRun(b, l, DefaultPolicy(FullJitter)) })
	}
	l := sc
	l.QueueOrder = "lifo"
	b.Run("lifo", func(b *testing.B) { benchRun(b, l, DefaultPolicy(FullJitter)) })
}
