//go:build amd64 || arm64

package sim

import "unsafe"

// prefetch asks the processor to bring p's cache line into its cache and
// goes on at once (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64): unlike a
// load, it holds up none of the instructions after it, and it changes
// nothing but the timing.
//
//go:noescape
func prefetch(p unsafe.Pointer)
