package quake3

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages, besides the shared
// codecs.WarnTrailing and codecs.WarnTruncated.
const (
	// A master list that ended without the end marker: on the caller's
	// timeout (old masters send none), or with datagrams lost.
	WarnNoEnd = "no end-of-list marker"
	// The infostring's player count differs from the player lines.
	WarnPlayerCount = "player count differs from the player lines"
	// The reply's challenge differs from the query's.
	WarnChallenge = "challenge does not match the query"
	// A key appears twice in the infostring; the first is used.
	WarnDuplicateKey = "duplicate key"
)

// Codec is the codecs.Codec of the Quake III query protocol.
// Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "Quake III" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "query", Kind: codecs.OptionChoice, Default: "status", Choices: []string{"status", "info"},
		Help: "getstatus (rules and players) or getinfo (the short summary masters use)"},
	{Name: "challenge", Kind: codecs.OptionText, Default: "", Echo: true,
		Help: "a word the server echoes as the \"challenge\" key (printable ASCII, no spaces); empty sends none"},
	{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a master server for its list"},
	{Name: "game", Kind: codecs.OptionText, Default: "",
		Help: "master: the game name (Quake3Arena, Xonotic, …); empty for Quake III's own getservers"},
	{Name: "protocol", Kind: codecs.OptionUint, Default: "68", Help: "master: the game's network protocol number (68: Quake III 1.32)"},
	{Name: "filters", Kind: codecs.OptionText, Default: "empty full",
		Help: "master: space-separated filters (empty, full, gametype=N, ipv4, ipv6)"},
	{Name: "ext", Kind: codecs.OptionBool, Default: "false", Help: "master: ask with getserversExt, which lists IPv6 servers too (needs a game name)"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: a datagram with the magic and a known command is Certain.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < len(Magic)+4 || string(b[:len(Magic)]) != Magic {
		return "", codecs.NotMine
	}
	rest := b[len(Magic):]
	word := rest
	for i, c := range rest {
		if c <= ' ' || c == '\\' || c == '/' || c >= 0x7f {
			word = rest[:i]
			break
		}
	}
	switch string(word) {
	case CmdGetInfo, CmdGetStatus:
		return codecs.KindQuery, codecs.Certain
	case CmdGetServers, CmdGetServersExt:
		return codecs.KindMasterQuery, codecs.Certain
	case CmdInfoResponse, CmdStatusResponse:
		return codecs.KindResponse, codecs.Certain
	case CmdServers, CmdServersExt:
		return codecs.KindMasterList, codecs.Certain
	}
	return "", codecs.NotMine
}

// CheckQuery accepts one getinfo, getstatus, getservers or getserversExt
// query of printable words, at most MaxQueryLen bytes.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes a query (one datagram), a server's reply (one datagram)
// or a master's list (its datagrams in the order received).
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > MaxMasterDatagrams {
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "%d datagrams; a master list is at most %d", int64(len(datagrams)), MaxMasterDatagrams))
	}
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 16)
		spans = &m.Spans
	}
	kind, _ := (&Codec{}).Detect(datagrams[0])
	if kind == codecs.KindQuery || kind == codecs.KindMasterQuery {
		m.Kind = kind
		if len(datagrams) > 1 {
			return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrBadValue, "a query is one datagram"))
		}
		if opt.Spans {
			m.Layers = []codecs.Layer{{Name: "wire", Bytes: datagrams[0], Parent: -1}}
		}
		r := wire.NewReader(Protocol, datagrams[0], 0, spans)
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields = requestFields(&q)
		}
		return m, r.Err()
	}
	var resp Response
	var err error
	for i, d := range datagrams {
		name := "wire"
		if len(datagrams) > 1 {
			name = "datagram " + strconv.Itoa(i+1)
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: d, Parent: -1})
		}
		if i > 0 && resp.Command != CmdServers && resp.Command != CmdServersExt {
			err = newError("datagrams", 0, name, codecs.Detail(codecs.ErrBadValue, "only a master list spans datagrams"))
			break
		}
		cmd := resp.Command
		r := wire.NewReader(Protocol, d, i, spans)
		readResponse(r, &resp, len(resp.Servers))
		if e := r.Err(); e != nil {
			if ce, ok := e.(*codecs.Error); ok && len(datagrams) > 1 {
				ce.Layer = name
			}
			err = e
			break
		}
		if i > 0 && resp.Command != cmd {
			err = newError("command", len(Magic), name, codecs.Detail(codecs.ErrBadValue, "a master list's datagrams share one command"))
			break
		}
	}
	switch resp.Command {
	case CmdServers, CmdServersExt:
		m.Kind = codecs.KindMasterList
		m.Servers = make([]string, 0, len(resp.Servers))
		for _, s := range resp.Servers {
			m.Servers = append(m.Servers, s.String())
		}
		if !resp.End && err == nil {
			m.Warn(WarnNoEnd)
		}
	default:
		m.Info = info(&resp)
	}
	if !opt.NoFields {
		m.Fields = responseFields(&resp)
	}
	warn(m, &resp, opt.Query)
	return m, err
}

// requestFields is the "fields" object of a query.
func requestFields(q *Request) codecs.Object {
	f := codecs.Object{}.Add("command", q.Command)
	if q.Challenge != "" {
		f = f.Add("challenge", q.Challenge)
	}
	if q.IsMaster() {
		if q.Game != "" {
			f = f.Add("game", q.Game)
		}
		f = f.Add("protocol", q.Version).Add("filters", append([]string{}, q.Filters...))
	}
	return f
}

// responseFields is the "fields" object of a reply: the infostring in wire
// order, the player lines, a master's entries.
func responseFields(r *Response) codecs.Object {
	f := codecs.Object{}.Add("command", r.Command)
	switch r.Command {
	case CmdServers, CmdServersExt:
		ss := make([]string, 0, len(r.Servers))
		for _, s := range r.Servers {
			ss = append(ss, s.String())
		}
		return f.Add("servers", ss).Add("end", r.End)
	}
	vars := make([]codecs.Object, 0, len(r.Vars))
	for _, v := range r.Vars {
		vars = append(vars, make(codecs.Object, 0, 2).Add("key", v.Key).Add("value", v.Value))
	}
	f = f.Add("vars", vars)
	if r.Command == CmdStatusResponse {
		ps := make([]codecs.Object, 0, len(r.Players))
		for _, p := range r.Players {
			o := make(codecs.Object, 0, 4).Add("score", p.Score).Add("ping", p.Ping)
			if p.HasTeam {
				o = o.Add("team", p.Team)
			}
			ps = append(ps, o.Add("name", p.Name))
		}
		f = f.Add("players", ps)
	}
	return f
}

// The keys of the neutral view, most common first: the first one present
// wins. Quake III and its mods, Call of Duty and DarkPlaces name them
// differently.
var (
	keysName     = []string{"sv_hostname", "hostname"}
	keysMap      = []string{"mapname"}
	keysGameType = []string{"g_gametype", "gametype"}
	keysVersion  = []string{"version", "shortversion", "gameversion"}
	keysPassword = []string{"g_needpass", "needpass", "pswrd"}
	keysMax      = []string{"sv_maxclients"}
	keysClients  = []string{"clients"}
)

func lookup(r *Response, keys []string) (string, bool) {
	for _, k := range keys {
		if v, ok := r.Var(k); ok {
			return v, true
		}
	}
	return "", false
}

// q3GameTypes names Quake III's own g_gametype numbers; mods and other
// games have their own lists, so their numbers are shown as sent.
var q3GameTypes = [...]string{"Free For All", "Tournament", "Single Player", "Team Deathmatch", "Capture the Flag"}

// info is the neutral view of a server's reply: colour codes stripped,
// every key kept as a rule.
func info(r *Response) *codecs.Info {
	in := &codecs.Info{}
	if v, ok := lookup(r, keysName); ok {
		in.Has |= codecs.HasName
		in.Name = StripColors(v)
	}
	if v, ok := lookup(r, keysMap); ok {
		in.Has |= codecs.HasMap
		in.Map = StripColors(v)
	}
	if v, ok := lookup(r, keysGameType); ok {
		in.Has |= codecs.HasGameType
		in.GameType = StripColors(v)
		game, _ := r.Var("gamename")
		if n, ok := codecs.Atoi([]byte(v)); ok && n >= 0 && n < len(q3GameTypes) && (game == "" || strings.EqualFold(game, "baseq3") || strings.EqualFold(game, "Quake3Arena")) {
			in.GameType = q3GameTypes[n]
		}
	}
	if v, ok := lookup(r, keysVersion); ok {
		in.Has |= codecs.HasVersion
		in.Version = StripColors(v)
	}
	if v, ok := lookup(r, keysPassword); ok {
		in.Has |= codecs.HasPassword
		in.Password = v != "" && v != "0"
	}
	if v, ok := lookup(r, keysMax); ok {
		if n, ok := codecs.Atoi([]byte(v)); ok {
			in.Has |= codecs.HasMaxPlayers
			in.MaxPlayers = n
		}
	}
	// DarkPlaces counts its bots itself (its "bots" key); other engines
	// do not, and a ping of 0 does not tell a bot (docs/protocols/quake3.md).
	if v, ok := r.Var("bots"); ok {
		if n, ok := codecs.Atoi([]byte(v)); ok && n >= 0 {
			in.Has |= codecs.HasNumBots
			in.NumBots = n
		}
	}
	switch r.Command {
	case CmdStatusResponse:
		in.Has |= codecs.HasNumPlayers | codecs.HasPlayers
		in.NumPlayers = len(r.Players)
		in.Players = make([]codecs.Player, 0, len(r.Players))
		for _, p := range r.Players {
			in.Players = append(in.Players, codecs.Player{Name: StripColors(p.Name), Score: p.Score, Ping: p.Ping, Team: p.Team, HasTeam: p.HasTeam})
		}
	case CmdInfoResponse:
		if v, ok := lookup(r, keysClients); ok {
			if n, ok := codecs.Atoi([]byte(v)); ok {
				in.Has |= codecs.HasNumPlayers
				in.NumPlayers = n
			}
		}
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

// warn adds the package's warnings.
func warn(m *codecs.Message, r *Response, query []byte) {
	if query != nil {
		if q, err := DecodeRequest(query); err == nil && q.Challenge != "" && r.Command != CmdServers && r.Command != CmdServersExt {
			if c, _ := r.Var("challenge"); c != q.Challenge {
				m.Warn(WarnChallenge)
			}
		}
	}
	for i, v := range r.Vars {
		for _, w := range r.Vars[:i] {
			if strings.EqualFold(v.Key, w.Key) {
				m.Warn(WarnDuplicateKey)
			}
		}
	}
	if r.Command == CmdStatusResponse {
		if v, ok := lookup(r, keysClients); ok {
			if n, ok := codecs.Atoi([]byte(v)); ok && n != len(r.Players) {
				m.Warn(WarnPlayerCount)
			}
		}
	}
}

// NewQuery starts a conversation: one getstatus or getinfo and its reply,
// or a master query and its list, complete at the end marker (or, from a
// master that sends none, when the caller stops waiting).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(Protocol, queryOptions, opts)
	kind := o.Choice("query")
	challenge := o.Value("challenge")
	master := o.Bool("master")
	game := o.Value("game")
	version := o.Uint("protocol", 16)
	filters := strings.Fields(o.Value("filters"))
	ext := o.Bool("ext")
	if err := o.Err(); err != nil {
		return nil, err
	}
	// The master's words are checked whether or not this query asks a
	// master, so that a bad value is reported where it was given.
	if game != "" {
		if err := checkWord("game", game); err != nil {
			return nil, codecs.OptionError(Protocol, "game", err.(*codecs.Error).Message())
		}
	}
	for _, f := range filters {
		if err := checkWord("filters", f); err != nil {
			return nil, codecs.OptionError(Protocol, "filters", err.(*codecs.Error).Message())
		}
	}
	q := Request{Command: CmdGetStatus, Challenge: challenge}
	if kind == "info" {
		q.Command = CmdGetInfo
	}
	if master {
		q = Request{Command: CmdGetServers, Game: game, Version: int(version), Filters: filters}
		if ext {
			q.Command = CmdGetServersExt
		}
		if ext && game == "" {
			return nil, codecs.OptionError(Protocol, "game", "getserversExt needs a game name")
		}
	}
	b, err := AppendRequest(nil, q)
	if err != nil {
		if ce, ok := err.(*codecs.Error); ok {
			return nil, codecs.OptionError(Protocol, optionOf(ce.Field), ce.Message())
		}
		return nil, err
	}
	if len(b) > MaxQueryLen {
		return nil, codecs.OptionError(Protocol, "filters", "the query would be "+strconv.Itoa(len(b))+" bytes; at most "+strconv.Itoa(MaxQueryLen))
	}
	return &query{req: b, want: answerTo(q.Command), master: master}, nil
}

// optionOf is the option behind a request field AppendRequest refused.
func optionOf(field string) string {
	switch field {
	case "game", "challenge", "filters":
		return field
	}
	return "query"
}

type query struct {
	req     []byte
	want    string // the reply command
	master  bool
	replies [][]byte
	done    bool
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.done {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	r := wire.NewReader(Protocol, b, 0, nil)
	readMagic(r)
	cmd := string(readWord(r, "command"))
	if err := r.Err(); err != nil {
		return nil, false, err
	}
	if cmd != q.want {
		return nil, false, newError("command", len(Magic), "", codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(cmd)+" does not answer this query (want "+q.want+")"))
	}
	if len(q.replies) >= MaxMasterDatagrams {
		q.done = true
		return nil, true, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "more than %d datagrams", MaxMasterDatagrams))
	}
	q.replies = append(q.replies, append([]byte(nil), b...))
	if !q.master {
		q.done = true
		return nil, true, nil
	}
	resp := Response{Command: cmd}
	readEntries(r, &resp, 0)
	q.done = resp.End
	return nil, q.done, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.replies) == 0 {
		kind := codecs.KindResponse
		if q.master {
			kind = codecs.KindMasterList
		}
		return &codecs.Message{Protocol: Protocol, Kind: kind},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	// As in the other codecs, the conversation does not pass its own query:
	// a relay shares one reply among askers whose challenges differ.
	return (&Codec{}).Decode(q.replies, opt)
}

// QueryKey implements codecs.QueryKeyer: the query without its challenge
// (which only echoes), so that identical questions share one answer. Nil
// when b is not a query.
func (*Codec) QueryKey(b []byte) []byte {
	q, err := DecodeRequest(b)
	if err != nil {
		return nil
	}
	q.Challenge, q.End = "", ""
	k, err := AppendRequest(nil, q)
	if err != nil {
		return nil
	}
	return k
}
