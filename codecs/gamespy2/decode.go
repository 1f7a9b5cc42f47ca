package gamespy2

import (
	"bytes"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// Protocol is the name the package registers and puts in every error.
const Protocol = "gamespy2"

// DecodeRequest parses a query in any of its forms: each of the three
// sections' count byte is 00 (none), FF (all keys with names) or N followed
// by N key numbers; an optional exflags byte may follow.
func DecodeRequest(b []byte) (Request, error) { return decodeRequest(b, nil, 0) }

func decodeRequest(b []byte, spans *[]codecs.Span, layer int) (Request, error) {
	var q Request
	r := wire.NewReader(Protocol, b, layer, spans)
	if m := r.Bytes("magic", 2); m != nil && (m[0] != Magic0 || m[1] != Magic1) {
		r.FailAt("magic", 0, codecs.ErrBadMagic)
	}
	if t := r.U8("packet_type"); !r.Failed() && t != PacketQuery {
		r.FailAt("packet_type", 2, wire.Detailf(codecs.ErrNotQuery, "packet type %d", int64(t)))
	}
	copy(q.ID[:], r.Bytes("id", 4))
	q.Server = readKeys(r, "server")
	q.Players = readKeys(r, "players")
	q.Teams = readKeys(r, "teams")
	if r.Len() > 0 && !r.Failed() {
		q.ExFlags = r.U8("exflags")
		q.HasExFlags = true
	}
	if r.Len() > 0 && !r.Failed() {
		r.Fail("exflags", codecs.ErrTrailing)
	}
	return q, r.Err()
}

// readKeys reads one section's count byte and, in index mode, its keys.
func readKeys(r *wire.Reader, section string) Keys {
	var k Keys
	r.Enter(section, -1)
	n := r.U8("count")
	switch {
	case r.Failed() || n == KeysNone:
	case n == KeysAll:
		k.All = true
	case int(n) > r.Len():
		r.Fail("keys", wire.Detailf(codecs.ErrShort, "%d key numbers announced", int64(n)))
	default:
		k.List = make([]Key, n)
		for i := range k.List {
			r.Enter("keys", i)
			start := r.Offset()
			v := r.U8("")
			if v == 0 || v > MaxKeyIndex {
				r.FailAt("", start, wire.Detailf(codecs.ErrBadValue, "key number %d", int64(v)))
			}
			k.List[i] = Key(v)
			r.Leave()
		}
	}
	r.Leave()
	return k
}

// DecodeResponse parses a reply. With req, the sections and their form
// (names or key numbers) are those req asked for; with req nil they are
// inferred from the bytes, which works for every reply to a request in the
// 00/FF forms. The count width (the SDK's 16 bits or one byte) is always
// inferred.
//
// A reply that ends inside a section is not an error: the rows and rules
// it holds are returned with Truncated set. Only a reply that is not one
// (no header, another packet type, another request's id) is an error.
//
// Returned strings are UTF-8 copies; ASCII ones share a single copy of b.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	return decodeResponse(b, req, nil, 0)
}

func decodeResponse(b []byte, req *Request, spans *[]codecs.Span, layer int) (Response, error) {
	var resp Response
	d := decoder{b: b, rec: spans != nil}
	d.r = *wire.NewReader(Protocol, b, layer, spans)
	if !readHeader(&d.r, &resp.ID) {
		return resp, d.r.Err()
	}
	if req != nil && req.ID != resp.ID {
		d.r.FailAt("id", 1, codecs.Detail(codecs.ErrBadValue, "not the id of the request"))
		return resp, d.r.Err()
	}
	var t tally
	if req != nil {
		d.lay, t = bestLayout(b, requestLayouts(req))
	} else {
		d.lay, t = bestLayout(b, inferLayouts[:])
	}
	if d.lay.server.Wanted() {
		d.rules = make([]Rule, 0, t.rules)
	}
	d.text = string(b)
	d.players = sized(t.players)
	d.teams = sized(t.teams)
	d.walk()
	resp.Sections = d.reached
	resp.OneByteCounts = d.lay.width == 1 && d.reached&(PlayerSection|TeamSection) != 0
	resp.Rules, resp.Players, resp.Teams = d.rules, d.players.t, d.teams.t
	// Without the request, a reply holding no section at all is most
	// likely one cut after its header (no client asks for nothing).
	resp.Truncated = d.truncated || len(b) == MaxReply || (req == nil && resp.Sections == 0)
	if !d.truncated && d.r.Len() > 0 {
		resp.Trailing = d.r.Len()
		d.r.Bytes("trailing", d.r.Len())
	}
	return resp, nil
}

// readHeader reads the packet type (which must be the query's) and the id.
func readHeader(r *wire.Reader, id *[4]byte) bool {
	if t := r.U8("packet_type"); !r.Failed() && t != PacketQuery {
		r.FailAt("packet_type", 0, wire.Detailf(codecs.ErrBadValue, "packet type %d is not a query reply", int64(t)))
	}
	copy(id[:], r.Bytes("id", 4))
	return !r.Failed()
}

// layout is one way to read a reply: the sections and their form, and the
// width of the player and team counts.
type layout struct {
	server, players, teams Keys
	width                  int // 2 (SDK) or 1
}

// inferLayouts are tried, in this order of preference, when the request
// is unknown: the combined query first, then the single-section ones.
var inferLayouts = [16]layout{
	// Sections server, players and teams (all: every key, with names),
	// with 16-bit counts, then one-byte ones: all three, then the
	// server alone, players alone, teams alone, server and players,
	// players and teams, server and teams, none.
	{all, all, all, 2}, {all, all, all, 1},
	{all, none, none, 2}, {all, none, none, 1},
	{none, all, none, 2}, {none, all, none, 1},
	{none, none, all, 2}, {none, none, all, 1},
	{all, all, none, 2}, {all, all, none, 1},
	{none, all, all, 2}, {none, all, all, 1},
	{all, none, all, 2}, {all, none, all, 1},
	{none, none, none, 2}, {none, none, none, 1},
}

// all and none are Keys of inferLayouts.
var all, none = Keys{All: true}, Keys{}

// requestLayouts are the layouts of a reply to q: its sections, with
// 16-bit counts, then one-byte ones. One-byte counts are only considered
// when a player or team section comes with names, the only evidence that
// can tell them apart.
func requestLayouts(q *Request) []layout {
	l := layout{server: q.Server, players: q.Players, teams: q.Teams, width: 2}
	if !q.Players.All && !q.Teams.All {
		return []layout{l}
	}
	return []layout{l, l.oneByte()}
}

func (l layout) oneByte() layout {
	l.width = 1
	return l
}

// tally is what a dry walk over a reply found.
type tally struct {
	rules          int
	players, teams shape
	odd            int  // keys and names that break GameSpy's naming
	big            bool // a 16-bit count of 256 or more
	truncated      bool
	trailing       int
}

// shape is the size of a decoded table; cut is set when the reply ends
// inside a row, whose values are read before the row is dropped.
type shape struct {
	fields, rows int
	cut          bool
}

// rank orders candidate layouts, lower is better: names that follow the
// conventions first, then a reply read to its last byte, then one that
// ends early (a cut reply), then one with bytes left over. A 16-bit count
// of 256 or more is the weakest evidence against a layout: it is how a
// one-byte count followed by a name looks when read as 16 bits.
func (t *tally) rank() int {
	n := 0
	switch {
	case t.truncated:
		n = 1
	case t.trailing > 0:
		n = 2
	}
	if t.odd > 0 {
		n += 3
	}
	n *= 2
	if t.big {
		n++
	}
	return n
}

// bestLayout walks b with each candidate (without allocating) and returns
// the best one with its tally. The first candidate with a perfect rank wins
// at once. b's header has been checked.
func bestLayout(b []byte, cands []layout) (layout, tally) {
	best, bestRank := -1, 0
	var bestT tally
	for i := range cands {
		d := decoder{lay: cands[i], dry: true, b: b}
		d.r = *wire.NewReader(Protocol, b, 0, nil)
		d.r.Bytes("", headerLen)
		d.walk()
		t := d.tally
		t.truncated = d.truncated
		if !d.truncated {
			t.trailing = d.r.Len()
		}
		if k := t.rank(); best < 0 || k < bestRank {
			best, bestRank, bestT = i, k, t
			if k == 0 {
				break
			}
		}
	}
	return cands[best], bestT
}

// table accumulates one decoded table.
type table struct {
	t      Table
	values []string
}

func sized(s shape) table {
	var tb table
	if s.fields > 0 {
		tb.t.Fields = make([]string, 0, s.fields)
	}
	n := s.rows
	if s.cut {
		n++
	}
	if s.fields > 0 && n > 0 {
		tb.values = make([]string, 0, s.fields*n)
	}
	if s.fields > 0 && s.rows > 0 {
		tb.t.Rows = make([][]string, 0, s.rows)
	}
	return tb
}

// decoder walks a reply in a layout. A dry walk only counts (to choose a
// layout and size the result); a real one stores values and records spans.
// Both read the same way, so the sizes from the dry walk fit exactly.
//
// Field paths (Enter/Leave) are kept only while recording spans: the walk
// after the header cannot fail, so no error needs them otherwise.
type decoder struct {
	r         wire.Reader
	b         []byte
	text      string // string(b): ASCII values are substrings of it
	lay       layout
	reached   Section
	dry       bool // count only
	rec       bool // recording spans
	truncated bool
	tally
	rules          []Rule
	players, teams table
}

func (d *decoder) enter(name string, i int) {
	if d.rec {
		d.r.Enter(name, i)
	}
}

func (d *decoder) leave() {
	if d.rec {
		d.r.Leave()
	}
}

func (d *decoder) walk() {
	if d.lay.server.Wanted() && d.begin(ServerSection) {
		if d.lay.server.All {
			d.rulesAll()
		} else {
			d.rulesIndexed()
		}
	}
	if d.lay.players.Wanted() && d.begin(PlayerSection) {
		d.table("players", d.lay.players, &d.tally.players, &d.players)
	}
	if d.lay.teams.Wanted() && d.begin(TeamSection) {
		d.table("teams", d.lay.teams, &d.tally.teams, &d.teams)
	}
}

// begin notes that section s starts here, unless the reply ended before
// it: a section the reply never reached is not in it.
func (d *decoder) begin(s Section) bool {
	if d.truncated {
		return false
	}
	if d.r.Len() == 0 {
		d.truncated = true
		return false
	}
	d.reached |= s
	return true
}

// cut marks the reply as truncated while reading field, with a span (kind
// "bytes") over whatever bytes are left.
func (d *decoder) cut(field string) {
	d.truncated = true
	if d.rec && d.r.Len() > 0 {
		d.r.Bytes(field, d.r.Len())
	}
}

// str reads a NUL-terminated string, or cuts the reply when there is none.
func (d *decoder) str(field string) (s []byte, start int, ok bool) {
	if bytes.IndexByte(d.r.Rest(), 0) < 0 {
		d.cut(field)
		return nil, 0, false
	}
	start = d.r.Offset()
	return d.r.CString(field), start, true
}

// text returns the UTF-8 form of s, which starts at offset start of b.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (d *decoder) string(s []byte, start int) string {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return codecs.Latin1(s)
		}
	}
	return d.text[start : start+len(s)]
}

// atEnd reports whether the next byte is a section's closing NUL, cutting
// the reply when there is no next byte.
func (d *decoder) atEnd(field string) bool {
	if d.r.Len() == 0 {
		d.cut(field)
		return false
	}
	return d.r.Rest()[0] == 0
}

func (d *decoder) rulesAll() {
	r := &d.r
	for i := 0; ; i++ {
		if d.atEnd("rules") {
			d.enter("rules", -1)
			r.U8("end")
			d.leave()
			return
		}
		if d.truncated {
			return
		}
		d.enter("rules", i)
		k, ks, ok := d.str("key")
		var v []byte
		var vs int
		if ok {
			if d.dry && !printable(k) {
				d.odd++
			}
			v, vs, ok = d.str("value")
		}
		d.leave()
		if !ok {
			return
		}
		d.tally.rules++
		if !d.dry {
			d.rules = append(d.rules, Rule{d.string(k, ks), d.string(v, vs)})
		}
	}
}

func (d *decoder) rulesIndexed() {
	for i, k := range d.lay.server.List {
		d.enter("rules", i)
		v, vs, ok := d.str("value")
		d.leave()
		if !ok {
			return
		}
		d.tally.rules++
		if !d.dry {
			d.rules = append(d.rules, Rule{k.String(), d.string(v, vs)})
		}
	}
}

// table reads a player or team section: the count, the field names (or the
// requested keys' names), then count rows of values.
func (d *decoder) table(name string, keys Keys, sh *shape, tb *table) {
	_, _, _ = *d, *sh, *tb // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	if !keys.Wanted() {
		return
	}
	r := &d.r
	d.enter(name, -1)
	var count int
	if r.Len() < d.lay.width {
		d.cut("count")
	} else if d.lay.width == 1 {
		count = int(r.U8("count"))
	} else {
		count = int(r.U16BE("count"))
		d.big = d.big || count > 0xff
	}
	if !d.truncated && keys.All {
		for j := 0; ; j++ {
			if d.atEnd("fields") {
				r.U8("fields_end")
				break
			}
			if d.truncated {
				break
			}
			d.enter("fields", j)
			f, fs, ok := d.str("")
			d.leave()
			if !ok {
				break
			}
			sh.fields++
			if d.dry {
				if !fieldName(f, name == "teams") {
					d.odd++
				}
			} else {
				tb.t.Fields = append(tb.t.Fields, d.string(f, fs))
			}
		}
	} else if !d.truncated {
		sh.fields = len(keys.List)
		if !d.dry {
			for _, k := range keys.List {
				tb.t.Fields = append(tb.t.Fields, k.String())
			}
		}
	}
	d.leave()
	tb.t.Count = count
	if d.truncated || sh.fields == 0 {
		return
	}
	for i := 0; i < count; i++ {
		d.enter(name, i)
		for j := 0; j < sh.fields; j++ {
			var col string
			if !d.dry {
				col = tb.t.Fields[j]
			}
			v, vs, ok := d.str(col)
			if !ok {
				d.leave()
				sh.cut = true
				if !d.dry {
					tb.values = tb.values[:i*sh.fields]
				}
				return
			}
			if !d.dry {
				tb.values = append(tb.values, d.string(v, vs))
			}
		}
		d.leave()
		sh.rows++
		if !d.dry {
			tb.t.Rows = append(tb.t.Rows, tb.values[i*sh.fields:(i+1)*sh.fields:(i+1)*sh.fields])
		}
	}
}

// printable reports whether a server key is plain ASCII text, as every
// game's keys are.
func printable(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// fieldName reports whether a column name follows GameSpy's convention:
// player columns end in "_" ("score_"), team columns in "_t" ("score_t").
func fieldName(s []byte, team bool) bool {
	if !printable(s) {
		return false
	}
	if team {
		return bytes.HasSuffix(s, []byte("_t"))
	}
	return bytes.HasSuffix(s, []byte("_"))
}
