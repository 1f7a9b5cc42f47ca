package gamespy2

import (
	"errors"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DefaultID is the request id NewQuery uses unless told otherwise.
var DefaultID = [4]byte{0, 0, 0, 1}

// Codec is the codecs.Codec of the GameSpy v2 query protocol. Importing
// the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "GameSpy v2" }
func (*Codec) DefaultPort() int { return 0 } // per game; the protocol has none

var queryOptions = []codecs.Option{
	{Name: "style", Kind: codecs.OptionChoice, Default: "combined", Choices: []string{"combined", "split"},
		Help: "one query for everything (FF FF FF), or one query per section as GameDig sends them"},
	{Name: "id", Kind: codecs.OptionHex, Default: "00000001", Help: "request id, 4 bytes, echoed by the server", Echo: true},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

func isQuery(b []byte) bool { return len(b) >= 2 && b[0] == Magic0 && b[1] == Magic1 }

// Detect: a query starts fe fd 00 (certain when it parses). A reply has no
// magic, only a 00 and an id, so it is at best Likely: when its bytes read
// as GameSpy sections to the last byte with GameSpy's key names; Weak when
// they read as a cut reply or hold nothing after the header.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if isQuery(b) {
		if len(b) < 3 || b[2] != PacketQuery {
			return "", codecs.NotMine
		}
		if _, err := DecodeRequest(b); err != nil {
			return codecs.KindQuery, codecs.Likely
		}
		return codecs.KindQuery, codecs.Certain
	}
	if len(b) < headerLen || b[0] != PacketQuery {
		return "", codecs.NotMine
	}
	if len(b) == headerLen {
		return codecs.KindResponse, codecs.Weak
	}
	_, t := bestLayout(b, inferLayouts[:])
	switch k := t.rank(); {
	case k == 0 && (t.rules > 0 || t.players.fields > 0 || t.teams.fields > 0):
		return codecs.KindResponse, codecs.Likely
	case k < 4:
		return codecs.KindResponse, codecs.Weak
	}
	return "", codecs.NotMine
}

// CheckQuery accepts a query in any of the three forms per section and
// refuses exflags, which would ask for split replies that are not GS2.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	q, err := DecodeRequest(b)
	if err != nil {
		return err
	}
	at := 7 // offset of the server section's count
	for s, k := range [...]Keys{q.Server, q.Players, q.Teams} {
		var seen [MaxKeyIndex + 1]bool
		for i, key := range k.List {
			if seen[key] {
				return newError(sectionNames[s]+".keys["+strconv.Itoa(i)+"]", at+1+i, "",
					codecs.Detail(codecs.ErrBadValue, "key "+key.String()+" asked twice"))
			}
			seen[key] = true
		}
		at += 1 + len(k.List)
	}
	if q.HasExFlags && q.ExFlags != 0 {
		return newError("exflags", len(b)-1, "", codecs.Detail(codecs.ErrBadValue, "exflags ask for split (GameSpy 3) replies"))
	}
	return nil
}

// Decode decodes one datagram, or several: the replies to GameDig's three
// single-section queries merge into one server view. A query among the
// datagrams (or opt.Query) tells how to read the replies after it; without
// one the sections are inferred from the bytes.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(datagrams) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("datagrams", 0, "", codecs.Detail(codecs.ErrIncomplete, "no datagram"))
	}
	var req *Request
	if opt.Query != nil {
		q, err := DecodeRequest(opt.Query)
		if err != nil {
			if e, ok := errors.AsType[*codecs.Error](err); ok {
				e.Layer = "query"
			}
			return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}, err
		}
		req = &q
	}
	items := make([]item, len(datagrams))
	for i, b := range datagrams {
		items[i] = item{b: b, req: req}
	}
	return decodeItems(items, opt)
}

// item is one datagram to decode; req is the query it answers, if known.
type item struct {
	b   []byte
	req *Request
}

// decodeItems decodes queries and replies in order: a query applies to the
// replies after it. One query alone is a query message; anything with a
// reply is a response message merging every reply.
func decodeItems(items []item, opt codecs.DecodeOptions) (*codecs.Message, error) {
	m := &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse}
	var sp *[]codecs.Span
	if opt.Spans {
		sp = &m.Spans
		m.Spans = []codecs.Span{}
	}
	var acc Response
	var queries []codecs.Object // their fields, unless opt.NoFields
	nq, replies := 0, 0
	var last *Request
	for i, it := range items {
		name := "wire"
		if len(items) > 1 {
			name += wire.Msg(" %d", int64(i+1))
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: it.b, Parent: -1})
		}
		var err error
		if isQuery(it.b) {
			var q Request
			q, err = decodeRequest(it.b, sp, i)
			if err == nil {
				last = &q
				nq++
				if !opt.NoFields {
					queries = append(queries, requestFields(&q))
				}
			}
		} else {
			req := it.req
			if last != nil {
				req = last
			}
			var r Response
			r, err = decodeResponse(it.b, req, sp, i)
			if err == nil {
				merge(&acc, &r, replies, m)
				replies++
			}
		}
		if err != nil {
			if e, ok := errors.AsType[*codecs.Error](err); ok && len(items) > 1 {
				e.Layer = name
			}
			if replies > 0 {
				fill(m, &acc, queries, opt.NoFields)
			}
			return m, err
		}
	}
	if replies == 0 {
		m.Kind = codecs.KindQuery
		if nq > 1 {
			return m, newError("datagram", 0, "wire 2", codecs.Detail(codecs.ErrBadValue, "more than one query and no reply"))
		}
		if !opt.NoFields {
			m.Fields = queries[0]
		}
		return m, nil
	}
	fill(m, &acc, queries, opt.NoFields)
	return m, nil
}

// merge adds reply r (the n-th) to acc: each section comes from the first
// reply that carries it.
func merge(acc, r *Response, n int, m *codecs.Message) {
	if n == 0 {
		acc.ID = r.ID
	}
	if r.Sections&acc.Sections != 0 {
		m.Warn("duplicate section")
	}
	if r.Sections&^acc.Sections&ServerSection != 0 {
		acc.Rules = r.Rules
	}
	if r.Sections&^acc.Sections&PlayerSection != 0 {
		acc.Players = r.Players
	}
	if r.Sections&^acc.Sections&TeamSection != 0 {
		acc.Teams = r.Teams
	}
	acc.Sections |= r.Sections
	acc.OneByteCounts = acc.OneByteCounts || r.OneByteCounts
	acc.Truncated = acc.Truncated || r.Truncated
	acc.Trailing += r.Trailing
}

func fill(m *codecs.Message, r *Response, queries []codecs.Object, noFields bool) {
	m.Kind = codecs.KindResponse
	m.Info = r.Info()
	if !noFields {
		m.Fields = responseFields(r)
		if len(queries) > 0 {
			m.Fields = m.Fields.Add("queries", queries)
		}
	}
	if r.Truncated {
		m.Warn(codecs.WarnTruncated)
	}
	if r.Trailing > 0 {
		m.Warn(codecs.WarnTrailing)
	}
}

// responseFields is every decoded field of a reply, in docs/protocols/json.md's "fields".
func responseFields(r *Response) codecs.Object {
	f := make(codecs.Object, 0, 2).Add("packet_type", PacketQuery).Add("id", codecs.Hex(r.ID[:]))
	if r.Sections&(PlayerSection|TeamSection) != 0 {
		w := 2
		if r.OneByteCounts {
			w = 1
		}
		f = f.Add("count_bytes", w)
	}
	if r.Sections&ServerSection != 0 {
		rules := make([]any, len(r.Rules))
		for i, kv := range r.Rules {
			rules[i] = []string{kv.Key, kv.Value}
		}
		f = f.Add("rules", rules)
	}
	if r.Sections&PlayerSection != 0 {
		f = f.Add("players", tableFields(&r.Players))
	}
	if r.Sections&TeamSection != 0 {
		f = f.Add("teams", tableFields(&r.Teams))
	}
	if r.Trailing > 0 {
		f = f.Add("trailing", r.Trailing)
	}
	return f
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
	return make(codecs.Object, 0, 3).Add("count", t.Count).Add("fields", fields).Add("rows", rows)
}

func requestFields(q *Request) codecs.Object {
	f := make(codecs.Object, 0, 3).Add("magic", codecs.Hex{Magic0, Magic1}).Add("packet_type", PacketQuery).Add("id", codecs.Hex(q.ID[:]))
	for _, s := range [...]struct {
		name string
		keys Keys
	}{{"server", q.Server}, {"players", q.Players}, {"teams", q.Teams}} {
		o := codecs.Object{}
		switch {
		case s.keys.All:
			o = o.Add("count", KeysAll)
		default:
			o = o.Add("count", len(s.keys.List))
			if len(s.keys.List) > 0 {
				nums := make([]int, len(s.keys.List))
				names := make([]string, len(s.keys.List))
				for i, k := range s.keys.List {
					nums[i], names[i] = int(k), k.String()
				}
				o = o.Add("keys", nums).Add("names", names)
			}
		}
		f = f.Add(s.name, o)
	}
	if q.HasExFlags {
		f = f.Add("exflags", q.ExFlags)
	}
	return f
}

// NewQuery starts a conversation. Options: style (combined: one FF FF FF
// query; split: the three single-section queries, sent together, their
// replies told apart by their shape) and id (8 hex digits).
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	r := codecs.ReadOptions(Protocol, queryOptions, opts)
	split := r.Choice("style") == "split"
	var id [4]byte
	r.Hex("id", id[:])
	if err := r.Err(); err != nil {
		return nil, err
	}
	q := &query{}
	if split {
		q.reqs = []Request{SectionRequest(id, ServerSection), SectionRequest(id, PlayerSection), SectionRequest(id, TeamSection)}
	} else {
		q.reqs = []Request{FullRequest(id)}
	}
	q.got = make([][]byte, len(q.reqs))
	return q, nil
}

// query is the Query state: the requests sent and the reply to each.
type query struct {
	reqs []Request
	got  [][]byte
	n    int // replies received
}

func (q *query) Start() [][]byte {
	out := make([][]byte, len(q.reqs))
	for i := range q.reqs {
		out[i], _ = AppendRequest(nil, q.reqs[i])
	}
	return out
}

// Feed takes a reply. With several queries outstanding (split style, one
// id) the reply belongs to the one whose layout reads it best.
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	var id [4]byte // echoed request id, not checked (see below)
	if r := wire.NewReader(Protocol, b, 0, nil); !readHeader(r, &id) {
		return nil, q.done(), r.Err()
	}
	// The id is not checked: a relay shares one server's reply among
	// everyone who asked the same question, so it may echo another asker's
	// id; the transports accept only datagrams from the server queried.
	best, bestRank := -1, 0
	for i := range q.reqs {
		if q.got[i] != nil {
			continue
		}
		_, t := bestLayout(b, requestLayouts(&q.reqs[i]))
		if k := t.rank(); best < 0 || k < bestRank {
			best, bestRank = i, k
		}
	}
	if best < 0 {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "every query is already answered"))
	}
	q.got[best] = append([]byte(nil), b...)
	q.n++
	return nil, q.done(), nil
}

func (q *query) done() bool { return q.n == len(q.reqs) }

var sectionNames = [...]string{"server", "players", "teams"}

// Result merges the replies received. Before the conversation is done it
// says which queries went unanswered; with no reply at all it is an error.
func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	var items []item
	for i, b := range q.got {
		if b != nil {
			items = append(items, item{b: b, req: &q.reqs[i]})
		}
	}
	if len(items) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	m, err := decodeItems(items, opt)
	if err != nil {
		return m, err
	}
	for i, b := range q.got {
		if b == nil {
			w := "no reply to the query"
			if len(q.reqs) == 3 {
				w = "no reply to the " + sectionNames[i] + " query"
			}
			m.Warn(w)
		}
	}
	return m, nil
}

// QueryKey implements codecs.QueryKeyer: the query with its request id
// (bytes 3-6, echoed to the asker) zeroed, so identical questions from
// different clients share one answer. Nil when b is not a valid query.
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
