package analysis

import (
	"encoding/binary"
	"math"
	"time"
)

// packed holds a metric's per-seed values in a few bytes each, losslessly:
// every value comes back with the bits it went in with. The metrics are
// times counted in whole ticks (Duration.Seconds() of a whole number of
// milliseconds, or of a coarser unit) and counts, so a value is a whole
// number k of a unit, stored as its offset from the first value's k in
// the fewest bytes (1, 2 or 4) that hold every offset; a value no unit
// reproduces bit for bit turns the column into raw float64 bits. NaN (no
// value) is the largest number of the width.
//
// Scan keeps the values of every cell × seed for the paired comparisons;
// as float64 they were 56 bytes per run over the seven metrics (560 MB
// over 10,000,000 runs), packed they are 1–2 bytes per value for the
// datasets measured.
type packed struct {
	unit  int64 // nanoseconds per k, one of packUnits; 0: raw float64 bits
	base  int64 // the k of the first value (offsets are zig-zag coded from it)
	width int   // bytes per value: 1, 2, 4, or 8 for raw float64 bits
	n     int
	data  []byte
}

// packUnits are the units a value may be a whole number of, coarsest first
// (a count is a whole number of seconds: Duration(k·1s).Seconds() is
// float64(k)).
var packUnits = []int64{int64(time.Second), int64(100 * time.Millisecond), int64(10 * time.Millisecond),
	int64(time.Millisecond), int64(time.Microsecond), 1}

// Len is the number of values.
func (p *packed) Len() int { return p.n }

// bytes is the storage the values take, for the tests that bound it.
func (p *packed) bytes() int { return cap(p.data) }

// units reports k with x = Duration(k·unit).Seconds() bit for bit.
func units(x float64, unit int64) (int64, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 9e9 || x == 0 && math.Signbit(x) {
		return 0, false
	}
	d := int64(math.Round(x * 1e9))
	if d%unit != 0 {
		return 0, false
	}
	k := d / unit
	if math.Float64bits(time.Duration(k*unit).Seconds()) != math.Float64bits(x) {
		return 0, false
	}
	return k, true
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// sentinel is the code of NaN at a width.
func sentinel(width int) uint64 { return 1<<(8*uint(width)) - 1 }

// widthFor is the fewest bytes that hold code u below the sentinel.
func widthFor(u uint64) int {
	for _, w := range []int{1, 2, 4} {
		if u < sentinel(w) {
			return w
		}
	}
	return 0 // too far from the base: raw
}

// Append adds x (NaN: no value).
func (p *packed) Append(x float64) {
	if p.width == 0 {
		p.width = 1
		p.unit = -1 // no unit chosen yet: only NaNs so far
	}
	if p.width == 8 {
		p.put(math.Float64bits(x))
		return
	}
	if math.IsNaN(x) {
		p.put(sentinel(p.width))
		return
	}
	if p.unit < 0 {
		p.choose(x)
		if p.width == 8 {
			p.put(math.Float64bits(x))
			return
		}
	}
	k, ok := units(x, p.unit)
	if !ok {
		p.repack(x)
		p.Append(x)
		return
	}
	u := zigzag(k - p.base)
	if u >= sentinel(p.width) {
		p.repack(x)
		p.Append(x)
		return
	}
	p.put(u)
}

// choose picks the coarsest unit of x, the first value.
func (p *packed) choose(x float64) {
	for _, unit := range packUnits {
		if k, ok := units(x, unit); ok {
			p.unit, p.base = unit, k
			return
		}
	}
	p.toRaw()
}

// repack recodes the values so that x fits: a finer unit, or a wider code,
// or raw bits.
func (p *packed) repack(x float64) {
	vals := p.Values()
	for _, unit := range packUnits {
		if unit > p.unit {
			continue // coarser units were tried with these values already
		}
		ks := make([]int64, 0, len(vals)+1)
		ok := true
		for _, v := range append(vals, x) {
			if math.IsNaN(v) {
				continue
			}
			k, fits := units(v, unit)
			if !fits {
				ok = false
				break
			}
			ks = append(ks, k)
		}
		if !ok {
			continue
		}
		width := 1
		for _, k := range ks {
			w := widthFor(zigzag(k - ks[0]))
			if w == 0 {
				ok = false
				break
			}
			width = max(width, w)
		}
		if !ok {
			break // a finer unit only spreads the codes further
		}
		p.unit, p.base, p.width, p.n, p.data = unit, ks[0], width, 0, nil
		for _, v := range vals {
			p.Append(v)
		}
		return
	}
	p.width, p.n, p.data = 8, 0, nil
	for _, v := range vals {
		p.put(math.Float64bits(v))
	}
}

// toRaw turns the (NaN-only) column into raw bits.
func (p *packed) toRaw() {
	n := p.n
	p.width, p.n, p.data = 8, 0, nil
	for range n {
		p.put(math.Float64bits(math.NaN()))
	}
}

func (p *packed) put(u uint64) {
	switch p.width {
	case 1:
		p.data = append(p.data, byte(u))
	case 2:
		p.data = binary.LittleEndian.AppendUint16(p.data, uint16(u))
	case 4:
		p.data = binary.LittleEndian.AppendUint32(p.data, uint32(u))
	default:
		p.data = binary.LittleEndian.AppendUint64(p.data, u)
	}
	p.n++
}

// At is value i.
func (p *packed) At(i int) float64 {
	var u uint64
	switch p.width {
	case 1:
		u = uint64(p.data[i])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(p.data[2*i:]))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(p.data[4*i:]))
	default:
		return math.Float64frombits(binary.LittleEndian.Uint64(p.data[8*i:]))
	}
	if u == sentinel(p.width) {
		return math.NaN()
	}
	return time.Duration((p.base + unzigzag(u)) * p.unit).Seconds()
}

// Values are the values, in a new slice.
func (p *packed) Values() []float64 {
	out := make([]float64, p.n)
	for i := range out {
		out[i] = p.At(i)
	}
	return out
}

// clip gives back the storage beyond the values (append's headroom).
func (p *packed) clip() {
	if cap(p.data) > len(p.data)+len(p.data)/8 {
		p.data = append([]byte(nil), p.data...)
	}
}
