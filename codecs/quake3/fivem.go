package quake3

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// FiveM and RedM (the Cfx.re platform's servers for Grand Theft Auto V
// and Red Dead Redemption 2) answer Quake III's getinfo on their game
// port with an infoResponse: the row's facts. Their player list and the
// rest of their info are served over HTTP on the same port
// (/players.json, /info.json), which querylens does not query. The
// dialect is registered as a codec of its own, FiveMCodec, sharing this
// package's infostring reader; its text is UTF-8, not Latin-1.
//
//	client                                          server (30120)
//	  | FF FF FF FF getinfo challenge                  |
//	  | ---------------------------------------------> |
//	  | FF FF FF FF infoResponse \n infostring         |  DecodeFiveMResponse
//	  | <--------------------------------------------- |

// ProtocolFiveM is the registry name of FiveMCodec.
const ProtocolFiveM = "fivem"

// DefaultPortFiveM is FiveM's and RedM's game and query port.
const DefaultPortFiveM = 30120

// NotQueried is the FiveM reply's "not_queried" field: what the server
// serves over HTTP, which querylens does not ask. (Not a warning: a
// warning says a reply is odd, and every FiveM reply is so.)
const NotQueried = "players and info over HTTP (/players.json, /info.json)"

// FiveMCodec is the codecs.Codec of FiveM and RedM's getinfo. Importing
// the package registers it.
type FiveMCodec struct{}

func (*FiveMCodec) Name() string     { return ProtocolFiveM }
func (*FiveMCodec) Title() string    { return "FiveM / RedM" }
func (*FiveMCodec) DefaultPort() int { return DefaultPortFiveM }

var fivemOptions = []codecs.Option{
	{Name: "challenge", Kind: codecs.OptionText, Default: "xxx", Echo: true,
		Help: "a word the server echoes (printable ASCII, no spaces)"},
}

func (*FiveMCodec) Options() []codecs.Option { return append([]codecs.Option(nil), fivemOptions...) }

// Detect: an infoResponse from the Cfx.re server (gamename CitizenFX) is
// Certain, which wins over Quake III's own Certain (the registry's
// earlier name); a getinfo is Weak, Quake III's too.
func (*FiveMCodec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	k, c := (&Codec{}).Detect(b)
	switch {
	case k == codecs.KindQuery && c > codecs.NotMine && strings.HasPrefix(string(b[len(Magic):]), CmdGetInfo):
		return k, codecs.Weak
	case k == codecs.KindResponse && strings.HasPrefix(string(b[len(Magic):]), CmdInfoResponse) && strings.Contains(string(b), "\\gamename\\CitizenFX"):
		return k, codecs.Certain
	}
	return "", codecs.NotMine
}

// CheckQuery accepts one getinfo with a challenge, at most MaxQueryLen
// bytes.
func (*FiveMCodec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(ProtocolFiveM, b, MaxQueryLen); err != nil {
		return err
	}
	r := wire.NewReader(ProtocolFiveM, b, 0, nil)
	q := readRequest(r)
	if err := r.Err(); err != nil {
		return err
	}
	if q.Command != CmdGetInfo {
		return codecs.NewError(ProtocolFiveM, "command", len(Magic), codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(q.Command)+" is not getinfo"))
	}
	return nil
}

// DecodeFiveMResponse decodes an infoResponse as FiveM sends it: text in
// UTF-8, kept as sent.
func DecodeFiveMResponse(b []byte) (Response, error) {
	r := wire.NewReader(ProtocolFiveM, b, 0, nil)
	resp := readFiveM(r)
	return resp, r.Err()
}

func utf8Text(b []byte) string { return string(b) }

func readFiveM(r *wire.Reader) Response {
	var resp Response
	readMagic(r)
	resp.Command = string(readWord(r, "command"))
	if !r.Failed() && resp.Command != CmdInfoResponse {
		r.FailAt("command", len(Magic), codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(resp.Command)+" is not infoResponse"))
	}
	readNewline(r, "command")
	resp.Vars = readInfostring(r, resp.Vars, false, utf8Text)
	if !r.Failed() && r.Len() > 0 {
		start := r.Offset()
		r.Skip("trailing", r.Len())
		r.Mark("trailing", "bytes", start, "")
		r.FailAt("trailing", start, codecs.Detail(codecs.ErrTrailing, "an infoResponse ends with its infostring"))
	}
	return resp
}

// AppendFiveMResponse appends an infoResponse with vars, in UTF-8, as a
// FiveM server sends it.
func AppendFiveMResponse(dst []byte, vars []Var) ([]byte, error) {
	dst = append(append(dst, Magic...), CmdInfoResponse+"\n"...)
	for i, v := range vars {
		if strings.ContainsAny(v.Key, "\\\n") || strings.ContainsAny(v.Value, "\\\n") {
			return dst, codecs.NewError(ProtocolFiveM, "vars["+strconv.Itoa(i)+"]", 0, codecs.Detail(codecs.ErrBadValue, "no '\\' or newline"))
		}
		dst = append(append(append(append(dst, '\\'), v.Key...), '\\'), v.Value...)
	}
	return dst, nil
}

// Decode decodes a getinfo or an infoResponse (one datagram).
func (*FiveMCodec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: ProtocolFiveM, Kind: codecs.KindResponse}
	if len(datagrams) != 1 {
		if len(datagrams) == 0 {
			return m, codecs.NewError(ProtocolFiveM, "datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "no datagram"))
		}
		return m, codecs.NewError(ProtocolFiveM, "datagrams", 0, codecs.Detail(codecs.ErrBadValue, "a message is one datagram"))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 16)
		spans = &m.Spans
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
	}
	r := wire.NewReader(ProtocolFiveM, b, 0, spans)
	if k, _ := (&FiveMCodec{}).Detect(b); k == codecs.KindQuery {
		m.Kind = k
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields = requestFields(&q)
		}
		return m, r.Err()
	}
	resp := readFiveM(r)
	in := info(&resp)
	// iv is the server's build number, GameDig's version before
	// /info.json's.
	if v, ok := resp.Var("iv"); ok {
		in.Has |= codecs.HasVersion
		in.Version = v
	}
	m.Info = in
	if !opt.NoFields {
		m.Fields = responseFields(&resp).Add("not_queried", NotQueried)
	}
	return m, r.Err()
}

// NewQuery asks getinfo with a challenge, as GameDig does; the reply is
// one datagram.
func (*FiveMCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(ProtocolFiveM, fivemOptions, opts)
	challenge := o.Value("challenge")
	if err := o.Err(); err != nil {
		return nil, err
	}
	if err := checkWord("challenge", challenge); err != nil {
		return nil, codecs.OptionError(ProtocolFiveM, "challenge", err.(*codecs.Error).Message())
	}
	b, _ := AppendRequest(nil, Request{Command: CmdGetInfo, Challenge: challenge})
	return &fivemQuery{req: b}, nil
}

// QueryKey implements codecs.QueryKeyer: getinfo without its challenge.
func (*FiveMCodec) QueryKey(b []byte) []byte {
	if (&FiveMCodec{}).CheckQuery(b) != nil {
		return nil
	}
	return []byte(Magic + CmdGetInfo)
}

type fivemQuery struct {
	req, reply []byte
}

func (q *fivemQuery) Start() [][]byte { return [][]byte{q.req} }

func (q *fivemQuery) Feed(b []byte) ([][]byte, bool, error) {
	if q.reply != nil {
		return nil, true, codecs.NewError(ProtocolFiveM, "datagram", 0, codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	r := wire.NewReader(ProtocolFiveM, b, 0, nil)
	readMagic(r)
	cmd := string(readWord(r, "command"))
	if err := r.Err(); err != nil {
		return nil, false, err
	}
	if cmd != CmdInfoResponse {
		return nil, false, codecs.NewError(ProtocolFiveM, "command", len(Magic), codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(cmd)+" does not answer getinfo"))
	}
	// A Quake III server answers getinfo too: only the Cfx.re server's
	// reply (gamename CitizenFX) completes this conversation, so that a
	// probe of every protocol names the other one.
	if k, _ := (&FiveMCodec{}).Detect(b); k != codecs.KindResponse {
		return nil, false, codecs.NewError(ProtocolFiveM, "vars", len(Magic), codecs.Detail(codecs.ErrUnknownCode, "not gamename CitizenFX"))
	}
	q.reply = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *fivemQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: ProtocolFiveM, Kind: codecs.KindResponse},
			codecs.NewError(ProtocolFiveM, "reply", 0, codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	return (&FiveMCodec{}).Decode([][]byte{q.reply}, opt)
}
