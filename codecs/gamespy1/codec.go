package gamespy1

import (
	"slices"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Warnings this package attaches to decoded messages.
const (
	// The reply has no datagram with \final\: it was lost, or the caller
	// stopped waiting before it came.
	WarnNoFinal = "no final datagram"
	// Datagrams numbered below the final one never came.
	WarnMissing = "datagrams missing"
	// A datagram came twice (same packet number); the second is ignored.
	WarnDuplicate = "duplicate datagram"
	// A datagram carries another query's number; it is ignored.
	WarnOtherQuery = "datagram of another query"
	// numplayers differs from the players the reply lists.
	WarnPlayerCount = "player count differs from the player entries"
)

// Codec is the codecs.Codec of the GameSpy v1 query protocol. Importing
// the package registers it.
type Codec struct{}

func (*Codec) Name() string     { return Protocol }
func (*Codec) Title() string    { return "GameSpy v1" }
func (*Codec) DefaultPort() int { return DefaultPort }

// queries are the words of NewQuery's "query" option.
var queries = map[string][]string{
	"status":  {WordStatus},
	"info":    {WordInfo},
	"basic":   {WordBasic},
	"rules":   {WordRules},
	"players": {WordPlayers},
	"all":     {WordBasic, WordInfo, WordRules, WordPlayers},
}

var queryOptions = []codecs.Option{
	{Name: "query", Kind: codecs.OptionChoice, Default: "status", Choices: []string{"status", "info", "basic", "rules", "players", "all"},
		Help: `\status\ (everything, as qstat asks), one section, or all four asked in one query (\basic\\info\\rules\\players\)`},
	{Name: "xserverquery", Kind: codecs.OptionBool, Default: "false",
		Help: `add the xserverquery word after the first, as GameDig does (\status\xserverquery)`},
	// Only echoes: QueryKey neutralises it.
	{Name: "echo", Kind: codecs.OptionUint, Default: "", Echo: true,
		Help: `a number the server echoes back (\echo\N\); empty sends none`},
	// The master's list (TCP): master.go.
	{Name: "master", Kind: codecs.OptionBool, Default: "false",
		Help: `ask a master (TCP, port 28900) for its list instead of a server for its status`},
	{Name: "gamename", Kind: codecs.OptionText, Default: "ut",
		Help: `with master: the game whose list to ask, by its master name (ut, unreal, deusex, rune, …)`},
	{Name: "list", Kind: codecs.OptionChoice, Default: "text", Choices: []string{"text", "cmp"},
		Help: `with master: the list as \ip\A.B.C.D:PORT pairs (text) or 6-byte records (\list\cmp\)`},
	{Name: "key", Kind: codecs.OptionText, Default: "",
		Help: `with master: the game's secret key, for a game querylens does not know; empty: the known key`},
}

// Options lists the knobs of NewQuery.
func (*Codec) Options() []codecs.Option { return append([]codecs.Option(nil), queryOptions...) }

// Detect: a query that parses is Certain; a reply (pairs from the first
// byte to the last) Likely when it carries \queryid\ or \final\, Weak
// otherwise. Only a datagram that starts with a query word is parsed (and
// allocated for); a reply is walked without allocating.
func (*Codec) Detect(b []byte) (codecs.Kind, codecs.Confidence) {
	if len(b) < 2 || b[0] != '\\' {
		return "", codecs.NotMine
	}
	if looksLikeQuery(b) {
		if _, err := DecodeRequest(b); err == nil {
			return codecs.KindQuery, codecs.Certain
		}
	}
	ok, marked := scan(b)
	switch {
	case ok && marked:
		return codecs.KindResponse, codecs.Likely
	case ok:
		return codecs.KindResponse, codecs.Weak
	}
	return "", codecs.NotMine
}

// looksLikeQuery reports whether b starts with a query word.
func looksLikeQuery(b []byte) bool {
	for _, w := range [...]string{WordStatus, WordBasic, WordInfo, WordRules, WordPlayers, WordEcho, WordSecure} {
		if len(b) >= len(w)+2 && string(b[1:1+len(w)]) == w && b[1+len(w)] == '\\' {
			return true
		}
	}
	return false
}

// scan walks b as a reply without allocating: ok when it reads as pairs
// to the end, marked when a key is queryid or final.
func scan(b []byte) (ok, marked bool) {
	for i := 0; i < len(b); {
		if b[i] != '\\' {
			return false, marked
		}
		if i == len(b)-1 {
			return i > 0, marked // a trailing '\'
		}
		j := i + 1
		for j < len(b) && b[j] != '\\' {
			j++
		}
		if j == len(b) || j == i+1 {
			return false, marked
		}
		if k := string(b[i+1 : j]); k == KeyQueryID || k == KeyFinal {
			marked = true
		}
		i = j + 1
		for i < len(b) && b[i] != '\\' {
			i++
		}
	}
	return true, marked
}

// CheckQuery accepts a query of known words, each once, at most
// MaxQueryLen bytes: what the relay forwards.
func (*Codec) CheckQuery(b []byte) error {
	if err := codecs.CheckQueryLen(Protocol, b, MaxQueryLen); err != nil {
		return err
	}
	_, err := DecodeRequest(b)
	return err
}

// part is one reply datagram while a reply is reassembled.
type part struct {
	layer    int
	resp     Response
	n        int  // packet number
	numbered bool // it has a queryid
}

// Decode decodes a query (one datagram) or a reply: its datagrams in the
// order they arrived, put back in order by their packet numbers. A
// datagram that does not decode is left out and its error returned with
// the message made of the others; duplicates and another query's
// datagrams are left out with a warning. A reply without its final
// datagram, or with datagrams missing, decodes with a warning.
func (*Codec) Decode(datagrams [][]byte, opt codecs.DecodeOptions) (*codecs.Message, error) {
	return decode(datagrams, nil, opt)
}

// decode is Decode with, in read, each datagram's Response when a query's
// Feed has read them all already (without an error): those are not read
// again unless the spans are wanted.
func decode(datagrams [][]byte, read []Response, opt codecs.DecodeOptions) (*codecs.Message, error) {
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
	if kind, _ := (&Codec{}).Detect(datagrams[0]); kind == codecs.KindQuery || len(datagrams) == 1 && looksLikeQuery(datagrams[0]) && !marked(datagrams[0]) {
		m.Kind = codecs.KindQuery
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
	var firstErr error
	parts := make([]part, 0, len(datagrams))
	queryID := ""
	numbered := false
	for i, d := range datagrams {
		name := "wire"
		if len(datagrams) > 1 {
			name = "datagram " + strconv.Itoa(i+1)
		}
		if opt.Spans {
			m.Layers = append(m.Layers, codecs.Layer{Name: name, Bytes: d, Parent: -1})
		}
		p := part{layer: i}
		var err error
		if read != nil && spans == nil {
			p.resp = read[i]
		} else {
			r := wire.NewReader(Protocol, d, i, spans)
			readResponse(r, &p.resp)
			err = r.Err()
		}
		if err != nil {
			if ce, ok := err.(*codecs.Error); ok && len(datagrams) > 1 {
				ce.Layer = name
			}
			if firstErr == nil {
				firstErr = err
			}
			// Its pairs before the error are kept, a partial result, but
			// not its number, which may be the broken field.
			p.resp.QueryID, p.resp.Final = "", false
			parts = append(parts, p)
			continue
		}
		var id string
		id, p.n, p.numbered = p.resp.Packet()
		if p.numbered {
			switch {
			case p.n > MaxDatagrams:
				if firstErr == nil {
					firstErr = newError("queryid.value", 0, name, wire.Detailf(codecs.ErrTooLong, "packet %d; a reply is at most %d datagrams", int64(p.n), MaxDatagrams))
				}
				continue
			case !numbered:
				queryID, numbered = id, true
			case id != queryID:
				m.Warn(WarnOtherQuery)
				continue
			}
			if slices.ContainsFunc(parts, func(q part) bool { return q.numbered && q.n == p.n }) {
				m.Warn(WarnDuplicate)
				continue
			}
		}
		parts = append(parts, p)
	}
	// Numbered datagrams in packet order; unnumbered ones after them, as
	// they came.
	slices.SortStableFunc(parts, func(a, b part) int {
		switch {
		case a.numbered && b.numbered:
			return a.n - b.n
		case a.numbered:
			return -1
		case b.numbered:
			return 1
		}
		return 0
	})
	if len(parts) == 0 {
		return m, firstErr
	}
	final := -1
	n := 0
	for _, p := range parts {
		n += len(p.resp.Vars)
	}
	vars := make([]Var, 0, n)
	nums := make([]int, 0, len(parts))
	for _, p := range parts {
		if p.resp.Final && final < 0 {
			final = p.n
			if !p.numbered {
				final = 0
			}
		}
		if p.numbered {
			nums = append(nums, p.n)
		}
		vars = append(vars, p.resp.Vars...)
	}
	switch {
	case final < 0:
		m.Warn(WarnNoFinal)
	default:
		for k := 1; k <= final; k++ {
			if !slices.Contains(nums, k) {
				m.Warn(WarnMissing)
				break
			}
		}
	}
	if numbered && len(nums) < len(parts) {
		m.Warn(codecs.WarnTruncated) // a datagram without its queryid: cut short
	}
	var differs bool
	m.Info, differs = info(vars)
	if differs && len(m.Warnings) == 0 { // a reply with datagrams missing lacks players
		m.Warn(WarnPlayerCount)
	}
	if !opt.NoFields {
		f := codecs.Object{}
		if numbered {
			f = f.Add("query_id", queryID)
		}
		f = f.Add("packets", nums).Add("final", final)
		vs := make([]any, 0, len(vars))
		for _, v := range vars {
			vs = append(vs, []string{v.Key, v.Value})
		}
		m.Fields = f.Add("vars", vs)
	}
	return m, firstErr
}

// marked reports whether reply-shaped b carries \queryid\ or \final\.
func marked(b []byte) bool {
	_, mk := scan(b)
	return mk
}

// requestFields is the "fields" object of a query.
func requestFields(q *Request) codecs.Object {
	ws := make([]codecs.Object, 0, len(q.Words))
	for _, w := range q.Words {
		o := make(codecs.Object, 0, 2).Add("word", w.Name)
		if w.Value != "" {
			o = o.Add("value", w.Value)
		}
		ws = append(ws, o)
	}
	return codecs.Object{}.Add("words", ws).Add("open", q.Open)
}

// NewQuery starts a conversation: one query, then its reply's datagrams
// until the final one and every one numbered before it have come.
func (*Codec) NewQuery(opts map[string]string) (codecs.Query, error) {
	o := codecs.ReadOptions(Protocol, queryOptions, opts)
	game, key, compact := o.Value("gamename"), o.Value("key"), o.Choice("list") == "cmp"
	if o.Bool("master") {
		if err := o.Err(); err != nil {
			return nil, err
		}
		return newMasterQueryOpts(game, key, compact)
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	if _, err := newMasterQueryOpts(game, key, compact); err != nil && (opts["gamename"] != "" || opts["key"] != "") {
		return nil, err // checked even when unused, as every option is
	}
	words := queries[o.Choice("query")]
	xsq := o.Bool("xserverquery")
	echo := ""
	if o.Set("echo") {
		echo = strconv.FormatUint(o.Uint("echo", 32), 10)
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	var q Request
	for _, w := range words {
		q.Words = append(q.Words, Word{Name: w})
	}
	if xsq {
		q.Words[0].Value = XServerQuery
		q.Open = len(q.Words) == 1 && echo == ""
	}
	if echo != "" {
		q.Words = append(q.Words, Word{Name: WordEcho, Value: echo})
	}
	b, err := AppendRequest(nil, q)
	if err != nil {
		return nil, err
	}
	return &query{req: b}, nil
}

type query struct {
	req    []byte
	parts  [][]byte
	read   []Response // each part as Feed read it, for Result
	nums   []int      // packet number of each part; -1 unnumbered
	bytes  int
	id     string
	final  int // packet number of the final datagram, -1 before it
	hasFin bool
	done   bool
}

func (q *query) Start() [][]byte { return [][]byte{q.req} }

// Feed takes one datagram of the reply. One that does not decode, or
// carries another query's number, is ignored with an error; a duplicate is
// ignored quietly. The reply is complete when the final datagram and every
// one numbered before it have come (a final datagram without a number
// completes it alone).
func (q *query) Feed(b []byte) ([][]byte, bool, error) {
	if q.done {
		return nil, true, newError("datagram", 0, "", codecs.Detail(codecs.ErrBadValue, "the reply is already complete"))
	}
	resp, err := DecodeResponse(b, nil)
	if err != nil {
		return nil, false, err
	}
	id, n, numbered := resp.Packet()
	if !numbered {
		n = -1
	}
	if numbered {
		if q.id == "" {
			q.id = id
		} else if id != q.id {
			return nil, false, newError("queryid", 0, "", codecs.Detail(codecs.ErrBadValue, "queryid "+strconv.Quote(resp.QueryID)+" is another query's"))
		}
		if slices.Contains(q.nums, n) {
			return nil, false, nil
		}
	}
	if len(q.parts) >= MaxDatagrams || q.bytes+len(b) > MaxReplyBytes || n > MaxDatagrams {
		q.done = true
		return nil, true, newError("datagrams", 0, "", wire.Detailf(codecs.ErrTooLong, "a reply is at most %d datagrams and %d bytes", MaxDatagrams, MaxReplyBytes))
	}
	q.parts = append(q.parts, append([]byte(nil), b...))
	q.read = append(q.read, resp)
	q.nums = append(q.nums, n)
	q.bytes += len(b)
	if resp.Final && !q.hasFin {
		q.hasFin, q.final = true, n
	}
	q.done = q.complete()
	return nil, q.done, nil
}

// complete: the final datagram has come, and every number from 1 to its.
func (q *query) complete() bool {
	if !q.hasFin {
		return false
	}
	for k := 1; k <= q.final; k++ {
		if !slices.Contains(q.nums, k) {
			return false
		}
	}
	return true
}

// Result decodes the datagrams received, complete or not (from what Feed
// read of them, unless the spans are wanted).
func (q *query) Result(opt codecs.DecodeOptions) (*codecs.Message, error) {
	if len(q.parts) == 0 {
		return &codecs.Message{Protocol: Protocol, Kind: codecs.KindResponse},
			newError("reply", 0, "", codecs.Detail(codecs.ErrIncomplete, "no reply received"))
	}
	return decode(q.parts, q.read, opt)
}

// QueryKey implements codecs.QueryKeyer: the query with every echo text
// left out and no value left open, so that identical questions share one
// answer. Nil when b is not a query.
func (*Codec) QueryKey(b []byte) []byte {
	q, err := DecodeRequest(b)
	if err != nil {
		return nil
	}
	k := make([]byte, 0, len(b))
	for _, w := range q.Words {
		k = append(append(append(k, '\\'), w.Name...), '\\')
		if w.Value != "" && w.Name != WordEcho {
			k = append(append(k, w.Value...), '\\')
		}
	}
	return k
}
