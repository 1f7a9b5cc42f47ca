package wire

import (
	"net/netip"
	"strconv"
	"strings"
)

// Target is a query's destination as written by the client: an address
// and port, or a DNS name and port.
type Target struct {
	Addr netip.AddrPort // valid when the host is an IP literal
	Name string         // the host name, lower case without a final dot, otherwise ""
	Port uint16
}

// String is the target in canonical form: "1.2.3.4:5", "[2001:db8::1]:5"
// or "name.example:5".
func (t Target) String() string {
	if t.Name == "" {
		return t.Addr.String()
	}
	return t.Name + ":" + strconv.Itoa(int(t.Port))
}

// ParseTarget checks the syntax of "host:port", where host is an IPv4
// literal, a bracketed IPv6 literal or a DNS name, and port is decimal
// without leading zeros. It does not judge the address (Policy.Check does)
// and keeps every spelling as written: an IPv4-mapped IPv6 literal stays
// IPv6, so that the policy refuses it. The relay's WebSocket path, its
// Exchange and the status page all parse targets with it.
func ParseTarget(s string) (Target, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return Target{}, targetError(s, "missing :port")
	}
	host, ps := s[:i], s[i+1:]
	if len(ps) == 0 || len(ps) > 5 || strings.Trim(ps, "0123456789") != "" || len(ps) > 1 && ps[0] == '0' {
		return Target{}, targetError(s, "bad port")
	}
	p, _ := strconv.Atoi(ps)
	if p > 65535 {
		return Target{}, targetError(s, "bad port")
	}
	port := uint16(p)
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return Target{}, targetError(s, "bad IPv6 literal")
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Target{}, targetError(s, "bad IPv6 literal")
		}
		return Target{Addr: netip.AddrPortFrom(a, port), Port: port}, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return Target{}, targetError(s, "IPv6 literals need brackets")
		}
		return Target{Addr: netip.AddrPortFrom(a, port), Port: port}, nil
	}
	if !validName(host) {
		return Target{}, targetError(s, "bad host name")
	}
	return Target{Name: strings.ToLower(strings.TrimSuffix(host, ".")), Port: port}, nil
}

// validName accepts DNS host names: labels of letters, digits, '-' and '_'
// (not starting or ending with '-'), at most 253 bytes, and a last label
// that is not all digits (so that "2130706433" or "127.1" never reach a
// resolver that would read them as addresses).
func validName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	allDigits := false
	for label := range strings.SplitSeq(h, ".") {
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

type targetSyntaxError struct{ target, why string }

func (e *targetSyntaxError) Error() string {
	return "target " + strconv.Quote(e.target) + ": " + e.why
}

func targetError(target, why string) error { return &targetSyntaxError{target, why} }

// ParseStreamTarget is ParseTarget for a protocol whose servers may be
// named by an SRV record (codecs.Description.SRV): it also takes a bare
// DNS name, without a port, returned with Port 0 (the relay looks the
// name's SRV record up, then falls back to the protocol's default port).
func ParseStreamTarget(s string) (Target, error) {
	if strings.IndexByte(s, ':') < 0 && !strings.HasPrefix(s, "[") {
		if _, err := netip.ParseAddr(s); err == nil || !validName(s) {
			return Target{}, targetError(s, "missing :port")
		}
		return Target{Name: strings.ToLower(strings.TrimSuffix(s, "."))}, nil
	}
	return ParseTarget(s)
}
