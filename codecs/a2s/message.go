package a2s

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
)

// message fills m from what the payloads held: its kind, the neutral view,
// the servers of a master list and the fields.
func (v *view) message(m *codecs.Message, noFields bool) {
	switch {
	case len(v.pages) > 0:
		m.Kind = codecs.KindMasterList
		m.Servers = make([]string, 0, v.servers())
		for _, p := range v.pages {
			for _, a := range p.Servers {
				m.Servers = append(m.Servers, a.String())
			}
		}
	case v.info != nil || v.players != nil || v.rules != nil:
		m.Kind = codecs.KindResponse
		m.Info = v.neutral()
	case len(v.challenges) > 0:
		m.Kind = codecs.KindChallenge
	case len(v.masterQ) > 0:
		m.Kind = codecs.KindMasterQuery
	case len(v.requests) > 0:
		m.Kind = codecs.KindQuery
	}
	if v.unknown {
		m.Warn(codecs.WarnUnknownFlags)
	}
	if v.players != nil && v.players.Unlisted() > 0 {
		m.Warn(codecs.WarnUnlisted)
	}
	if !noFields {
		m.Fields = v.fields()
	}
}

func (v *view) servers() int {
	n := 0
	for _, p := range v.pages {
		n += len(p.Servers)
	}
	return n
}

// OS names the environment byte.
func OS(env byte) string { return environment(env) }

// neutral is the view every page uses: name, map, the game's description
// as the game type, the version, the password from the visibility byte,
// players (bots included), bots, max players, VAC (as the anti-cheat), the
// OS (when the environment byte names one) and the keywords from the info
// reply, the player
// list (name and score), and as rules first what the info reply says
// beyond those (bots, vac, os, server_type, keywords, folder, app_id,
// protocol, port, steam_id), then the server's rules.
func (v *view) neutral() *codecs.Info {
	in := &codecs.Info{}
	if i := v.info; i != nil {
		// A field the reply did not reach is the zero value, so each is
		// copied whole; Has gets the bits of the fields read.
		in.Has = v.infoHas(i)
		in.Name, in.Map, in.GameType = i.Name, i.Map, i.Game
		if !i.GoldSrc {
			in.Version = i.Version
		}
		in.Password = i.Visibility != 0
		in.NumPlayers, in.MaxPlayers, in.NumBots = int(i.Players), int(i.MaxPlayers), int(i.Bots)
		in.AntiCheat = i.VAC != 0
		if v.has("environment") {
			if os := environment(i.Environment); os != "" {
				in.Has |= codecs.HasOS
				in.OS = os
			}
		}
		if i.EDF&EDFKeywords != 0 {
			in.Keywords = i.Keywords
		}
		v.ruleInt(in, "bots", "bots", int64(i.Bots))
		v.rule(in, "vac", "vac", strconv.FormatBool(i.VAC != 0))
		v.rule(in, "environment", "os", environment(i.Environment))
		v.rule(in, "server_type", "server_type", serverType(i.ServerType))
		if i.EDF&EDFKeywords != 0 {
			v.rule(in, "keywords", "keywords", i.Keywords)
		}
		v.rule(in, "folder", "folder", i.Folder)
		if !i.GoldSrc {
			v.ruleInt(in, "app_id", "app_id", int64(i.AppID))
		}
		v.ruleInt(in, "protocol", "protocol", int64(i.Protocol))
		if i.EDF&EDFPort != 0 {
			v.ruleInt(in, "port", "port", int64(i.Port))
		}
		if i.EDF&EDFSteamID != 0 {
			v.rule(in, "steam_id", "steam_id", strconv.FormatUint(i.SteamID, 10))
		}
	}
	if p := v.players; p != nil {
		in.Has |= codecs.HasPlayers
		in.Players = make([]codecs.Player, 0, len(p.Players))
		for _, x := range p.Players {
			in.Players = append(in.Players, codecs.Player{Name: x.Name, Score: int(x.Score)})
		}
		if v.info == nil {
			in.Has |= codecs.HasNumPlayers
			in.NumPlayers = len(p.Players) + p.Unlisted()
		}
	}
	if r := v.rules; r != nil {
		in.Has |= codecs.HasRules
		for _, x := range r.Rules {
			in.Rules = append(in.Rules, [2]string{x.Name, x.Value})
		}
	}
	return in
}

// infoHasFields are the info reply's fields that fill a field of
// codecs.Info, and its Has bit.
var infoHasFields = [...]struct {
	field string
	bit   codecs.InfoHas
}{
	{"name", codecs.HasName},
	{"map", codecs.HasMap},
	{"game", codecs.HasGameType},
	{"version", codecs.HasVersion}, // Source only
	{"visibility", codecs.HasPassword},
	{"players", codecs.HasNumPlayers},
	{"max_players", codecs.HasMaxPlayers},
	{"bots", codecs.HasNumBots},
	{"vac", codecs.HasAntiCheat},
	{"keywords", codecs.HasKeywords}, // with EDFKeywords
}

// infoHas is the Has bits of the fields of info reply i that were read
// (the OS and the rules aside).
func (v *view) infoHas(i *Info) codecs.InfoHas {
	var has codecs.InfoHas
	for _, f := range infoHasFields {
		switch {
		case f.bit == codecs.HasVersion && i.GoldSrc, f.bit == codecs.HasKeywords && i.EDF&EDFKeywords == 0:
		case v.has(f.field):
			has |= f.bit
		}
	}
	return has
}

// ruleInt is rule with val in decimal.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (v *view) ruleInt(in *codecs.Info, f, k string, val int64) {
	if v.has(f) {
		v.rule(in, f, k, strconv.FormatInt(val, 10))
	}
}

// rule adds the rule k = val when the info reply's field f was read.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (v *view) rule(in *codecs.Info, f, k, val string) {
	if v.has(f) {
		in.Has |= codecs.HasRules
		in.Rules = append(in.Rules, [2]string{k, val})
	}
}

// fields is every decoded field, by message. It appends with Put and its
// typed forms, not Add: a call site through a pointer, converting nothing,
// is less code in the browser module.
func (v *view) fields() codecs.Object {
	var f codecs.Object
	if i := v.info; i != nil {
		f.Put("info", v.infoFields(i))
	}
	if p := v.players; p != nil {
		ps := make([]codecs.Object, 0, len(p.Players))
		for _, x := range p.Players {
			o := make(codecs.Object, 0, 6)
			o.Put("index", x.Index)
			o.PutString("name", x.Name)
			o.PutInt("score", int(x.Score))
			o.Put("duration", x.Duration)
			if p.Ship {
				o.PutInt("deaths", int(x.Deaths))
				o.PutInt("money", int(x.Money))
			}
			ps = append(ps, o)
		}
		o := make(codecs.Object, 0, 3)
		o.Put("count", p.Count)
		if n := p.Unlisted(); n > 0 {
			o.PutInt("unlisted", n)
		}
		o.Put("players", ps)
		f.Put("players", o)
	}
	if r := v.rules; r != nil {
		rs := make([]any, 0, len(r.Rules))
		for _, x := range r.Rules {
			rs = append(rs, []string{x.Name, x.Value})
		}
		o := make(codecs.Object, 0, 2)
		o.PutInt("count", int(r.Count))
		o.Put("rules", rs)
		f.Put("rules", o)
	}
	if len(v.challenges) > 0 {
		cs := make([]any, 0, len(v.challenges))
		for _, c := range v.challenges {
			cs = append(cs, codecs.Hex(le32(c)))
		}
		f.Put("challenges", cs)
	}
	if len(v.requests) > 0 {
		qs := make([]codecs.Object, 0, len(v.requests))
		for _, q := range v.requests {
			o := make(codecs.Object, 0, 2)
			o.PutString("type", q.Type.String())
			if q.HasChallenge {
				o.Put("challenge", codecs.Hex(le32(q.Challenge)))
			}
			qs = append(qs, o)
		}
		f.Put("queries", qs)
	}
	if len(v.masterQ) > 0 {
		qs := make([]codecs.Object, 0, len(v.masterQ))
		for _, q := range v.masterQ {
			o := make(codecs.Object, 0, 3)
			o.PutString("region", q.Region.String())
			o.PutString("seed", q.Seed.String())
			o.PutString("filter", q.Filter)
			qs = append(qs, o)
		}
		f.Put("master_queries", qs)
	}
	if len(v.pages) > 0 {
		end := false
		for _, p := range v.pages {
			end = end || p.End
		}
		f.PutInt("pages", len(v.pages))
		f.Put("end", end)
	}
	if len(v.splits) > 0 {
		ss := make([]codecs.Object, 0, len(v.splits))
		for _, s := range v.splits {
			o := make(codecs.Object, 0, 6)
			o.PutInt("id", int(s.id))
			if s.known {
				o.PutString("form", s.form.String())
				o.PutInt("total", s.first.total)
				o.Put("compressed", s.first.compressed)
			}
			o.PutInt("received", s.have)
			o.PutInt("duplicates", s.dups)
			ss = append(ss, o)
		}
		f.Put("splits", ss)
	}
	if v.dropped > 0 {
		f.PutInt("dropped_datagrams", v.dropped)
	}
	return f
}

func le32(v uint32) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
}

func (v *view) infoFields(i *Info) codecs.Object {
	o := v.infoAll(i)
	if v.infoSeen == nil {
		return o
	}
	// A cut reply: only the fields read (the wire names, less "info.").
	kept := o[:0]
	for _, kv := range o {
		name := kv.Key
		switch name { // the keys whose span has another name
		case "mod_info":
			name = "mod.link"
		case "ship":
			name = "ship.mode"
		}
		if name == "form" || v.infoSeen[name] {
			kept = append(kept, kv)
		}
	}
	return kept
}

// infoAll is every field of the info reply; Put as in fields.
func (v *view) infoAll(i *Info) codecs.Object {
	o := make(codecs.Object, 0, 24)
	if i.GoldSrc {
		o.PutString("form", "goldsrc")
		o.PutString("address", i.Address)
	} else {
		o.PutString("form", "source")
		o.Put("protocol", i.Protocol)
	}
	o.PutString("name", i.Name)
	o.PutString("map", i.Map)
	o.PutString("folder", i.Folder)
	o.PutString("game", i.Game)
	if !i.GoldSrc {
		o.PutInt("app_id", int(i.AppID))
	}
	o.Put("players", i.Players)
	o.Put("max_players", i.MaxPlayers)
	if i.GoldSrc {
		o.Put("protocol", i.Protocol)
	} else {
		o.Put("bots", i.Bots)
	}
	o.PutString("server_type", string(rune(i.ServerType)))
	o.PutString("environment", string(rune(i.Environment)))
	o.Put("visibility", i.Visibility)
	if i.GoldSrc {
		o.Put("mod", i.Mod)
		if i.Mod == 1 {
			m := &i.ModInfo
			mo := make(codecs.Object, 0, 7)
			mo.PutString("link", m.Link)
			mo.PutString("download_link", m.DownloadLink)
			mo.PutInt("version", int(m.Version))
			mo.PutInt("size", int(m.Size))
			mo.Put("type", m.Type)
			mo.Put("dll", m.DLL)
			o.Put("mod_info", mo)
		}
		o.Put("vac", i.VAC)
		o.Put("bots", i.Bots)
		return o
	}
	o.Put("vac", i.VAC)
	if i.HasShip {
		so := make(codecs.Object, 0, 3)
		so.Put("mode", i.Ship.Mode)
		so.Put("witnesses", i.Ship.Witnesses)
		so.Put("duration", i.Ship.Duration)
		o.Put("ship", so)
	}
	o.PutString("version", i.Version)
	if !i.HasEDF {
		return o
	}
	o.Put("edf", i.EDF)
	if i.EDF&EDFPort != 0 {
		o.PutInt("port", int(i.Port))
	}
	if i.EDF&EDFSteamID != 0 {
		o.PutString("steam_id", strconv.FormatUint(i.SteamID, 10)) // a string: JSON numbers lose 64-bit precision
	}
	if i.EDF&EDFSourceTV != 0 {
		o.PutInt("sourcetv_port", int(i.SourceTVPort))
		o.PutString("sourcetv_name", i.SourceTVName)
	}
	if i.EDF&EDFKeywords != 0 {
		o.PutString("keywords", i.Keywords)
	}
	if i.EDF&EDFGameID != 0 {
		o.PutString("game_id", strconv.FormatUint(i.GameID, 10))
	}
	return o
}
