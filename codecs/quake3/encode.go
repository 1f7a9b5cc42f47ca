package quake3

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// AppendRequest appends the query datagram of q to dst. Every argument
// must be printable ASCII without spaces, as the engines split on them.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	dst = append(dst, Magic...)
	switch q.Command {
	case CmdGetInfo, CmdGetStatus:
		dst = append(dst, q.Command...)
		if q.Challenge != "" {
			if err := checkWord("challenge", q.Challenge); err != nil {
				return dst, err
			}
			dst = append(append(dst, ' '), q.Challenge...)
		}
	case CmdGetServers, CmdGetServersExt:
		dst = append(dst, q.Command...)
		if q.Game == "" && q.Command == CmdGetServersExt {
			return dst, newError("game", 0, "", codecs.Detail(codecs.ErrBadValue, "getserversExt names its game"))
		}
		if q.Game != "" {
			if err := checkWord("game", q.Game); err != nil {
				return dst, err
			}
			// getservers reads a number first as the protocol (Quake III's
			// own form); getserversExt always names its game first.
			if _, ok := number([]byte(q.Game)); ok && q.Command == CmdGetServers {
				return dst, newError("game", 0, "", codecs.Detail(codecs.ErrBadValue, "a getservers game name is not a number"))
			}
			dst = append(append(dst, ' '), q.Game...)
		}
		if q.Version < 0 {
			return dst, newError("protocol", 0, "", codecs.Detail(codecs.ErrBadValue, "a protocol number is not negative"))
		}
		dst = strconv.AppendInt(append(dst, ' '), int64(q.Version), 10)
		for _, f := range q.Filters {
			if err := checkWord("filters", f); err != nil {
				return dst, err
			}
			dst = append(append(dst, ' '), f...)
		}
	default:
		return dst, newError("command", len(Magic), "", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(q.Command)+" is not a query"))
	}
	switch q.End {
	case "", "\n", "\x00":
		dst = append(dst, q.End...)
	default:
		return dst, newError("end", len(dst), "", codecs.Detail(codecs.ErrBadValue, "a query ends with nothing, a newline or a NUL"))
	}
	return dst, nil
}

// checkWord checks that s is one argument: printable ASCII, no space.
func checkWord(field, s string) error {
	if s == "" {
		return newError(field, 0, "", codecs.Detail(codecs.ErrBadValue, "empty"))
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return newError(field, i, "", codecs.Detail(codecs.ErrBadValue, strconv.Quote(s)+" is not one printable word"))
		}
	}
	return nil
}

// AppendResponse appends the reply datagram of resp to dst, as a server or
// master sends it (the demo servers and the tests use it). Keys and values
// must hold no '\' and no newline. Master entries are IPv4 unless the
// command is getserversExtResponse; End appends the end marker.
func AppendResponse(dst []byte, resp Response) ([]byte, error) {
	dst = append(append(dst, Magic...), resp.Command...)
	switch resp.Command {
	case CmdInfoResponse, CmdStatusResponse:
		dst = append(dst, '\n')
		for i, v := range resp.Vars {
			for _, s := range [2]string{v.Key, v.Value} {
				for j := 0; j < len(s); j++ {
					if s[j] == '\\' || s[j] == '\n' {
						return dst, newError("vars["+strconv.Itoa(i)+"]", j, "", codecs.Detail(codecs.ErrBadValue, "an infostring holds no '\\' and no newline"))
					}
				}
			}
			dst = codecs.ToLatin1(append(dst, '\\'), v.Key)
			dst = codecs.ToLatin1(append(dst, '\\'), v.Value)
		}
		if resp.Command == CmdInfoResponse {
			return dst, nil
		}
		dst = append(dst, '\n')
		for _, p := range resp.Players {
			dst = strconv.AppendInt(dst, int64(p.Score), 10)
			dst = strconv.AppendInt(append(dst, ' '), int64(p.Ping), 10)
			if p.HasTeam {
				dst = strconv.AppendInt(append(dst, ' '), int64(p.Team), 10)
			}
			dst = codecs.ToLatin1(append(dst, ' ', '"'), p.Name)
			dst = append(dst, '"', '\n')
		}
	case CmdServers, CmdServersExt:
		for i, s := range resp.Servers {
			switch {
			case !s.Is6:
				dst = append(dst, '\\')
			case resp.Command == CmdServersExt:
				dst = append(dst, '/')
			default:
				return dst, newError("servers["+strconv.Itoa(i)+"]", 0, "", codecs.Detail(codecs.ErrBadValue, s.String()+" cannot be listed in a "+resp.Command))
			}
			dst = append(dst, s.bytes()...)
			dst = binary.BigEndian.AppendUint16(dst, s.Port)
		}
		if resp.End {
			dst = append(dst, "\\EOT\x00\x00\x00"...)
		}
	default:
		return dst, newError("command", len(Magic), "", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(resp.Command)+" is not a reply"))
	}
	return dst, nil
}
