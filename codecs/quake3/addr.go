package quake3

import (
	"strconv"

	"github.com/querylens/querylens/internal/ipfmt"
)

// Addr is one master-list entry: an IPv4 or IPv6 address and a port. (Not
// net/netip: this package is compiled into the browser module, which does
// not otherwise need it.)
type Addr struct {
	IP   [16]byte // IPv4 in the first 4 bytes when !Is6
	Is6  bool
	Port uint16
}

// String is "a.b.c.d:port" or "[v6]:port", the IPv6 form compressed as RFC
// 5952 says (lowercase, the longest run of two or more zero groups as
// "::"), as net/netip writes it.
func (a Addr) String() string {
	b := make([]byte, 0, 48)
	if !a.Is6 {
		for i := range 4 {
			if i > 0 {
				b = append(b, '.')
			}
			b = strconv.AppendUint(b, uint64(a.IP[i]), 10)
		}
	} else {
		b = append(b, '[')
		b = ipfmt.AppendIPv6(b, &a.IP)
		b = append(b, ']')
	}
	b = append(b, ':')
	return string(strconv.AppendUint(b, uint64(a.Port), 10))
}

// bytes is the address's wire bytes: 4 or 16.
func (a *Addr) bytes() []byte {
	if a.Is6 {
		return a.IP[:]
	}
	return a.IP[:4]
}
