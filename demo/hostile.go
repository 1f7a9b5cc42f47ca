package demo

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/querylens/querylens/codecs/ase"
)

// Hostile wraps a well-behaved server of protocol and spoils every reply
// it sends the way b says (BadLength, BadCount or Endless), so that the
// pages have a server of each family whose answer a decoder must refuse
// by naming the field and offset at fault (A2S's BadLength spoils RULES,
// which only the status page asks: the server browser shows it online).
// What each protocol gets:
//
//	protocol  BadLength                          BadCount                         Endless
//	a2s       bzip2 rules: decompressed_size     PLAYER: the last entry counted   INFO: no NUL from the name on
//	          4 KiB above the stream's size      cut inside its duration
//	quake3    -                                  -                                no newline after the infostring
//	quake2,   -                                  -                                no newline after the serverinfo
//	quakeworld, hexen2
//	gamespy1  -                                  -                                a key at the end with no value
//	gamespy3  -                                  the last packet's number says    -
//	                                             3 more packets than were sent
//	ase       a player added at the end whose    -                                the rules with no end marker
//	          name's length byte runs past the                                    (the empty key), and no players
//	          datagram
//
// A dash: the protocol has no such field (Quake III and GameSpy v1 are
// text without lengths or counts; GameSpy v3 has no lengths, and a cut
// string is how it continues a field in the next packet, which its
// decoder accepts as "truncated"). There the wrapper sends the reply as
// it is.
func Hostile(protocol string, b Behavior, h Handler) Handler {
	return &hostile{h: h, protocol: protocol, b: b}
}

type hostile struct {
	h        Handler
	protocol string
	b        Behavior
}

func (x *hostile) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	out := x.h.Respond(q, from, now)
	if x.protocol == "gamespy3" && x.b == BadCount {
		return spoilGS3Count(out)
	}
	for i, d := range out {
		out[i] = spoil(x.protocol, x.b, append([]byte(nil), d...))
	}
	return out
}

// spoil returns d spoilt as protocol and b say (see Hostile).
func spoil(protocol string, b Behavior, d []byte) []byte {
	switch protocol + "/" + b.String() {
	case "a2s/bad length":
		// Packet 0 of a compressed split message (Source form with the
		// size field): FE FF FF FF, id with the top bit, total, number 0,
		// size u16, then the decompressed size u32 at 12.
		if len(d) >= 16 && binary.LittleEndian.Uint32(d) == 0xfffffffe && d[7]&0x80 != 0 && d[9] == 0 {
			n := binary.LittleEndian.Uint32(d[12:])
			binary.LittleEndian.PutUint32(d[12:], n+4096)
		}
	case "a2s/bad count":
		// A player reply: FF FF FF FF 'D' count, then the entries, each
		// ending with its duration (f32). The last entry counted is cut
		// two bytes into its duration. (A count above the entries sent is
		// not broken: players still connecting are counted, not listed.)
		if len(d) >= 6+playerEntryMin && binary.LittleEndian.Uint32(d) == 0xffffffff && d[4] == 'D' && d[5] > 0 {
			d = d[:len(d)-2]
		}
	case "a2s/endless string":
		// A Source info reply: FF FF FF FF 'I' protocol, then the name.
		if len(d) >= 6 && binary.LittleEndian.Uint32(d) == 0xffffffff && d[4] == 'I' {
			for i := 6; i < len(d); i++ {
				if d[i] == 0 {
					d[i] = '?'
				}
			}
		}
	case "quake3/endless string":
		// FF FF FF FF command \n infostring \n players: every newline after
		// the command's goes, so the infostring runs to the end.
		if i := bytes.IndexByte(d, '\n'); i >= 0 {
			d = append(d[:i+1], bytes.ReplaceAll(d[i+1:], []byte("\n"), []byte(" "))...)
		}
	case "quake2/endless string":
		// FF FF FF FF print \n serverinfo \n players: as Quake III's.
		if i := bytes.IndexByte(d, '\n'); i >= 0 {
			d = append(d[:i+1], bytes.ReplaceAll(d[i+1:], []byte("\n"), []byte(" "))...)
		}
	case "quakeworld/endless string", "hexen2/endless string":
		// FF FF FF FF [FF] n serverinfo \n players NUL: the serverinfo
		// runs to the NUL.
		d = bytes.ReplaceAll(d, []byte("\n"), []byte(" "))
	case "gamespy1/endless string":
		d = append(d, `\player_99`...)
	case "ase/bad length":
		// A player (flags 0x01: a name) whose name's length byte, 200,
		// counts more than the four bytes after it.
		d = append(d, 0x01, 200, 'L', 'i', 'a', 'r')
	case "ase/endless string":
		// The reply again, without its players and the empty key that
		// ends the rules.
		if r, err := ase.DecodeResponse(d, nil); err == nil {
			r.Players = nil
			if b, err := ase.AppendResponse(nil, r); err == nil {
				d = b[:len(b)-1]
			}
		}
	}
	return d
}

// playerEntryMin is the smallest A2S player entry: index, an empty name,
// score and duration.
const playerEntryMin = 1 + 1 + 4 + 4

// spoilGS3Count rewrites the last packet of a GameSpy v3 split reply so
// that its number says three more packets came before it than did.
func spoilGS3Count(out [][]byte) [][]byte {
	const tag = "splitnum\x00"
	for i, d := range out {
		j := bytes.Index(d, []byte(tag))
		if j < 0 || j+len(tag) >= len(d) {
			continue
		}
		at := j + len(tag)
		if d[at]&0x80 != 0 && d[at]&0x7f+3 < 0x7f {
			d = append([]byte(nil), d...)
			d[at] += 3
			out[i] = d
		}
	}
	return out
}
