//go:build linux

package relay

import (
	"syscall"
	"unsafe"
)

// pinToCPU0 binds the calling thread to CPU 0 (sched_setaffinity).
func pinToCPU0() error {
	var mask [16]uint64
	mask[0] = 1
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, uintptr(len(mask)*8), uintptr(unsafe.Pointer(&mask[0])))
	if errno != 0 {
		return errno
	}
	return nil
}
