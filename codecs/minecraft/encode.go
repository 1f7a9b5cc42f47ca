package minecraft

import (
	"encoding/binary"
	"unicode/utf16"

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
		dst = append(dst, legacyPing, legacyPayload, legacyPlugin)
		dst = appendUTF16(dst, legacyChannel)
		dst = binary.BigEndian.AppendUint16(dst, uint16(7+2*len(q.Host)))
		v := q.ProtocolVersion
		if v < 0 || v > 0xff {
			v = LegacyProtocol
		}
		dst = append(dst, byte(v))
		dst = appendUTF16(dst, q.Host)
		return binary.BigEndian.AppendUint32(dst, uint32(q.Port)), nil
	}
	body := appendVarInt(nil, idHandshake)
	body = appendVarInt(body, q.ProtocolVersion)
	body = appendVarInt(body, int32(len(q.Host)))
	body = append(body, q.Host...)
	body = binary.BigEndian.AppendUint16(body, q.Port)
	body = appendVarInt(body, stateStatus)
	dst = appendVarInt(dst, int32(len(body)))
	dst = append(dst, body...)
	return append(dst, 1, idStatusReq), nil
}

// appendUTF16 appends s's length in UTF-16 units (u16) and s in UTF-16BE.
func appendUTF16(dst []byte, s string) []byte {
	u := utf16.Encode([]rune(s))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(u)))
	for _, c := range u {
		dst = binary.BigEndian.AppendUint16(dst, c)
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
	u := utf16.Encode([]rune(s))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(u)))
	for _, c := range u {
		dst = binary.BigEndian.AppendUint16(dst, c)
	}
	return dst
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
