package grid

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// A Keyer gives the run keys of one cell's seeds: Key(seed) is
// RunKey(canonical, seed), with the hash of what the seeds share (the
// version and the canonical form, most of what is hashed) done once. A
// sweep's writer keys every seed of a cell in a row. It is not safe for
// concurrent use.
type Keyer struct {
	canonical string
	state     []byte // the hash's state after the whole blocks of the shared prefix
	tail      []byte // the rest of the prefix, then the seed's 4 bytes
	h         hash.Hash
	sum       [sha256.Size]byte
}

// NewKeyer returns the Keyer of the cell whose Canonical() is canonical.
func NewKeyer(canonical string) *Keyer {
	prefix := keyVersion(canonical) + "\x00" + canonical + "\x00"
	whole := len(prefix) / sha256.BlockSize * sha256.BlockSize
	h := sha256.New()
	h.Write([]byte(prefix[:whole]))
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic("grid: " + err.Error()) // crypto/sha256 marshals its state
	}
	return &Keyer{canonical: canonical, state: state, tail: append([]byte(prefix[whole:]), 0, 0, 0, 0), h: h}
}

// Canonical is the canonical form of the Keyer's cell.
func (k *Keyer) Canonical() string { return k.canonical }

// Key is the run key of the cell's seed: RunKey(canonical, seed).
func (k *Keyer) Key(seed uint32) string { return KeyOfBits(k.Bits(seed)) }

// Bits is the run key of the cell's seed as the number its 16 hex digits
// spell: the hash's first 8 bytes, big-endian (KeyOfBits(k.Bits(seed)) ==
// k.Key(seed)), for a writer that keeps its keys without their text.
func (k *Keyer) Bits(seed uint32) uint64 {
	if err := k.h.(encoding.BinaryUnmarshaler).UnmarshalBinary(k.state); err != nil {
		panic("grid: " + err.Error())
	}
	binary.BigEndian.PutUint32(k.tail[len(k.tail)-4:], seed)
	k.h.Write(k.tail)
	return binary.BigEndian.Uint64(k.h.Sum(k.sum[:0]))
}

// KeyOfBits is the run key whose bits are b (Keyer.Bits): 16 hex digits.
func KeyOfBits(b uint64) string {
	var x [8]byte
	var h [16]byte
	binary.BigEndian.PutUint64(x[:], b)
	hex.Encode(h[:], x[:])
	return string(h[:]) // one allocation (hex.EncodeToString makes two)
}
