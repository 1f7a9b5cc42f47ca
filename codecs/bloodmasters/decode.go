package bloodmasters

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Protocol is the name the package registers and puts in every error.
const Protocol = "bloodmasters"

// minClientLen is the smallest client record: empty name (1-byte length),
// team, spectator, ping.
const minClientLen = 1 + 1 + 1 + 2

// DecodeRequest decodes a query datagram, which must be exactly the 7-byte
// form `07 00 0d` + token.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	n := r.U16LE("length")
	c := Command(r.U8("command"))
	tok := r.Bytes("token", 4)
	switch {
	case r.Failed():
	case n != RequestLen:
		r.FailAt("length", 0, wire.Detailf(codecs.ErrBadValue, "a request is 7 bytes long, this message says %d", int64(n)))
	case c != CmdServerInfo:
		r.FailAt("command", 2, codecs.Detail(codecs.ErrNotQuery, wire.Msg("command %d (", int64(c))+c.String()+") is not ServerInfo (13)"))
	case !r.Empty():
		r.Fail("datagram", wire.Detailf(codecs.ErrTrailing, "%d bytes after the request", int64(r.Len())))
	}
	if err := r.Err(); err != nil {
		return Request{}, err
	}
	return Request{Token: binary.BigEndian.Uint32(tok)}, nil
}

// DecodeResponse decodes the reply in datagram b: the first message whose
// command is ServerInfo (13, or 0x8d when sent reliably). Other messages in
// the datagram are skipped (Parser lists them); bytes after the reply that
// form no message are ignored, as the game does. The result does not alias
// b. On error it returns the fields decoded so far.
//
// req is the request the reply answers, or nil when it is not known. With
// req, a reply that echoes another token is an error wrapping
// codecs.ErrBadValue at field "token" (the decoded reply is returned too).
func DecodeResponse(b []byte, req *Request) (Response, error) {
	var dg datagram
	err := dg.decode(b, nil, optValues)
	if err == nil && req != nil && dg.resp.Token != req.Token {
		at := dg.at + HeaderLen
		if dg.command.HasPacketID() {
			at += 4
		}
		err = newError("token", at, "", codecs.Detail(codecs.ErrBadValue,
			"0x"+hex32(dg.resp.Token)+" echoed, the request sent 0x"+hex32(req.Token)))
	}
	return dg.resp, err
}

// hex32 is x as 8 hex digits.
func hex32(x uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], x)
	return string(codecs.AppendHex(nil, b[:]))
}

// Parser iterates the messages of a datagram by their length fields:
//
//	var p bloodmasters.Parser
//	p.Start(b)
//	for {
//		m, err := p.Next()
//		if err == bloodmasters.ErrDone { break }
//		...
//	}
//
// The zero value is ready for Start.
type Parser struct {
	r *wire.Reader
	n int
}

// Start begins iterating the messages of datagram b.
func (p *Parser) Start(b []byte) { p.r, p.n = wire.NewReader(Protocol, b, 0, nil), 0 }

// Next returns the next message, ErrDone after the last one, or a
// *codecs.Error for a message whose length field is too small for its header
// or runs past the datagram (the same error on every later call).
func (p *Parser) Next() (RawMessage, error) {
	if p.r == nil {
		return RawMessage{}, ErrDone
	}
	if err := p.r.Err(); err != nil {
		return RawMessage{}, err
	}
	if p.r.Empty() {
		return RawMessage{}, ErrDone
	}
	m := readMessage(p.r, p.n)
	if err := p.r.Err(); err != nil {
		return RawMessage{}, err
	}
	p.n++
	return m, nil
}

// stage records how far the ServerInfo message decoded, so that a partial
// result shows exactly the fields that were read. The order is the wire order.
type stage uint8

const (
	stNone stage = iota
	stLength
	stCommand
	stPacketID
	stToken
	stTitle
	stLocked
	stWebsite
	stMaxClients
	stMaxPlayers
	stGameType
	stMap
	stNumClients
	stNumPlayers
	stProtocol
	stScoreLimit
	stTimeLimit
	stJoinSmallest
	stClients
	stDone
)

// options select what datagram.decode keeps.
type options uint8

const (
	optValues options = 1 << iota // materialize strings and client records
	optOthers                     // keep the datagram's other messages
	optQuery                      // a ServerInfo message with 4 data bytes is a request
)

// datagram is everything decoded from one datagram.
type datagram struct {
	resp    Response
	found   bool    // a ServerInfo message was reached
	query   bool    // it is a request (with optQuery)
	at      int     // its offset
	length  int     // its length field
	command Command // its command byte
	stage   stage   // how far it decoded
	others  []RawMessage
	tail    []byte // bytes after the reply that form no message
	tailWhy string // codecs.WarnTruncated or codecs.WarnTrailing
}

// decoder decodes the ServerInfo message.
type decoder struct {
	r      wire.Reader
	spans  *[]codecs.Span
	stage  stage  // how far the ServerInfo message decoded
	end    int    // where the message's length says it ends (may pass the datagram)
	values bool   // materialize strings and clients
	text   string // the message's data as one string: string fields are substrings of it
	textAt int    // datagram offset of text[0]
}

// decode walks the messages of b. Each message gets a reader bounded by its
// own length field, so a field can never be read from the next message;
// offsets stay datagram offsets because the reader starts at 0 and skips to
// the message.
func (dg *datagram) decode(b []byte, spans *[]codecs.Span, opt options) error {
	d := decoder{r: *wire.NewReader(Protocol, b, 0, spans), spans: spans, values: opt&optValues != 0}
	r := &d.r
	var err error
	k := 0 // index among the other messages
	for off := 0; off < len(b); off = r.Offset() {
		rest := b[off:]
		if dg.found {
			if why := frameProblem(rest); why != "" {
				// The game delivers the reply and drops the rest.
				r.Reset(b, 0)
				r.Skip("", off)
				r.Bytes("trailing", len(rest))
				if d.values {
					dg.tail = append([]byte(nil), rest...)
				}
				dg.tailWhy = why
				break
			}
		}
		limit := len(b)
		if len(rest) >= 2 {
			if n := int(binary.LittleEndian.Uint16(rest)); n >= HeaderLen && n < len(rest) {
				limit = off + n
			}
		}
		r.Reset(b[:limit], 0)
		r.Skip("", off)
		if !dg.found && (len(rest) < HeaderLen || Command(rest[2]).Base() == CmdServerInfo) {
			dg.found, dg.at = true, off
			d.serverInfo(dg, opt)
		} else {
			m := readMessage(r, k)
			if opt&optOthers != 0 && !r.Failed() {
				dg.others = append(dg.others, m)
			}
			k++
		}
		if err = r.Err(); err != nil {
			break
		}
	}
	switch {
	case err != nil || dg.found:
	case len(b) == 0:
		err = newError("length", 0, "", codecs.ErrShort)
	default:
		err = newError("command", 2, "", codecs.Detail(codecs.ErrUnknownCode, "no ServerInfo (13) message in the datagram"))
	}
	dg.stage = d.stage
	return err
}

// frameProblem says why b does not start with a whole message: "" when it
// does, codecs.WarnTruncated when the message is cut short, otherwise
// codecs.WarnTrailing.
func frameProblem(b []byte) string {
	if len(b) < HeaderLen {
		return codecs.WarnTrailing
	}
	n := int(binary.LittleEndian.Uint16(b))
	switch {
	case n < Command(b[2]).headerLen():
		return codecs.WarnTrailing
	case n > len(b):
		return codecs.WarnTruncated
	}
	return ""
}

// readHeader reads a message header at r's position and returns its
// command, packet id and length field. st, when not nil, advances as the
// fields are read.
func readHeader(r *wire.Reader, st *stage) (c Command, id uint32, n int) {
	start := r.Offset()
	n = int(r.U16LE("length"))
	if st != nil && !r.Failed() {
		*st = stLength
	}
	cs := r.Offset()
	if b := r.Skip("command", 1); b != nil {
		c = Command(b[0])
		if r.Recording() {
			r.Mark("command", "enum:command", cs, c.String())
		}
		if st != nil {
			*st = stCommand
		}
	}
	if r.Failed() {
		return c, 0, n
	}
	if hl := c.headerLen(); n < hl {
		r.FailAt("length", start, wire.Detailf(codecs.ErrBadValue, "message length %d is shorter than its %d-byte header", int64(n), int64(hl)))
		return c, 0, n
	}
	if c.HasPacketID() {
		id = r.U32BE("packet_id")
		if st != nil && !r.Failed() {
			*st = stPacketID
		}
	}
	return c, id, n
}

// readMessage reads one whole message (header and data) as messages[k].
func readMessage(r *wire.Reader, k int) RawMessage {
	r.Enter("messages", k)
	m := RawMessage{Offset: r.Offset()}
	var n int
	m.Command, m.PacketID, n = readHeader(r, nil)
	if !r.Failed() {
		m.Data = r.Bytes("data", m.Offset+n-r.Offset())
	}
	r.Leave()
	return m
}

// serverInfo decodes the ServerInfo message at r's position (§6.3).
func (d *decoder) serverInfo(dg *datagram, opt options) {
	r, resp := &d.r, &dg.resp
	start := r.Offset()
	dg.command, resp.PacketID, dg.length = readHeader(r, &d.stage)
	resp.Reliable = dg.command&ReliableBit != 0
	if r.Failed() {
		return
	}
	d.end = start + dg.length
	if d.values {
		d.textAt = r.Offset()
		d.text = string(r.Rest())
	}
	isRequest := d.end-r.Offset() == 4
	if tok := r.Bytes("token", 4); tok != nil {
		resp.Token = binary.BigEndian.Uint32(tok)
	}
	d.mark(stToken)
	if isRequest {
		if opt&optQuery != 0 {
			dg.query = true
		} else {
			r.Fail("title", codecs.Detail(codecs.ErrShort, "the message ends after the token: it is a request, not a reply"))
		}
		return
	}
	resp.Title = d.str("title", stTitle)
	resp.Locked = d.bool("locked", stLocked)
	resp.Website = d.str("website", stWebsite)
	resp.MaxClients = d.u8("max_clients", stMaxClients)
	resp.MaxPlayers = d.u8("max_players", stMaxPlayers)
	resp.GameType = GameType(d.enum("game_type", stGameType, func(v uint8) string { return GameType(v).String() }))
	resp.Map = d.str("map", stMap)
	resp.NumClients = d.u8("num_clients", stNumClients)
	resp.NumPlayers = d.u8("num_players", stNumPlayers)
	resp.Protocol = d.u8("protocol", stProtocol)
	if resp.Protocol >= ExtendedSince && !r.Failed() {
		d.extended(resp)
		if d.end > r.Offset() && !r.Failed() {
			resp.Build = d.str("build_description", stNone)
			resp.HasBuild = !r.Failed()
		}
	}
	if left := d.end - r.Offset(); left > 0 && !r.Failed() {
		x := r.Bytes("extra", left)
		if x != nil && d.values {
			resp.Extra = append([]byte(nil), x...)
		}
	}
	d.mark(stDone)
}

// extended decodes the protocol 27+ block: limits, join-smallest-team and
// the client records.
func (d *decoder) extended(resp *Response) {
	r := &d.r
	resp.ScoreLimit = d.s16("score_limit", stScoreLimit)
	resp.TimeLimit = d.s16("time_limit", stTimeLimit)
	resp.JoinSmallestTeam = d.bool("join_smallest_team", stJoinSmallest)
	n := int(resp.NumClients)
	if d.values && !r.Failed() {
		// The count is untrusted: reserve no more records than the bytes
		// left could hold.
		resp.Clients = make([]Client, 0, min(n, r.Len()/minClientLen))
	}
	for i := 0; i < n && !r.Failed(); i++ {
		r.Enter("clients", i)
		g := d.open()
		var c Client
		c.Name = d.str("name", stNone)
		c.Team = Team(d.enum("team", stNone, func(v uint8) string { return Team(v).String() }))
		c.Spectator = d.bool("spectator", stNone)
		c.Ping = d.s16("ping", stNone)
		d.close(g, c.Name)
		r.Leave()
		if d.values && !r.Failed() {
			resp.Clients = append(resp.Clients, c)
		}
	}
	d.mark(stClients)
}

// mark advances the stage to s when no read has failed (stNone: a field
// inside a list, which does not move the stage).
func (d *decoder) mark(s stage) {
	if !d.r.Failed() && s > d.stage {
		d.stage = s
	}
}

// u8, bool and s16 read a field with the cursor and mark its stage.
func (d *decoder) u8(field string, s stage) uint8 {
	v := d.r.U8(field)
	d.mark(s)
	return v
}

func (d *decoder) bool(field string, s stage) bool {
	v := d.r.Bool(field)
	d.mark(s)
	return v
}

func (d *decoder) s16(field string, s stage) int16 {
	v := d.r.S16BE(field)
	d.mark(s)
	return v
}

// str reads a .NET BinaryWriter string: a 7-bit encoded length (ULEB128, at
// most 5 bytes, at most MaxInt32) and that many bytes. A length that runs past
// the message's own length field is hostile (ErrTooLong); one that only runs
// past the datagram is a cut reply (ErrShort). Both fail at the string's start.
func (d *decoder) str(field string, s stage) string {
	v := d.readString(field)
	d.mark(s)
	return v
}

func (d *decoder) readString(field string) string {
	r := &d.r
	if r.Failed() {
		return ""
	}
	start := r.Offset()
	n, w := binary.Uvarint(r.Rest())
	switch {
	case w == 0 && r.Len() < 5:
		r.Fail(field, codecs.Detail(codecs.ErrShort, "string length is cut"))
		return ""
	case w <= 0 || w > 5 || n > math.MaxInt32:
		r.FailAt(field, start, codecs.Detail(codecs.ErrBadValue, "7-bit string length does not fit in a 32-bit integer"))
		return ""
	case n > uint64(d.end-start-w):
		r.FailAt(field, start, codecs.Detail(codecs.ErrTooLong, "string of "+strconv.FormatUint(n, 10)+" bytes overruns the message ("+strconv.Itoa(d.end-start-w)+" bytes left)"))
		return ""
	}
	b := r.Skip(field, w+int(n))
	if b == nil {
		return ""
	}
	if r.Recording() {
		r.Mark(field, "lstring", start, codecs.Latin1(b[w:]))
	}
	if !d.values {
		return ""
	}
	s := d.text[start+w-d.textAt : r.Offset()-d.textAt]
	if !isASCII(s) {
		return codecs.Latin1([]byte(s)) // ASCII, what servers send, stays a substring: no allocation
	}
	return s
}

// enum reads one byte shown by its name.
func (d *decoder) enum(field string, s stage, name func(uint8) string) uint8 {
	r := &d.r
	start := r.Offset()
	b := r.Skip(field, 1)
	if b == nil {
		return 0
	}
	if r.Recording() {
		r.Mark(field, "enum:"+field, start, name(b[0]))
	}
	d.mark(s)
	return b[0]
}

// open starts a "group" span for the current path (one client record) and
// returns its index, or -1 when spans are off; close sets its end.
func (d *decoder) open() int {
	if d.spans == nil || d.r.Failed() {
		return -1
	}
	*d.spans = append(*d.spans, codecs.Span{Start: d.r.Offset(), End: d.r.Offset(), Field: d.r.Path(""), Kind: "group"})
	return len(*d.spans) - 1
}

func (d *decoder) close(i int, name string) {
	if i < 0 {
		return
	}
	s := &(*d.spans)[i]
	s.End = d.r.Offset()
	s.Value = name
}
