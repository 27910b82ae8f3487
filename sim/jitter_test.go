package sim

import (
	"math"
	"testing"
	"time"
)

// A family says how wide its jitter is: JitterFraction is the fraction by
// which the family's own bounds let its first delay move below the delay
// without jitter (watchdog and http-retry read their width as the band's
// full width), and WidthOf is its inverse.
func TestJitterFractionIsTheFamilysBand(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{WidthJitter, GRPC, WatchDog, HTTPRetry, SgcPM} {
		t.Run(string(k), func(t *testing.T) {
			p := DefaultPolicy(k)
			p.Base, p.Cap, p.Width = time.Second, 0, 0.3
			p = p.Normalize()
			f, _ := lookup(k)
			lo, _ := f.bounds(p, 0, true)
			none := p
			none.Width = 0
			d, _ := f.bounds(none, 0, true)
			if want := d * (1 - p.JitterFraction()); math.Abs(lo-want) > 1e-9 {
				t.Errorf("first delay at least %g ms, JitterFraction %g says %g", lo, p.JitterFraction(), want)
			}
			if w := k.WidthOf(p.JitterFraction()); w != p.Width {
				t.Errorf("WidthOf(%g) = %g, want the width %g", p.JitterFraction(), w, p.Width)
			}
		})
	}
}
