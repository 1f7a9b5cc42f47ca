//go:build unix

package relay

import "syscall"

// smallRecvBuffer shrinks a socket's receive buffer (a net.Dialer Control).
func smallRecvBuffer(_, _ string, rc syscall.RawConn) error {
	return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
}
