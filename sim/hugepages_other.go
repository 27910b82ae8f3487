//go:build !linux

package sim

// adviseHuge does nothing but on Linux (hugepages_linux.go).
func adviseHuge[T any](t []T) {}
