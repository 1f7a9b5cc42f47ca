package gamespy3

import (
	"bytes"
	"errors"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DefaultSession is the session id NewQuery sends. Each of its bytes
// survives Minecraft's mask (0x0F0F0F0F), so the echo is the id sent.
const DefaultSession uint32 = 0x01020304

// Codec is the codecs.Codec of the GameSpy v3/v4 query protocol and
// Minecraft's Query. Importing the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "GameSpy v3/v4" }
func (*Codec) DefaultPort() int { return DefaultPort }

var queryOptions = []codecs.Option{
	{Name: "challenge", Kind: codecs.OptionBool, Default: "true",
		Help: "ask for a challenge first and send it with the stat query (GameSpy v4, Minecraft); false sends the stat query at once (GameSpy v3)"},
	{Name: "minecraft", Kind: codecs.OptionBool, Default: "false",
		Help: "send Minecraft's full stat payload (00 00 00 00) instead of GameSpy's (ff ff ff 01)"},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

func isQuery(b []byte) bool { return len(b) >= 2 && b[0] == Magic0 && b[1] == Magic1 }

// Detect: a query (FE FD 00 or 09) that decodes is Certain. A reply has no
// magic: a stat packet with the "splitnum" header is Certain, a challenge
// reply (09, the session, digits and a NUL, nothing more) Likely, and a
// stat packet without the header Weak when it reads to its end (GameSpy
// v2 replies look much the same).
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if isQuery(b) {
		if len(b) < 3 || (Type(b[2]) != TypeStat && Type(b[2]) != TypeChallenge) {
			return "", codecs.NotMine
		}
		if _, err := DecodeRequest(b); err != nil {
			return codecs.KindQuery, codecs.Likely
		}
		return codecs.KindQuery, codecs.Certain
	}
	if len(b) < headerLen+1 {
		return "", codecs.NotMine
	}
	switch Type(b[0]) {
	case TypeChallenge:
		if _, err := DecodeResponse(b, nil); err == nil {
			return codecs.KindChallenge, codecs.Likely
		}
	case TypeStat:
		if bytes.HasPrefix(b[headerLen:], []byte(splitTag+"\x00")) {
			return codecs.KindResponse, codecs.Certain
		}
		if r, err := DecodeResponse(b, nil); err == nil && !r.Truncated {
			return codecs.KindResponse, codecs.Weak
		}
	}
	return "", codecs.NotMine
}

// CheckQuery accepts exactly the queries a client of the protocol sends:
// the challenge request (bare or padded with four zero bytes, as GameDig
// sends it), and the full stat query with GameSpy's payload
// (with or without a challenge) or Minecraft's (with one).
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// Decode decodes the datagrams of one conversation, as they were on the
// wire, in any order: queries, a challenge reply, and the packets of a
// stat reply, which are reassembled (Reassemble). With stat packets the
// message is the reply (kind "response"); with a challenge reply and no
// packet it is the challenge (kind "challenge"); a query alone is a query.
// Each datagram is one layer, its spans tiling it.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	if len(datagrams) == 0 {
		return m, newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	if len(datagrams) > 2*MaxPackets {
		return m, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "%d datagrams; a conversation is at most %d", int64(len(datagrams)), 2*MaxPackets))
	}
	var spans *[]codecs.Span
	if opt.Spans {
		spans = &m.Spans
		m.Spans = []codecs.Span{}
	}
	var queries []Request
	var challenge *Response
	var packets []Response
	total := 0
	for i, b := range datagrams {
		name := "wire"
		if len(datagrams) > 1 {
			name += wire.Msg(" %d", int64(i+1))
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: b, Parent: -1})
		}
		var err error
		switch {
		case isQuery(b):
			var q Request
			if q, err = decodeRequest(b, spans, i); err == nil {
				queries = append(queries, q)
			}
		default:
			var r Response
			r, err = decodeResponse(b, nil, spans, i)
			if err == nil && r.Type == TypeChallenge {
				challenge = &r
			} else if err == nil {
				total += len(b)
				if total > MaxReplyBytes {
					err = newError("datagram", 0, "", wire.Detailf(codecs.ErrTooLong, "a reply of more than %d bytes", MaxReplyBytes))
				} else {
					packets = append(packets, r)
				}
			}
		}
		if err != nil {
			if e, ok := errors.AsType[*codecs.Error](err); ok && len(datagrams) > 1 {
				e.Layer = name
			}
			if len(packets) > 0 {
				rp, _, _ := Reassemble(packets)
				fill(m, &rp, packets, challenge, opt.NoFields, nil)
			} else if len(b) > 0 && Type(b[0]) == TypeChallenge {
				m.Kind = codecs.KindChallenge
			}
			return m, err
		}
	}
	switch {
	case len(packets) > 0:
		rp, warns, err := Reassemble(packets)
		fill(m, &rp, packets, challenge, opt.NoFields, warns)
		return m, err
	case challenge != nil:
		m.Kind = codecs.KindChallenge
		if !opt.NoFields {
			m.Fields = challengeFields(challenge)
		}
		return m, nil
	case len(queries) == 1:
		m.Kind = codecs.KindQuery
		if !opt.NoFields {
			m.Fields = requestFields(&queries[0])
		}
		return m, nil
	}
	m.Kind = codecs.KindQuery
	return m, newError("datagram", 0, "wire 2", codecs.Detail(codecs.ErrBadValue, "more than one query and no reply"))
}

func fill(m *codecs.Message, rp *Reply, packets []Response, challenge *Response, noFields bool, warns []string) {
	m.Kind = codecs.KindResponse
	m.Info = rp.Info()
	for _, w := range warns {
		m.Warn(w)
	}
	if noFields {
		return
	}
	f := make(codecs.Object, 0, 6).Add("session", hexSession(rp.Session))
	if challenge != nil {
		f = f.Add("challenge", challenge.Challenge)
	}
	ps := make([]codecs.Object, 0, len(packets))
	for _, n := range rp.Numbers {
		for i := range packets {
			if p := &packets[i]; p.Number == n {
				o := make(codecs.Object, 0, 4).Add("number", n).Add("last", p.Last).Add("split", p.Split)
				if p.Extra != 0 {
					o = o.Add("extra", p.Extra)
				}
				ps = append(ps, o)
				break
			}
		}
	}
	f = f.Add("packets", ps)
	rules := make([]any, len(rp.Rules))
	var strays []any
	for i, kv := range rp.Rules {
		rules[i] = []string{kv.Key, kv.Value}
		for _, s := range kv.Stray {
			strays = append(strays, []string{kv.Key, s})
		}
	}
	f = f.Add("rules", rules)
	if strays != nil {
		f = f.Add("stray", strays)
	}
	if rp.HasPlayers {
		f = f.Add("players", tableFields(&rp.Players))
	}
	if rp.HasTeams {
		f = f.Add("teams", tableFields(&rp.Teams))
	}
	m.Fields = f
}

func hexSession(s uint32) codecs.Hex {
	return codecs.Hex{byte(s >> 24), byte(s >> 16), byte(s >> 8), byte(s)}
}

func tableFields(t *Table) codecs.Object {
	fields := t.Fields
	if fields == nil {
		fields = []string{}
	}
	rows := make([]any, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = row
	}
	return make(codecs.Object, 0, 2).Add("fields", fields).Add("rows", rows)
}

func challengeFields(r *Response) codecs.Object {
	f := make(codecs.Object, 0, 4).Add("type", int(r.Type)).Add("session", hexSession(r.Session)).Add("challenge", r.Challenge)
	if v, ok := r.ChallengeValue(); ok {
		f = f.Add("value", int(v))
	}
	return f
}

func requestFields(q *Request) codecs.Object {
	f := make(codecs.Object, 0, 5).Add("magic", codecs.Hex{Magic0, Magic1}).Add("type", int(q.Type)).Add("session", hexSession(q.Session))
	if q.HasChallenge {
		f = f.Add("challenge", int(q.Challenge))
	}
	if q.Padded {
		f = f.Add("padding", codecs.Hex(ChallengePadding[:]))
	}
	if q.Type == TypeStat {
		p := FullPayload
		if q.Minecraft {
			p = MinecraftPayload
		}
		f = f.Add("payload", codecs.Hex(p[:]))
	}
	return f
}

// NewQuery starts a conversation. Options: challenge (default true: ask
// for a challenge, then send the stat query with it; a challenge of "0",
// as Battlefield 2 sends, means the stat query goes without one) and
// minecraft (Minecraft's payload; needs the challenge).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	ask := r.Bool("challenge")
	mc := r.Bool("minecraft")
	if mc && !ask {
		r.Fail("challenge", "Minecraft answers a full stat query only with its challenge")
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return &query{ask: ask, last: -1, stat: Request{Type: TypeStat, Session: DefaultSession, Minecraft: mc}}, nil
}

// maxChallenges bounds how many challenge replies one conversation
// answers, so a server that keeps sending them cannot keep it going.
const maxChallenges = 3

// query is the Query state: the challenge reply (when asked for) and the
// stat packets received.
type query struct {
	ask        bool
	stat       Request
	challenges int
	challenge  []byte   // the last challenge reply
	packets    [][]byte // stat packets, duplicates dropped
	numbers    [MaxPackets]bool
	bytes      int
	last       int // the last packet's number, -1 until it comes
	done       bool
}

func (q *query) Start() [][]byte {
	if q.ask {
		b, _ := AppendRequest(nil, Request{Type: TypeChallenge, Session: q.stat.Session})
		return [][]byte{b}
	}
	b, _ := AppendRequest(nil, q.stat)
	return [][]byte{b}
}

// Feed takes a datagram from the server. A challenge reply returns the
// stat query with the challenge; stat packets are kept (a duplicate
// number is ignored) until every packet up to the last has come. The
// session id is not checked: a relay shares one reply among askers, and
// Minecraft masks it.
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.done {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply is already complete"))
	}
	resp, err := DecodeResponse(b, nil)
	if err != nil {
		return nil, false, err
	}
	if resp.Type == TypeChallenge {
		if !q.ask {
			return nil, false, newError("type", 0, "", codecs.Detail(codecs.ErrBadValue, "a challenge reply to a query that asked for none"))
		}
		if q.challenges == maxChallenges {
			return nil, false, newError("type", 0, "", wire.Detailf(codecs.ErrBadValue, "more than %d challenge replies", maxChallenges))
		}
		q.challenges++
		q.challenge = append(q.challenge[:0], b...)
		v, _ := resp.ChallengeValue()
		st := q.stat
		st.HasChallenge, st.Challenge = v != 0 || st.Minecraft, v
		out, _ := AppendRequest(nil, st)
		return [][]byte{out}, false, nil
	}
	if q.numbers[resp.Number] {
		return nil, false, nil // a duplicate
	}
	if q.bytes+len(b) > MaxReplyBytes {
		q.done = true
		return nil, true, newError("datagram", 0, "", wire.Detailf(codecs.ErrTooLong, "a reply of more than %d bytes", MaxReplyBytes))
	}
	q.numbers[resp.Number] = true
	q.bytes += len(b)
	q.packets = append(q.packets, append([]byte(nil), b...))
	if resp.Last {
		q.last = resp.Number
	}
	q.done = q.complete()
	return nil, q.done, nil
}

// complete reports whether every packet up to the last has come.
func (q *query) complete() bool {
	if q.last < 0 {
		return false
	}
	for n := 0; n <= q.last; n++ {
		if !q.numbers[n] {
			return false
		}
	}
	return true
}

// Result decodes the stat packets received (Decode). Before the reply is
// complete it is the partial reply and an error wrapping
// codecs.ErrIncomplete that names the missing packet; with only the
// challenge reply, the challenge message and such an error.
func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	switch {
	case len(q.packets) > 0:
		return (&Codec{}).Decode(q.packets, opt)
	case q.challenge != nil:
		m, err := (&Codec{}).Decode([][]byte{q.challenge}, opt)
		if err == nil {
			err = newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no answer to the stat query with the challenge"))
		}
		return m, err
	}
	return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
		newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
}

// QueryKey implements codecs.QueryKeyer: the query with its session id
// (echoed to the asker) and its challenge (handed to whoever asked from
// the relay's address) set to zero, so that every asker's challenge
// request (padded or not) shares one key, and every challenged stat query another: a
// relay then asks the server once for everyone. Nil when b is not a
// query CheckQuery accepts.
func (c *Codec) QueryKey(b []byte) []byte {
	if c.CheckQuery(b) != nil {
		return nil
	}
	k := append([]byte(nil), b...)
	if Type(b[2]) == TypeChallenge {
		k = k[:7] // magic, type and session: padded or not, the same question
	}
	clear(k[3:7])
	if len(k) == MaxQueryLen {
		clear(k[7:11])
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
