//go:build !unix

package main

// pidAlive cannot tell here: a lock is abandoned only by its age.
func pidAlive(pid int) bool { return true }

// pidSpace cannot tell here either.
func pidSpace() string { return "" }
