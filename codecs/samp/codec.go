package samp

import (
	"strconv"
	"strings"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches, besides codecs.WarnTrailing.
const (
	// WarnUnanswered: the conversation ended (on the caller's timeout)
	// with a question unanswered; what came is decoded.
	WarnUnanswered = "a question went unanswered"
	// WarnDuplicate: two replies to one question; the first is used.
	WarnDuplicate = "two replies to one question"
)

// Codec is the codecs.Codec of SA-MP and open.mp's query (the zero value)
// and, with VCMP set, of Vice City: Multiplayer's. Importing the package
// registers both.
type Codec struct {
	VCMP bool
}

func (c *Codec) Name() string {
	if c.VCMP {
		return ProtocolVCMP
	}
	return Protocol
}

func (c *Codec) Title() string {
	if c.VCMP {
		return "Vice City: Multiplayer"
	}
	return "SA-MP / open.mp"
}

func (c *Codec) DefaultPort() int {
	if c.VCMP {
		return DefaultPortVCMP
	}
	return DefaultPort
}

var (
	optIP = codecs.Option{Name: "ip", Kind: codecs.OptionText, Default: "0.0.0.0", Echo: true,
		Help: "the server's IPv4 address as the query's header carries it (servers echo it unchecked)"}
	optPort = codecs.Option{Name: "port", Kind: codecs.OptionUint, Default: "0", Echo: true,
		Help: "the server's port as the query's header carries it (echoed unchecked)"}
	optCharset = codecs.Option{Name: "charset", Kind: codecs.OptionChoice, Default: "windows-1252",
		Choices: charsetNames[:], Help: "the code page of the server's text (windows-1251 for Cyrillic)"}
	optPlayers = codecs.Option{Name: "players", Kind: codecs.OptionChoice, Default: "auto",
		Choices: []string{"auto", "detailed", "clients", "none"},
		Help:    "the player list: 'd' with ids and pings (detailed), 'c' with names and scores (clients), or none; auto: c for open.mp and VC:MP, d for SA-MP"}
	optRules = codecs.Option{Name: "rules", Kind: codecs.OptionBool, Default: "true",
		Help: "ask the rules (version, map name, …; they tell open.mp from SA-MP)"}
	sampOptions = []codecs.Option{optIP, optPort, optCharset, optRules, optPlayers}
	vcmpOptions = []codecs.Option{optIP, optPort, optCharset, optPlayers}
)

// Options lists the knobs of NewQuery. VC:MP has no rules.
func (c *Codec) Options() []codecs.Option {
	if c.VCMP {
		return append([]codecs.Option(nil), vcmpOptions...)
	}
	return append([]codecs.Option(nil), sampOptions...)
}

// magics are the codec's query and reply magics.
func (c *Codec) magics() (query, reply string) {
	if c.VCMP {
		return MagicVCMP, MagicVCMPReply
	}
	return MagicSAMP, MagicSAMP
}

// Detect: the magic and a known opcode make it Certain. A query is the
// header alone (or the ping's 15 bytes); SA-MP's echo of a ping is the
// same bytes and is taken for the ping.
func (c *Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < HeaderLen {
		return "", codecs.NotMine
	}
	qm, rm := c.magics()
	op := Opcode(b[HeaderLen-1])
	known := op == OpInfo || op == OpRules || op == OpClients || op == OpDetailed || op == OpPing
	if !known {
		return "", codecs.NotMine
	}
	magic := string(b[:4])
	if magic == qm && (len(b) == HeaderLen && op != OpPing || len(b) == PingLen && op == OpPing) {
		return codecs.KindQuery, codecs.Certain
	}
	if magic == rm {
		return codecs.KindResponse, codecs.Certain
	}
	return "", codecs.NotMine
}

// CheckQuery accepts the queries a client sends, with this codec's magic:
// 'i', 'r', 'c' or 'd' (11 bytes) or 'p' (15). The header's address and
// port may be anything (the server only echoes them); the length is fixed
// per opcode, so nothing else rides along. RCON ('x') is refused.
func (c *Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(c.Name(), b, MaxQueryLen); err != nil {
		return err
	}
	q, err := DecodeRequest(b)
	if err != nil {
		return err
	}
	if qm, _ := c.magics(); string(q.Magic[:]) != qm {
		return codecs.NewError(c.Name(), "magic", 0, codecs.Detail(codecs.ErrBadMagic, "want "+qm))
	}
	return nil
}

// Decode decodes a query (one datagram) or a conversation's replies (the
// info, rules and player replies, in any order), text as Windows-1252.
func (c *Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	return c.decode(datagrams, opt, Windows1252)
}

// isOpenMP says whether rules come from open.mp: it adds the rule
// allowed_clients, and its version rule starts with "omp".
func isOpenMP(rules []Rule) bool {
	for _, x := range rules {
		if x.Name == "allowed_clients" || x.Name == "version" && strings.HasPrefix(x.Value, "omp") {
			return true
		}
	}
	return false
}

func (c *Codec) decode(datagrams [][]byte, opt codecs.DecodeOptions, cs Charset) (*codecs.Message, error) {
	proto := c.Name()
	m := &codecs.Message{Protocol: proto, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, codecs.NewError(proto, "datagrams", 0, codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > 5 {
		return m, codecs.NewError(proto, "datagrams", 0, codecs.Detail(codecs.ErrTooLong, strconv.Itoa(len(datagrams))+" datagrams; a conversation has at most 4 replies"))
	}
	var spans *[]codecs.Span
	if opt.Spans {
		m.Spans = make([]codecs.Span, 0, 32)
		spans = &m.Spans
	}
	if k, _ := c.Detect(datagrams[0]); k == codecs.KindQuery && len(datagrams) == 1 {
		m.Kind = codecs.KindQuery
		if opt.Spans {
			m.Layers = []codecs.Layer{{Name: "wire", Bytes: datagrams[0], Parent: -1}}
		}
		r := wire.NewReader(proto, datagrams[0], 0, spans)
		q := readRequest(r)
		if !opt.NoFields {
			m.Fields = codecs.Object{}.Add("opcode", q.Opcode.String()).Add("ip", ipString(q.IP)).Add("port", int(q.Port))
		}
		return m, r.Err()
	}
	// The rules first, without spans: whether they are open.mp's names
	// the info reply's third string.
	omp := false
	for _, d := range datagrams {
		if len(d) >= HeaderLen && Opcode(d[HeaderLen-1]) == OpRules {
			if resp, err := DecodeResponseCharset(d, nil, cs); err == nil {
				omp = isOpenMP(resp.Rules)
			}
		}
	}
	third := "map"
	if omp {
		third = "language"
	}
	var all []Response
	var err error
	_, rm := c.magics()
	for i, d := range datagrams {
		name := "wire"
		if len(datagrams) > 1 {
			name = "datagram " + strconv.Itoa(i+1)
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: d, Parent: -1})
		}
		r := wire.NewReader(proto, d, i, spans)
		resp := readResponse(r, cs, third)
		if !r.Failed() && string(resp.Magic[:]) != rm {
			r.FailAt("magic", 0, codecs.Detail(codecs.ErrBadMagic, "want "+rm))
		}
		if e := r.Err(); e != nil {
			if ce, ok := e.(*codecs.Error); ok && len(datagrams) > 1 {
				ce.Layer = name
			}
			err = e
			if resp.Opcode != 0 {
				all = append(all, resp) // the partial reply, for the partial view
			}
			break
		}
		if r.Len() > 0 {
			r.Bytes("trailing", r.Len())
			m.Warn(codecs.WarnTrailing)
		}
		dup := false
		for _, a := range all {
			dup = dup || a.Opcode == resp.Opcode
		}
		if dup {
			m.Warn(WarnDuplicate)
			continue
		}
		all = append(all, resp)
	}
	m.Info = info(all, omp)
	if !opt.NoFields {
		m.Fields = fields(all, omp, third)
	}
	return m, err
}

// info is the neutral view of a conversation's replies.
func info(all []Response, omp bool) *codecs.Info {
	in := &codecs.Info{}
	mapRule := false // the mapname rule wins over the third string
	for i := range all {
		resp := &all[i]
		switch resp.Opcode {
		case OpInfo:
			x := resp.Info
			in.Has |= codecs.HasName | codecs.HasGameType | codecs.HasPassword | codecs.HasNumPlayers | codecs.HasMaxPlayers
			in.Name, in.GameType, in.Password = x.Hostname, x.Gamemode, x.Password
			in.NumPlayers, in.MaxPlayers = int(x.Players), int(x.MaxPlayers)
			if !omp && !mapRule && x.Language != "" {
				in.Has |= codecs.HasMap
				in.Map = x.Language
			}
			if resp.VCMP() {
				in.Has |= codecs.HasVersion
				in.Version = x.Version
			}
		case OpRules:
			in.Has |= codecs.HasRules
			in.Rules = make([][2]string, 0, len(resp.Rules))
			for _, x := range resp.Rules {
				in.Rules = append(in.Rules, [2]string{x.Name, x.Value})
				switch x.Name {
				case "version":
					in.Has |= codecs.HasVersion
					in.Version = x.Value
				case "mapname":
					in.Has |= codecs.HasMap
					in.Map, mapRule = x.Value, true
				}
			}
		case OpClients, OpDetailed:
			if in.Has&codecs.HasPlayers != 0 {
				continue
			}
			in.Has |= codecs.HasPlayers
			in.Players = make([]codecs.Player, 0, len(resp.Players))
			for _, p := range resp.Players {
				ping := 0
				if resp.Opcode == OpDetailed {
					ping = int(p.Ping)
				}
				in.Players = append(in.Players, codecs.Player{Name: p.Name, Score: int(p.Score), Ping: ping})
			}
		}
	}
	return in
}

// fields is the "fields" object: one member per reply.
func fields(all []Response, omp bool, third string) codecs.Object {
	f := codecs.Object{}.Add("open_mp", omp)
	for i := range all {
		resp := &all[i]
		hdr := codecs.Object{}.Add("ip", ipString(resp.IP)).Add("port", int(resp.Port))
		switch resp.Opcode {
		case OpInfo:
			x := resp.Info
			o := codecs.Object{}.Add("header", hdr)
			if resp.VCMP() {
				o = o.Add("version", x.Version)
			}
			o = o.Add("password", x.Password).Add("players", int(x.Players)).Add("max_players", int(x.MaxPlayers)).
				Add("hostname", x.Hostname).Add("gamemode", x.Gamemode).Add(third, x.Language)
			f = f.Add("info", o)
		case OpRules:
			rules := make([]any, 0, len(resp.Rules))
			for _, x := range resp.Rules {
				rules = append(rules, []string{x.Name, x.Value})
			}
			f = f.Add("rules", codecs.Object{}.Add("header", hdr).Add("rules", rules))
		case OpClients, OpDetailed:
			ps := make([]codecs.Object, 0, len(resp.Players))
			for _, p := range resp.Players {
				o := codecs.Object{}
				if resp.Opcode == OpDetailed {
					o = o.Add("id", int(p.ID))
				}
				o = o.Add("name", p.Name).Add("score", int(p.Score))
				if resp.Opcode == OpDetailed {
					o = o.Add("ping", int(p.Ping))
				}
				ps = append(ps, o)
			}
			f = f.Add(resp.Opcode.String(), codecs.Object{}.Add("header", hdr).Add("players", ps))
		case OpPing:
			f = f.Add("ping", codecs.Hex(resp.Ping[:]))
		}
	}
	return f
}

// parseIPv4 reads a dotted quad.
func parseIPv4(s string) ([4]byte, bool) {
	var ip [4]byte
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return ip, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 8)
		if err != nil || len(p) > 3 {
			return ip, false
		}
		ip[i] = byte(n)
	}
	return ip, true
}

// NewQuery starts a conversation: the info question, then (SA-MP) the
// rules, then, once the info reply has counted the players (and the rules
// have said whether the server is open.mp), the player list, one question
// at a time (docs/protocols/samp.md "Conversation").
func (c *Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(c.Name(), c.Options(), opts)
	ipText := o.Value("ip")
	port := o.Uint("port", 16)
	csName := o.Choice("charset")
	players := o.Choice("players")
	rules := false
	if !c.VCMP {
		rules = o.Bool("rules")
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	ip, ok := parseIPv4(ipText)
	if !ok {
		return nil, codecs.OptionError(c.Name(), "ip", strconv.Quote(ipText)+" is not an IPv4 address (a.b.c.d)")
	}
	cs, _ := ParseCharset(csName)
	q := &query{codec: c, hdr: NewHeader(c.VCMP, ip, uint16(port), OpInfo), cs: cs, players: players, rules: rules}
	q.playersOff = players == "none"
	return q, nil
}

// bit is an opcode's bit in query.asked and query.got.
func bit(op Opcode) uint8 {
	switch op {
	case OpInfo:
		return 1
	case OpRules:
		return 2
	case OpClients:
		return 4
	case OpDetailed:
		return 8
	}
	return 0
}

type query struct {
	codec      *Codec
	hdr        Header
	cs         Charset
	players    string
	rules      bool
	asked, got uint8
	playersOff bool // no player list will be asked
	info       ServerInfo
	omp        bool
	replies    [][]byte
	done       bool
}

func (q *query) ask(op Opcode) []byte {
	q.asked |= bit(op)
	h := q.hdr
	h.Opcode = op
	return appendHeader(nil, h)
}

// Start asks the info alone: the rules follow its reply, so that a list
// of many servers keeps one question in flight per server (the relay
// counts each in its per-page share of upstream exchanges).
func (q *query) Start() [][]byte {
	return [][]byte{q.ask(OpInfo)}
}

// Feed takes a reply to a question asked and not yet answered. A reply
// that does not decode ends the conversation (its error is Result's).
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	proto := q.codec.Name()
	if q.done {
		return nil, true, codecs.NewError(proto, "datagram", 0, codecs.Detail(codecs.ErrBadValue, "the conversation has ended"))
	}
	_, rm := q.codec.magics()
	if len(b) < HeaderLen || string(b[:4]) != rm {
		return nil, false, codecs.NewError(proto, "magic", 0, codecs.Detail(codecs.ErrBadMagic, "not a reply (want "+rm+")"))
	}
	op := Opcode(b[HeaderLen-1])
	if bit(op) == 0 || q.asked&bit(op) == 0 || q.got&bit(op) != 0 {
		return nil, false, codecs.NewError(proto, "opcode", HeaderLen-1, codecs.Detail(codecs.ErrUnknownCode, "not a reply to a question asked and unanswered"))
	}
	q.got |= bit(op)
	q.replies = append(q.replies, append([]byte(nil), b...))
	resp, err := DecodeResponseCharset(b, nil, q.cs)
	if err != nil {
		q.done = true
		return nil, true, err
	}
	switch op {
	case OpInfo:
		q.info = resp.Info
	case OpRules:
		q.omp = isOpenMP(resp.Rules)
	}
	next := q.next()
	q.done = q.got == q.asked && (q.playersOff || q.asked&(bit(OpClients)|bit(OpDetailed)) != 0)
	return next, q.done, nil
}

// next asks for the player list once the info reply counted players and,
// for "auto" on SA-MP, the rules said whether the server is open.mp.
func (q *query) next() [][]byte {
	if q.got&bit(OpInfo) == 0 {
		return nil
	}
	if q.rules && q.asked&bit(OpRules) == 0 {
		return [][]byte{q.ask(OpRules)}
	}
	if q.playersOff || q.asked&(bit(OpClients)|bit(OpDetailed)) != 0 {
		return nil
	}
	if q.players == "auto" && q.rules && q.got&bit(OpRules) == 0 {
		return nil // the rules tell open.mp
	}
	if n := q.info.Players; n == 0 || n >= NoPlayerList {
		q.playersOff = true // nothing to list, or a server that will not
		return nil
	}
	op := OpDetailed
	if q.players == "clients" || q.players == "auto" && (q.codec.VCMP || q.omp) {
		op = OpClients
	}
	return [][]byte{q.ask(op)}
}

func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.replies) == 0 {
		return &codecs.Message{Protocol: q.codec.Name(), Kind: codecs.KindResponse},
			codecs.NewError(q.codec.Name(), "reply", 0, codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	m, err := q.codec.decode(q.replies, opt, q.cs)
	if err == nil && !q.done {
		m.Warn(WarnUnanswered)
	}
	return m, err
}

// QueryKey implements codecs.QueryKeyer: the query with the header's
// address and port zeroed (the server only echoes them), so that pages
// that filled them differently share one answer. Nil when b is not a
// query.
func (c *Codec) QueryKey(b []byte) []byte {
	if c.CheckQuery(b) != nil {
		return nil
	}
	k := append([]byte(nil), b...)
	clear(k[4:10])
	return k
}
