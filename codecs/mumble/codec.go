package mumble

import (
	"encoding/binary"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// WarnIdent: the answer's ident is not the ping's (a relay may share one
// answer among pings with different idents).
const WarnIdent = "ident does not match the ping"

// Codec is the codecs.Codec of Mumble's UDP ping. Importing the package
// registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Mumble" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "ident", Kind: codecs.OptionHex, Default: "0102030405060708", Echo: true,
		Help: "the 8 bytes the server echoes (16 hex digits)"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: the ping and its answer carry no magic, only their sizes and
// zero bytes, so the most Detect says is Weak.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case len(b) == RequestLen && binary.BigEndian.Uint32(b) == 0:
		return codecs.KindQuery, codecs.Weak
	case len(b) == ResponseLen && b[0] == 0 && b[1] > 0 && b[1] < 10:
		return codecs.KindResponse, codecs.Weak
	}
	return "", codecs.NotMine
}

// CheckQuery accepts the ping and nothing else: 12 bytes, the first four
// zero (the ident is whatever the client chose).
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes a ping (12 bytes) or its answer (24 bytes): one datagram.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, codecs.NewError(Protocol, "datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > 1 {
		return m, codecs.NewError(Protocol, "datagrams", 0, codecs.Detail(codecs.ErrBadValue, "a ping and its answer are one datagram each"))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 6)
		spans = &m.Spans
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
	}
	r := wire.NewReader(Protocol, b, 0, spans)
	if len(b) == RequestLen {
		m.Kind = codecs.KindQuery
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields = codecs.Object{}.Add("ident", codecs.Hex(binary.BigEndian.AppendUint64(nil, q.Ident)))
		}
		return m, r.Err()
	}
	resp := readResponse(r)
	if err := r.Err(); err != nil {
		return m, err
	}
	if r.Len() > 0 {
		r.Bytes("trailing", r.Len())
		m.Warn(codecs.WarnTrailing)
	}
	if q, err := DecodeRequest(opt.Query); err == nil && q.Ident != resp.Ident {
		m.Warn(WarnIdent)
	}
	m.Info = &codecs.Info{Has: codecs.HasVersion | codecs.HasNumPlayers | codecs.HasMaxPlayers,
		Version: resp.Version.String(), NumPlayers: int(resp.Users), MaxPlayers: int(resp.MaxUsers)}
	if !opt.NoFields {
		m.Fields = codecs.Object{}.Add("version", resp.Version.String()).
			Add("ident", codecs.Hex(binary.BigEndian.AppendUint64(nil, resp.Ident))).
			Add("users", int(resp.Users)).Add("max_users", int(resp.MaxUsers)).Add("bandwidth", int(resp.Bandwidth))
	}
	return m, nil
}

// NewQuery starts a conversation: one ping, one answer.
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(Protocol, queryOptions, opts)
	var ident [8]byte
	o.Hex("ident", ident[:])
	if err := o.Err(); err != nil {
		return nil, err
	}
	b, _ := AppendRequest(nil, Request{Ident: binary.BigEndian.Uint64(ident[:])})
	return &query{req: b}, nil
}

type query struct {
	req   []byte
	reply []byte
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

// Feed takes the first datagram that starts as an answer does (a version
// whose top byte is zero, and an ident) as the answer: one that is then
// cut short ends the conversation with its error, which Result reports. A
// datagram shorter than that is ignored with an error. The ident is not
// checked: a relay may answer several pings with one answer (QueryKey).
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.reply != nil {
		return nil, true, codecs.NewError(Protocol, "datagram", 0, codecs.Detail(codecs.ErrBadValue, "the answer has already arrived"))
	}
	_, err := DecodeResponse(b, nil)
	if len(b) < RequestLen || b[0] != 0 {
		return nil, false, err
	}
	q.reply = append([]byte(nil), b...)
	return nil, true, err
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			codecs.NewError(Protocol, "reply", 0, codecs.Detail(codecs.ErrIncomplete, "no answer received"))
	}
	// As in the other codecs, the conversation does not pass its own
	// ping: a relay shares one answer among pings whose idents differ.
	return (&Codec{}).Decode([][]byte{q.reply}, opt)
}

// QueryKey implements codecs.QueryKeyer: the ping with its ident zeroed,
// so that pings from different pages share one answer. Nil when b is not
// a ping.
func (*Codec) QueryKey(b []byte) []byte {
	if _, err := DecodeRequest(b); err != nil {
		return nil
	}
	return make([]byte, RequestLen)
}
