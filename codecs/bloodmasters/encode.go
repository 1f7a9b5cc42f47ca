package bloodmasters

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// AppendRequest appends the 7-byte query: `07 00 0d` and q's token, which
// the server echoes unchanged (the official launcher sends its millisecond
// clock, big-endian). Every Request encodes; the error is always nil and
// is there so that the four protocol packages share one signature.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	dst = append(dst, RequestLen, 0, byte(CmdServerInfo))
	return binary.BigEndian.AppendUint32(dst, q.Token), nil
}

// AppendResponse appends r as one ServerInfo message, the way the game
// writes it: the extended block when r.Protocol >= 27, then the build
// description when r.HasBuild, then r.Extra. Strings are written as given
// (the game sends ASCII). On error dst is returned unchanged with a
// *codecs.Error naming the field.
func AppendResponse(dst []byte, r Response) ([]byte, error) {
	orig := len(dst)
	fail := func(field string, err error) ([]byte, error) {
		return dst[:orig], newError(field, len(dst)-orig, "", err)
	}
	switch {
	case !r.Extended() && len(r.Clients) > 0:
		return fail("clients", codecs.Detail(codecs.ErrBadValue, "client records need protocol 27 or later"))
	case r.Extended() && len(r.Clients) != int(r.NumClients):
		return fail("num_clients", wire.Detailf(codecs.ErrBadValue, "num_clients is %d but there are %d client records", int64(r.NumClients), int64(len(r.Clients))))
	case r.HasBuild && !r.Extended():
		return fail("build_description", codecs.Detail(codecs.ErrBadValue, "a build description needs protocol 27 or later"))
	case len(r.Extra) > 0 && r.Extended() && !r.HasBuild:
		return fail("extra", codecs.Detail(codecs.ErrBadValue, "extra bytes after the client records would read as the build description"))
	}
	cmd := CmdServerInfo
	if r.Reliable {
		cmd |= ReliableBit
	}
	dst = appendHeader(dst, cmd, r.PacketID)
	dst = binary.BigEndian.AppendUint32(dst, r.Token)
	dst = appendString(dst, r.Title)
	dst = appendBool(dst, r.Locked)
	dst = appendString(dst, r.Website)
	dst = append(dst, r.MaxClients, r.MaxPlayers, byte(r.GameType))
	dst = appendString(dst, r.Map)
	dst = append(dst, r.NumClients, r.NumPlayers, r.Protocol)
	if r.Extended() {
		dst = binary.BigEndian.AppendUint16(dst, uint16(r.ScoreLimit))
		dst = binary.BigEndian.AppendUint16(dst, uint16(r.TimeLimit))
		dst = appendBool(dst, r.JoinSmallestTeam)
		for _, c := range r.Clients {
			dst = appendString(dst, c.Name)
			dst = append(dst, byte(c.Team))
			dst = appendBool(dst, c.Spectator)
			dst = binary.BigEndian.AppendUint16(dst, uint16(c.Ping))
		}
		if r.HasBuild {
			dst = appendString(dst, r.Build)
		}
	}
	dst = append(dst, r.Extra...)
	if err := finishMessage(dst, orig); err != nil {
		return dst[:orig], err
	}
	return dst, nil
}

// AppendMessage appends m as one framed message (m.Offset is ignored), for
// building datagrams that hold several messages.
func AppendMessage(dst []byte, m RawMessage) ([]byte, error) {
	orig := len(dst)
	dst = appendHeader(dst, m.Command, m.PacketID)
	dst = append(dst, m.Data...)
	if err := finishMessage(dst, orig); err != nil {
		return dst[:orig], err
	}
	return dst, nil
}

// appendHeader appends a header with a zero length, which finishMessage
// fills in.
func appendHeader(dst []byte, c Command, id uint32) []byte {
	dst = append(dst, 0, 0, byte(c))
	if c.HasPacketID() {
		dst = binary.BigEndian.AppendUint32(dst, id)
	}
	return dst
}

// finishMessage writes the length of the message that starts at start.
func finishMessage(dst []byte, start int) error {
	n := len(dst) - start
	if n > MaxMessageLen {
		return newError("length", 0, "", wire.Detailf(codecs.ErrTooLong, "message of %d bytes exceeds the 16-bit length field", int64(n)))
	}
	binary.LittleEndian.PutUint16(dst[start:], uint16(n))
	return nil
}

// appendString appends s the way .NET's BinaryWriter does: a 7-bit encoded
// (ULEB128) length, then the bytes, here s in Latin-1 (one byte a code
// point; code points above U+00FF become '?').
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(utf8.RuneCountInString(s)))
	return codecs.ToLatin1(dst, s)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}
