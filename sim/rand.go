package sim

// Mulberry32 is the 32-bit PRNG of herd.mjs, bit-exact with its JavaScript
// form (Math.imul and >>> semantics). Its zero value is the stream of seed 0.
//
// It is the only random source of a run: the simulator takes it as a value,
// so two runs with the same seed draw the same numbers.
type Mulberry32 struct {
	state uint32
}

// NewMulberry32 returns the stream that mulberry32(seed) yields in JavaScript.
func NewMulberry32(seed uint32) *Mulberry32 {
	return &Mulberry32{state: seed}
}

// Seed resets the stream to seed.
func (m *Mulberry32) Seed(seed uint32) { m.state = seed }

// Float64 returns the next number in [0, 1), a multiple of 2^-32: the
// next Uint32 / 2^32.
func (m *Mulberry32) Float64() float64 {
	return float64(m.Uint32()) / 4294967296
}

// Uint32 returns the next 32 bits of the stream (JavaScript's
// `(t ^ t >>> 14) >>> 0`, before herd.mjs divides it by 2^32).
func (m *Mulberry32) Uint32() uint32 {
	m.state += 0x6D2B79F5
	a := m.state
	t := (a ^ a>>15) * (1 | a)
	t = (t + (t^t>>7)*(61|t)) ^ t
	return t ^ t>>14
}
