package store

import (
	"slices"
)

// A run key as the check holds it: the 8 bytes of its 16 hex digits
// (hexKey), or, for a key that is not one (a part written by another
// tool), the key itself. A dataset of 10,000,000 runs kept its keys as
// strings in two maps, 3.45 GB; as 8-byte numbers, a fraction of it.
func hexKey(k string) (uint64, bool) {
	if len(k) != 16 {
		return 0, false
	}
	var h uint64
	for i := range 16 {
		switch c := k[i]; {
		case '0' <= c && c <= '9':
			h = h<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			h = h<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return h, true
}

// keyMap maps run keys to values.
type keyMap[V any] struct {
	hex map[uint64]V
	odd map[string]V
}

// newKeyMap returns a keyMap with room for n keys of 16 hex digits.
func newKeyMap[V any](n int) keyMap[V] {
	return keyMap[V]{hex: make(map[uint64]V, n), odd: map[string]V{}}
}

func (m keyMap[V]) get(k string) (V, bool) {
	if h, ok := hexKey(k); ok {
		v, ok := m.hex[h]
		return v, ok
	}
	v, ok := m.odd[k]
	return v, ok
}

func (m keyMap[V]) put(k string, v V) {
	if h, ok := hexKey(k); ok {
		m.hex[h] = v
	} else {
		m.odd[k] = v
	}
}

func (m keyMap[V]) len() int { return len(m.hex) + len(m.odd) }

// keyList is a runs part's keys, to ask whether it holds one.
type keyList struct {
	hex []uint64 // sorted
	odd map[string]bool
}

func newKeyList(keys []string) keyList {
	var l keyList
	l.hex = make([]uint64, 0, len(keys))
	for _, k := range keys {
		if h, ok := hexKey(k); ok {
			l.hex = append(l.hex, h)
		} else {
			if l.odd == nil {
				l.odd = map[string]bool{}
			}
			l.odd[k] = true
		}
	}
	slices.Sort(l.hex)
	return l
}

func (l keyList) holds(k string) bool {
	if h, ok := hexKey(k); ok {
		_, found := slices.BinarySearch(l.hex, h)
		return found
	}
	return l.odd[k]
}
