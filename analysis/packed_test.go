package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Every value comes back with its bits, whatever the mix: whole ticks of
// 10 ms and 1 ms, counts, values no unit holds, NaNs first or between,
// spreads that need wider codes, and a value below the first.
func TestPackedIsLossless(t *testing.T) {
	t.Parallel()
	ticks := func(ms int64) float64 { return (time.Duration(ms) * time.Millisecond).Seconds() }
	cases := map[string][]float64{
		"empty":              {},
		"NaN only":           {math.NaN(), math.NaN()},
		"NaN first":          {math.NaN(), ticks(1230), ticks(1240)},
		"ticks of 10 ms":     {ticks(12340), ticks(12350), ticks(9990), math.NaN(), ticks(12340)},
		"then 1 ms":          {ticks(1000), ticks(2000), ticks(2001)},
		"counts":             {20, 0, 3, 17},
		"wide spread":        {ticks(10), ticks(600_000), ticks(20), 1e6, 0},
		"then a fraction":    {20, 21, 1.0 / 3, 22},
		"raw first":          {math.Pi, 1, math.NaN(), 2},
		"negative zero":      {1, math.Copysign(0, -1), 2},
		"beyond int64 ns":    {1, 1e12, 2},
		"below the first":    {500, 400, 300, 200, 100, 0},
		"sentinel neighbour": {0, 127, -127, 128},
	}
	for name, xs := range cases {
		var p packed
		for _, x := range xs {
			p.Append(x)
		}
		if p.Len() != len(xs) {
			t.Fatalf("%s: %d values, want %d", name, p.Len(), len(xs))
		}
		got := p.Values()
		if !samePerSeed(got, xs) {
			t.Errorf("%s: got %v, want %v", name, got, xs)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		var xs []float64
		var p packed
		for range rng.IntN(300) {
			var x float64
			switch rng.IntN(6) {
			case 0:
				x = math.NaN()
			case 1:
				x = float64(rng.IntN(1 << uint(rng.IntN(40))))
			case 2:
				x = rng.NormFloat64() * 100
			default:
				x = ticks(10 * int64(rng.IntN(1<<uint(rng.IntN(24)))))
			}
			xs = append(xs, x)
			p.Append(x)
		}
		if !samePerSeed(p.Values(), xs) {
			t.Fatalf("trial %d: got %v, want %v", trial, p.Values(), xs)
		}
	}
}

// The values of the datasets' metrics take the fewest bytes their spread
// allows: times of 10 ms ticks over a minute two bytes, small counts one,
// anything else eight.
func TestPackedWidth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		value func(i int) float64
		width int
	}{
		{"gave up, 0 to 20 clients", func(i int) float64 { return float64(i % 21) }, 1},
		{"t99 over a minute of 10 ms ticks", func(i int) float64 { return (time.Duration(i%6000) * 10 * time.Millisecond).Seconds() }, 2},
		{"unfinished every 7th", func(i int) float64 {
			if i%7 == 0 {
				return math.NaN()
			}
			return float64(i % 100)
		}, 1},
		{"fractions", func(i int) float64 { return float64(i) / 3 }, 8},
	}
	for _, c := range cases {
		var p packed
		const n = 10_000
		for i := range n {
			p.Append(c.value(i))
		}
		p.clip()
		if p.width != c.width || p.bytes() > n*c.width+n*c.width/8 {
			t.Errorf("%s: width %d, %d bytes for %d values; want width %d", c.name, p.width, p.bytes(), n, c.width)
		}
	}
}
