//go:build !amd64 && !arm64

package sim

import "unsafe"

// prefetch does nothing where there is no prefetch instruction in
// prefetch_*.s.
func prefetch(p unsafe.Pointer) {}
