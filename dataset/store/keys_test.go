package store

import (
	"math/rand/v2"
	"testing"

	"github.com/herdsweep/herdsweep/grid"
)

// The check holds run keys as 8-byte numbers; keys that are not 16
// lower-case hex digits keep their text, so no two distinct keys meet.
func TestKeyMapKeepsKeysApart(t *testing.T) {
	keys := []string{"cc0f771059aff697", "a7396b70daf6ee1b", "CC0F771059AFF697", "cc0f771059aff69", "", "0000000000000000", "+c0f771059aff697"}
	m := newKeyMap[int](0)
	for i, k := range keys {
		if _, ok := m.get(k); ok {
			t.Errorf("%q found before it was put", k)
		}
		m.put(k, i)
	}
	if m.len() != len(keys) {
		t.Errorf("%d keys, the map holds %d", len(keys), m.len())
	}
	for i, k := range keys {
		if v, ok := m.get(k); !ok || v != i {
			t.Errorf("get(%q) = %d, %v; want %d", k, v, ok, i)
		}
	}
	for k, want := range map[string]uint64{keys[0]: 0xcc0f771059aff697, "0123456789abcdef": 0x0123456789abcdef, "ffffffffffffffff": 1<<64 - 1} {
		if h, ok := hexKey(k); !ok || h != want {
			t.Errorf("hexKey(%q) = %x, %v", k, h, ok)
		}
	}
	for _, k := range []string{"0123456789abcdeg", "0123456789abcdE0", "0123456789abcd/0", "0123456789abcd:0", "0123456789abcd`0"} {
		if _, ok := hexKey(k); ok {
			t.Errorf("hexKey(%q) took it for a key", k)
		}
	}
	l := newKeyList(keys[:4])
	for _, k := range keys[:4] {
		if !l.holds(k) {
			t.Errorf("holds(%q) = false, in the list", k)
		}
	}
	for _, k := range keys[4:] {
		if l.holds(k) {
			t.Errorf("holds(%q) = true, not in the list", k)
		}
	}
}

// The keys a runs writer keeps (grid.Keyer.Bits) are the numbers the
// check reads from the keys' text (hexKey).
func TestKeptBitsAreTheKeysText(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 27))
	for range 1000 {
		b := rng.Uint64() >> rng.IntN(64)
		if h, ok := hexKey(grid.KeyOfBits(b)); !ok || h != b {
			t.Fatalf("hexKey(KeyOfBits(%#x)) = %#x, %v", b, h, ok)
		}
	}
}
