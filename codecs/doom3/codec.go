package doom3

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages, besides the shared
// codecs.WarnTrailing.
const (
	// The reply's challenge differs from the query's.
	WarnChallenge = "challenge does not match the query"
	// Player ids do not rise: GameDig gives up on such a list.
	WarnPlayerOrder = "player ids out of order"
	// A key appears twice (compared without case); the first is used.
	WarnDuplicateKey = "duplicate key"
)

// Codec is the codecs.Codec of the id Tech 4 query protocol.
// Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Doom 3 / id Tech 4" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "game", Kind: codecs.OptionChoice, Default: "auto", Choices: gameNames[:],
		Help: "the game's reply layout: auto (from the protocol version), doom3, quake4, prey, etqw or wolf (Wolfenstein, 2009)"},
	{Name: "challenge", Kind: codecs.OptionUint, Default: "0", Echo: true,
		Help: "32-bit value the server echoes"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: the magic and the command (getInfo or infoResponse with its
// NUL) are Certain.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < len(Magic)+8 || string(b[:len(Magic)]) != Magic {
		return "", codecs.NotMine
	}
	rest := string(b[len(Magic):])
	switch {
	case strings.HasPrefix(rest, CmdGetInfo+"\x00"):
		if _, err := DecodeRequest(b); err == nil {
			return codecs.KindQuery, codecs.Certain
		}
		return codecs.KindQuery, codecs.Likely
	case strings.HasPrefix(rest, CmdInfoResponse+"\x00"):
		if _, err := decodeAuto(b, nil); err == nil {
			return codecs.KindResponse, codecs.Certain
		}
		return codecs.KindResponse, codecs.Likely
	}
	return "", codecs.NotMine
}

// CheckQuery accepts one getInfo query of at most MaxQueryLen bytes.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes a query or a reply (one datagram), the reply in the
// layout its protocol version says (GameAuto).
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	return decode(datagrams, opt, GameAuto)
}

func decode(datagrams [][]byte, opt codecs.DecodeOptions, g Game) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	switch len(datagrams) {
	case 0:
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	case 1:
	default:
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrBadValue, "a reply is one datagram, got %d", int64(len(datagrams))))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		m.Spans = make([]codecs.Span, 0, 16+len(b)/8)
		spans = &m.Spans
	}
	if len(b) > len(Magic) && strings.HasPrefix(string(b[len(Magic):]), CmdGetInfo+"\x00") {
		m.Kind = codecs.KindQuery
		r := wire.NewReader(Protocol, b, 0, spans)
		q := readRequest(r)
		if !opt.NoFields {
			f := codecs.Object{}.Add("command", CmdGetInfo).Add("challenge", q.Challenge)
			if q.HasSecond {
				f = f.Add("challenge2", q.Second)
			}
			if len(q.Tail) > 0 {
				f = f.Add("tail", codecs.Hex(q.Tail))
			}
			m.Fields = f
		}
		return m, r.Err()
	}
	var resp Response
	var err error
	if g == GameAuto {
		resp, err = decodeAuto(b, spans)
	} else {
		r := wire.NewReader(Protocol, b, 0, spans)
		readResponse(r, &resp, g)
		err = r.Err()
	}
	m.Info = info(&resp)
	if !opt.NoFields {
		m.Fields = fields(&resp)
	}
	warn(m, &resp, opt.Query)
	return m, err
}

// decodeAuto reads b in the layout GuessGame picks; a reply that fails in
// Doom 3's layout with an unknown version is read again as Wolfenstein's
// (whose list ends at id 16), and kept if that reads to the end.
func decodeAuto(b []byte, spans *[]codecs.Span) (Response, error) {
	var resp Response
	n := 0
	if spans != nil {
		n = len(*spans)
	}
	r := wire.NewReader(Protocol, b, 0, spans)
	readResponse(r, &resp, GameAuto)
	err := r.Err()
	if err == nil || resp.Game != GameDoom3 || resp.Major == 1 || len(resp.Vars) == 0 {
		return resp, err
	}
	var wolf Response
	if spans != nil {
		*spans = (*spans)[:n]
	}
	r = wire.NewReader(Protocol, b, 0, spans)
	readResponse(r, &wolf, GameWolf)
	if r.Err() == nil {
		return wolf, nil
	}
	if spans != nil { // the first reading's spans again
		*spans = (*spans)[:n]
		r = wire.NewReader(Protocol, b, 0, spans)
		resp = Response{}
		readResponse(r, &resp, GameDoom3)
	}
	return resp, err
}

// fields is the "fields" object of a reply: every field in wire order.
func fields(r *Response) codecs.Object {
	f := codecs.Object{}.Add("game", r.Game.String()).Add("command", CmdInfoResponse)
	if r.Game == GameETQW {
		f = f.Add("task_id", r.TaskID)
	}
	f = f.Add("challenge", r.Challenge).Add("protocol", r.Version())
	if r.Game == GameETQW {
		f = f.Add("size", r.Size)
	}
	vars := make([]codecs.Object, 0, len(r.Vars))
	for _, v := range r.Vars {
		vars = append(vars, make(codecs.Object, 0, 2).Add("key", v.Key).Add("value", v.Value))
	}
	f = f.Add("vars", vars)
	ps := make([]codecs.Object, 0, len(r.Players))
	for _, p := range r.Players {
		o := make(codecs.Object, 0, 7).Add("id", p.ID).Add("ping", p.Ping)
		if p.HasRate {
			o = o.Add("rate", p.Rate)
		}
		o = o.Add("name", p.Name)
		if p.HasClanPos {
			o = o.Add("clan_pos", p.ClanPos)
		}
		if p.HasClan {
			o = o.Add("clan", p.Clan)
		}
		if p.HasBot {
			o = o.Add("bot", p.Bot)
		}
		ps = append(ps, o)
	}
	f = f.Add("players", ps).Add("players_end", r.End).Add("os_mask", r.OSMask)
	if r.Game == GameETQW {
		f = f.Add("ranked", r.Ranked).Add("time_left", r.TimeLeft).Add("game_state", r.GameState).Add("server_type", r.ServerType)
		switch r.ServerType {
		case ServerRegular:
			f = f.Add("interested", r.Interested)
		case ServerTV:
			f = f.Add("connected", r.Connected).Add("max_viewers", r.MaxTV)
		}
	}
	if len(r.Trailing) > 0 {
		f = f.Add("trailing", codecs.Hex(r.Trailing))
	}
	return f
}

// info is the neutral view of a reply: keys read without case, colour
// codes stripped, the map without ETQW's "maps/" and ".entities", the
// protocol version as the version, every pair kept as a rule.
func info(r *Response) *codecs.Info {
	in := &codecs.Info{}
	if v, ok := r.Var("si_name"); ok {
		in.Has |= codecs.HasName
		in.Name = StripColors(v)
	}
	if v, ok := r.Var("si_map"); ok {
		in.Has |= codecs.HasMap
		in.Map = MapName(StripColors(v))
	}
	if v, ok := r.Var("si_gameType"); ok {
		in.Has |= codecs.HasGameType
		in.GameType = StripColors(v)
	} else if v, ok := r.Var("si_rules"); ok { // ETQW
		in.Has |= codecs.HasGameType
		in.GameType = StripColors(v)
	}
	if r.Major != 0 || r.Minor != 0 {
		in.Has |= codecs.HasVersion
		in.Version = r.Version()
	}
	for _, k := range [...]string{"si_usePass", "si_needPass"} {
		if v, ok := r.Var(k); ok {
			in.Has |= codecs.HasPassword
			in.Password = in.Password || v != "" && v != "0"
		}
	}
	if v, ok := r.Var("si_maxPlayers"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			in.Has |= codecs.HasMaxPlayers
			in.MaxPlayers = n
		}
	}
	in.Has |= codecs.HasNumPlayers | codecs.HasPlayers
	in.NumPlayers = len(r.Players)
	in.Players = make([]codecs.Player, 0, len(r.Players))
	for _, p := range r.Players {
		in.Players = append(in.Players, codecs.Player{Name: StripColors(p.Name), Ping: int(p.Ping), Bot: p.Bot != 0})
	}
	if len(r.Vars) > 0 {
		in.Has |= codecs.HasRules
		in.Rules = make([][2]string, 0, len(r.Vars))
		for _, v := range r.Vars {
			in.Rules = append(in.Rules, [2]string{v.Key, v.Value})
		}
	}
	return in
}

// MapName is a map as the games' browsers show it: ETQW's and
// Wolfenstein's "maps/NAME.entities" as NAME.
func MapName(s string) string {
	s = strings.TrimPrefix(s, "maps/")
	if i := strings.Index(s, ".entities"); i >= 0 {
		s = s[:i]
	}
	return s
}

// StripColors removes id Tech 4's colour codes (^ and a character; ^X
// and six hex digits of a colour) and trims the text.
func StripColors(s string) string {
	if strings.IndexByte(s, '^') < 0 {
		return codecs.StripColors(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '^' && i+1 < len(s) {
			if s[i+1] == 'X' && i+8 <= len(s) {
				i += 7
			} else {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return codecs.StripColors(b.String())
}

// warn adds the package's warnings.
func warn(m *codecs.Message, r *Response, query []byte) {
	if query != nil {
		if q, err := DecodeRequest(query); err == nil {
			want := q.Challenge
			if r.Game == GameETQW {
				want = q.Second
			}
			if r.Challenge != want || r.Game == GameETQW && r.TaskID != q.Challenge {
				m.Warn(WarnChallenge)
			}
		}
	}
	for i, p := range r.Players {
		if i > 0 && p.ID <= r.Players[i-1].ID {
			m.Warn(WarnPlayerOrder)
		}
	}
	for i, v := range r.Vars {
		for _, w := range r.Vars[:i] {
			if codecs.EqualFoldASCII(v.Key, w.Key) {
				m.Warn(WarnDuplicateKey)
			}
		}
	}
	if len(r.Trailing) > 0 {
		m.Warn(codecs.WarnTrailing)
	}
}

// NewQuery starts a conversation: one getInfo and its reply. The query
// carries the challenge twice, so that ETQW (task id and challenge) and
// the others (challenge) echo it alike.
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(Protocol, queryOptions, opts)
	g, _ := GameByName(o.Choice("game"))
	c := uint32(o.Uint("challenge", 32))
	if err := o.Err(); err != nil {
		return nil, err
	}
	b, _ := AppendRequest(nil, Request{Challenge: c, Second: c, HasSecond: true}) // never fails
	return &query{req: b, game: g}, nil
}

type query struct {
	req   []byte
	game  Game
	reply []byte
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.reply != nil {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	r := wire.NewReader(Protocol, b, 0, nil)
	readMagic(r)
	start := r.Offset()
	cmd := r.CString("command")
	if err := r.Err(); err != nil {
		return nil, false, err
	}
	if string(cmd) != CmdInfoResponse {
		return nil, false, newError("command", start, "", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(string(cmd))+" does not answer getInfo"))
	}
	q.reply = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	// As in the other codecs, the conversation does not pass its own
	// query: a relay shares one reply among askers whose challenges differ.
	return decode([][]byte{q.reply}, opt, q.game)
}

// QueryKey implements codecs.QueryKeyer: the query with its challenge
// words zeroed, so that identical questions share one answer. Nil when b
// is not a query.
func (*Codec) QueryKey(b []byte) []byte {
	q, err := DecodeRequest(b)
	if err != nil {
		return nil
	}
	q.Challenge, q.Second = 0, 0
	k, err := AppendRequest(nil, q)
	if err != nil {
		return nil
	}
	return k
}

// newError is the *codecs.Error of field at offset off of layer.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func newError(field string, off int, layer string, err error) *codecs.Error {
	return &codecs.Error{Protocol: Protocol, Field: field, Offset: off, Layer: layer, Err: err}
}
