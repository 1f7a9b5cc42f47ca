package codecs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Row indexes of the array Summary puts under "row": what a server list
// shows of one server. The browser page reads them by these positions
// (web/static/worker.js), so append new ones at the end.
const (
	RowName     = iota // string, colour escapes stripped
	RowMap             // string, stripped
	RowMode            // string, stripped (Info.GameType)
	RowPlayers         // int: Info.NumPlayers when carried, else len(Info.Players)
	RowBots            // int: players flagged as bots
	RowMax             // int: Info.MaxPlayers, else Info.MaxClients, else 0
	RowPassword        // bool
	RowCountry         // string: the "country" field when the protocol sends one, else ""
	RowHay             // string: name, map, mode and player names, stripped, one per line (for search)
	rowLen
)

// Summary is the small view of a decoded message that a list of servers
// needs, instead of the whole message: what it is (kind, denied), the
// decode error if there was one, and for a server's answer one table row
// (see RowName…) taken from the message, or from the partial message when
// decoding failed. A master's list carries its servers.
//
//	{"kind": "response", "row": ["Name", "MAP01", "Duel", 3, 1, 16, false, "DEU", "name\nmap01\n…"]}
//	{"kind": "master-list", "servers": ["203.0.113.7:10666", …]}
//	{"kind": "denied", "denied": "rate-limited"}
//	{"kind": "response", "error": {"field": …, "offset": …, "message": …}, "row": […]}
//
// The key names are json.md's; error is the "error" of ErrorObject.
func Summary(m *Message, err error) Object {
	o := make(Object, 0, 4)
	if m != nil {
		o = o.Add("kind", string(m.Kind))
		if m.Denied != "" {
			o = o.Add("denied", m.Denied)
		}
	}
	if err != nil {
		e, _ := ErrorObject(err, nil).Get("error")
		o = o.Add("error", e)
	}
	if m == nil {
		return o
	}
	if m.Info != nil {
		o = o.Add("row", summaryRow(m))
	}
	if m.Kind == KindMasterList || m.Servers != nil {
		s := m.Servers
		if s == nil {
			s = []string{}
		}
		o = o.Add("servers", s)
	}
	return o
}

// AppendSummaryJSON appends the JSON of Summary(m, err) to dst.
func AppendSummaryJSON(dst []byte, m *Message, err error) []byte {
	return AppendJSON(dst, Summary(m, err))
}

func summaryRow(m *Message) []any {
	in := m.Info
	row := make([]any, rowLen)
	row[RowName] = StripColors(in.Name)
	row[RowMap] = StripColors(in.Map)
	row[RowMode] = StripColors(in.GameType)
	players := len(in.Players)
	if in.Has&HasNumPlayers != 0 {
		players = in.NumPlayers
	}
	bots := 0
	for _, p := range in.Players {
		if p.Bot {
			bots++
		}
	}
	row[RowPlayers], row[RowBots] = players, bots
	switch {
	case in.Has&HasMaxPlayers != 0:
		row[RowMax] = in.MaxPlayers
	case in.Has&HasMaxClients != 0:
		row[RowMax] = in.MaxClients
	default:
		row[RowMax] = 0
	}
	row[RowPassword] = in.Password
	country := ""
	if c, ok := m.Fields.Get("country"); ok {
		country, _ = c.(string)
	}
	row[RowCountry] = country
	var hay strings.Builder
	hay.WriteString(row[RowName].(string))
	hay.WriteByte('\n')
	hay.WriteString(row[RowMap].(string))
	hay.WriteByte('\n')
	hay.WriteString(row[RowMode].(string))
	for _, p := range in.Players {
		hay.WriteByte('\n')
		hay.WriteString(StripColors(p.Name))
	}
	// Not lower-cased here: strings.ToLower would link Unicode's case
	// tables into the wasm module; the page's worker lower-cases it.
	row[RowHay] = hay.String()
	return row
}

// StripColors removes Zandronum's colour escapes (0x1c followed by one code
// character, or by a [name] in brackets) and other control characters, and
// trims the result: how every page shows a name a server chose.
func StripColors(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1c {
			i++
			if i < len(s) && s[i] == '[' {
				if j := strings.IndexByte(s[i:], ']'); j >= 0 {
					i += j + 1
					continue
				}
			}
			if i < len(s) {
				_, n := utf8.DecodeRuneInString(s[i:])
				i += n
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsControl(r) {
			b.WriteRune(r)
		}
		i += n
	}
	return strings.TrimSpace(b.String())
}
