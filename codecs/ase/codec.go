package ase

import (
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages, besides the shared
// codecs.WarnUnknownFlags.
const (
	// numplayers differs from the player entries listed (when any are).
	WarnPlayerCount = "player count differs from the player entries"
	// A number (port, numplayers, maxplayers, a player's score, ping or
	// time) is not decimal; the neutral view leaves it out (or 0).
	WarnNotNumber = "a number field is not decimal"
)

// Codec is the codecs.Codec of the All-Seeing Eye query protocol.
// Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "All-Seeing Eye" }
func (*Codec) DefaultPort() int { return DefaultPort }

// Options: the protocol has one query and nothing to choose.
func (*Codec) Options() []codecs.Option { return nil }

// Detect: the one-byte query is Likely (one byte is thin evidence); a
// datagram that starts with EYE1 is a reply, Certain when it decodes whole
// and Likely otherwise.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) == 1 && b[0] == QueryFull {
		return codecs.KindQuery, codecs.Likely
	}
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return "", codecs.NotMine
	}
	if wellFormed(b) {
		return codecs.KindResponse, codecs.Certain
	}
	return codecs.KindResponse, codecs.Likely
}

// wellFormed reports whether reply b decodes, without decoding it (no
// allocation): the nine strings, the rules to their end marker, and
// player entries to the datagram's end, every length byte from 1 to what
// is left.
func wellFormed(b []byte) bool {
	i := len(Magic)
	str := func() bool {
		if i >= len(b) || b[i] == 0 || int(b[i]) > len(b)-i {
			return false
		}
		i += int(b[i])
		return true
	}
	for range 9 {
		if !str() {
			return false
		}
	}
	for {
		if i >= len(b) {
			return false
		}
		if b[i] == 1 {
			i++
			break
		}
		if !str() { // the key
			return false
		}
		if !str() { // the value
			return false
		}
	}
	for i < len(b) {
		flags := b[i]
		i++
		for bit := range len(flagFields) {
			if flags&(1<<bit) != 0 && !str() {
				return false
			}
		}
	}
	return true
}

// CheckQuery accepts exactly the one-byte query.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes one datagram: the query (kind query) or a reply.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	switch len(datagrams) {
	case 0:
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	case 1:
	default:
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrBadValue, "an ASE message is one datagram, got %d", int64(len(datagrams))))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		m.Spans = make([]codecs.Span, 0, 16+len(b)/6)
		spans = &m.Spans
	}
	if len(b) > 0 && b[0] == QueryFull {
		m.Kind = codecs.KindQuery
		r := wire.NewReader(Protocol, b, 0, spans)
		r.Skip("query", 1)
		r.Mark("query", "u8", 0, "s (full status)")
		_, err := DecodeRequest(b)
		if !opt.NoFields {
			m.Fields = codecs.Object{}.Add("query", "s")
		}
		return m, err
	}
	var resp Response
	r := wire.NewReader(Protocol, b, 0, spans)
	head, rulesEnd := readResponse(r, spans, &resp)
	m.Info = info(&resp, head, rulesEnd, m)
	if !opt.NoFields {
		m.Fields = fields(&resp, head, rulesEnd)
	}
	return m, r.Err()
}

// fields is the "fields" object: every field decoded, in wire order, as
// text as sent (converted to UTF-8 by Text). A player's object holds only
// the fields its flags select: an absent field is an absent key.
func fields(r *Response, head int, rulesEnd bool) codecs.Object {
	if head < 0 {
		return nil
	}
	f := make(codecs.Object, 0, 12).Add("magic", Magic)
	for i, h := range r.header() {
		if i < head {
			f = f.Add(h.name, Text(*h.v))
		}
	}
	if head < 9 {
		return f
	}
	rs := make([]any, 0, len(r.Rules))
	for _, x := range r.Rules {
		rs = append(rs, append(make([]string, 0, 2), Text(x.Key), Text(x.Value)))
	}
	f = f.Add("rules", rs)
	if !rulesEnd {
		return f
	}
	ps := make([]codecs.Object, 0, len(r.Players))
	for i := range r.Players {
		p := &r.Players[i]
		o := make(codecs.Object, 0, 7).Add("flags", uint8(p.Flags))
		for bit, name := range flagFields {
			if p.Flags&(1<<bit) != 0 {
				o = o.Add(name, Text(*p.field(bit)))
			}
		}
		ps = append(ps, o)
	}
	return f.Add("players", ps)
}

// info is the neutral view (docs/protocols/ase.md "Neutral view"):
// hostname, map, gametype, version, password ("1"), the two counts, the
// game's short name and game port as the first rules ("gamename", "hostport", as qstat names them)
// before the server's own, and the players. The wire has no absent
// number in the neutral view's shape: a score or ping the flags leave out
// (or that is not decimal) is 0 there, and the fields object says which it
// was; a team is a name, listed in Teams (score 0: the protocol has no
// team score) and pointed at by the player's Team, and a player with no
// team field, or an empty one, is on no team (JSON null).
func info(r *Response, head int, rulesEnd bool, m *codecs.Message) *codecs.Info {
	in := &codecs.Info{}
	if head < 0 {
		return in
	}
	bits := [...]codecs.InfoHas{0, 0, codecs.HasName, codecs.HasGameType, codecs.HasMap, codecs.HasVersion, codecs.HasPassword, codecs.HasNumPlayers, codecs.HasMaxPlayers}
	for i := range head {
		in.Has |= bits[i]
	}
	in.Name, in.GameType, in.Map, in.Version = Text(r.Name), Text(r.GameType), Text(r.Map), Text(r.Version)
	in.Password = r.Password == "1"
	if head > 1 {
		if _, ok := number(r.Port); !ok {
			m.Warn(WarnNotNumber)
		}
	}
	var ok bool
	if head > 7 {
		if in.NumPlayers, ok = number(r.NumPlayers); !ok {
			in.Has &^= codecs.HasNumPlayers
			m.Warn(WarnNotNumber)
		}
	}
	if head > 8 {
		if in.MaxPlayers, ok = number(r.MaxPlayers); !ok {
			in.Has &^= codecs.HasMaxPlayers
			m.Warn(WarnNotNumber)
		}
	}
	if head > 0 {
		in.Has |= codecs.HasRules
		in.Rules = make([][2]string, 0, 2+len(r.Rules))
		in.Rules = append(in.Rules, [2]string{"gamename", Text(r.Game)})
		if head > 1 {
			in.Rules = append(in.Rules, [2]string{"hostport", Text(r.Port)})
		}
		for _, x := range r.Rules {
			in.Rules = append(in.Rules, [2]string{Text(x.Key), Text(x.Value)})
		}
	}
	if !rulesEnd {
		return in
	}
	in.Has |= codecs.HasPlayers
	in.Players = make([]codecs.Player, 0, len(r.Players))
	for i := range r.Players {
		p := &r.Players[i]
		if p.Flags&^FlagsKnown != 0 {
			m.Warn(codecs.WarnUnknownFlags)
		}
		q := codecs.Player{Name: Text(p.Name)}
		for _, x := range [...]struct {
			f Flags
			s string
			v *int
		}{{FlagScore, p.Score, &q.Score}, {FlagPing, p.Ping, &q.Ping}, {FlagTime, p.Time, nil}} {
			if p.Flags&x.f == 0 || x.s == "" {
				continue
			}
			n, ok := number(x.s)
			if !ok {
				m.Warn(WarnNotNumber)
			} else if x.v != nil {
				*x.v = n
			}
		}
		if p.Has(FlagTeam) && p.Team != "" {
			q.HasTeam = true
			q.Team = teamIndex(in, Text(p.Team))
		}
		in.Players = append(in.Players, q)
	}
	if head > 7 && in.Has&codecs.HasNumPlayers != 0 && len(in.Players) > 0 && len(in.Players) != in.NumPlayers {
		m.Warn(WarnPlayerCount)
	}
	return in
}

// teamIndex returns the index of team name in in.Teams, adding it.
func teamIndex(in *codecs.Info, name string) int {
	for i, t := range in.Teams {
		if t.Name == name {
			return i
		}
	}
	in.Has |= codecs.HasTeams
	in.Teams = append(in.Teams, codecs.Team{Name: name})
	return len(in.Teams) - 1
}

// number reads a decimal integer, with an optional sign, as the games
// write them; ok is false for anything else (an empty string too).
func number(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Text is a string of the wire as UTF-8: as sent when it is valid UTF-8
// (MTA's text, and ASCII), else read as Latin-1 (the older games' code
// page, as near as one table gets).
func Text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return codecs.Latin1([]byte(s))
}

// NewQuery starts a conversation: the one query, one reply. There are no
// options.
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	if err := codecs.ReadOptions(Protocol, nil, opts).Err(); err != nil {
		return nil, err
	}
	return &query{}, nil
}

type query struct {
	reply []byte
}

func (q *query) Start() [][]byte { return [][]byte{{QueryFull}} }

// Feed takes the reply: a datagram that starts with the magic (cut or
// not: Result says what is wrong with it). Anything else is ignored with
// an error.
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.reply != nil {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return nil, false, newError("magic", 0, "", codecs.Detail(codecs.ErrBadMagic, "a reply starts with "+Magic))
	}
	q.reply = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	return (&Codec{}).Decode([][]byte{q.reply}, opt)
}

// itoa is strconv.Itoa, for field paths.
func itoa(i int) string { return strconv.Itoa(i) }

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}

// QueryKey implements codecs.QueryKeyer: the query itself, which carries
// nothing to neutralise; nil when b is not the query.
func (*Codec) QueryKey(b []byte) []byte {
	if _, err := DecodeRequest(b); err != nil {
		return nil
	}
	return b
}
