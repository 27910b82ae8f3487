//go:build unix

package main

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process of this host has the id pid.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
