//go:build !unix

package main

import "time"

// cpuTime cannot tell here: plan calibrates by the wall clock.
func cpuTime() (time.Duration, bool) { return 0, false }
