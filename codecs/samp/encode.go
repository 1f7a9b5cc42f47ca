package samp

import (
	"encoding/binary"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends query q to dst. The opcode must be a query's: i,
// r, c, d, or p with its 4 bytes.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	switch q.Opcode {
	case OpInfo, OpRules, OpClients, OpDetailed, OpPing:
	default:
		return dst, codecs.NewError(protocolOf(q.Magic[:]), "opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "not a query of i, r, c, d or p"))
	}
	dst = appendHeader(dst, q.Header)
	if q.Opcode == OpPing {
		dst = append(dst, q.Ping[:]...)
	}
	return dst, nil
}

func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, h.Magic[:]...)
	dst = append(dst, h.IP[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, h.Port)
	return append(dst, byte(h.Opcode))
}

// NewHeader is the header of a query of op to ip:port, with SA-MP's magic
// or VC:MP's.
func NewHeader(vcmp bool, ip [4]byte, port uint16, op Opcode) Header {
	h := Header{IP: ip, Port: port, Opcode: op}
	copy(h.Magic[:], MagicSAMP)
	if vcmp {
		copy(h.Magic[:], MagicVCMP)
	}
	return h
}

// ReplyHeader is the header a server answers query header h with: the
// same bytes, VC:MP's magic turned into its reply's.
func ReplyHeader(h Header) Header {
	if string(h.Magic[:]) == MagicVCMP {
		copy(h.Magic[:], MagicVCMPReply)
	}
	return h
}

// AppendResponse appends reply r to dst (what the demo servers send), its
// text encoded in r.Charset. A string longer than its length field holds,
// or a list longer than 65,535 entries, is an error naming it.
func AppendResponse(dst []byte, r Response) ([]byte, error) {
	proto := protocolOf(r.Magic[:])
	start := len(dst)
	dst = appendHeader(dst, r.Header)
	var err error
	str := func(field string, width int, s string) {
		if err != nil {
			return
		}
		at := len(dst)
		dst = append(dst, make([]byte, width)...)
		dst = r.Charset.Append(dst, s)
		n := len(dst) - at - width
		if width == 1 && n > 0xff {
			err = codecs.NewError(proto, field, at-start, codecs.Detail(codecs.ErrTooLong, "at most 255 bytes"))
			return
		}
		if width == 1 {
			dst[at] = byte(n)
		} else {
			binary.LittleEndian.PutUint32(dst[at:], uint32(n))
		}
	}
	count := func(field string, n int) {
		if n > 0xffff {
			err = codecs.NewError(proto, field, len(dst)-start, codecs.Detail(codecs.ErrTooLong, "at most 65535 entries"))
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
	}
	switch r.Opcode {
	case OpInfo:
		in := r.Info
		if r.VCMP() {
			v := r.Charset.Append(nil, in.Version)
			if len(v) > VCMPVersionLen {
				return dst, codecs.NewError(proto, "version", len(dst)-start, codecs.Detail(codecs.ErrTooLong, "at most 12 bytes"))
			}
			dst = append(dst, v...)
			dst = append(dst, make([]byte, VCMPVersionLen-len(v))...)
		}
		pw := byte(0)
		if in.Password {
			pw = 1
		}
		dst = append(dst, pw)
		dst = binary.LittleEndian.AppendUint16(dst, in.Players)
		dst = binary.LittleEndian.AppendUint16(dst, in.MaxPlayers)
		str("hostname", 4, in.Hostname)
		str("gamemode", 4, in.Gamemode)
		str("language", 4, in.Language)
	case OpRules:
		count("rules", len(r.Rules))
		for _, x := range r.Rules {
			str("rules.name", 1, x.Name)
			str("rules.value", 1, x.Value)
		}
	case OpClients, OpDetailed:
		count("players", len(r.Players))
		for _, p := range r.Players {
			if r.Opcode == OpDetailed {
				dst = append(dst, p.ID)
			}
			str("players.name", 1, p.Name)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(p.Score))
			if r.Opcode == OpDetailed {
				dst = binary.LittleEndian.AppendUint32(dst, p.Ping)
			}
		}
	case OpPing:
		dst = append(dst, r.Ping[:]...)
	default:
		return dst, codecs.NewError(proto, "opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "not a reply to i, r, c, d or p"))
	}
	return dst, err
}
