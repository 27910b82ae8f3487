//go:build unix

package store

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// pidAlive reports whether a process of this host has the id pid.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// PIDSpace names the process ids this process sees: the kernel's boot
// and the pid namespace (Linux), "" where it cannot tell. Two containers
// may share a host name, and each runs its writer as pid 1: only in the
// same pid space does "pid 1 is alive" say anything of another writer.
func PIDSpace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
}
