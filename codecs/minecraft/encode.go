package minecraft

import (
	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends the query q asks: the handshake (next state 1)
// and the status request, one write; or with q.Legacy the 1.6 legacy
// ping, FE 01 FA "MC|PingHost" with the host and port. The host must be a
// valid one (validHost).
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	if !validHost(q.Host) {
		return dst, newError("host", 0, codecs.Detail(codecs.ErrBadValue, "a host is letters, digits, dots, hyphens (colons for IPv6), at most 253"))
	}
	if q.Legacy {
		// FE 01 FA, then "MC|PingHost" (11 units) in UTF-16BE.
		dst = append(dst, "\xfe\x01\xfa\x00\x0b\x00M\x00C\x00|\x00P\x00i\x00n\x00g\x00H\x00o\x00s\x00t"...)
		n := 7 + 2*len(q.Host)
		dst = append(dst, byte(n>>8), byte(n))
		v := q.ProtocolVersion
		if v < 0 || v > 0xff {
			v = LegacyProtocol
		}
		dst = append(dst, byte(v), 0, byte(len(q.Host)))
		for i := 0; i < len(q.Host); i++ { // ASCII (validHost): one unit a byte
			dst = append(dst, 0, q.Host[i])
		}
		return append(dst, 0, 0, byte(q.Port>>8), byte(q.Port)), nil
	}
	body := appendVarInt(nil, idHandshake)
	body = appendVarInt(body, q.ProtocolVersion)
	body = appendVarInt(body, int32(len(q.Host)))
	body = append(body, q.Host...)
	body = append(body, byte(q.Port>>8), byte(q.Port))
	body = appendVarInt(body, stateStatus)
	dst = appendVarInt(dst, int32(len(body)))
	dst = append(dst, body...)
	return append(dst, 1, idStatusReq), nil
}

// appendUTF16 appends s's length in UTF-16 units (u16) and s in UTF-16BE.
func appendUTF16(dst []byte, s string) []byte {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	dst = append(dst, byte(n>>8), byte(n))
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			hi, lo := 0xd800+r>>10, 0xdc00+r&0x3ff
			dst = append(dst, byte(hi>>8), byte(hi), byte(lo>>8), byte(lo))
			continue
		}
		dst = append(dst, byte(r>>8), byte(r))
	}
	return dst
}

// AppendStatusResponse appends a status response packet holding the JSON
// text js (a server's side, for the demo servers and tests).
func AppendStatusResponse(dst []byte, js []byte) []byte {
	body := appendVarInt(nil, idStatusResp)
	body = appendVarInt(body, int32(len(js)))
	body = append(body, js...)
	dst = appendVarInt(dst, int32(len(body)))
	return append(dst, body...)
}

// AppendLegacyResponse appends the legacy reply of a 1.4 to 1.6 server:
// FF and "§1\0proto\0version\0motd\0online\0max" in UTF-16BE.
func AppendLegacyResponse(dst []byte, proto int, version, motd string, online, max int) []byte {
	s := "§1\x00" + itoa(proto) + "\x00" + version + "\x00" + motd + "\x00" + itoa(online) + "\x00" + itoa(max)
	dst = append(dst, legacyKick)
	return appendUTF16(dst, s)
}

func itoa(v int) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}
