package sim

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Delays returns the waits one client (index 0) draws from policy p after n
// rejections in a row, on the stream of seed, when the server sends
// retryAfter (0 = none) and is up or down. It ignores MaxAttempts.
func (p Policy) Delays(seed uint32, n int, retryAfter time.Duration, up bool) ([]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.delays(NewMulberry32(seed), n, 0, ms(retryAfter), up), nil
}

func (p Policy) delays(rng *Mulberry32, n int, index int32, ra float64, up bool) []float64 {
	d := p.compile()
	c := client{prev: ms(p.Base)}
	r := response{retryAfter: ra, up: up, index: index}
	out := make([]float64, n)
	for i := range out {
		c.att++
		out[i] = d.delay(&c, r, rng)
	}
	return out
}

// CheckPolicy is the conformance check every policy must pass. It drives
// clients through 64 rejections in a row, with and without a Retry-After,
// with the server down and up, and returns every violation in one error:
// a delay that is not finite or negative, one outside the family's bounds,
// or a sequence that differs when replayed on the same seed.
func CheckPolicy(p Policy) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	f, _ := lookup(p.Kind)
	return checkPolicy(p, f.bounds)
}

// checkPolicy is CheckPolicy with the family's bounds given: a test gives
// wrong ones to see the check fail, without writing the families table.
func checkPolicy(p Policy, bounds func(p Policy, ra float64, up bool) (lo, hi float64)) error {
	var errs []error
	const rejections = 64
	const tol = 1e-9 // ms; bounds are computed by other float expressions
	for _, ra := range []float64{0, 1000, 30000} {
		for _, up := range []bool{false, true} {
			lo, hi := bounds(p, ra, up)
			for seed := uint32(0); seed < 8; seed++ {
				index := int32(seed * 7919)
				a := p.delays(NewMulberry32(seed), rejections, index, ra, up)
				b := p.delays(NewMulberry32(seed), rejections, index, ra, up)
				for i, d := range a {
					where := fmt.Sprintf("%s: ra=%gms up=%v seed=%d rejection %d", p, ra, up, seed, i+1)
					switch {
					case math.IsNaN(d) || math.IsInf(d, 0) || d < 0:
						errs = append(errs, fmt.Errorf("%s: delay %g ms: want finite and ≥ 0", where, d))
					case d < lo-tol || d > hi+tol:
						errs = append(errs, fmt.Errorf("%s: delay %g ms outside [%g, %g]", where, d, lo, hi))
					}
					if math.Float64bits(d) != math.Float64bits(b[i]) {
						errs = append(errs, fmt.Errorf("%s: replay gave %g ms, first run %g ms", where, b[i], d))
					}
				}
				if len(errs) > 20 {
					return errors.Join(append(errs, errors.New("… more violations left out"))...)
				}
			}
		}
	}
	return errors.Join(errs...)
}
