//go:build !js

package bench

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system, every thread) this process
// has used. Per operation it measures work that other processes' load on
// the machine does not inflate, as wall time is.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
