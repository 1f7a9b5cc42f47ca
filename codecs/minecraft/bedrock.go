package minecraft

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// RakNet's unconnected ping and pong, which Bedrock Edition servers answer
// on their game port (UDP 19132):
//
//	ping  01 | u64 time | magic | u64 client GUID              (33 bytes)
//	pong  1C | u64 time | u64 server GUID | magic | u16 length | MOTD
//
// 02, the ping that asks only servers with open connections, has the
// ping's layout.
const (
	idUnconnectedPing     = 0x01
	idUnconnectedPingOpen = 0x02
	idUnconnectedPong     = 0x1c
	// BedrockQueryLen is the ping's length, the only query CheckQuery takes.
	BedrockQueryLen = 33
)

// OfflineMagic is RakNet's "offline message" magic, in every unconnected
// packet.
const OfflineMagic = "\x00\xff\xff\x00\xfe\xfe\xfe\xfe\xfd\xfd\xfd\xfd\x12\x34\x56\x78"

// BedrockRequest is an unconnected ping.
type BedrockRequest struct {
	Time       uint64 // echoed in the pong
	ClientGUID uint64
	Open       bool // 02: only a server with open connections answers
}

// BedrockResponse is an unconnected pong with its MOTD's fields.
type BedrockResponse struct {
	Time, ServerGUID uint64
	MOTD             string // the ';'-separated string as sent
	// Fields are the MOTD's fields as sent, indexed by BedrockEdition…
	// (old servers send the first six only: Count says how many came).
	Fields       [12]string
	Count        int
	Players, Max int
	Trailing     bool // bytes after the MOTD
}

// Indexes of BedrockResponse.Fields, in the MOTD's order.
const (
	BedrockEdition     = iota // MCPE, MCEE (Education)
	BedrockName               // the first line
	BedrockProtocolNum        // the protocol number
	BedrockVersion
	BedrockPlayers
	BedrockMax
	BedrockServerID
	BedrockLine2 // the second line: the level's name, mostly
	BedrockGameMode
	BedrockGameModeNum
	BedrockPortV4
	BedrockPortV6
)

var bedrockFields = [...]string{"edition", "name", "protocol", "version", "players", "max", "server_id", "line2", "game_mode", "game_mode_num", "port_v4", "port_v6"}

// bedrockPaths are bedrockFields' span and error paths.
var bedrockPaths = [...]string{"motd.edition", "motd.name", "motd.protocol", "motd.version", "motd.players", "motd.max", "motd.server_id", "motd.line2", "motd.game_mode", "motd.game_mode_num", "motd.port_v4", "motd.port_v6"}

// bedrockNumeric marks the fields of bedrockFields that are numbers.
const bedrockNumeric = 1<<2 | 1<<4 | 1<<5 | 1<<9 | 1<<10 | 1<<11

// AppendBedrockRequest appends an unconnected ping.
func AppendBedrockRequest(dst []byte, q BedrockRequest) []byte {
	id := byte(idUnconnectedPing)
	if q.Open {
		id = idUnconnectedPingOpen
	}
	dst = append(dst, id)
	dst = binary.BigEndian.AppendUint64(dst, q.Time)
	dst = append(dst, OfflineMagic...)
	return binary.BigEndian.AppendUint64(dst, q.ClientGUID)
}

// AppendBedrockResponse appends an unconnected pong carrying motd (a
// server's side: the demo).
func AppendBedrockResponse(dst []byte, time, guid uint64, motd string) []byte {
	dst = append(dst, idUnconnectedPong)
	dst = binary.BigEndian.AppendUint64(dst, time)
	dst = binary.BigEndian.AppendUint64(dst, guid)
	dst = append(dst, OfflineMagic...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(motd)))
	return append(dst, motd...)
}

func readMagic(r *wire.Reader) {
	start := r.Offset()
	if m := r.Skip("magic", len(OfflineMagic)); m != nil && string(m) != OfflineMagic {
		r.FailAt("magic", start, codecs.Detail(codecs.ErrBadMagic, "not RakNet's offline message magic"))
	}
	if r.Recording() {
		r.Mark("magic", "bytes", start, "offline message")
	}
}

// DecodeBedrockRequest decodes an unconnected ping.
func DecodeBedrockRequest(b []byte) (BedrockRequest, error) {
	r := wire.NewReader(BedrockProtocol, b, 0, nil)
	q := readBedrockRequest(r)
	return q, r.Err()
}

func readBedrockRequest(r *wire.Reader) BedrockRequest {
	var q BedrockRequest
	switch id := r.U8("id"); {
	case r.Failed():
	case id == idUnconnectedPingOpen:
		q.Open = true
	case id != idUnconnectedPing:
		r.FailAt("id", 0, codecs.Detail(codecs.ErrNotQuery, "an unconnected ping is 01 or 02"))
	}
	q.Time = readU64(r, "time")
	readMagic(r)
	q.ClientGUID = readU64(r, "client_guid")
	if !r.Failed() && !r.Empty() {
		r.Fail("trailing", codecs.ErrTrailing)
	}
	return q
}

func readU64(r *wire.Reader, field string) uint64 {
	start := r.Offset()
	b := r.Skip(field, 8)
	if b == nil {
		return 0
	}
	v := binary.BigEndian.Uint64(b)
	if r.Recording() {
		r.Mark(field, "u64be", start, strconv.FormatUint(v, 10))
	}
	return v
}

// DecodeBedrockResponse decodes an unconnected pong and its MOTD.
func DecodeBedrockResponse(b []byte, req *BedrockRequest) (BedrockResponse, error) {
	r := wire.NewReader(BedrockProtocol, b, 0, nil)
	var p BedrockResponse
	readBedrockResponse(r, &p)
	return p, r.Err()
}

func readBedrockResponse(r *wire.Reader, p *BedrockResponse) {
	if id := r.U8("id"); id != idUnconnectedPong && !r.Failed() {
		r.FailAt("id", 0, codecs.Detail(codecs.ErrUnknownCode, "an unconnected pong is 1C"))
	}
	p.Time = readU64(r, "time")
	p.ServerGUID = readU64(r, "server_guid")
	readMagic(r)
	n := int(r.U16BE("motd.length"))
	if !r.Failed() && n > r.Len() {
		r.Fail("motd", codecs.Detail(codecs.ErrShort, "the pong says "+strconv.Itoa(n)+" bytes; "+strconv.Itoa(r.Len())+" came"))
		return
	}
	start := r.Offset()
	s := r.Rest()
	if r.Failed() || n > len(s) {
		return
	}
	s = s[:n]
	p.MOTD = string(s)
	// Each field its own span, its ';' with it.
	off := 0
	for i := 0; off < len(s) && i < len(bedrockFields); i++ {
		end := off
		for end < len(s) && s[end] != ';' {
			end++
		}
		v := string(s[off:end])
		p.Fields[i] = v
		p.Count++
		if _, ok := codecs.Atoi(v); bedrockNumeric&(1<<i) != 0 && !ok && v != "" {
			r.FailAt(bedrockPaths[i], start+off, codecs.Detail(codecs.ErrBadValue, "not a number"))
			return
		}
		if end < len(s) {
			end++
		}
		fs := r.Offset()
		r.Skip(bedrockPaths[i], end-off)
		if r.Recording() {
			r.Mark(bedrockPaths[i], "text", fs, v)
		}
		off = end
	}
	p.Players, _ = codecs.Atoi(p.Fields[BedrockPlayers])
	p.Max, _ = codecs.Atoi(p.Fields[BedrockMax])
	if off < len(s) {
		fs := r.Offset()
		r.Skip("motd.rest", len(s)-off)
		if r.Recording() {
			r.Mark("motd.rest", "text", fs, string(s[off:]))
		}
	}
	if !r.Failed() && !r.Empty() {
		fs := r.Offset()
		r.Skip("trailing", r.Len())
		if r.Recording() {
			r.Mark("trailing", "bytes", fs, strconv.Itoa(r.Offset()-fs)+" bytes")
		}
		p.Trailing = true
	}
	if p.Count < 6 {
		r.FailAt("motd", start, codecs.Detail(codecs.ErrBadValue, "a pong's MOTD has at least 6 fields"))
	}
}

// WarnEdition: the pong's edition is neither MCPE nor MCEE.
const WarnEdition = "edition neither MCPE nor MCEE"

// BedrockCodec is the codecs.Codec of Bedrock Edition's unconnected ping.
type BedrockCodec struct{}

func (*BedrockCodec) Name() string     { return BedrockProtocol }
func (*BedrockCodec) Title() string    { return "Minecraft Bedrock" }
func (*BedrockCodec) DefaultPort() int { return BedrockPort }

var bedrockOptions = []codecs.Option{
	{Name: "time", Kind: codecs.OptionUint, Default: "0", Echo: true,
		Help: "the ping's time, which the pong echoes"},
	{Name: "open", Kind: codecs.OptionBool, Default: "false",
		Help: "ask with 02, which only a server with open connections answers"},
}

// Options lists the knobs of NewQuery.
func (*BedrockCodec) Options() []codecs.Option {
	return append([]codecs.Option(nil), bedrockOptions...)
}

// Detect: a ping or a pong with RakNet's magic where it belongs is Certain.
func (*BedrockCodec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	switch {
	case len(b) == BedrockQueryLen && (b[0] == idUnconnectedPing || b[0] == idUnconnectedPingOpen) && string(b[9:25]) == OfflineMagic:
		return codecs.KindQuery, codecs.Certain
	case len(b) >= 35 && b[0] == idUnconnectedPong && string(b[17:33]) == OfflineMagic:
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}

// CheckQuery accepts an unconnected ping (01 or 02), 33 bytes.
func (*BedrockCodec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(BedrockProtocol, b, BedrockQueryLen); err != nil {
		return err
	}
	_, err := DecodeBedrockRequest(b)
	return err
}

// Decode decodes a ping or a pong (one datagram).
func (*BedrockCodec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: BedrockProtocol, Kind: codecs.KindResponse}
	if len(datagrams) != 1 {
		return m, codecs.NewError(BedrockProtocol, "datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "a pong is one datagram"))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		spans = &m.Spans
	}
	r := wire.NewReader(BedrockProtocol, b, 0, spans)
	if len(b) > 0 && (b[0] == idUnconnectedPing || b[0] == idUnconnectedPingOpen) {
		m.Kind = codecs.KindQuery
		q := readBedrockRequest(r)
		if !opt.NoFields {
			m.Fields = codecs.Object{{Key: "time", Value: q.Time}, {Key: "client_guid", Value: q.ClientGUID}, {Key: "open", Value: q.Open}}
		}
		return m, r.Err()
	}
	var p BedrockResponse
	readBedrockResponse(r, &p)
	err := r.Err()
	if p.Count >= 6 {
		in := &codecs.Info{Has: codecs.HasName | codecs.HasVersion | codecs.HasNumPlayers | codecs.HasMaxPlayers,
			Name: oneLine(stripCodes(p.Fields[BedrockName])), Version: p.Fields[BedrockVersion], NumPlayers: p.Players, MaxPlayers: p.Max}
		if p.Count > 7 {
			in.Has |= codecs.HasMap
			in.Map = oneLine(stripCodes(p.Fields[BedrockLine2]))
		}
		if p.Count > 8 {
			in.Has |= codecs.HasGameType
			in.GameType = p.Fields[BedrockGameMode]
		}
		m.Info = in
	}
	if !opt.NoFields {
		var f codecs.Object
		f.Put("time", p.Time)
		f.Put("server_guid", p.ServerGUID)
		f.PutString("motd", p.MOTD)
		for i := 0; i < p.Count; i++ {
			if n, ok := codecs.Atoi(p.Fields[i]); ok && bedrockNumeric&(1<<i) != 0 {
				f.PutInt(bedrockFields[i], n)
			} else {
				f.PutString(bedrockFields[i], p.Fields[i])
			}
		}
		m.Fields = f
	}
	if p.Trailing {
		m.Warn(codecs.WarnTrailing)
	}
	if e := p.Fields[BedrockEdition]; err == nil && e != "MCPE" && e != "MCEE" {
		m.Warn(WarnEdition)
	}
	return m, err
}

// NewQuery starts an unconnected ping.
func (c *BedrockCodec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(BedrockProtocol, bedrockOptions, opts)
	q := BedrockRequest{Time: r.Uint("time", 64), Open: r.Bool("open")}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return &bedrockQuery{req: q, b: AppendBedrockRequest(nil, q)}, nil
}

type bedrockQuery struct {
	req BedrockRequest
	b   []byte
	got []byte
}

func (q *bedrockQuery) Start() [][]byte { return [][]byte{q.b} }

// Feed takes the pong; a datagram that is not one, or echoes another
// time, is ignored with an error.
func (q *bedrockQuery) Feed(b []byte) ([][]byte, bool, error) {
	if len(b) < 9 || b[0] != idUnconnectedPong {
		return nil, false, codecs.NewError(BedrockProtocol, "id", 0, codecs.Detail(codecs.ErrUnknownCode, "not an unconnected pong"))
	}
	if binary.BigEndian.Uint64(b[1:]) != q.req.Time {
		return nil, false, codecs.NewError(BedrockProtocol, "time", 1, codecs.Detail(codecs.ErrBadValue, "the pong of another ping"))
	}
	q.got = b
	return nil, true, nil
}

func (q *bedrockQuery) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	var d [][]byte
	if q.got == nil {
		return &codecs.Message{Protocol: BedrockProtocol, Kind: codecs.KindResponse},
			codecs.NewError(BedrockProtocol, "reply", 0, codecs.Detail(codecs.ErrIncomplete, "no pong came"))
	}
	d = [][]byte{q.got}
	return (&BedrockCodec{}).Decode(d, opt)
}

// QueryKey is the ping with its time and client GUID zeroed (the pong
// echoes the time; the answer is the same), or nil when b is not a ping.
func (*BedrockCodec) QueryKey(b []byte) []byte {
	q, err := DecodeBedrockRequest(b)
	if err != nil {
		return nil
	}
	return AppendBedrockRequest(nil, BedrockRequest{Open: q.Open})
}
