//go:build !linux

package relay

import "errors"

func pinToCPU0() error { return errors.New("pinning a thread to a CPU is implemented on Linux only") }
