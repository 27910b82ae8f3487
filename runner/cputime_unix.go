//go:build unix

package runner

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used, and
// whether the system says it.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
