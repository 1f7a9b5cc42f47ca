package pcapng

import (
	"strconv"

	"github.com/querylens/querylens/internal/ipfmt"
)

// Endpoint is an IP address and UDP port. IP holds an IPv4 address in its
// first four bytes when V4 is set.
type Endpoint struct {
	IP   [16]byte
	V4   bool
	Port uint16
}

func (e Endpoint) addr() []byte {
	if e.V4 {
		return e.IP[:4]
	}
	return e.IP[:]
}

// ParseEndpoint parses "a.b.c.d:port" or "[v6]:port". For "name:port" (a
// host name the page cannot resolve) it returns 0.0.0.0 with that port and
// false, so the port, which Wireshark uses to pick a dissector, is kept;
// callers should name the host in the packet's comment.
func ParseEndpoint(s string) (Endpoint, bool) {
	i := len(s) - 1
	for i >= 0 && s[i] != ':' {
		i--
	}
	if i < 0 {
		return Endpoint{V4: true}, false
	}
	port, err := strconv.ParseUint(s[i+1:], 10, 16)
	host := s[:i]
	if err != nil {
		return Endpoint{V4: true}, false
	}
	e := Endpoint{Port: uint16(port)}
	if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		if ip, ok := parseIPv6(host[1 : len(host)-1]); ok {
			// An IPv4-mapped address is written as IPv4.
			if [12]byte(ip[:12]) == [12]byte{10: 0xff, 11: 0xff} {
				copy(e.IP[:], ip[12:])
				e.V4 = true
				return e, true
			}
			e.IP = ip
			return e, true
		}
	} else if ip, ok := parseIPv4(host); ok {
		copy(e.IP[:], ip[:])
		e.V4 = true
		return e, true
	}
	return Endpoint{V4: true, Port: e.Port}, false
}

// parseIPv4 parses dotted-quad decimal, each part 0..255 without leading zeros.
func parseIPv4(s string) ([4]byte, bool) {
	var ip [4]byte
	for k := 0; k < 4; k++ {
		if k > 0 {
			if len(s) == 0 || s[0] != '.' {
				return ip, false
			}
			s = s[1:]
		}
		n, v := 0, 0
		for n < len(s) && n < 3 && s[n] >= '0' && s[n] <= '9' {
			v = v*10 + int(s[n]-'0')
			n++
		}
		if n == 0 || v > 255 || (n > 1 && s[0] == '0') {
			return ip, false
		}
		ip[k] = byte(v)
		s = s[n:]
	}
	return ip, len(s) == 0
}

// parseIPv6 parses the RFC 4291 text forms: eight groups of up to four hex
// digits, at most one "::" standing for one or more zero groups, and an
// optional trailing dotted-quad IPv4 part. Zones are not accepted.
func parseIPv6(s string) ([16]byte, bool) {
	var ip [16]byte
	ellipsis := -1 // byte index in ip where "::" was
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis, s = 0, s[2:]
		if len(s) == 0 {
			return ip, true
		}
	}
	for i < 16 {
		n, v := 0, 0
		for n < len(s) && n < 4 && hexVal(s[n]) >= 0 {
			v = v<<4 | hexVal(s[n])
			n++
		}
		if n == 0 {
			return ip, false
		}
		if n < len(s) && s[n] == '.' { // trailing IPv4 part
			if i > 12 {
				return ip, false
			}
			v4, ok := parseIPv4(s)
			if !ok {
				return ip, false
			}
			copy(ip[i:], v4[:])
			i, s = i+4, ""
			break
		}
		ip[i], ip[i+1] = byte(v>>8), byte(v)
		i += 2
		s = s[n:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return ip, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return ip, false
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return ip, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return ip, false
		}
		// Move the groups after "::" to the end and zero the gap.
		n := 16 - i
		copy(ip[ellipsis+n:], ip[ellipsis:i])
		for j := ellipsis; j < ellipsis+n; j++ {
			ip[j] = 0
		}
	} else if ellipsis >= 0 {
		return ip, false // "::" must stand for at least one group
	}
	return ip, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// String returns "a.b.c.d:port" or "[v6]:port", the IPv6 address in RFC
// 5952's form (lowercase, the longest run of two or more zero groups as
// "::").
func (e Endpoint) String() string {
	return string(e.AppendTo(make([]byte, 0, 48)))
}

// AppendTo appends the String form to dst.
func (e Endpoint) AppendTo(dst []byte) []byte {
	if e.V4 {
		for i := 0; i < 4; i++ {
			if i > 0 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendUint(dst, uint64(e.IP[i]), 10)
		}
	} else {
		dst = append(dst, '[')
		dst = ipfmt.AppendIPv6(dst, &e.IP)
		dst = append(dst, ']')
	}
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(e.Port), 10)
}
