package codecs

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Row indexes of the array AppendSummaryJSON puts under "row": what a server list
// shows of one server. The browser page reads them by these positions
// (web/static/worker.js), so append new ones at the end.
const (
	RowName      = iota // string, colour escapes stripped
	RowMap              // string, stripped
	RowMode             // string, stripped (Info.GameType)
	RowPlayers          // int: Info.NumPlayers when carried, else len(Info.Players)
	RowBots             // int: Info.NumBots when carried, else the players flagged as bots
	RowMax              // int: Info.MaxPlayers, else Info.MaxClients, else 0
	RowPassword         // bool
	RowCountry          // string: the "country" field when the protocol sends one, else ""
	RowHay              // string: name, map, mode, player names and keywords, stripped, one per line (for search)
	RowAntiCheat        // bool: Info.AntiCheat (A2S: VAC)
	RowOS               // string: Info.OS, "" when not carried
	RowKeywords         // string: Info.Keywords, stripped, "" when not carried
	rowLen
)

// AppendSummaryJSON appends the summary of a decoded message to dst: the
// small view of it that a list of servers needs, instead of the whole
// message: what it is (kind, denied), the decode error if there was one,
// and for a server's answer one table row
// (see RowName…) taken from the message, or from the partial message when
// decoding failed. A master's list carries its servers.
//
//	{"kind": "response", "row": ["Name", "MAP01", "Duel", 3, 1, 16, false, "DEU", "name\nmap01\n…", true, "Linux", "tags"]}
//	{"kind": "master-list", "servers": ["203.0.113.7:10666", …]}
//	{"kind": "denied", "denied": "rate-limited"}
//	{"kind": "response", "error": {"field": …, "offset": …, "message": …}, "row": […]}
//
// The key names are docs/protocols/json.md's; error is the "error" of ErrorObject.
//
// The server browser makes one per server, so it is written directly, with
// no Object or []any, which would cost an allocation per value.
func AppendSummaryJSON(dst []byte, m *Message, err error) []byte {
	dst = append(dst, '{')
	if m != nil {
		dst = AppendJSONString(append(dst, `"kind":`...), string(m.Kind))
		if m.Denied != "" {
			dst = AppendJSONString(append(dst, `,"denied":`...), m.Denied)
		}
	}
	if err != nil {
		if m != nil {
			dst = append(dst, ',')
		}
		e, _ := ErrorObject(err, nil).Get("error")
		dst = AppendJSON(append(dst, `"error":`...), e)
	}
	if m == nil {
		return append(dst, '}')
	}
	if m.Info != nil {
		dst = appendSummaryRow(append(dst, `,"row":`...), m)
	}
	if m.Kind == KindMasterList || m.Servers != nil {
		dst = append(dst, `,"servers":[`...)
		for i, s := range m.Servers {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendJSONString(dst, s)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendSummaryRow appends the JSON of m's table row (m.Info is set).
func appendSummaryRow(dst []byte, m *Message) []byte {
	in := m.Info
	strs := [3]string{StripColors(in.Name), StripColors(in.Map), StripColors(in.GameType)}
	players, bots, max := rowCounts(in)
	dst = append(dst, '[')
	for _, s := range strs {
		dst = append(AppendJSONString(dst, s), ',')
	}
	for _, n := range [3]int{players, bots, max} {
		dst = append(strconv.AppendInt(dst, int64(n), 10), ',')
	}
	dst = append(strconv.AppendBool(dst, in.Password), ',')
	dst = append(AppendJSONString(dst, rowCountry(m)), ',', '"')
	for i, s := range strs {
		if i > 0 {
			dst = append(dst, '\\', 'n')
		}
		dst = appendJSONChars(dst, s)
	}
	for _, p := range in.Players {
		dst = appendJSONChars(append(dst, '\\', 'n'), StripColors(p.Name))
	}
	keywords := ""
	if in.Has&HasKeywords != 0 {
		keywords = StripColors(in.Keywords)
	}
	if keywords != "" {
		dst = appendJSONChars(append(dst, '\\', 'n'), keywords)
	}
	dst = append(strconv.AppendBool(append(dst, '"', ','), in.Has&HasAntiCheat != 0 && in.AntiCheat), ',')
	os := ""
	if in.Has&HasOS != 0 {
		os = in.OS
	}
	dst = append(AppendJSONString(dst, os), ',')
	return append(AppendJSONString(dst, keywords), ']')
}

// rowCounts gives the row's players, bots and max.
func rowCounts(in *Info) (players, bots, max int) {
	players = len(in.Players)
	if in.Has&HasNumPlayers != 0 {
		players = in.NumPlayers
	}
	if in.Has&HasNumBots != 0 {
		// A server's own count of its bots, which cannot be more than
		// everyone it counts.
		bots = min(in.NumBots, players)
		if bots < 0 {
			bots = 0
		}
	} else {
		for _, p := range in.Players {
			if p.Bot {
				bots++
			}
		}
	}
	switch {
	case in.Has&HasMaxPlayers != 0:
		max = in.MaxPlayers
	case in.Has&HasMaxClients != 0:
		max = in.MaxClients
	}
	return players, bots, max
}

// rowCountry is the message's "country" field when it is a string.
func rowCountry(m *Message) string {
	if c, ok := m.Fields.Get("country"); ok {
		s, _ := c.(string)
		return s
	}
	return ""
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
