package zandronum

import (
	"encoding/binary"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// requestFixed is the size of a request without flags2 and the optional
// byte: LONG 199, LONG flags, LONG time.
const requestFixed = 12

// AppendRequest appends the datagram of launcher request q (Huffman layer
// included) to dst.
func AppendRequest(dst []byte, q Request) ([]byte, error) {
	var tmp [32]byte
	p, err := AppendRequestPayload(tmp[:0], q)
	if err != nil {
		return dst, err
	}
	return wrap(dst, p), nil
}

// AppendRequestPayload appends the plain payload of q to dst. Flags2 is
// written only when Flags has SQF_EXTENDED_INFO.
func AppendRequestPayload(dst []byte, q Request) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint32(dst, ServerChallenge)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(q.Flags))
	dst = binary.LittleEndian.AppendUint32(dst, q.Time)
	if q.Flags&SQF_EXTENDED_INFO != 0 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(q.Flags2))
	}
	if q.Segmented {
		dst = append(dst, 2)
	}
	return append(dst, q.Extra...), nil
}

// DecodeRequest decodes a launcher request datagram (Huffman layer
// included). On error it returns what it decoded.
func DecodeRequest(b []byte) (Request, error) { return decodeRequestOne(b, true) }

// DecodeRequestPayload decodes the plain payload of a launcher request.
func DecodeRequestPayload(p []byte) (Request, error) { return decodeRequestOne(p, false) }

func decodeRequestOne(b []byte, isWire bool) (Request, error) {
	s, _, err := scratchFor(b, isWire)
	if err != nil {
		return Request{}, err
	}
	q, err := decodeRequest(s.r)
	return q, done(s, err, isWire)
}

func decodeRequest(r *wire.Reader) (Request, error) {
	var q Request
	expect32(r, "challenge", ServerChallenge)
	q.Flags = Flag(flags32(r, "flags", "flags:SQF", &flagNames))
	q.Time = r.U32LE("time")
	if q.Flags&SQF_EXTENDED_INFO != 0 {
		q.Flags2 = Flag2(flags32(r, "flags2", "flags:SQF2", &flag2Names))
	}
	if r.Failed() || r.Len() == 0 {
		return q, r.Err()
	}
	start := r.Offset()
	opt := r.Rest()[0]
	if opt == 2 {
		q.Segmented = true
		r.Skip("segmented", 1)
		if r.Recording() {
			r.Mark("segmented", "u8", start, "2 = segmented reply")
		}
		start++
	}
	if rest := r.Skip("extra", r.Len()); len(rest) > 0 {
		q.Extra = append([]byte(nil), rest...)
		if r.Recording() {
			r.Mark("extra", "bytes", start, string(codecs.AppendHex(nil, rest))+" (no meaning)")
		}
	}
	return q, nil
}

// requestTrailing reports whether q carries bytes beyond its one optional
// byte (the "trailing bytes" warning; qstat's zero flags2 is one case).
func (q *Request) requestTrailing() bool {
	n := len(q.Extra)
	if q.Segmented {
		n++
	}
	return n > 1
}

// AppendMasterRequest appends the datagram of a master list request to
// dst: LONG 5660028, SHORT 2, Huffman-encoded.
func AppendMasterRequest(dst []byte) []byte {
	var tmp [8]byte
	return wrap(dst, AppendMasterRequestPayload(tmp[:0]))
}

// AppendMasterRequestPayload appends the plain master list request to dst.
func AppendMasterRequestPayload(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, MasterChallenge)
	return binary.LittleEndian.AppendUint16(dst, MasterVersion)
}

// DecodeMasterRequest decodes a request sent to a master: LONG 5660028
// with its version SHORT, or the legacy LONG 199 (any bytes after it are
// ignored by a master and reported as Extra).
func DecodeMasterRequest(b []byte) (MasterRequest, error) {
	return decodeMasterRequestOne(b, true)
}

// DecodeMasterRequestPayload decodes the plain payload of a master request.
func DecodeMasterRequestPayload(p []byte) (MasterRequest, error) {
	return decodeMasterRequestOne(p, false)
}

func decodeMasterRequestOne(b []byte, isWire bool) (MasterRequest, error) {
	s, _, err := scratchFor(b, isWire)
	if err != nil {
		return MasterRequest{}, err
	}
	q, _, err := decodeMasterRequest(s.r)
	return q, done(s, err, isWire)
}

// decodeMasterRequest returns the request and the number of bytes after it.
func decodeMasterRequest(r *wire.Reader) (MasterRequest, int, error) {
	var q MasterRequest
	start := r.Offset()
	q.Command = r.U32LE("challenge")
	switch {
	case r.Failed():
		return q, 0, r.Err()
	case q.Command == MasterChallenge:
		q.Version = r.U16LE("version")
	case q.Command != ServerChallenge:
		r.FailAt("challenge", start, wire.Detailf(codecs.ErrBadMagic, "got %d, want 5660028 or 199", int64(q.Command)))
		return q, 0, r.Err()
	}
	n := r.Len()
	if n > 0 && !r.Failed() {
		start := r.Offset()
		r.Skip("extra", n)
		if r.Recording() {
			r.Mark("extra", "bytes", start, wire.Msg("%d bytes a master ignores", int64(n)))
		}
	}
	return q, n, r.Err()
}
