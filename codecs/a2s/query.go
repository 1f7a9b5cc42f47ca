package a2s

import (
	"encoding/binary"
	"slices"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

var queryOptions = []codecs.Option{
	{Name: "info", Kind: codecs.OptionBool, Default: "true", Help: "ask A2S_INFO (name, map, counts, ...)"},
	{Name: "players", Kind: codecs.OptionBool, Default: "true", Help: "ask A2S_PLAYER (names, scores, time connected)"},
	{Name: "rules", Kind: codecs.OptionBool, Default: "true", Help: "ask A2S_RULES (the server's variables)"},
	{Name: "master", Kind: codecs.OptionBool, Default: "false", Help: "ask a Steam master server for its list instead"},
	{Name: "region", Kind: codecs.OptionChoice, Default: "all",
		Choices: []string{"all", "us-east", "us-west", "south-america", "europe", "asia", "australia", "middle-east", "africa"},
		Help:    "master: the region to list"},
	{Name: "filter", Kind: codecs.OptionText, Default: "",
		Help: `master: the filter, e.g. \appid\440\dedicated\1`},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// NewQuery configures a conversation from opts (keys of Options): the
// server queries asked in the order INFO, PLAYER, RULES, or the pages of a
// master's list.
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	q := &query{}
	for _, s := range [...]struct {
		key string
		t   Type
	}{{"info", TypeInfoRequest}, {"players", TypePlayerRequest}, {"rules", TypeRulesRequest}} {
		if r.Bool(s.key) {
			q.steps = append(q.steps, s.t)
		}
	}
	q.master = r.Bool("master")
	region := r.Choice("region")
	q.mreq.Region = RegionAll
	for i, n := range regionNames {
		if n == region {
			q.mreq.Region = Region(i)
		}
	}
	q.mreq.Filter = r.Value("filter")
	if _, err := AppendMasterRequest(nil, q.mreq); err != nil && r.Err() == nil {
		r.Fail("filter", "at most 200 printable ASCII bytes")
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if !q.master && len(q.steps) == 0 {
		return nil, codecs.OptionError(Protocol, "info", "ask at least one of info, players and rules")
	}
	return q, nil
}

// maxChallenges bounds how often one step answers a challenge, so a
// server that keeps sending new ones cannot keep the conversation going.
const maxChallenges = 3

// query is the Query of A2S: each step's query (with the challenge the
// server last gave, or asking for one), a challenge reply answered by the
// query again, then the step's reply whole or in parts; or the pages of a
// master's list, each asked with the last address of the one before.
type query struct {
	steps      []Type
	step       int
	challenge  uint32
	has        bool // a challenge is known
	challenges int  // challenges answered in this step
	kept       [][]byte
	parts      [][]byte // split parts of the current step
	lastChal   []byte   // the last challenge reply, for Result when nothing else came
	partBytes  int      // bytes in parts: the current step's, capped per query
	dropped    int
	done       bool

	master bool
	mreq   MasterRequest
	seeds  []Addr // the seeds asked with: a list, not a map (no map code in the browser module for one lookup per page)
}

func (c *query) Start() [][]byte {
	if c.master {
		c.seeds = []Addr{{}}
		b, _ := AppendMasterRequest(nil, c.mreq) // validated by NewQuery
		return [][]byte{b}
	}
	return [][]byte{c.request()}
}

// request is the current step's query.
func (c *query) request() []byte {
	t := c.steps[c.step]
	q := Request{Type: t, HasChallenge: c.has, Challenge: c.challenge}
	b, _ := AppendRequest(nil, q) // a known type always encodes
	return b
}

func ignored(text string) error {
	return newDetail("datagram", 0, "", codecs.ErrBadValue, text)
}

// Feed takes one datagram from the server or master.
func (c *query) Feed(b []byte) ([][]byte, bool, error) {
	_ = *c // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	if c.done {
		return nil, true, ignored("the conversation is over")
	}
	if len(b) < 5 {
		return nil, false, newDetail("datagram", len(b), "", codecs.ErrShort, "too short for an A2S message")
	}
	if c.master && len(c.kept) >= MaxMasterPages ||
		!c.master && (len(c.parts) >= MaxDatagrams || c.partBytes+len(b) > MaxBytes) {
		c.dropped++
		c.done = true
		return nil, true, nil
	}
	if c.master {
		return c.feedMaster(b)
	}
	switch binary.LittleEndian.Uint32(b) {
	case headerSingle:
		t := Type(b[4])
		switch t {
		case TypeChallenge:
			a, err := DecodeResponse(b, nil)
			if err != nil {
				return nil, false, err
			}
			c.lastChal = append(c.lastChal[:0], b...)
			if c.challenges == maxChallenges {
				c.done = true
				return nil, true, nil
			}
			c.challenges++
			c.challenge, c.has = a.Challenge, true
			return c.ask()
		case TypeInfo, TypeInfoGoldSrc, TypePlayers, TypeRules:
			if want := c.steps[c.step]; replyTo(t) != want {
				return nil, false, newDetail("type", 4, "", codecs.ErrBadValue, "a "+t.String()+" while waiting for the reply to "+want.String())
			}
			c.keep(b)
			return c.next()
		}
		return nil, false, newDetailf("type", 4, "", codecs.ErrUnknownCode, "reply type %d", int64(t))
	case headerSplit:
		if len(b) < 9 {
			return nil, false, newDetail("datagram", len(b), "", codecs.ErrShort, "too short for a split part")
		}
		for _, p := range c.parts {
			if string(p) == string(b) {
				return nil, false, nil // a duplicate
			}
		}
		c.partBytes += len(b)
		c.parts = appendCopy(c.parts, b)
		id, ok := splitComplete(c.parts)
		if !ok {
			return nil, false, nil
		}
		for _, p := range c.parts {
			if binary.LittleEndian.Uint32(p[4:]) == id {
				c.kept = append(c.kept, p)
			} // else a part of another message: dropped
		}
		c.parts, c.partBytes = nil, 0
		return c.next()
	}
	return nil, false, newDetail("header", 0, "", codecs.ErrBadMagic, "want FF FF FF FF or FE FF FF FF")
}

func (c *query) keep(b []byte) { c.kept = appendCopy(c.kept, b) }

// appendCopy appends a copy of b to bs.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func appendCopy(bs [][]byte, b []byte) [][]byte {
	return append(bs, append([]byte(nil), b...))
}

// next moves to the next step, keeping the challenge: servers hand one
// challenge to a client for all its queries, so PLAYER and RULES rarely
// need to ask again.
func (c *query) next() ([][]byte, bool, error) {
	c.step++
	c.challenges = 0
	if c.step == len(c.steps) {
		c.done = true
		return nil, true, nil
	}
	return c.ask()
}

// ask is Feed's answer that sends the current step's query.
func (c *query) ask() ([][]byte, bool, error) { return [][]byte{c.request()}, false, nil }

// splitComplete reports whether parts hold every packet of a message
// whose packet 0 is among them, and its id. Parts of other messages (a
// late copy from an earlier reply) do not stop another from completing.
func splitComplete(parts [][]byte) (uint32, bool) {
	for _, p0 := range parts {
		f, ok := formOf(p0)
		if !ok {
			continue
		}
		id, total := binary.LittleEndian.Uint32(p0[4:]), int(p0[8])
		if f == SplitGoldSrc {
			total = int(p0[8] & 0x0f)
		}
		var seen [256]bool
		n := 0
		for _, p := range parts {
			if binary.LittleEndian.Uint32(p[4:]) != id {
				continue
			}
			no := int(p[8] >> 4)
			if f != SplitGoldSrc {
				if len(p) < 10 {
					continue // no number byte
				}
				no = int(p[9])
			}
			if no < total && !seen[no] {
				seen[no] = true
				n++
			}
		}
		if n == total {
			return id, true
		}
	}
	return 0, false
}

// feedMaster files one page and asks for the next, seeded with the page's
// last address, until a page ends the list (or repeats a seed).
func (c *query) feedMaster(b []byte) ([][]byte, bool, error) {
	p, err := DecodeMasterReply(b)
	if err != nil {
		return nil, false, err
	}
	c.keep(b)
	if p.End || len(p.Servers) == 0 {
		c.done = true
		return nil, true, nil
	}
	last := p.Servers[len(p.Servers)-1]
	if slices.Contains(c.seeds, last) {
		c.done = true // the master went back: stop rather than loop
		return nil, true, nil
	}
	c.seeds = append(c.seeds, last)
	c.mreq.Seed = last
	q, _ := AppendMasterRequest(nil, c.mreq)
	return [][]byte{q}, false, nil
}

// Result decodes what came. A server that answered a query and then fell
// silent (one that ignores PLAYER or RULES) gives the replies that came
// and a warning naming the queries without a reply; a split message with
// parts missing, or no reply at all, gives what came and an error
// wrapping codecs.ErrIncomplete naming it.
func (c *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	dgs := append(append([][]byte(nil), c.kept...), c.parts...)
	if len(dgs) == 0 && c.lastChal != nil {
		dgs = [][]byte{c.lastChal}
	}
	if len(dgs) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newDetail("reply", 0, "", codecs.ErrIncomplete, "no reply received")
	}
	m, err := (&Codec{}).Decode(dgs, opt)
	if c.dropped > 0 {
		m.Warn(codecs.WarnTruncated)
		if !opt.NoFields {
			m.Fields = m.Fields.Add("dropped_datagrams", c.dropped)
		}
	}
	if err != nil {
		return m, err
	}
	switch {
	case !c.done && c.master:
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, "the master's list did not end")
	case !c.done && c.step > 0 && len(c.parts) == 0:
		// An earlier query was answered, then nothing came for this one:
		// many servers are set to answer A2S_INFO only (or no RULES).
		// What came is the server's answer; the warning names the rest.
		m.Warn(unanswered(c.steps[c.step:]))
	case !c.done:
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, "no reply to "+c.steps[c.step].String())
	case c.dropped > 0:
		// Cut by the caps: the warning says so.
	case !c.master && c.step < len(c.steps):
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, wire.Msg("the server sent a new challenge %d times", maxChallenges+1))
	}
	return m, err
}

// unanswered is the warning of a conversation that ended, silent, at
// steps[0]: "no reply to A2S_PLAYER (A2S_RULES not asked)".
func unanswered(steps []Type) string {
	w := "no reply to " + steps[0].String()
	if len(steps) > 1 {
		w += " ("
		for i, t := range steps[1:] {
			if i > 0 {
				w += ", "
			}
			w += t.String()
		}
		w += " not asked)"
	}
	return w
}

// replyTo is the query a reply type answers.
func replyTo(t Type) Type {
	switch t {
	case TypeInfo, TypeInfoGoldSrc:
		return TypeInfoRequest
	case TypePlayers:
		return TypePlayerRequest
	case TypeRules:
		return TypeRulesRequest
	}
	return 0
}
