package ogp

import (
	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

var queryOptions = []codecs.Option{
	{Name: "version", Kind: codecs.OptionChoice, Default: "1.0", Choices: []string{"1.0", "0.04"},
		Help: "wire form to send: 1.0 (0.94+/1.0x, what servers speak) or 0.04 (the seed spec); answers of either are decoded"},
	{Name: "challenge", Kind: codecs.OptionUint, Default: "", Echo: true,
		Help: "challenge number to send in the first query; empty asks the server for one first"},
	{Name: "request_id", Kind: codecs.OptionUint, Default: "", Echo: true, Help: "RequestID to send and expect back; empty sends none"},
	{Name: "max_bytes", Kind: codecs.OptionUint, Default: "0",
		Help: "MaxBytesPerPacket: ask the server to split answers larger than this (500-1500); 0 does not ask"},
	{Name: "info", Kind: codecs.OptionBool, Default: "true", Help: "ask for the server fields (name, map, counts, ...)"},
	{Name: "teams", Kind: codecs.OptionBool, Default: "true", Help: "ask for the team list"},
	{Name: "players", Kind: codecs.OptionBool, Default: "true", Help: "ask for the player list"},
	{Name: "rules", Kind: codecs.OptionBool, Default: "true", Help: "ask for the rule list"},
	{Name: "addons", Kind: codecs.OptionBool, Default: "true", Help: "ask for the add-on list"},
	{Name: "limits", Kind: codecs.OptionBool, Default: "true", Help: "ask for the limit list"},
	{Name: "colors", Kind: codecs.OptionBool, Default: "true", Help: "1.0x: ask for the colour info of names"},
	{Name: "utf8", Kind: codecs.OptionBool, Default: "true", Help: "1.0x: tell the server UTF-8 answers are welcome"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// NewRequest returns the Default query v1 that asks for everything the
// version defines, as the official client sends it (1.0x) or as the seed
// lays it out (v0.04), without a challenge number.
func NewRequest(v Version) Request {
	q := Request{Header: Header{Version: v, Type: TypeDefault}, Body: true}
	if v == V004 {
		q.Requests = Req004Teams | Req004Players | Req004Rules | Req004AddOns | Req004Limits |
			Req004GameName | Req004ServerFlags | Req004Mod | Req004HostName | Req004Map | Req004NextMap |
			Req004GameType | Req004PlayerCount | Req004SlotMax | Req004BotCount | Req004ReservedSlots
		q.TeamFields = teamNames004.known()
		q.PlayerFields = playerNames004.known()
		q.AddOnFields = addOnNames.known()
		return q
	}
	q.UTF8 = true
	q.Requests = requestNames1.known()
	q.ServerInfoFields = infoNames.known()
	q.ModFields = modNames.known()
	q.MapFields = mapNames.known()
	q.TeamFields = teamNames1.known()
	q.PlayerFields = playerNames1.known()
	q.AddOnFields = addOnNames.known()
	return q
}

// requestOptions are the options that drop Requests bits: 1.0x's (b1)
// and v0.04's (b).
var requestOptions = [...]struct {
	key   string
	b1, b Bits
}{{"info", ReqServerInfo, Req004GameName | Req004ServerFlags | Req004Mod | Req004HostName | Req004Map |
	Req004NextMap | Req004GameType | Req004PlayerCount | Req004SlotMax | Req004BotCount | Req004ReservedSlots},
	{"teams", ReqTeams, Req004Teams}, {"players", ReqPlayers, Req004Players}, {"rules", ReqRules, Req004Rules},
	{"addons", ReqAddOns, Req004AddOns}, {"limits", ReqLimits, Req004Limits}, {"colors", ReqColoredNames, 0}}

// NewQuery configures a conversation from opts (keys of Options).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	v, ok := ParseVersion(r.Choice("version"))
	if !ok && r.Err() == nil {
		r.Fail("version", "want 1.0 or 0.04") // a choice ParseVersion does not know
	}
	q := NewRequest(v)
	for _, l := range requestOptions {
		if !r.Bool(l.key) {
			if v == V004 {
				q.Requests &^= l.b
			} else {
				q.Requests &^= l.b1
			}
		}
	}
	q.UTF8 = r.Bool("utf8") && v == V1
	if r.Set("request_id") {
		q.HasRequestID, q.RequestID = true, uint32(r.Uint("request_id", 32))
	}
	if maxBytes := r.Uint("max_bytes", 16); maxBytes != 0 {
		if maxBytes < 500 || maxBytes > 1500 {
			r.Fail("max_bytes", "want 0 or 500..1500")
		}
		q.Split, q.MaxBytesPerPacket = true, uint16(maxBytes)
	}
	c := &query{req: q}
	switch {
	case r.Set("challenge"):
		c.req.HasChallenge, c.req.Challenge = true, uint32(r.Uint("challenge", 32))
	case v == V004:
		// v0.04 asks for a number with the real query itself.
		c.req.HasChallenge, c.req.Challenge = true, challengeRequest004
	default:
		c.ask = true
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// maxChallenges bounds how often a conversation answers a challenge, so a
// server that keeps changing its number cannot keep it going forever.
const maxChallenges = 3

// query is the Query of OGP: challenge request, challenge answer,
// the real query with the number echoed, then the answer (split or not).
type query struct {
	req        Request
	ask        bool // 1.0x: start with the header-only challenge request
	challenges int
	parts      [][]byte // the answer's datagrams
	count      int      // parts expected (1 unless split)
	last       []byte   // the last challenge answer, for Result when nothing else came
	done       bool
}

// Start returns the first datagram: the 1.0x challenge request (a Default
// query header without flags or body), or the real query.
func (c *query) Start() [][]byte {
	if c.ask {
		h := Request{Header: Header{Version: V1, Type: TypeDefault}}
		b, _ := AppendRequest(nil, h)
		return [][]byte{b}
	}
	return [][]byte{c.query()}
}

func (c *query) query() []byte {
	b, _ := AppendRequest(nil, c.req) // options were validated; the request always encodes
	return b
}

func ignored(text string) error {
	return newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, text))
}

// Feed takes one datagram from the server. A challenge answer returns the
// real query with the number echoed; answer parts are collected until all
// have come.
func (c *query) Feed(b []byte) ([][]byte, bool, error) {
	if c.done {
		return nil, true, ignored("the answer is already complete")
	}
	h, off, err := decodeHeader(b, c.asked())
	if err != nil {
		return nil, false, err
	}
	if !h.Answer {
		return nil, false, ignored("a query, not an answer")
	}
	// The request id is not checked: a relay shares one server's answer
	// among everyone who asked the same question, so it may echo another
	// asker's id; the transports accept only datagrams from the server.
	if kindOf(&h, b[off:]) == codecs.KindChallenge {
		c.last = append(c.last[:0], b...)
		if c.challenges == maxChallenges {
			c.done = true
			return nil, true, nil
		}
		c.challenges++
		c.req.HasChallenge, c.req.Challenge = true, h.Challenge
		return [][]byte{c.query()}, false, nil
	}
	if !h.Split || h.SplitCount == 1 {
		c.parts, c.count, c.done = [][]byte{append([]byte(nil), b...)}, 1, true
		return nil, true, nil
	}
	if c.count != int(h.SplitCount) {
		c.parts, c.count = nil, int(h.SplitCount) // a new answer: start over
	}
	for _, p := range c.parts {
		if ph, _, _ := decodeHeader(p, c.asked()); ph.SplitNo == h.SplitNo {
			return nil, false, nil // a duplicate
		}
	}
	c.parts = append(c.parts, append([]byte(nil), b...))
	c.done = len(c.parts) == c.count
	return nil, c.done, nil
}

// asked is the version the conversation's queries are sent in, which the
// server answers in.
func (c *query) asked() asked { return asked{v: c.req.Version, set: true} }

// Result decodes the answer received so far; parts of a split answer that
// did not come make it an error wrapping codecs.ErrIncomplete. With only a
// challenge answer (the query with the number got no answer, or the server
// kept sending new numbers) it is that challenge message, and an error
// wrapping codecs.ErrIncomplete.
func (c *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	switch {
	case len(c.parts) > 0:
		return decodeMessage(c.parts, opt, c.asked())
	case c.last != nil:
		m, err := decodeMessage([][]byte{c.last}, opt, c.asked())
		if err == nil {
			text := "no answer to the query with the challenge number"
			if c.challenges == maxChallenges && c.done {
				text = wire.Msg("the server sent a new challenge number %d times", int64(maxChallenges+1))
			}
			err = newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, text))
		}
		return m, err
	}
	return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
		newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
}
