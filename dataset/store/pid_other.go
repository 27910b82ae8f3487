//go:build !unix

package store

// pidAlive cannot tell here: a lock is abandoned only by its age.
func pidAlive(pid int) bool { return true }

// PIDSpace cannot tell here either.
func PIDSpace() string { return "" }
