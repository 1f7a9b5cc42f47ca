//go:build !unix

package relay

import "syscall"

func smallRecvBuffer(_, _ string, _ syscall.RawConn) error { return nil }
