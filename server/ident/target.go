package ident

import (
	"strconv"

	"github.com/querylens/querylens/internal/ipfmt"
)

// parseTarget is wire.ParseTarget's syntax without net/netip, for the
// browser module: net/netip brings package unique and its runtime support
// (about 34 KB of brotli), and web's TestWasmDeps bans it there.
// It returns the target in wire.Target.String's canonical form; a
// differential fuzz test (FuzzTargetAgrees) keeps the two in step. Native
// builds use wire.ParseTarget itself (addr.go).
func parseTarget(s string) (string, bool) {
	i := lastIndex(s, ':')
	if i < 0 {
		return "", false
	}
	host, ps := s[:i], s[i+1:]
	if len(ps) == 0 || len(ps) > 5 || !digits(ps) || len(ps) > 1 && ps[0] == '0' {
		return "", false
	}
	if p, _ := strconv.Atoi(ps); p > 65535 {
		return "", false
	}
	if host != "" && host[0] == '[' {
		if host[len(host)-1] != ']' || len(host) < 2 {
			return "", false
		}
		b := make([]byte, 0, len(s)+2)
		b = append(b, '[')
		b, ok := appendIPv6(b, host[1:len(host)-1])
		if !ok {
			return "", false
		}
		b = append(b, ']', ':')
		return string(append(b, ps...)), true
	}
	if ip, ok := parseIPv4(host); ok {
		return string(ipfmt.AppendIPv4Port(nil, &ip, portOf(ps))), true
	}
	if index(host, ':') >= 0 || !validName(host) {
		return "", false
	}
	return lower(trimDot(host)) + ":" + ps, true
}

// trimDot drops a final dot (a fully qualified name's).
func trimDot(h string) string {
	if h != "" && h[len(h)-1] == '.' {
		return h[:len(h)-1]
	}
	return h
}

func portOf(ps string) uint16 {
	p, _ := strconv.Atoi(ps)
	return uint16(p)
}

// parseIPv4 reads a dotted quad as net/netip does: four decimal fields of
// at most 255, without leading zeros.
func parseIPv4(s string) ([4]byte, bool) {
	var ip [4]byte
	n := 0
	for more := true; more; {
		var f string
		f, s, more = cut(s, '.')
		if n == 4 || f == "" || len(f) > 3 || !digits(f) || len(f) > 1 && f[0] == '0' {
			return ip, false
		}
		v, _ := strconv.Atoi(f)
		if v > 255 {
			return ip, false
		}
		ip[n] = byte(v)
		n++
	}
	return ip, n == 4
}

// appendIPv6 appends the IPv6 literal s (no zone) in net/netip's form:
// RFC 5952, except an IPv4-mapped address, written ::ffff:a.b.c.d. It
// reports false when s is not one.
func appendIPv6(dst []byte, s string) ([]byte, bool) {
	var ip [16]byte
	ellipsis := -1 // where "::" is, in bytes of ip
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if s == "" {
			return ipfmt.AppendIPv6(dst, &ip), true
		}
	}
	for i < 16 {
		// A field: hex digits, or an IPv4 address in the last 32 bits.
		n, v := 0, 0
		for ; n < len(s); n++ {
			d, ok := unhex(s[n])
			if !ok {
				break
			}
			if n == 4 {
				return dst, false
			}
			v = v<<4 | int(d)
		}
		if n == 0 {
			return dst, false
		}
		if n < len(s) && s[n] == '.' {
			if ellipsis < 0 && i != 12 || i+4 > 16 {
				return dst, false
			}
			v4, ok := parseIPv4(s)
			if !ok {
				return dst, false
			}
			copy(ip[i:], v4[:])
			i += 4
			s = ""
			break
		}
		ip[i], ip[i+1] = byte(v>>8), byte(v)
		i += 2
		s = s[n:]
		if s == "" {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return dst, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return dst, false
			}
			ellipsis = i
			s = s[1:]
			if s == "" {
				break
			}
		}
	}
	if s != "" {
		return dst, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return dst, false
		}
		n := 16 - i
		copy(ip[ellipsis+n:], ip[ellipsis:i])
		clear(ip[ellipsis : ellipsis+n])
	} else if ellipsis >= 0 {
		return dst, false // "::" must stand for at least one group
	}
	if [12]byte(ip[:12]) == [12]byte{10: 0xff, 11: 0xff} {
		dst = append(dst, "::ffff:"...)
		for k := 12; k < 16; k++ {
			if k > 12 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendUint(dst, uint64(ip[k]), 10)
		}
		return dst, true
	}
	return ipfmt.AppendIPv6(dst, &ip), true
}

// validName is wire's: DNS host names of letters, digits, '-' and '_'
// labels (not starting or ending with '-'), at most 253 bytes, and a last
// label that is not all digits.
func validName(h string) bool {
	h = trimDot(h)
	if h == "" || len(h) > 253 {
		return false
	}
	allDigits := false
	for more := true; more; {
		var label string
		label, h, more = cut(h, '.')
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		allDigits = true
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_':
				allDigits = false
			default:
				return false
			}
		}
	}
	return !allDigits
}
