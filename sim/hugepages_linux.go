package sim

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks Linux to back the large table t with transparent huge
// pages (madvise MADV_HUGEPAGE; a hint, which fails quietly where THP is
// off). A run reads a million clients' 16 MB of state at random: with 4 KB
// pages such a read can miss the TLB as well as the cache. Only whole
// pages inside t are advised, and only for tables of 4 MB and more.
func adviseHuge[T any](t []T) {
	const page = 4096
	n := uintptr(len(t)) * unsafe.Sizeof(*new(T))
	if n < 4<<20 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(t)))
	lo, hi := (p+page-1)&^(page-1), (p+n)&^(page-1)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(t))), n)
	_ = syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE)
}
