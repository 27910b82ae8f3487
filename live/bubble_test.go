package live

import (
	"errors"
	"testing"
	"testing/synctest"
)

// benchBubble makes bubbles in a benchmark, which has no *testing.T:
// testing.RunTests runs f as a test of its own, once.
func benchBubble(f func()) error {
	ran := false
	ok := testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{Name: "bubble", F: func(t *testing.T) {
		if ran {
			return
		}
		ran = true
		synctest.Test(t, func(*testing.T) { f() })
	}}})
	if !ok || !ran {
		return errors.New("live: the benchmark's bubble failed")
	}
	return nil
}
