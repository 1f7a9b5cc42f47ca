//go:build unix

package relay

import (
	"net"
	"net/netip"
	"syscall"
)

const canReconnect = true

// reconnect connects c to target (connect(2) on a connected UDP socket
// replaces its peer), then clears the error and the datagrams that the
// previous target left on it.
func reconnect(c *net.UDPConn, target netip.AddrPort, v6 bool) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var sa syscall.Sockaddr
	if v6 {
		sa = &syscall.SockaddrInet6{Port: int(target.Port()), Addr: target.Addr().As16()}
	} else {
		sa = &syscall.SockaddrInet4{Port: int(target.Port()), Addr: target.Addr().Unmap().As4()}
	}
	var cerr error
	err = rc.Control(func(fd uintptr) {
		if cerr = syscall.Connect(int(fd), sa); cerr != nil {
			return
		}
		syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		var b [1]byte
		for range 256 {
			if _, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_DONTWAIT); err != nil {
				break
			}
		}
	})
	if err != nil {
		return err
	}
	return cerr
}
