package quake2

import (
	"bytes"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Codec is the codecs.Codec of one dialect: &Codec{} is Quake II's,
// &Codec{Dialect: QuakeWorld} QuakeWorld's, &Codec{Dialect: Hexen2}
// HexenWorld's. Importing the package registers all three.
type Codec struct {
	Dialect Dialect
}

func (c *Codec) Name() string { return c.Dialect.Protocol() }

func (c *Codec) Title() string {
	switch c.Dialect {
	case QuakeWorld:
		return "QuakeWorld"
	case Hexen2:
		return "HexenWorld"
	}
	return "Quake II"
}

func (c *Codec) DefaultPort() int {
	switch c.Dialect {
	case QuakeWorld:
		return DefaultPortQuakeWorld
	case Hexen2:
		return DefaultPortHexen2
	}
	return DefaultPort
}

var masterOption = []codecs.Option{
	{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a master server for its list"},
}

// Options lists the knobs of NewQuery: Quake II and QuakeWorld can ask a
// master; HexenWorld's status query has none.
func (c *Codec) Options() []codecs.Option {
	if c.Dialect == Hexen2 {
		return nil
	}
	return append([]codecs.Option(nil), masterOption...)
}

// Detect: a reply with the dialect's header is Certain (a QuakeWorld 'n'
// only when the serverinfo's '\' follows it); the status query, which
// Quake II and QuakeWorld share, and the master queries are Likely.
func (c *Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	d := c.Dialect
	if len(b) < 2 {
		return "", codecs.NotMine
	}
	if d != Hexen2 && b[0] != 0xff {
		if _, err := DecodeRequest(b, d); err == nil {
			return codecs.KindMasterQuery, codecs.Likely
		}
		return "", codecs.NotMine
	}
	n := len(Magic)
	if d == Hexen2 {
		n++
	}
	if len(b) < n+1 || !bytes.Equal(b[:n], []byte("\xff\xff\xff\xff\xff")[:n]) || (d != Hexen2 && b[n] == 0xff) {
		return "", codecs.NotMine
	}
	rest := b[n:]
	switch {
	case bytes.HasPrefix(rest, []byte(CmdStatus)):
		if d == Hexen2 {
			return codecs.KindQuery, codecs.Certain
		}
		return codecs.KindQuery, codecs.Likely
	case d == Quake2 && bytes.HasPrefix(rest, []byte(HdrPrint)):
		return codecs.KindResponse, codecs.Certain
	case d != Quake2 && len(rest) > 1 && rest[0] == 'n' && rest[1] == '\\':
		return codecs.KindResponse, codecs.Certain
	case d != Quake2 && rest[0] == 'n':
		return codecs.KindResponse, codecs.Weak
	case d == QuakeWorld && bytes.HasPrefix(rest, []byte(HdrQWList)),
		d == Quake2 && len(rest) > len(HdrQ2List) && bytes.HasPrefix(rest, []byte(HdrQ2List)) && (rest[7] == ' ' || rest[7] == '\n'):
		return codecs.KindMasterList, codecs.Certain
	}
	return "", codecs.NotMine
}

// CheckQuery accepts one status query, or a master's list query, at most
// MaxQueryLen bytes.
func (c *Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(c.Name(), b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b, c.Dialect)
	return err
}

// Decode decodes a query or a reply: one datagram each (a master's list
// is one datagram too).
func (c *Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	p := c.Name()
	m := &codecs.Message{Protocol: p, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, codecs.NewError(p, "datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > 1 {
		return m, codecs.NewError(p, "datagrams", 0, codecs.Detail(codecs.ErrBadValue, "a message is one datagram"))
	}
	b := datagrams[0]
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 16)
		spans = &m.Spans
		m.Layers = []codecs.Layer{{Name: "wire", Bytes: b, Parent: -1}}
	}
	r := wire.NewReader(p, b, 0, spans)
	if kind, _ := c.Detect(b); kind == codecs.KindQuery || kind == codecs.KindMasterQuery {
		m.Kind = kind
		q := readRequest(r, c.Dialect)
		if !opt.NoFields {
			f := codecs.Object{}.Add("command", q.Command)
			if q.Flags != "" {
				f = f.Add("flags", q.Flags)
			}
			m.Fields = f
		}
		return m, r.Err()
	}
	resp := readResponse(r, c.Dialect)
	if resp.Master {
		m.Kind = codecs.KindMasterList
		m.Servers = make([]string, 0, len(resp.Servers))
		for _, s := range resp.Servers {
			m.Servers = append(m.Servers, s.String())
		}
	} else {
		m.Info = info(&resp)
	}
	if !opt.NoFields {
		m.Fields = fields(&resp)
	}
	return m, r.Err()
}

// fields is the "fields" object of a reply, text as sent.
func fields(r *Response) codecs.Object {
	if r.Master {
		ss := make([]string, 0, len(r.Servers))
		for _, s := range r.Servers {
			ss = append(ss, s.String())
		}
		return codecs.Object{}.Add("servers", ss)
	}
	vars := make([]codecs.Object, 0, len(r.Vars))
	for _, v := range r.Vars {
		vars = append(vars, make(codecs.Object, 0, 2).Add("key", v.Key).Add("value", v.Value))
	}
	ps := make([]codecs.Object, 0, len(r.Players))
	for _, p := range r.Players {
		var o codecs.Object
		if r.Dialect == Quake2 {
			o = make(codecs.Object, 0, 4).Add("score", p.Score).Add("ping", p.Ping).Add("name", p.Name)
			if p.HasAddress {
				o = o.Add("address", p.Address)
			}
		} else {
			o = make(codecs.Object, 0, 8).Add("id", p.ID).Add("frags", p.Score).Add("time", p.Time).Add("ping", p.Ping).
				Add("name", p.Name).Add("skin", p.Skin).Add("top", p.Top).Add("bottom", p.Bottom)
			if p.HasTeam {
				o = o.Add("team", p.Team)
			}
		}
		ps = append(ps, o)
	}
	return codecs.Object{}.Add("vars", vars).Add("players", ps)
}

// The keys of the neutral view: the first one present wins. Quake II
// names the map mapname, QuakeWorld and HexenWorld map; the engines'
// own keys start with '*'.
var (
	keysName     = []string{"hostname", "sv_hostname"}
	keysMap      = []string{"mapname", "map"}
	keysGameType = []string{"gamename", "*gamedir", "gamedir"}
	keysVersion  = []string{"version", "*version"}
	keysMax      = []string{"maxclients", "sv_maxclients"}
)

func lookup(r *Response, keys []string) (string, bool) {
	for _, k := range keys {
		if v, ok := r.Var(k); ok {
			return v, true
		}
	}
	return "", false
}

// info is the neutral view of a status reply: the host name, map and
// player names mapped from the Quake character set (Readable), the rules
// as sent.
func info(r *Response) *codecs.Info {
	in := &codecs.Info{Has: codecs.HasNumPlayers | codecs.HasPlayers}
	if v, ok := lookup(r, keysName); ok {
		in.Has |= codecs.HasName
		in.Name = Readable(v)
	}
	if v, ok := lookup(r, keysMap); ok {
		in.Has |= codecs.HasMap
		in.Map = Readable(v)
	}
	if v, ok := lookup(r, keysGameType); ok {
		in.Has |= codecs.HasGameType
		in.GameType = Readable(v)
	}
	if v, ok := lookup(r, keysVersion); ok {
		in.Has |= codecs.HasVersion
		in.Version = Readable(v)
	}
	// needpass is a bit set: 1 a player password, 2 a spectator's.
	if v, ok := r.Var("needpass"); ok {
		n, _ := codecs.Atoi([]byte(v))
		in.Has |= codecs.HasPassword
		in.Password = n&1 != 0
	}
	if v, ok := lookup(r, keysMax); ok {
		if n, ok := codecs.Atoi([]byte(v)); ok {
			in.Has |= codecs.HasMaxPlayers
			in.MaxPlayers = n
		}
	}
	in.NumPlayers = len(r.Players)
	in.Players = make([]codecs.Player, 0, len(r.Players))
	for _, p := range r.Players {
		// MVDSV lists spectators (status's flag 4) with "\s\" before
		// the name.
		name, spec := strings.CutPrefix(p.Name, "\\s\\")
		in.Players = append(in.Players, codecs.Player{Name: Readable(name), Score: p.Score, Ping: p.Ping, Spectator: spec && r.Dialect != Quake2})
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

// NewQuery starts a conversation: one status query and its reply, or a
// master's list query and its list (one datagram).
func (c *Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(c.Name(), c.Options(), opts)
	master := c.Dialect != Hexen2 && o.Bool("master")
	if err := o.Err(); err != nil {
		return nil, err
	}
	q := Request{Dialect: c.Dialect, Command: CmdStatus, End: "\n"}
	switch {
	case master && c.Dialect == QuakeWorld:
		q.Command = CmdQWList // "c\n", as QuakeWorld's clients ask
	case master:
		q.Command, q.End = CmdQ2List, "\n\x00" // as qstat asks
	}
	b, err := AppendRequest(nil, q)
	if err != nil {
		return nil, err
	}
	return &query{c: c, req: b, master: master}, nil
}

// QueryKey implements codecs.QueryKeyer: the query without what ends it
// (a newline, a NUL), which changes nothing in the answer. Nil when b is
// not a query.
func (c *Codec) QueryKey(b []byte) []byte {
	q, err := DecodeRequest(b, c.Dialect)
	if err != nil {
		return nil
	}
	q.End = ""
	k, _ := AppendRequest(nil, q)
	return k
}

type query struct {
	c      *Codec
	req    []byte
	master bool
	reply  []byte
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	p := q.c.Name()
	if q.reply != nil {
		return nil, true, codecs.NewError(p, "datagram", 0, codecs.Detail(codecs.ErrBadValue, "the reply has already arrived"))
	}
	kind, conf := q.c.Detect(b)
	want := codecs.KindResponse
	if q.master {
		want = codecs.KindMasterList
	}
	if kind != want || conf < codecs.Weak {
		return nil, false, codecs.NewError(p, "header", 0, codecs.Detail(codecs.ErrUnknownCode, "the datagram does not answer this query (want a "+string(want)+")"))
	}
	q.reply = append([]byte(nil), b...)
	return nil, true, nil
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if q.reply == nil {
		kind := codecs.KindResponse
		if q.master {
			kind = codecs.KindMasterList
		}
		return &codecs.Message{Protocol: q.c.Name(), Kind: kind},
			codecs.NewError(q.c.Name(), "reply", 0, codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	return q.c.Decode([][]byte{q.reply}, opt)
}
