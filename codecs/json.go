package codecs

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// Object is an ordered JSON object: the "fields" of a Message, nested as the
// message nests. Values may be nil, bool, any integer type, float32, float64,
// string, Hex, Object, []Object, []any, []string or []int. Build one with Add:
//
//	var f codecs.Object
//	f = f.Add("response", 5660023).Add("time", t)
type Object []KV

// KV is one key and value of an Object.
type KV struct {
	Key   string
	Value any
}

// Add appends key and value and returns the extended object.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (o Object) Add(key string, v any) Object { return append(o, KV{key, v}) }

// Put appends key and value to *o: Add through a pointer, which is
// less code at each call site in the browser module (the object is
// neither passed nor returned by value).
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (o *Object) Put(key string, v any) { *o = append(*o, KV{key, v}) }

// PutString and PutInt are Put of one type, converted to any here rather than at each call site: in the
// browser module each conversion is a call of its own, so a decoder's
// fields cost one call each instead of two. PutInt stores an int, which
// encodes as the narrower integer it was made from would.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (o *Object) PutString(key, v string) { o.Put(key, v) }

// PutInt is Put of an int: see PutString.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (o *Object) PutInt(key string, v int) { o.Put(key, v) }

// Get returns the value of the first key named key.
func (o Object) Get(key string) (any, bool) {
	for _, kv := range o {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Hex is a byte string shown as lowercase hex in JSON.
type Hex []byte

// AppendJSON appends the JSON encoding of v (one of the types Object
// accepts) to dst. Unsupported types encode as null.
func AppendJSON(dst []byte, v any) []byte {
	var i int64
	var u uint64
	signed := true
	switch v := v.(type) {
	case int:
		i = int64(v)
	case int8:
		i = int64(v)
	case int16:
		i = int64(v)
	case int32:
		i = int64(v)
	case int64:
		i = v
	case uint:
		u, signed = uint64(v), false
	case uint8:
		u, signed = uint64(v), false
	case uint16:
		u, signed = uint64(v), false
	case uint32:
		u, signed = uint64(v), false
	case uint64:
		u, signed = v, false
	default:
		return appendJSONValue(dst, v)
	}
	if signed {
		return strconv.AppendInt(dst, i, 10)
	}
	return strconv.AppendUint(dst, u, 10)
}

// appendJSONValue is AppendJSON for the types other than integers.
func appendJSONValue(dst []byte, v any) []byte {
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(dst, v)
	case float32:
		return appendFloat(dst, float64(v), 32)
	case float64:
		return appendFloat(dst, v, 64)
	case string:
		return AppendJSONString(dst, v)
	case Hex:
		dst = append(dst, '"')
		dst = AppendHex(dst, v)
		return append(dst, '"')
	case Object:
		dst = append(dst, '{')
		for i, kv := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, kv.Key)
			dst = append(dst, ':')
			dst = AppendJSON(dst, kv.Value)
		}
		return append(dst, '}')
	case []Object:
		dst = append(dst, '[')
		for i, o := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, o)
		}
		return append(dst, ']')
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSON(dst, x)
		}
		return append(dst, ']')
	case []string:
		dst = append(dst, '[')
		for i, s := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, s)
		}
		return append(dst, ']')
	case []int:
		dst = append(dst, '[')
		for i, n := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(n), 10)
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// AppendHex appends b as lowercase hex.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func AppendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// AppendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// control characters (Zandronum's \x1c colour escape among them) are escaped.
func AppendJSONString(dst []byte, s string) []byte {
	return append(appendJSONChars(append(dst, '"'), s), '"')
}

// appendJSONChars appends s escaped as the inside of a JSON string.
func appendJSONChars(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		// A run of bytes that need no escape is appended in one piece:
		// one append per byte is the slow part of this loop, in the
		// browser module above all.
		j := i
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' && s[j] != 0x7f && s[j] != '<' && s[j] != '>' && s[j] != '&' {
			j++
		}
		if j > i {
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&':
				// < > & escaped too, so the JSON can sit inside a <script>.
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// infoKeys are the keys of the scalar Info fields, in JSON order.
var infoKeys = [...]struct {
	key string
	bit InfoHas
}{
	{"name", HasName}, {"map", HasMap}, {"game_type", HasGameType}, {"version", HasVersion},
	{"password", HasPassword}, {"num_players", HasNumPlayers}, {"num_bots", HasNumBots},
	{"max_players", HasMaxPlayers}, {"max_clients", HasMaxClients},
	{"anticheat", HasAntiCheat}, {"os", HasOS}, {"keywords", HasKeywords},
}

// infoObject converts the neutral view to its JSON object, keeping only the
// keys the protocol carried.
func infoObject(in *Info) Object {
	var o Object
	for _, k := range infoKeys {
		if in.Has&k.bit == 0 {
			continue
		}
		var v any
		switch k.bit {
		case HasName:
			v = in.Name
		case HasMap:
			v = in.Map
		case HasGameType:
			v = in.GameType
		case HasVersion:
			v = in.Version
		case HasPassword:
			v = in.Password
		case HasNumPlayers:
			v = in.NumPlayers
		case HasNumBots:
			v = in.NumBots
		case HasMaxPlayers:
			v = in.MaxPlayers
		case HasMaxClients:
			v = in.MaxClients
		case HasAntiCheat:
			v = in.AntiCheat
		case HasOS:
			v = in.OS
		case HasKeywords:
			v = in.Keywords
		}
		o = o.Add(k.key, v)
	}
	if in.Has&HasPlayers != 0 {
		ps := make([]Object, 0, len(in.Players))
		for _, p := range in.Players {
			var team any
			if p.HasTeam {
				team = p.Team
			}
			ps = append(ps, make(Object, 0, 6).Add("name", p.Name).Add("score", p.Score).Add("ping", p.Ping).
				Add("team", team).Add("spectator", p.Spectator).Add("bot", p.Bot))
		}
		o = o.Add("players", ps)
	}
	if in.Has&HasTeams != 0 {
		ts := make([]Object, 0, len(in.Teams))
		for _, t := range in.Teams {
			ts = append(ts, make(Object, 0, 2).Add("name", t.Name).Add("score", t.Score))
		}
		o = o.Add("teams", ts)
	}
	if in.Has&HasRules != 0 {
		rs := make([]any, 0, len(in.Rules))
		for _, r := range in.Rules {
			rs = append(rs, append(make([]string, 0, 2), r[0], r[1]))
		}
		o = o.Add("rules", rs)
	}
	return o
}

// Object returns the message as the JSON object of docs/protocols/json.md. With spans it
// also carries "layers" (name, hex, parent) and "spans", which is what the
// inspector reads.
func (m *Message) Object() Object {
	o := make(Object, 0, 2).Add("protocol", m.Protocol).Add("kind", string(m.Kind))
	if m.Denied != "" {
		o = o.Add("denied", m.Denied)
	}
	if m.Info != nil {
		o = o.Add("info", infoObject(m.Info))
	}
	if m.Kind == KindMasterList || m.Servers != nil {
		s := m.Servers
		if s == nil {
			s = []string{}
		}
		o = o.Add("servers", s)
	}
	f := m.Fields
	if f == nil {
		f = Object{}
	}
	o = o.Add("fields", f)
	w := m.Warnings
	if w == nil {
		w = []string{}
	}
	o = o.Add("warnings", w)
	if m.Layers != nil {
		ls := make([]Object, 0, len(m.Layers))
		for _, l := range m.Layers {
			ls = append(ls, make(Object, 0, 3).Add("name", l.Name).Add("hex", Hex(l.Bytes)).Add("parent", l.Parent))
		}
		o = o.Add("layers", ls)
		ss := make([]Object, 0, len(m.Spans))
		for _, s := range m.Spans {
			ss = append(ss, make(Object, 0, 6).Add("layer", s.Layer).Add("start", s.Start).Add("end", s.End).Add("field", s.Field).Add("kind", s.Kind).Add("value", s.Value))
		}
		o = o.Add("spans", ss)
	}
	return o
}

// AppendJSON appends the message's JSON (docs/protocols/json.md) to dst.
func (m *Message) AppendJSON(dst []byte) []byte { return AppendJSON(dst, m.Object()) }

// ErrorObject returns docs/protocols/json.md's failure object for err, with partial (which
// may be nil) as "partial".
func ErrorObject(err error, partial *Message) Object {
	e := Object{}
	if ce, ok := errors.AsType[*Error](err); ok {
		e = e.Add("protocol", ce.Protocol).Add("field", ce.Field).Add("offset", ce.Offset)
		if ce.Layer != "" {
			e = e.Add("layer", ce.Layer)
		}
		e = e.Add("message", ce.Message())
	} else {
		e = e.Add("message", err.Error())
	}
	o := make(Object, 0, 1).Add("error", e)
	if partial != nil {
		p := partial.Object()
		o = o.Add("partial", p[1:]) // docs/protocols/json.md's partial starts at "kind"
	}
	return o
}
