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

// maxChallenges bounds how many new challenges one conversation answers,
// so a server that keeps sending new ones cannot keep it going.
const maxChallenges = 3

// query is the Query of A2S: INFO and the first challenged step's challenge
// request at once; every challenge answered by all the steps still open,
// sent again with it; the replies, whole or in parts, in any order, each
// answering the step its type names. Or the pages of a master's list, each
// asked with the last address of the one before.
type query struct {
	steps      []Type
	answered   [3]bool   // per step
	sentWith   [3]uint32 // per step: the challenge it was last sent with
	sent       [3]bool   // per step: sentWith holds a challenge the server gave
	asked      [3]bool   // per step: sent at all
	challenge  uint32
	has        bool // a challenge is known
	challenges int  // new challenges answered in this conversation
	kept       [][]byte
	parts      [][]byte // split parts of messages not yet complete, any id
	lastChal   []byte   // the last challenge reply, for Result when nothing else came
	partsIn    int      // split parts taken in this conversation
	bytesIn    int      // and their bytes
	dropped    int
	done       bool

	master bool
	mreq   MasterRequest
	seeds  []Addr // the seeds asked with: a list, not a map (no map code in the browser module for one lookup per page)
}

// Start sends INFO (unchallenged) and, when PLAYER or RULES is asked, the
// challenge request of the first of them, so that the server's challenge
// comes back with the info.
func (c *query) Start() [][]byte {
	if c.master {
		c.seeds = []Addr{{}}
		b, _ := AppendMasterRequest(nil, c.mreq) // validated by NewQuery
		return [][]byte{b}
	}
	var out [][]byte
	for i, t := range c.steps {
		out = append(out, c.request(i))
		if t != TypeInfoRequest {
			break // PLAYER's or RULES' challenge request: one is enough
		}
	}
	return out
}

// request is step i's query, with the challenge known (or asking for one),
// and notes it sent.
func (c *query) request(i int) []byte {
	q := Request{Type: c.steps[i], HasChallenge: c.has, Challenge: c.challenge}
	c.asked[i] = true
	c.sent[i], c.sentWith[i] = c.has, c.challenge
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
	if c.master {
		if len(c.kept) >= MaxMasterPages {
			c.dropped++
			c.done = true
			return nil, true, nil
		}
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
			if !c.has || a.Challenge != c.challenge {
				if c.challenges == maxChallenges {
					c.done = true
					return nil, true, nil
				}
				c.challenges++
				c.challenge, c.has = a.Challenge, true
			}
			return c.ask()
		case TypeInfo, TypeInfoGoldSrc, TypePlayers, TypeRules:
			return c.answer(t, [][]byte{b})
		}
		return nil, false, newDetailf("type", 4, "", codecs.ErrUnknownCode, "reply type %d", int64(t))
	case headerSplit:
		return c.feedPart(b)
	}
	return nil, false, newDetail("header", 0, "", codecs.ErrBadMagic, "want FF FF FF FF or FE FF FF FF")
}

// feedPart files split part b and, when its message is complete, reads
// the message's type once reassembled. Each message is cut at the caps of
// one query (MaxDatagrams, MaxBytes), and the parts of a conversation at
// those of one more query than it asks.
func (c *query) feedPart(b []byte) ([][]byte, bool, error) {
	if len(b) < 9 {
		return nil, false, newDetail("datagram", len(b), "", codecs.ErrShort, "too short for a split part")
	}
	id := binary.LittleEndian.Uint32(b[4:])
	for _, p := range c.kept {
		if string(p) == string(b) {
			return nil, false, nil // a late copy of a part of a message read
		}
	}
	n, size := 0, 0
	for _, p := range c.parts {
		if string(p) == string(b) {
			return nil, false, nil // a duplicate
		}
		if binary.LittleEndian.Uint32(p[4:]) == id {
			n++
			size += len(p)
		}
	}
	room := len(c.steps) + 1
	if n >= MaxDatagrams || size+len(b) > MaxBytes ||
		c.partsIn >= room*MaxDatagrams || c.bytesIn+len(b) > room*MaxBytes {
		c.dropped++
		c.done = true
		return nil, true, nil
	}
	c.partsIn++
	c.bytesIn += len(b)
	c.parts = appendCopy(c.parts, b)
	id, ok := splitComplete(c.parts)
	if !ok {
		return nil, false, nil
	}
	var msg, rest [][]byte
	for _, p := range c.parts {
		if binary.LittleEndian.Uint32(p[4:]) == id {
			msg = append(msg, p)
		} else {
			rest = append(rest, p)
		}
	}
	c.parts = rest
	whole, _ := Reassemble(nil, msg)
	if len(whole) < 5 || !hasMagic(whole, 0) || replyTo(Type(whole[4])) == 0 {
		// Its type unknown (a stream that does not decompress): kept, so
		// that Result shows why; no step is answered by it.
		c.kept = append(c.kept, msg...)
		return nil, false, newDetail("type", 0, "", codecs.ErrBadValue, "a split message that is no reply")
	}
	return c.answer(Type(whole[4]), msg)
}

// answer files reply dgs of type t for the step it answers: a reply to a
// step not asked is refused, a second one to an answered step ignored.
func (c *query) answer(t Type, dgs [][]byte) ([][]byte, bool, error) {
	i := slices.Index(c.steps, replyTo(t))
	if i < 0 {
		return nil, false, newDetail("type", 4, "", codecs.ErrBadValue, "a "+t.String()+", which was not asked")
	}
	if c.answered[i] {
		return nil, false, nil // a reply to the query sent again with a new challenge
	}
	c.answered[i] = true
	for _, d := range dgs {
		c.keep(d)
	}
	if c.open() < 0 {
		c.done = true
		c.parts = nil // parts of no step's message
		return nil, true, nil
	}
	return nil, false, nil
}

// open is the first step not answered, or -1.
func (c *query) open() int {
	for i := range c.steps {
		if !c.answered[i] {
			return i
		}
	}
	return -1
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

// ask is Feed's answer to a challenge: every step not answered and not
// yet sent with the challenge, sent with it. Servers hand one challenge to
// a client for all its queries, whichever query it answered.
func (c *query) ask() ([][]byte, bool, error) {
	var out [][]byte
	for i := range c.steps {
		if !c.answered[i] && !(c.sent[i] && c.sentWith[i] == c.challenge) {
			out = append(out, c.request(i))
		}
	}
	return out, false, nil
}

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

// Result decodes what came. A server that answered a query and fell
// silent on others (one that ignores PLAYER or RULES) gives the replies
// that came and a warning naming the queries without a reply; a split
// message with parts missing, or no reply at all, gives what came and an
// error wrapping codecs.ErrIncomplete naming it.
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
	open := c.open()
	switch {
	case !c.done && c.master:
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, "the master's list did not end")
	case c.master || open < 0 || c.done && c.dropped > 0:
		// Complete, or cut by the caps: the warning says so.
	case c.done:
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, wire.Msg("the server sent a new challenge %d times", maxChallenges+1))
	case slices.Contains(c.answered[:len(c.steps)], true) && len(c.parts) == 0:
		// A query was answered, and nothing came for the others: many
		// servers are set to answer A2S_INFO only (or no RULES). What
		// came is the server's answer; the warning names the rest.
		m.Warn(c.unanswered())
	default:
		err = newDetail("reply", 0, "", codecs.ErrIncomplete, "no reply to "+c.steps[open].String())
	}
	return m, err
}

// unanswered is the warning of a conversation that ended, silent, with
// steps open: "no reply to A2S_PLAYER (A2S_RULES not asked)" when no
// challenge came to send RULES with, "no reply to A2S_PLAYER, A2S_RULES"
// when both were sent.
func (c *query) unanswered() string {
	w, notAsked := "", ""
	for i, t := range c.steps {
		switch {
		case c.answered[i]:
		case c.asked[i]:
			w = join(w, t.String())
		default:
			notAsked = join(notAsked, t.String())
		}
	}
	w = "no reply to " + w
	if notAsked != "" {
		w += " (" + notAsked + " not asked)"
	}
	return w
}

// join appends s to the list w, comma-separated.
func join(w, s string) string {
	if w != "" {
		w += ", "
	}
	return w + s
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
