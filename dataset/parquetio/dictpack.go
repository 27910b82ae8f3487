package parquetio

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/herdsweep/herdsweep/dataset"
)

// A numeric column whose values do not come in runs but take few values
// (a run's milestones are whole ticks: a few hundred of 5,000 seeds'; its
// requests sent, a score) is a dictionary too, its indices bit-packed:
// nine bits a value instead of eight bytes for the codec to squeeze, which
// made such columns most of what zstd spent on a sweep of tiny runs. The
// dictionary is built with a small open-addressing table of the values'
// bits, and given up as soon as it holds more than maxPacked entries or
// an eighth of the values: a column that rarely repeats is PLAIN.

// maxPacked bounds the entries of a bit-packed dictionary.
const maxPacked = 4096

// packer builds bit-packed dictionaries; an encoder keeps one.
type packer struct {
	keys []uint64 // open addressing by the values' bits
	ids  []int32  // entry+1 of keys[i]; 0 = free
	idx  []int32  // the span's values' entries
}

// packed builds the dictionary of the span's values in dc and their
// entries in p.idx, and reports whether the column is written so: a
// numeric column whose distinct values are at most maxPacked and an
// eighth of them.
func (p *packer) packed(c *colBuf, dc *colBuf, s span) bool {
	n := s.vhi - s.vlo
	limit := min(maxPacked, n/8)
	if c.plain || n < 64 || (c.kind != dataset.Float64 && c.kind != dataset.Int64) {
		return false
	}
	size := 1 << bits.Len(uint(2*limit))
	if cap(p.keys) < size {
		p.keys, p.ids = make([]uint64, size), make([]int32, size)
	}
	p.keys, p.ids = p.keys[:size], p.ids[:size]
	clear(p.ids)
	*dc = colBuf{kind: c.kind}
	p.idx = p.idx[:0]
	shift := 64 - bits.Len(uint(size-1))
	for i := s.vlo; i < s.vhi; i++ {
		var k uint64
		if c.kind == dataset.Float64 {
			k = math.Float64bits(c.f64[i])
		} else {
			k = uint64(c.i64[i])
		}
		h := (k * 0x9E3779B97F4A7C15) >> shift
		for p.ids[h] != 0 && p.keys[h] != k {
			h = (h + 1) & uint64(size-1)
		}
		if p.ids[h] == 0 {
			if dc.rows == limit {
				return false
			}
			p.keys[h] = k
			dc.rows++
			p.ids[h] = int32(dc.rows)
			if c.kind == dataset.Float64 {
				dc.f64 = append(dc.f64, c.f64[i])
			} else {
				dc.i64 = append(dc.i64, c.i64[i])
			}
		}
		p.idx = append(p.idx, p.ids[h]-1)
	}
	return true
}

// bitPacked appends the data page's values of a dictionary of entries
// entries: the indices' bit width, then idx as one bit-packed run of
// groups of eight (the last padded with zeros; the page says how many
// values it has).
func bitPacked(b []byte, idx []int32, entries int) []byte {
	w := max(1, bits.Len(uint(entries-1)))
	b = append(b, byte(w))
	groups := (len(idx) + 7) / 8
	b = binary.AppendUvarint(b, uint64(groups)<<1|1)
	var acc uint64
	nb := 0
	for i := range groups * 8 {
		var v uint64
		if i < len(idx) {
			v = uint64(idx[i])
		}
		acc |= v << nb
		nb += w
		for nb >= 8 {
			b = append(b, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	return b
}
