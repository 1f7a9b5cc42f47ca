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
// players (bots included) and max players from the info reply, the player
// list (name and score), and as rules first what the info reply says
// beyond those (bots, vac, os, server_type, keywords, folder, app_id,
// protocol, port, steam_id), then the server's rules.
func (v *view) neutral() *codecs.Info {
	in := &codecs.Info{}
	if i := v.info; i != nil {
		in.Has |= codecs.HasName | codecs.HasMap | codecs.HasGameType | codecs.HasPassword | codecs.HasNumPlayers | codecs.HasMaxPlayers | codecs.HasRules
		in.Name, in.Map, in.GameType = i.Name, i.Map, i.Game
		in.Password = i.Visibility != 0
		in.NumPlayers, in.MaxPlayers = int(i.Players), int(i.MaxPlayers)
		if !i.GoldSrc {
			in.Has |= codecs.HasVersion
			in.Version = i.Version
		}
		rule := func(k, v string) { in.Rules = append(in.Rules, [2]string{k, v}) }
		rule("bots", strconv.Itoa(int(i.Bots)))
		rule("vac", strconv.FormatBool(i.VAC != 0))
		rule("os", environment(i.Environment))
		rule("server_type", serverType(i.ServerType))
		if i.EDF&EDFKeywords != 0 {
			rule("keywords", i.Keywords)
		}
		rule("folder", i.Folder)
		if !i.GoldSrc {
			rule("app_id", strconv.Itoa(int(i.AppID)))
		}
		rule("protocol", strconv.Itoa(int(i.Protocol)))
		if i.EDF&EDFPort != 0 {
			rule("port", strconv.Itoa(int(i.Port)))
		}
		if i.EDF&EDFSteamID != 0 {
			rule("steam_id", strconv.FormatUint(i.SteamID, 10))
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
			in.NumPlayers = len(p.Players)
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

// fields is every decoded field, by message.
func (v *view) fields() codecs.Object {
	var f codecs.Object
	if i := v.info; i != nil {
		f = f.Add("info", infoFields(i))
	}
	if p := v.players; p != nil {
		ps := make([]codecs.Object, 0, len(p.Players))
		for _, x := range p.Players {
			o := make(codecs.Object, 0, 6).Add("index", x.Index).Add("name", x.Name).Add("score", x.Score).Add("duration", x.Duration)
			if p.Ship {
				o = o.Add("deaths", x.Deaths).Add("money", x.Money)
			}
			ps = append(ps, o)
		}
		f = f.Add("players", make(codecs.Object, 0, 2).Add("count", p.Count).Add("players", ps))
	}
	if r := v.rules; r != nil {
		rs := make([]any, 0, len(r.Rules))
		for _, x := range r.Rules {
			rs = append(rs, []string{x.Name, x.Value})
		}
		f = f.Add("rules", make(codecs.Object, 0, 2).Add("count", r.Count).Add("rules", rs))
	}
	if len(v.challenges) > 0 {
		cs := make([]any, 0, len(v.challenges))
		for _, c := range v.challenges {
			cs = append(cs, codecs.Hex(le32(c)))
		}
		f = f.Add("challenges", cs)
	}
	if len(v.requests) > 0 {
		qs := make([]codecs.Object, 0, len(v.requests))
		for _, q := range v.requests {
			o := make(codecs.Object, 0, 2).Add("type", q.Type.String())
			if q.HasChallenge {
				o = o.Add("challenge", codecs.Hex(le32(q.Challenge)))
			}
			qs = append(qs, o)
		}
		f = f.Add("queries", qs)
	}
	if len(v.masterQ) > 0 {
		qs := make([]codecs.Object, 0, len(v.masterQ))
		for _, q := range v.masterQ {
			qs = append(qs, make(codecs.Object, 0, 3).Add("region", q.Region.String()).Add("seed", q.Seed.String()).Add("filter", q.Filter))
		}
		f = f.Add("master_queries", qs)
	}
	if len(v.pages) > 0 {
		end := false
		for _, p := range v.pages {
			end = end || p.End
		}
		f = f.Add("pages", len(v.pages)).Add("end", end)
	}
	if len(v.splits) > 0 {
		ss := make([]codecs.Object, 0, len(v.splits))
		for _, s := range v.splits {
			o := make(codecs.Object, 0, 6).Add("id", s.id)
			if s.known {
				o = o.Add("form", s.form.String()).Add("total", s.first.total).Add("compressed", s.first.compressed)
			}
			ss = append(ss, o.Add("received", s.have).Add("duplicates", s.dups))
		}
		f = f.Add("splits", ss)
	}
	if v.dropped > 0 {
		f = f.Add("dropped_datagrams", v.dropped)
	}
	return f
}

func le32(v uint32) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
}

func infoFields(i *Info) codecs.Object {
	o := make(codecs.Object, 0, 24)
	if i.GoldSrc {
		o = o.Add("form", "goldsrc").Add("address", i.Address)
	} else {
		o = o.Add("form", "source").Add("protocol", i.Protocol)
	}
	o = o.Add("name", i.Name).Add("map", i.Map).Add("folder", i.Folder).Add("game", i.Game)
	if !i.GoldSrc {
		o = o.Add("app_id", i.AppID)
	}
	o = o.Add("players", i.Players).Add("max_players", i.MaxPlayers)
	if i.GoldSrc {
		o = o.Add("protocol", i.Protocol)
	} else {
		o = o.Add("bots", i.Bots)
	}
	o = o.Add("server_type", string(rune(i.ServerType))).Add("environment", string(rune(i.Environment))).
		Add("visibility", i.Visibility)
	if i.GoldSrc {
		o = o.Add("mod", i.Mod)
		if i.Mod == 1 {
			m := &i.ModInfo
			o = o.Add("mod_info", make(codecs.Object, 0, 7).Add("link", m.Link).Add("download_link", m.DownloadLink).
				Add("version", m.Version).Add("size", m.Size).Add("type", m.Type).Add("dll", m.DLL))
		}
		return o.Add("vac", i.VAC).Add("bots", i.Bots)
	}
	o = o.Add("vac", i.VAC)
	if i.HasShip {
		o = o.Add("ship", make(codecs.Object, 0, 3).Add("mode", i.Ship.Mode).Add("witnesses", i.Ship.Witnesses).Add("duration", i.Ship.Duration))
	}
	o = o.Add("version", i.Version)
	if !i.HasEDF {
		return o
	}
	o = o.Add("edf", i.EDF)
	if i.EDF&EDFPort != 0 {
		o = o.Add("port", i.Port)
	}
	if i.EDF&EDFSteamID != 0 {
		o = o.Add("steam_id", strconv.FormatUint(i.SteamID, 10)) // a string: JSON numbers lose 64-bit precision
	}
	if i.EDF&EDFSourceTV != 0 {
		o = o.Add("sourcetv_port", i.SourceTVPort).Add("sourcetv_name", i.SourceTVName)
	}
	if i.EDF&EDFKeywords != 0 {
		o = o.Add("keywords", i.Keywords)
	}
	if i.EDF&EDFGameID != 0 {
		o = o.Add("game_id", strconv.FormatUint(i.GameID, 10))
	}
	return o
}
