package parquetio

import (
	"encoding/binary"
	"math/bits"
)

// An Int64 column of rows that is not a dictionary is written
// DELTA_BINARY_PACKED rather than PLAIN and compressed: each value as its
// difference from the one before, bit-packed in miniblocks of 32 at the
// width of their largest difference from the block's least. A run's seeds
// (one after another in a cell) take a few bytes a block of 128 instead
// of eight a value for zstd to find again, and other counts about what
// zstd made of them, without its CPU.

const (
	deltaBlock      = 128 // values a block
	deltaMiniblocks = 4   // miniblocks a block, of deltaBlock/deltaMiniblocks values
)

// deltaBinaryPacked appends the DELTA_BINARY_PACKED encoding of v to b:
// the header (block size, miniblocks a block, the number of values, the
// first value), then for each block of up to 128 differences the least
// difference, the miniblocks' bit widths and the miniblocks, each of 32
// values less the least difference (a block's last miniblocks padded with
// zeros, those with no value at all left out with width 0).
func deltaBinaryPacked(b []byte, v []int64) []byte {
	b = binary.AppendUvarint(b, deltaBlock)
	b = binary.AppendUvarint(b, deltaMiniblocks)
	b = binary.AppendUvarint(b, uint64(len(v)))
	if len(v) == 0 {
		return binary.AppendVarint(b, 0)
	}
	b = binary.AppendVarint(b, v[0]) // zigzag
	const per = deltaBlock / deltaMiniblocks
	var d [deltaBlock]uint64
	for lo := 1; lo < len(v); lo += deltaBlock {
		hi := min(len(v), lo+deltaBlock)
		least := v[lo] - v[lo-1] // differences wrap around, as readers add them back
		for i := lo; i < hi; i++ {
			least = min(least, v[i]-v[i-1])
		}
		for i := lo; i < hi; i++ {
			d[i-lo] = uint64((v[i] - v[i-1]) - least)
		}
		n := hi - lo
		clear(d[n:])
		b = binary.AppendVarint(b, least)
		widths := len(b)
		b = append(b, make([]byte, deltaMiniblocks)...)
		for m := 0; m*per < n; m++ {
			var or uint64
			for _, x := range d[m*per : (m+1)*per] {
				or |= x
			}
			w := bits.Len64(or)
			b[widths+m] = byte(w)
			b = packBits(b, d[m*per:(m+1)*per], w)
		}
	}
	return b
}

// packBits appends the values of x at w bits each, least significant bit
// first (as the RLE/bit-packing hybrid packs them): len(x)*w/8 bytes, x
// holding a multiple of 8 values.
func packBits(b []byte, x []uint64, w int) []byte {
	if w == 0 {
		return b
	}
	var acc uint64 // bits not yet written, the lowest first
	nb := 0
	for _, v := range x {
		acc |= v << nb
		if nb+w >= 64 {
			b = binary.LittleEndian.AppendUint64(b, acc)
			if nb == 0 {
				acc = 0
			} else {
				acc = v >> (64 - nb)
			}
			nb = nb + w - 64
		} else {
			nb += w
		}
	}
	for ; nb > 0; nb -= 8 {
		b = append(b, byte(acc))
		acc >>= 8
	}
	return b
}
