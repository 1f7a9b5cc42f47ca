package unreal2

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages.
const (
	// No server-info reply came (it is asked last: see NewQuery).
	WarnNoInfo = "no server info"
	// A second server-info reply came; the first is read.
	WarnDuplicate = "duplicate server info"
	// The server-info reply has bytes after the last field its dialect
	// knows.
	WarnExtra = "bytes after the server info"
)

// Codec is the codecs.Codec of the Unreal Engine 2 query protocol.
// Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Unreal Engine 2" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "rules", Kind: codecs.OptionBool, Default: "true",
		Help: "ask the rules (type 1): the password, the version and the mutators are there"},
	{Name: "players", Kind: codecs.OptionBool, Default: "true",
		Help: "ask the players (type 2)"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: a five-byte datagram with a client's header (79 from GameDig,
// 78 from qstat) or type 3 is a query (Certain); a datagram with a header qstat knows and a type that reads
// to its end is a reply (Likely).
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < 5 || b[1] != 0 || b[2] != 0 || b[3] != 0 || !knownVersion(uint32(b[0])) || b[4] > TypeRulesPlayers {
		return "", codecs.NotMine
	}
	if len(b) == 5 && (b[0] == RequestVersion || b[0] == VersionUT2003Demo || b[4] == TypeRulesPlayers) {
		return codecs.KindQuery, codecs.Certain
	}
	r := wire.NewReader(Protocol, b, 0, nil)
	readResponse(r, guessDialect, false)
	if r.Failed() {
		return "", codecs.NotMine
	}
	return codecs.KindResponse, codecs.Likely
}

// CheckQuery accepts the three queries (any version qstat knows): what
// the relay forwards.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// isQuery: one datagram, five bytes, a client's header (79, or qstat's
// 78) or qstat's type 3, and no query given (an empty players reply of a UT2003 server is the same five
// bytes as the query; with opt.Query the datagrams are replies).
func isQuery(datagrams [][]byte, opt codecs.DecodeOptions) bool {
	if opt.Query != nil || len(datagrams) != 1 || len(datagrams[0]) != 5 {
		return false
	}
	b := datagrams[0]
	return b[0] == RequestVersion || b[0] == VersionUT2003Demo || b[4] == TypeRulesPlayers
}

// Decode decodes a query (one datagram) or the replies of one
// conversation, in any order: a server-info reply, rules and players
// datagrams. The server-info reply is read in Killing Floor's dialect
// when the rules say the game is Killing Floor (GameDig's test, isKF),
// else in the dialect its shape says. A datagram that does not decode
// gives its error, with the message made of the others.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > MaxDatagrams {
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "%d datagrams; a reply is at most %d", int64(len(datagrams)), MaxDatagrams))
	}
	total := 0
	for _, d := range datagrams {
		total += len(d)
	}
	if total > MaxReplyBytes {
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "%d bytes; a reply is at most %d", int64(total), MaxReplyBytes))
	}
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 32)
		spans = &m.Spans
	}
	if isQuery(datagrams, opt) {
		m.Kind = codecs.KindQuery
		if opt.Spans {
			m.Layers = []codecs.Layer{{Name: "wire", Bytes: datagrams[0], Parent: -1}}
		}
		r := wire.NewReader(Protocol, datagrams[0], 0, spans)
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields = codecs.Object{}.Add("version", int(q.Version)).Add("type", int(q.Type))
		}
		return m, r.Err()
	}
	// The rules first: they say whether the game is Killing Floor.
	kf := false
	for _, d := range datagrams {
		if len(d) > 5 && d[4] == TypeRules {
			resp, _ := DecodeResponse(d, nil)
			kf = kf || isKF(resp.Rules)
		}
	}
	var firstErr error
	var c collected
	for i, d := range datagrams {
		name := "wire"
		if len(datagrams) > 1 {
			name = "datagram " + strconv.Itoa(i+1)
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: d, Parent: -1})
		}
		r := wire.NewReader(Protocol, d, i, spans)
		resp := readResponse(r, guessDialect, kf)
		if err := r.Err(); err != nil {
			if ce, ok := err.(*codecs.Error); ok && len(datagrams) > 1 {
				ce.Layer = name
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		c.add(m, &resp, r.Failed())
	}
	m.Info = c.info()
	if !c.hasInfo {
		m.Warn(WarnNoInfo)
	} else if len(c.in.Extra) > 0 {
		m.Warn(WarnExtra)
	}
	if !opt.NoFields {
		m.Fields = c.fields()
	}
	return m, firstErr
}

// collected is what the replies of one conversation say, in the order
// they came.
type collected struct {
	version  uint32
	hasInfo  bool
	in       ServerInfo
	hasRules bool
	rules    []Rule
	players  []Player
}

func (c *collected) add(m *codecs.Message, resp *Response, failed bool) {
	if c.version == 0 {
		c.version = resp.Version
	}
	switch resp.Type {
	case TypeInfo:
		if c.hasInfo {
			m.Warn(WarnDuplicate)
			return
		}
		if failed && resp.Info.Name.Value == "" {
			return
		}
		c.hasInfo, c.in = true, resp.Info
	case TypeRules:
		c.hasRules = true
		c.rules = append(c.rules, resp.Rules...)
	case TypePlayers:
		c.players = append(c.players, resp.Players...)
	}
}

// isKF is GameDig's test for a Killing Floor server: the mutator
// KillingFloorMut, a rule "Num trader weapons", or "Server Version" 1065.
func isKF(rules []Rule) bool {
	for _, p := range rules {
		switch k := p.Key.Value; {
		case (k == "Mutator" || k == "mutator") && p.Value.Value == "KillingFloorMut",
			k == "Num trader weapons" && p.Value.Value != "",
			k == "Server Version" && p.Value.Value == "1065":
			return true
		}
	}
	return false
}

// info is the neutral view: the row from the server info, the password
// (GamePassword) and version (ServerVersion) from the rules, the players
// with the teams (records with ID 0) apart, a player with ping 0 a bot.
// Text is shown without its colour codes and control characters.
func (c *collected) info() *codecs.Info {
	in := &codecs.Info{}
	if c.hasInfo {
		in.Has |= codecs.HasName | codecs.HasMap | codecs.HasGameType | codecs.HasNumPlayers | codecs.HasMaxPlayers
		in.Name = clean(c.in.Name.Value)
		in.Map = clean(c.in.Map.Value)
		in.GameType = clean(c.in.GameType.Value)
		in.NumPlayers = int(c.in.NumPlayers)
		in.MaxPlayers = int(c.in.MaxPlayers)
	}
	if c.hasRules {
		in.Has |= codecs.HasRules
		in.Rules = make([][2]string, 0, len(c.rules))
		for _, p := range c.rules {
			k, v := p.Key.Value, p.Value.Value
			in.Rules = append(in.Rules, [2]string{k, v})
			switch {
			case codecs.EqualFoldASCII(k, "GamePassword"):
				in.Has |= codecs.HasPassword
				in.Password = codecs.EqualFoldASCII(v, "True")
			case codecs.EqualFoldASCII(k, "ServerVersion"):
				in.Has |= codecs.HasVersion
				in.Version = v
			}
		}
	}
	if len(c.players) > 0 {
		in.Has |= codecs.HasPlayers
		in.Players = make([]codecs.Player, 0, len(c.players))
	}
	for _, p := range c.players {
		if p.ID == 0 {
			in.Has |= codecs.HasTeams
			in.Teams = append(in.Teams, codecs.Team{Name: clean(p.Name.Value), Score: int(p.Score)})
			continue
		}
		pl := codecs.Player{Name: clean(p.Name.Value), Score: int(p.Score), Ping: int(p.Ping), Bot: p.Ping == 0}
		switch {
		case p.StatsID&TeamRedBit != 0:
			pl.Team, pl.HasTeam = 0, true
		case p.StatsID&TeamBlueBit != 0:
			pl.Team, pl.HasTeam = 1, true
		}
		in.Players = append(in.Players, pl)
	}
	return in
}

// clean drops the control characters 00-1A, as GameDig does with the
// colour codes.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x1a {
			b := make([]byte, 0, len(s))
			for j := 0; j < len(s); j++ {
				if s[j] > 0x1a {
					b = append(b, s[j])
				}
			}
			return string(b)
		}
	}
	return s
}

// fields is the "fields" object of a reply.
func (c *collected) fields() codecs.Object {
	f := codecs.Object{}.Add("version", int(c.version))
	if c.hasInfo {
		in := &c.in
		o := codecs.Object{}.Add("dialect", in.Dialect.String()).Add("server_id", int(in.ServerID)).Add("ip", in.IP.Value).
			Add("game_port", int(in.GamePort)).Add("query_port", int(in.QueryPort)).
			Add("name", stringObject(in.Name)).Add("map", in.Map.Value).Add("game_type", in.GameType.Value).
			Add("num_players", int(in.NumPlayers)).Add("max_players", int(in.MaxPlayers))
		if in.Dialect == DialectKillingFloor {
			o = o.Add("wave_current", int(in.WaveCurrent)).Add("wave_total", int(in.WaveTotal))
		}
		if in.HasPing {
			o = o.Add("ping", int(in.Ping))
		}
		if in.HasFlags {
			o = o.Add("flags", int(in.Flags)).Add("skill", in.Skill.Value)
		}
		if len(in.Extra) > 0 {
			o = o.Add("extra", codecs.Hex(in.Extra))
		}
		f = f.Add("info", o)
	}
	if c.hasRules {
		rs := make([]any, 0, len(c.rules))
		for _, p := range c.rules {
			rs = append(rs, []string{p.Key.Value, p.Value.Value})
		}
		f = f.Add("rules", rs)
	}
	if len(c.players) > 0 {
		ps := make([]codecs.Object, 0, len(c.players))
		for _, p := range c.players {
			ps = append(ps, codecs.Object{}.Add("id", int(p.ID)).Add("name", stringObject(p.Name)).Add("ping", int(p.Ping)).
				Add("score", int(p.Score)).Add("stats_id", int(p.StatsID)))
		}
		f = f.Add("players", ps)
	}
	return f
}

// stringObject is a string with colour codes or in UCS-2 as an object
// (its text, its encoding and its colours as #rrggbb at byte offsets),
// else its text.
func stringObject(s String) any {
	if !s.UCS2 && len(s.Colours) == 0 {
		return s.Value
	}
	o := codecs.Object{}.Add("text", s.Value)
	if s.UCS2 {
		o = o.Add("ucs2", true)
	}
	if len(s.Colours) > 0 {
		cs := make([]any, 0, len(s.Colours))
		for _, c := range s.Colours {
			cs = append(cs, codecs.Object{}.Add("at", c.At).Add("rgb", "#"+hex2(rune(c.R))+hex2(rune(c.G))+hex2(rune(c.B))))
		}
		o = o.Add("colours", cs)
	}
	return o
}

// NewQuery starts a conversation: the rules and players queries (as the
// options ask), then the server-info query last. A server answers its
// queries in the order they come, so the server info, one datagram,
// closes the replies before it: the conversation is complete when it has
// come, with a rules datagram if rules were asked and, if players were,
// as many player records (teams apart) as the info counts. Neither the
// rules nor the players carry a count or an end marker; without that
// order only a timeout would end them (GameDig waits for one after every
// query; qstat waits for one whenever it asks the rules).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(Protocol, queryOptions, opts)
	rules := o.Bool("rules")
	players := o.Bool("players")
	if err := o.Err(); err != nil {
		return nil, err
	}
	q := &query{rules: rules, players: players}
	for _, t := range []uint8{TypeRules, TypePlayers, TypeInfo} {
		if t == TypeRules && !rules || t == TypePlayers && !players {
			continue
		}
		b, _ := AppendRequest(nil, Request{Type: t})
		q.reqs = append(q.reqs, b)
	}
	return q, nil
}

type query struct {
	reqs           [][]byte
	rules, players bool
	parts          [][]byte
	bytes          int
	gotInfo        bool
	numPlayers     int
	gotRules       int
	listed         int
	done           bool
}

func (q *query) Start() [][]byte { return q.reqs }

// Feed takes one reply datagram. One too short for the header, with an
// unknown version or a type not asked is ignored with an error; one whose
// body does not decode is kept (Result reports it).
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.done {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply is already complete"))
	}
	r := wire.NewReader(Protocol, b, 0, nil)
	readVersion(r)
	t := readType(r, TypePlayers)
	if err := r.Err(); err != nil {
		return nil, false, err
	}
	if t == TypeRules && !q.rules || t == TypePlayers && !q.players {
		return nil, false, newError("type", 4, "", wire.Detailf(codecs.ErrUnknownCode, "type %d was not asked", int64(t)))
	}
	if len(q.parts) >= MaxDatagrams || q.bytes+len(b) > MaxReplyBytes {
		q.done = true
		return nil, true, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "the replies are at most %d datagrams and %d bytes", MaxDatagrams, MaxReplyBytes))
	}
	q.parts = append(q.parts, append([]byte(nil), b...))
	q.bytes += len(b)
	resp, _ := DecodeResponse(b, nil)
	switch t {
	case TypeInfo:
		if !q.gotInfo {
			q.gotInfo, q.numPlayers = true, int(min(resp.Info.NumPlayers, 1<<16))
		}
	case TypeRules:
		q.gotRules++
	case TypePlayers:
		for _, p := range resp.Players {
			if p.ID != 0 {
				q.listed++
			}
		}
	}
	q.done = q.gotInfo && (!q.rules || q.gotRules > 0) && (!q.players || q.listed >= q.numPlayers)
	return nil, q.done, nil
}

// Result decodes the datagrams received, complete or not.
func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.parts) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	if opt.Query == nil {
		opt.Query = q.reqs[len(q.reqs)-1]
	}
	return (&Codec{}).Decode(q.parts, opt)
}

// Split cuts records (rules or players, each already encoded) into reply
// datagrams of at most max bytes of body each after the five-byte header
// of version and type, as a server spreads a long list.
func Split(version uint32, typ uint8, records [][]byte, max int) [][]byte {
	var out [][]byte
	var cur []byte
	for _, rec := range records {
		if cur != nil && len(cur)-5+len(rec) > max {
			out = append(out, cur)
			cur = nil
		}
		if cur == nil {
			cur = append(binary.LittleEndian.AppendUint32(nil, version), typ)
		}
		cur = append(cur, rec...)
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out
}

// QueryKey implements codecs.QueryKeyer: a query carries nothing that
// only echoes, so its key is the query itself. Nil when b is not a query.
func (*Codec) QueryKey(b []byte) []byte {
	if _, err := DecodeRequest(b); err != nil {
		return nil
	}
	return b
}
