package bloodmasters

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages, besides the shared
// codecs.WarnTrailing and codecs.WarnTruncated. Most say where the game's
// two readers (the official C# launcher and the author's PHP client) would
// read the same bytes differently.
const (
	// The protocol is not 26..29; decoded with the 29 layout when >= 27.
	WarnUnknownProtocol = "unknown protocol version"
	// Protocol 27/28 (or newer than 29): the launcher skips the extended block.
	WarnLauncherSkipsExtended = "launcher ignores the extended block (protocol is not 29)"
	// Protocol 27 with a build description: the PHP client stops before it.
	WarnBuildBefore28 = "build description before protocol 28"
	// Protocol 28+ without one: the launcher copes, the PHP client reads past the end.
	WarnNoBuild = "no build description"
	// A string of 128 bytes or more has a 2-byte length: the PHP client reads one.
	WarnLongString = "string of 128 bytes or more (one-byte length readers differ)"
	// A negative limit or ping: the PHP client reads them unsigned (-1 -> 65535).
	WarnNegative = "negative limit or ping (unsigned readers differ)"
	// Bytes >= 0x80: the server sends ASCII; the launcher shows '?', we show Latin-1.
	WarnNonASCII        = "non-ascii text"
	WarnUnknownGameType = "unknown game type"
	WarnUnknownTeam     = "unknown team"
	// The reply's token differs from the query's.
	WarnTokenMismatch = "token does not match the query"
)

// Codec is the codecs.Codec of the Bloodmasters query protocol.
// Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Bloodmasters" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{{
	Name: "token", Kind: codecs.OptionUint, Default: "0", Echo: true,
	Help: "32-bit value the server echoes (the official launcher sends its millisecond clock)",
}}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: the exact 7-byte request is Certain; a datagram whose ServerInfo
// message decodes completely is Certain; a ServerInfo reply at offset 0 cut
// short by the datagram is Likely once its title decodes, Weak before.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) == RequestLen && b[0] == RequestLen && b[1] == 0 && Command(b[2]) == CmdServerInfo {
		return codecs.KindQuery, codecs.Certain
	}
	if len(b) < HeaderLen {
		return "", codecs.NotMine
	}
	var dg datagram
	err := dg.decode(b, nil, optQuery)
	if !dg.found || dg.stage < stCommand || dg.command.Base() != CmdServerInfo {
		return "", codecs.NotMine
	}
	kind := codecs.KindResponse
	if dg.query {
		kind = codecs.KindQuery
	}
	switch {
	case err == nil:
		return kind, codecs.Certain
	case dg.at != 0 || dg.length < len(b) || dg.stage < stToken:
		return "", codecs.NotMine
	case dg.stage >= stTitle:
		return kind, codecs.Likely
	}
	return kind, codecs.Weak
}

// CheckQuery accepts exactly the 7-byte request `07 00 0d` + token.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes one datagram: a request (kind query) or a reply. The
// ServerInfo message's fields are the top-level fields; other messages of
// the datagram are listed under "messages".
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	switch len(datagrams) {
	case 0:
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	case 1:
	default:
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrBadValue, "a Bloodmasters message is one datagram, got %d", int64(len(datagrams))))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
		m.Spans = make([]codecs.Span, 0, 16+len(b)/8) // about one span per 5 bytes of client records
		spans = &m.Spans
	}
	var dg datagram
	err := dg.decode(b, spans, optValues|optOthers|optQuery)
	if dg.query {
		m.Kind = codecs.KindQuery
	} else {
		m.Info = dg.info()
	}
	if !opt.NoFields {
		m.Fields = dg.fields()
	}
	dg.warn(m, opt.Query)
	return m, err
}

// fields is the "fields" object: every field decoded, in wire order.
func (dg *datagram) fields() codecs.Object {
	r, st := &dg.resp, dg.stage
	var f codecs.Object
	if st >= stLength {
		f = f.Add("length", dg.length)
	}
	if st >= stCommand {
		f = f.Add("command", uint8(dg.command))
	}
	if st >= stPacketID && dg.command.HasPacketID() {
		f = f.Add("packet_id", r.PacketID)
	}
	if st >= stToken {
		f = f.Add("token", codecs.Hex(binary.BigEndian.AppendUint32(nil, r.Token)))
	}
	if !dg.query {
		f = dg.replyFields(f)
	}
	if len(dg.others) > 0 {
		ms := make([]codecs.Object, 0, len(dg.others))
		for _, o := range dg.others {
			mo := make(codecs.Object, 0, 3).Add("offset", o.Offset).Add("length", o.Len()).Add("command", uint8(o.Command))
			if o.Command.HasPacketID() {
				mo = mo.Add("packet_id", o.PacketID)
			}
			ms = append(ms, mo.Add("data", codecs.Hex(o.Data)))
		}
		f = f.Add("messages", ms)
	}
	if dg.tail != nil {
		f = f.Add("trailing", codecs.Hex(dg.tail))
	}
	return f
}

func (dg *datagram) replyFields(f codecs.Object) codecs.Object {
	r, st := &dg.resp, dg.stage
	steps := [...]struct {
		st  stage
		key string
		v   any
	}{
		{stTitle, "title", r.Title},
		{stLocked, "locked", r.Locked},
		{stWebsite, "website", r.Website},
		{stMaxClients, "max_clients", r.MaxClients},
		{stMaxPlayers, "max_players", r.MaxPlayers},
		{stGameType, "game_type", uint8(r.GameType)},
		{stMap, "map", r.Map},
		{stNumClients, "num_clients", r.NumClients},
		{stNumPlayers, "num_players", r.NumPlayers},
		{stProtocol, "protocol", r.Protocol},
		{stScoreLimit, "score_limit", r.ScoreLimit}, // the extended block from here on
		{stTimeLimit, "time_limit", r.TimeLimit},
		{stJoinSmallest, "join_smallest_team", r.JoinSmallestTeam},
	}
	for _, s := range steps {
		if st >= s.st && (s.st <= stProtocol || r.Extended()) {
			f = f.Add(s.key, s.v)
		}
	}
	if r.Extended() && st >= stJoinSmallest {
		cs := make([]codecs.Object, 0, len(r.Clients))
		for _, c := range r.Clients {
			cs = append(cs, make(codecs.Object, 0, 4).Add("name", c.Name).Add("team", uint8(c.Team)).Add("spectator", c.Spectator).Add("ping", c.Ping))
		}
		f = f.Add("clients", cs)
	}
	if r.HasBuild {
		f = f.Add("build_description", r.Build)
	}
	if len(r.Extra) > 0 {
		f = f.Add("extra", codecs.Hex(r.Extra))
	}
	return f
}

// info is the neutral view of the reply (docs/protocols/json.md): colour codes stripped
// from the title and names, the build description as the version, the
// connected clients as num_players, and the rest as rules.
func (dg *datagram) info() *codecs.Info {
	r, st := &dg.resp, dg.stage
	in := &codecs.Info{}
	if st >= stTitle {
		in.Has |= codecs.HasName
		in.Name = StripColors(r.Title)
	}
	if st >= stLocked {
		in.Has |= codecs.HasPassword
		in.Password = r.Locked
	}
	if st >= stWebsite {
		in.Has |= codecs.HasRules
		in.Rules = append(in.Rules, [2]string{"website", r.Website})
	}
	if st >= stMaxClients {
		in.Has |= codecs.HasMaxClients
		in.MaxClients = int(r.MaxClients)
	}
	if st >= stMaxPlayers {
		in.Has |= codecs.HasMaxPlayers
		in.MaxPlayers = int(r.MaxPlayers)
	}
	if st >= stGameType {
		in.Has |= codecs.HasGameType
		in.GameType = r.GameType.String()
	}
	if st >= stMap {
		in.Has |= codecs.HasMap
		in.Map = r.Map
	}
	if st >= stNumClients {
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = int(r.NumClients)
	}
	ints := [...]struct {
		st  stage
		key string
		v   int
	}{
		{stNumPlayers, "players", int(r.NumPlayers)},
		{stProtocol, "protocol", int(r.Protocol)},
		{stScoreLimit, "score_limit", int(r.ScoreLimit)},
		{stTimeLimit, "time_limit", int(r.TimeLimit)},
	}
	for _, x := range ints {
		if st >= x.st && (x.st <= stProtocol || r.Extended()) {
			in.Rules = append(in.Rules, [2]string{x.key, strconv.Itoa(x.v)})
		}
	}
	if r.Extended() && st >= stJoinSmallest {
		in.Rules = append(in.Rules, [2]string{"join_smallest_team", strconv.FormatBool(r.JoinSmallestTeam)})
		in.Has |= codecs.HasPlayers
		in.Players = make([]codecs.Player, 0, len(r.Clients))
		for _, c := range r.Clients {
			in.Players = append(in.Players, codecs.Player{Name: StripColors(c.Name), Ping: int(c.Ping),
				Team: int(c.Team), HasTeam: c.Team != NoTeam, Spectator: c.Spectator})
		}
	}
	if r.HasBuild {
		in.Has |= codecs.HasVersion
		in.Version = r.Build
	}
	return in
}

// warn adds the warnings of docs/protocols/json.md and this package's Warn constants.
func (dg *datagram) warn(m *codecs.Message, query []byte) {
	r, st := &dg.resp, dg.stage
	if dg.tail != nil {
		m.Warn(dg.tailWhy)
	}
	if st >= stToken && query != nil {
		if q, err := DecodeRequest(query); err == nil && q.Token != r.Token {
			m.Warn(WarnTokenMismatch)
		}
	}
	if dg.query {
		return
	}
	if st >= stProtocol {
		if r.Protocol < ExtendedSince-1 || r.Protocol > ProtocolVersion {
			m.Warn(WarnUnknownProtocol)
		}
		if r.Extended() && r.Protocol != ProtocolVersion {
			m.Warn(WarnLauncherSkipsExtended)
		}
	}
	if st >= stDone && r.Extended() {
		if r.HasBuild && r.Protocol < BuildSince {
			m.Warn(WarnBuildBefore28)
		}
		if !r.HasBuild && r.Protocol >= BuildSince {
			m.Warn(WarnNoBuild)
		}
	}
	if st >= stGameType && !r.GameType.Known() {
		m.Warn(WarnUnknownGameType)
	}
	if r.ScoreLimit < 0 || r.TimeLimit < 0 {
		m.Warn(WarnNegative)
	}
	strs := []string{r.Title, r.Website, r.Map, r.Build}
	for _, c := range r.Clients {
		if !c.Team.Known() {
			m.Warn(WarnUnknownTeam)
		}
		if c.Ping < 0 {
			m.Warn(WarnNegative)
		}
		strs = append(strs, c.Name)
	}
	for _, s := range strs {
		if utf8.RuneCountInString(s) >= 128 { // the length on the wire: one byte a character
			m.Warn(WarnLongString)
		}
		if !isASCII(s) {
			m.Warn(WarnNonASCII)
		}
	}
	if len(r.Extra) > 0 {
		m.Warn(codecs.WarnTrailing)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// NewQuery starts a conversation: one request, one reply whose token
// matches (a reply cut before its token is accepted too, so that Result can
// say what was cut).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	token := uint32(r.Uint("token", 32))
	if err := r.Err(); err != nil {
		return nil, err
	}
	req, _ := AppendRequest(nil, Request{Token: token}) // never fails
	return &query{req: req, token: token}, nil
}

type query struct {
	req   []byte
	token uint32
	reply []byte
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.reply != nil {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	var dg datagram
	dg.decode(b, nil, optQuery)
	switch {
	case !dg.found || dg.stage < stCommand || dg.command.Base() != CmdServerInfo:
		return nil, false, newError("command", 0, "", codecs.Detail(codecs.ErrUnknownCode, "not a ServerInfo reply"))
	case dg.query:
		return nil, false, newError("length", dg.at, "", codecs.Detail(codecs.ErrBadValue, "a request, not a reply"))
	}
	// The token is not checked: a relay shares one server's reply among
	// everyone who asked, so it may echo another asker's token; the
	// transports accept only datagrams from the server queried.
	q.reply = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	// The conversation does not pass its own request to Decode: a reply
	// shared by a relay's cache echoes another asker's token, which is no
	// reason to warn. Decode on its own still checks a query given to it.
	return (&Codec{}).Decode([][]byte{q.reply}, opt)
}

// QueryKey implements codecs.QueryKeyer: the request with its token (the
// echoed last four bytes) zeroed, so identical questions from different
// clients share one answer. Nil when b is not a valid request.
func (*Codec) QueryKey(b []byte) []byte {
	if _, err := DecodeRequest(b); err != nil {
		return nil
	}
	k := append([]byte(nil), b...)
	clear(k[3:7])
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
