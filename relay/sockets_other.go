//go:build !unix

package relay

import (
	"errors"
	"net"
	"net/netip"
)

// Without connect(2) on a connected socket, every exchange gets a new one.
const canReconnect = false

func reconnect(*net.UDPConn, netip.AddrPort, bool) error {
	return errors.New("relay: reconnecting a UDP socket is not supported here")
}
