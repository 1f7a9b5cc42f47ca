package ogp

import (
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/querylens/querylens/codecs"
)

// view turns decoded values into the JSON fields and the neutral view. On
// a decoding error it only shows the fields that were decoded before it:
// seen holds their span paths (nil: all of them).
type view struct {
	v    Version
	utf8 bool
	seen map[string]bool
}

// has reports whether the field at path was decoded.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (w *view) has(path string) bool { return w.seen == nil || w.seen[path] }

// hasBit reports whether bit is set in f and the field at path was decoded.
func (w *view) hasBit(f, bit Bits, path string) bool { return f&bit != 0 && w.has(path) }

// entryHas reports whether bit is set in f and field of entry i of list
// was decoded.
func (w *view) entryHas(f, bit Bits, list string, i int, field string) bool {
	return f&bit != 0 && w.has(w.at(list, i, field))
}

// at joins a list entry's path, only when it will be looked up.
func (w *view) at(list string, i int, field string) string {
	if w.seen == nil {
		return ""
	}
	return list + "[" + strconv.Itoa(i) + "]." + field
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (w *view) text(b []byte) string {
	if w.utf8 {
		return string(b)
	}
	return codecs.Latin1(b)
}

// seenPaths collects the field paths of the spans of layer.
func seenPaths(spans []codecs.Span, layer int) map[string]bool {
	m := make(map[string]bool, len(spans))
	for _, s := range spans {
		if s.Layer == layer {
			m[s.Field] = true
		}
	}
	return m
}

// object builds one JSON object of the fields. prefix is the span path of
// the object with a trailing dot ("server_info.", "players[2].") or "" at
// the top; it is only built when a decoding error makes it needed.
type object struct {
	w      *view
	prefix string
	o      codecs.Object
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (w *view) object(prefix string, size int) object {
	return object{w: w, prefix: prefix, o: make(codecs.Object, 0, size)}
}

// entryObject is the object of entry i of list.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (w *view) entryObject(list string, i, size int) object {
	b := w.object("", size)
	if w.seen != nil {
		b.prefix = list + "[" + strconv.Itoa(i) + "]."
	}
	return b
}

// add adds field when it was decoded.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (b *object) add(field string, v any) { b.addAs(field, field, v) }

// addAs adds key when the field at span path field was decoded.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (b *object) addAs(field, key string, v any) {
	if b.w.seen == nil || b.w.seen[b.prefix+field] {
		b.o = append(b.o, codecs.KV{Key: key, Value: v})
	}
}

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (b *object) text(field string, s []byte) {
	if b.w.has(b.prefix + field) {
		b.o = append(b.o, codecs.KV{Key: field, Value: b.w.text(s)})
	}
}

// put adds key unconditionally.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (b *object) put(key string, v any) { b.o = append(b.o, codecs.KV{Key: key, Value: v}) }

// headSize is what a 1.0x header's HeadSize byte says for h.
func headSize(h *Header) int {
	e := encoder{v: h.Version}
	e.header(h, h.Answer)
	return len(e.b) - len(magic)
}

func (w *view) header(h *Header) codecs.Object {
	o := w.object("header.", 10)
	if h.Version == V1 {
		o.add("head_size", headSize(h))
	}
	code, _ := h.Type.Code(h.Version)
	o.add("type", int(code))
	o.addAs("type", "type_name", h.Type.name(h.Version))
	flags := h.OtherFlags
	for _, f := range [...]struct {
		on       bool
		b1, b004 Bits
	}{{h.Answer, HeadAnswer, HeadAnswer}, {h.HasChallenge, HeadChallenge, Head004Challenge},
		{h.HasRequestID, HeadRequestID, Head004RequestID}, {h.Split, HeadSplit, HeadSplit}, {h.UTF8, HeadUTF8, 0}} {
		if f.on && h.Version == V004 {
			flags |= f.b004
		} else if f.on {
			flags |= f.b1
		}
	}
	o.add("head_flags", headNames(h.Version).list(flags))
	if h.HasChallenge {
		o.add("challenge_number", h.Challenge)
		c := h.Challenge
		o.addAs("challenge_number", "challenge_number_hex", codecs.Hex{byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)})
	}
	if h.HasRequestID {
		o.add("request_id", h.RequestID)
	}
	if h.Split && h.Answer {
		o.add("split_packet_count", int(h.SplitCount))
		o.add("split_packet_no", int(h.SplitNo))
	} else if h.Split {
		o.add("max_bytes_per_packet", int(h.MaxBytesPerPacket))
	}
	if len(h.Padding) > 0 {
		o.add("padding", codecs.Hex(h.Padding))
	}
	return o.o
}

// requestFields is the JSON "fields" of a query.
func (w *view) requestFields(q *Request) codecs.Object {
	o := w.object("", 10)
	o.put("version", q.Version.String())
	o.put("header", w.header(&q.Header))
	if q.Type == TypeDefault && q.Body {
		v1 := q.Version == V1
		o.add("requests", requestNames(q.Version).list(q.Requests))
		if v1 {
			o.add("server_info_fields", infoNames.list(q.ServerInfoFields))
			o.add("mod_fields", modNames.list(q.ModFields))
			o.add("map_fields", mapNames.list(q.MapFields))
		}
		if v1 || q.Requests&Req004Teams != 0 {
			o.add("team_fields", teamNames(q.Version).list(q.TeamFields))
		}
		if v1 || q.Requests&Req004Players != 0 {
			o.add("player_fields", playerNames(q.Version).list(q.PlayerFields))
		}
		if v1 || q.Requests&Req004AddOns != 0 {
			o.add("addon_fields", addOnNames.list(q.AddOnFields))
		}
	}
	if len(q.Raw) > 0 {
		o.add("body", codecs.Hex(q.Raw))
	}
	return o.o
}

// answerFields is the JSON "fields" of an answer.
func (w *view) answerFields(a *Response) codecs.Object {
	o := w.object("", 24)
	o.put("version", a.Version.String())
	o.put("header", w.header(&a.Header))
	switch a.Type {
	case TypeError:
		o.add("error_id", int(a.ErrorID))
		o.addAs("error_id", "error", a.ErrorID.String())
	case TypeDefault:
		o.add("game_id", int(a.GameID))
		o.add("requests", requestNames(a.Version).list(a.Requests))
		w.answerBody(a, &o)
	default:
		if len(a.Raw) > 0 {
			o.add("body", codecs.Hex(a.Raw))
		}
	}
	return o.o
}

// answerBody adds the fields of a Default query v1 answer after Requests.
func (w *view) answerBody(a *Response, o *object) {
	q := a.Requests
	lb := listBits(a.Version)
	if q&byVersion(a.Version, ReqServerInfo, ^Bits(0)) != 0 {
		if s := w.serverInfo(a); len(s) > 0 {
			o.put("server_info", s)
		}
	}
	colored := a.Version == V1 && q&ReqColoredNames != 0
	// list adds a list's count, its fields array and its entries, once the
	// count was decoded.
	list := func(name string, n int, fields Bits, names *bitNames, entries any) {
		if !w.has(name + "_count") {
			return
		}
		o.put(name+"_count", n)
		if names != nil && n > 0 {
			o.add(name+"_fields", names.list(fields))
		}
		o.put(name+"s", entries)
	}
	if q&lb[listTeams] != 0 {
		list("team", len(a.Teams), a.TeamFields, teamNames(a.Version), w.teams(a, colored))
	}
	if q&lb[listPlayers] != 0 {
		list("player", len(a.Players), a.PlayerFields, playerNames(a.Version), w.players(a, colored))
	}
	if q&lb[listRules] != 0 {
		rs := make([]any, 0, len(a.Rules))
		for i, r := range a.Rules {
			if w.has(w.at("rules", i, "value")) {
				rs = append(rs, []string{w.text(r.Key), w.text(r.Value)})
			}
		}
		list("rule", len(a.Rules), 0, nil, rs)
	}
	if q&lb[listAddOns] != 0 {
		list("addon", len(a.AddOns), a.AddOnFields, addOnNames, w.addOns(a))
	}
	if q&lb[listLimits] != 0 {
		list("limit", len(a.Limits), 0, nil, w.limits(a))
	}
}

// serverFlags shows ServerFlags: 1.0x as its parts, v0.04 as flag names.
func (w *view) serverFlags(v Version, f Bits) any {
	if v == V004 {
		return serverFlagNames004.list(f)
	}
	o := make(codecs.Object, 0, 4).Add("server_type", ServerType(f)).Add("password", f&SFPassword != 0).Add("proxy", f&SFProxy != 0).Add("os", OS(f))
	if f>>7 != 0 {
		o = o.Add("other", serverFlagNames1.list(f&^0x7f))
	}
	return o
}

func (w *view) serverInfo(a *Response) codecs.Object {
	o := w.object("server_info.", 16)
	sel := serverFields(a)
	if a.Version == V1 {
		o.add("fields", infoNames.list(sel))
	}
	viewFields(w, &o, unsafe.Pointer(&a.Server), infoFields[:], sel, a.Version == V1 && a.Requests&ReqColoredNames != 0)
	return o.o
}

func (w *view) mod(s *ServerInfo, v1 bool) codecs.Object {
	o := w.object("server_info.mod.", 7)
	o.text("name", s.ModName)
	if !v1 {
		o.text("dir", s.ModDir)
		return o.o
	}
	if len(s.ModName) == 0 {
		return o.o
	}
	o.add("fields", modNames.list(s.ModFields))
	viewFields(w, &o, unsafe.Pointer(s), modFields[:], s.ModFields, false)
	return o.o
}

// mapInfo shows a map; the 1.0x map (not the next map) carries MapFields.
func (w *view) mapInfo(prefix string, m *MapInfo, f Bits, v1, fields bool) codecs.Object {
	o := w.object(prefix, 8)
	if v1 && fields {
		o.add("fields", mapNames.list(f))
	}
	o.text("name", m.Name)
	if !v1 {
		o.text("file", m.File)
		return o.o
	}
	viewFields(w, &o, unsafe.Pointer(m), mapFields[:], f, false)
	return o.o
}

func (w *view) teams(a *Response, colored bool) []codecs.Object {
	out := make([]codecs.Object, 0, len(a.Teams))
	for i := range a.Teams {
		e := w.entryObject("teams", i, 7)
		viewFields(w, &e, unsafe.Pointer(&a.Teams[i]), teamFields[:], a.TeamFields, colored)
		out = append(out, e.o)
	}
	return out
}

func (w *view) players(a *Response, colored bool) []codecs.Object {
	out := make([]codecs.Object, 0, len(a.Players))
	f := a.PlayerFields
	for i := range a.Players {
		e := w.entryObject("players", i, bits.OnesCount64(uint64(f))+1)
		viewFields(w, &e, unsafe.Pointer(&a.Players[i]), playerFields[:], f, colored)
		out = append(out, e.o)
	}
	return out
}

func (w *view) addOns(a *Response) []codecs.Object {
	out := make([]codecs.Object, 0, len(a.AddOns))
	for i := range a.AddOns {
		e := w.entryObject("addons", i, 4)
		viewFields(w, &e, unsafe.Pointer(&a.AddOns[i]), addOnFields[:], a.AddOnFields, false)
		out = append(out, e.o)
	}
	return out
}

func (w *view) limits(a *Response) []codecs.Object {
	out := make([]codecs.Object, 0, len(a.Limits))
	for i := range a.Limits {
		x := &a.Limits[i]
		e := w.entryObject("limits", i, 5)
		e.add("type", int(x.Type))
		e.addAs("type", "type_name", limitTypeName(x.Type))
		if x.OtherFlags != 0 {
			e.addAs("type", "other_flags", limitNames1.list(x.OtherFlags))
		}
		e.add("limit", x.Limit)
		if x.HasLeft {
			e.add("left", x.Left)
		}
		out = append(out, e.o)
	}
	return out
}

// serverFields is which server fields an answer carries, as 1.0x
// ServerInfoFields bits; v0.04 answers select them with Requests.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func serverFields(a *Response) Bits {
	if a.Version == V1 {
		if a.Requests&ReqServerInfo == 0 {
			return 0
		}
		return a.Server.Fields
	}
	var f Bits
	for i := range infoFields {
		if x := &infoFields[i]; a.Requests&x.bit004 != 0 {
			f |= x.bit
		}
	}
	return f
}

// listBit reports whether a's Requests select list (listTeams, ...).
func listBit(a *Response, list int) bool { return a.Requests&listBits(a.Version)[list] != 0 }

// info is the neutral view of a Default query v1 answer (docs/protocols/json.md "info").
func (w *view) info(a *Response) *codecs.Info {
	in := &codecs.Info{}
	s := &a.Server
	f := serverFields(a)
	if w.hasBit(f, InfoHostName, "server_info.host_name") {
		in.Has |= codecs.HasName
		in.Name = w.text(s.HostName)
	}
	if w.hasBit(f, InfoMap, "server_info.map.name") {
		in.Has |= codecs.HasMap
		in.Map = w.text(s.Map.Name)
	}
	// The game type, else the game mode; one sent empty, with no other
	// to fall back on, stays "" (sent, not missing).
	gameType := w.hasBit(f, InfoGameType, "server_info.game_type")
	gameMode := w.hasBit(f, InfoGameMode, "server_info.game_mode")
	switch {
	case gameType && (len(s.GameType) > 0 || !gameMode):
		in.Has |= codecs.HasGameType
		in.GameType = w.text(s.GameType)
	case gameMode:
		in.Has |= codecs.HasGameType
		in.GameType = w.text(s.GameMode)
	}
	if a.Version == V1 && w.hasBit(f, InfoServerFlags, "server_info.server_flags") {
		in.Has |= codecs.HasPassword
		in.Password = s.Flags&SFPassword != 0
	}
	if w.hasBit(f, InfoSlotMax, "server_info.slot_max") {
		in.Has |= codecs.HasMaxPlayers
		in.MaxPlayers = int(s.SlotMax)
	}
	if listBit(a, listPlayers) && w.has("player_count") {
		in.Has |= codecs.HasPlayers | codecs.HasNumPlayers
		in.NumPlayers = len(a.Players)
		in.Players = make([]codecs.Player, 0, len(a.Players))
		for i := range a.Players {
			in.Players = append(in.Players, w.player(a, i))
		}
	}
	if w.hasBit(f, InfoPlayerCount, "server_info.player_count") {
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = int(s.PlayerCount)
	}
	if listBit(a, listTeams) && w.has("team_count") {
		in.Has |= codecs.HasTeams
		in.Teams = make([]codecs.Team, 0, len(a.Teams))
		for i, t := range a.Teams {
			var x codecs.Team
			if a.TeamFields&TeamName != 0 && w.has(w.at("teams", i, "name")) {
				x.Name = w.text(t.Name)
			}
			if a.TeamFields&TeamScore != 0 && w.has(w.at("teams", i, "score")) {
				x.Score = int(t.Score)
			}
			in.Teams = append(in.Teams, x)
		}
	}
	if listBit(a, listRules) && w.has("rule_count") {
		in.Has |= codecs.HasRules
		in.Rules = make([][2]string, 0, len(a.Rules))
		for i, r := range a.Rules {
			if w.has(w.at("rules", i, "value")) {
				in.Rules = append(in.Rules, [2]string{w.text(r.Key), w.text(r.Value)})
			}
		}
	}
	// OGP has no server version field: the mod's version, else a rule
	// named "version", is the closest it carries.
	if a.Version == V1 && w.hasBit(f, InfoMod, "server_info.mod.version") && s.ModFields&ModVersion != 0 {
		in.Has |= codecs.HasVersion
		in.Version = w.text(s.ModVersion)
	} else if v, ok := in.Rule("version"); ok {
		in.Has |= codecs.HasVersion
		in.Version = v
	}
	return in
}

// player is the neutral view of player i.
func (w *view) player(a *Response, i int) codecs.Player {
	p := &a.Players[i]
	f := a.PlayerFields
	var x codecs.Player
	if w.entryHas(f, PlayerName, "players", i, "name") {
		x.Name = w.text(p.Name)
	}
	switch {
	case w.entryHas(f, PlayerScore, "players", i, "score"):
		x.Score = int(p.Score)
	case w.entryHas(f, PlayerFrags, "players", i, "frags"):
		x.Score = int(p.Frags)
	}
	if w.entryHas(f, PlayerPing, "players", i, "ping") {
		x.Ping = int(p.Ping)
	}
	if w.entryHas(f, PlayerTeam, "players", i, "team") {
		// v0.04: 0xFF is a spectator. 1.0x: -1 (its replacement) is no team.
		none := p.Team < 0
		if a.Version == V004 {
			none = p.Team == 0xff
		}
		x.Team, x.HasTeam, x.Spectator = int(p.Team), !none, none
	}
	if w.entryHas(f, PlayerFlags, "players", i, "flags") {
		x.Bot = p.Flags&FlagBot != 0
	}
	return x
}

// answerMessage fills m from answer a: kind, neutral view, and fields
// unless noFields.
func (w *view) answerMessage(m *codecs.Message, a *Response, noFields bool) {
	if !noFields {
		m.Fields = w.answerFields(a)
	}
	m.Kind = codecs.KindResponse
	switch a.Type {
	case TypeDefault:
		m.Info = w.info(a)
	case TypeBanned:
		m.Kind, m.Denied = codecs.KindDenied, codecs.DeniedBanned
	case TypeError:
		switch {
		case a.ErrorID == ErrorBanned && w.has("error_id"):
			m.Kind, m.Denied = codecs.KindDenied, codecs.DeniedBanned
		case a.HasChallenge:
			m.Kind = codecs.KindChallenge
		case w.has("error_id"):
			m.Warn("error answer: " + a.ErrorID.String())
		}
	case TypePing:
		if a.Version == V004 && a.HasChallenge {
			m.Kind = codecs.KindChallenge
		}
	}
}
