package mumble

import (
	"encoding/binary"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DecodeRequest decodes a ping: exactly 12 bytes whose first four are zero.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

func readRequest(r *wire.Reader) Request {
	var q Request
	start := r.Offset()
	if t := r.U32BE("type"); t != 0 && !r.Failed() {
		r.FailAt("type", start, codecs.Detail(codecs.ErrBadMagic, "a ping starts with four zero bytes"))
	}
	q.Ident = readIdent(r)
	if !r.Failed() && r.Len() > 0 {
		r.Fail("datagram", codecs.Detail(codecs.ErrTrailing, "a ping is 12 bytes"))
	}
	return q
}

func readIdent(r *wire.Reader) uint64 {
	b := r.Bytes("ident", 8)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// DecodeResponse decodes the answer to a ping: 24 bytes, read in full or
// not at all. Bytes after the 24th are left unread: Decode reports them as
// codecs.WarnTrailing. req, when given, is the ping the answer is to;
// an ident that differs is Decode's WarnIdent, not an error.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	resp := readResponse(r)
	return resp, r.Err()
}

func readResponse(r *wire.Reader) Response {
	var resp Response
	start := r.Offset()
	if r.Len() < ResponseLen {
		// Every field is fixed: a short answer is cut, never a
		// shorter form. Name the field the cut falls in.
		r.FailAt(responseFieldAt(r.Len()), start+r.Len(), codecs.Detail(codecs.ErrShort, "an answer is 24 bytes"))
		return resp
	}
	v := binary.BigEndian.Uint32(r.Skip("version", 4))
	if r.Recording() {
		r.Mark("version", "version", start, Version(v).String())
	}
	if v>>24 != 0 {
		r.FailAt("version", start, codecs.Detail(codecs.ErrBadValue, "the version's top byte is not zero"))
	}
	resp.Version = Version(v)
	resp.Ident = readIdent(r)
	resp.Users = r.U32BE("users")
	resp.MaxUsers = r.U32BE("max_users")
	resp.Bandwidth = r.U32BE("bandwidth")
	return resp
}

// responseFieldAt names the answer's field at offset off.
func responseFieldAt(off int) string {
	switch {
	case off < 4:
		return "version"
	case off < 12:
		return "ident"
	case off < 16:
		return "users"
	case off < 20:
		return "max_users"
	}
	return "bandwidth"
}
