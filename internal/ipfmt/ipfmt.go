// Package ipfmt writes IPv6 addresses as text without net/netip, for the
// packages compiled into the browser module (pcapng, the codecs), where
// every dependency counts against the module's size budget.
package ipfmt

import "strconv"

// AppendIPv6 appends ip in RFC 5952's form: lower-case hex groups without
// leading zeros, the longest run of two or more zero groups (the first of
// equals) written as "::".
func AppendIPv6(dst []byte, ip *[16]byte) []byte {
	group := func(i int) uint16 { return uint16(ip[2*i])<<8 | uint16(ip[2*i+1]) }
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		j := i
		for j < 8 && group(j) == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = max(j, i+1)
	}
	for i := 0; i < 8; i++ {
		if i == best {
			dst = append(dst, ':', ':')
			i += bestLen - 1
			continue
		}
		if i > 0 && i != best+bestLen {
			dst = append(dst, ':')
		}
		dst = strconv.AppendUint(dst, uint64(group(i)), 16)
	}
	return dst
}

// AppendIPv4Port appends "a.b.c.d:port", the form the master lists and
// server addresses of several protocols take: one copy in the browser
// module for all of them.
func AppendIPv4Port(dst []byte, ip *[4]byte, port uint16) []byte {
	for i, b := range ip {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = strconv.AppendUint(dst, uint64(b), 10)
	}
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(port), 10)
}
