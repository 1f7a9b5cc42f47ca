//go:build !unix

package relay

import (
	"syscall"
	"time"
)

func smallRecvBuffer(_, _ string, _ syscall.RawConn) error { return nil }

func cpuTime() time.Duration { return 0 }
