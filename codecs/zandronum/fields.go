package zandronum

import (
	"math/bits"

	"github.com/querylens/querylens/codecs"
)

// Fields returns every decoded field of the reply as json.md's "fields":
// snake_case names from zandronum.md, in wire order, only the fields the
// returned flags carry, and "trailing_bytes" last.
func (r *Response) Fields() codecs.Object {
	o := codecs.Object{{Key: "response", Value: r.Code}, {Key: "time", Value: r.Time}}
	if r.Code == CodeIgnored || r.Code == CodeBanned {
		return o.Add("trailing_bytes", len(r.Trailing))
	}
	o = o.Add("version", r.Version).Add("flags", uint32(r.Flags))
	// add adds one field when its flag (bit, 32+bit for SQF2) was read.
	add := func(bit int, key string, v any) {
		if r.has(bit) {
			o = o.Add(key, v)
		}
	}
	bit := func(f Flag) int { return bits.TrailingZeros32(uint32(f)) }
	add(bit(SQF_NAME), "name", r.Name)
	add(bit(SQF_URL), "url", r.URL)
	add(bit(SQF_EMAIL), "email", r.Email)
	add(bit(SQF_MAPNAME), "map", r.Map)
	add(bit(SQF_MAXCLIENTS), "maxclients", r.MaxClients)
	add(bit(SQF_MAXPLAYERS), "maxplayers", r.MaxPlayers)
	add(bit(SQF_PWADS), "pwads", nonNil(r.PWADs))
	if r.has(bit(SQF_GAMETYPE)) {
		o = o.Add("gamemode", uint8(r.GameMode)).Add("instagib", r.Instagib).Add("buckshot", r.Buckshot)
	}
	add(bit(SQF_GAMENAME), "gamename", r.GameName)
	add(bit(SQF_IWAD), "iwad", r.IWAD)
	add(bit(SQF_FORCEPASSWORD), "forcepassword", r.ForcePassword)
	add(bit(SQF_FORCEJOINPASSWORD), "forcejoinpassword", r.ForceJoinPassword)
	add(bit(SQF_GAMESKILL), "skill", r.Skill)
	add(bit(SQF_BOTSKILL), "botskill", r.BotSkill)
	if r.has(bit(SQF_DMFLAGS)) {
		o = o.Add("dmflags", r.DMFlags[0]).Add("dmflags2", r.DMFlags[1]).Add("compatflags", r.DMFlags[2])
	}
	if r.has(bit(SQF_LIMITS)) {
		l := &r.Limits
		o = o.Add("fraglimit", l.FragLimit).Add("timelimit", l.TimeLimit)
		if l.TimeLimit != 0 {
			o = o.Add("timeleft", l.TimeLeft)
		}
		o = o.Add("duellimit", l.DuelLimit).Add("pointlimit", l.PointLimit).Add("winlimit", l.WinLimit)
	}
	add(bit(SQF_TEAMDAMAGE), "teamdamage", r.TeamDamage)
	add(bit(SQF_TEAMSCORES), "teamscores", []int{int(r.TeamScores[0]), int(r.TeamScores[1])})
	add(bit(SQF_NUMPLAYERS), "numplayers", r.NumPlayers)
	if r.has(bit(SQF_PLAYERDATA)) {
		ps := make([]codecs.Object, 0, len(r.Players))
		for _, p := range r.Players {
			po := codecs.Object{{Key: "name", Value: p.Name}, {Key: "score", Value: p.Score}, {Key: "ping", Value: p.Ping},
				{Key: "spectator", Value: p.Spectator}, {Key: "bot", Value: p.Bot}}
			if r.TeamByte {
				po = po.Add("team", p.Team)
			}
			ps = append(ps, po.Add("minutes", p.Minutes))
		}
		o = o.Add("players", ps)
	}
	add(bit(SQF_TEAMINFO_NUMBER), "numteams", r.NumTeams)
	if r.has(bit(SQF_TEAMINFO_NAME)) {
		o = o.Add("team_names", each(r.Teams, func(t Team) string { return t.Name }))
	}
	if r.has(bit(SQF_TEAMINFO_COLOR)) {
		o = o.Add("team_colors", each(r.Teams, func(t Team) int { return int(t.Color) }))
	}
	if r.has(bit(SQF_TEAMINFO_SCORE)) {
		o = o.Add("team_scores", each(r.Teams, func(t Team) int { return int(t.Score) }))
	}
	if r.has(bit(SQF_TESTING_SERVER)) {
		o = o.Add("testing", r.Testing).Add("testing_name", r.TestingName)
	}
	add(bit(SQF_DATA_MD5SUM), "data_md5sum", r.DataMD5Sum)
	if r.has(bit(SQF_ALL_DMFLAGS)) {
		o = o.Add("all_dmflags", each(r.AllDMFlags, func(x uint32) int { return int(x) }))
	}
	add(bit(SQF_SECURITY_SETTINGS), "security", r.Security)
	if r.has(bit(SQF_OPTIONAL_WADS)) {
		o = o.Add("optional_wads", each(r.OptionalWADs, func(x uint8) int { return int(x) }))
	}
	add(bit(SQF_DEH), "deh", nonNil(r.DEH))
	add(bit(SQF_EXTENDED_INFO), "flags2", uint32(r.Flags2))
	add(32+bit(Flag(SQF2_PWAD_HASHES)), "pwad_hashes", nonNil(r.PWADHashes))
	add(32+bit(Flag(SQF2_COUNTRY)), "country", r.Country)
	add(32+bit(Flag(SQF2_GAMEMODE_NAME)), "gamemode_name", r.GameModeName)
	add(32+bit(Flag(SQF2_GAMEMODE_SHORTNAME)), "gamemode_shortname", r.GameModeShort)
	add(32+bit(Flag(SQF2_VOICECHAT)), "voicechat", r.VoiceChat)
	return o.Add("trailing_bytes", len(r.Trailing))
}

// each maps v through f into a new slice (never nil, so JSON shows []).
func each[T, U any](v []T, f func(T) U) []U {
	out := make([]U, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// Info returns the protocol-neutral view of a full reply (json.md "info"):
// names without colour escapes, the game type from SQF2's mode name or
// else the mode table, password from SQF_FORCEPASSWORD, and a player's team
// only when the records carry a team byte and it is not 255. It returns
// nil for a refusal.
func (r *Response) Info() *codecs.Info {
	if r.Code != CodeAccepted && r.Code != CodeSegmented {
		return nil
	}
	in := &codecs.Info{Has: codecs.HasVersion, Version: r.Version}
	has := func(x Flag) bool { return r.has(bits.TrailingZeros32(uint32(x))) }
	if has(SQF_NAME) {
		in.Has |= codecs.HasName
		in.Name = r.Name
	}
	if has(SQF_MAPNAME) {
		in.Has |= codecs.HasMap
		in.Map = r.Map
	}
	switch {
	case r.has(32+2) && r.GameModeName != "":
		in.Has |= codecs.HasGameType
		in.GameType = r.GameModeName
	case has(SQF_GAMETYPE):
		in.Has |= codecs.HasGameType
		in.GameType = r.GameMode.String()
	}
	if has(SQF_FORCEPASSWORD) {
		in.Has |= codecs.HasPassword
		in.Password = r.ForcePassword != 0
	}
	if has(SQF_NUMPLAYERS) {
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = int(r.NumPlayers)
	}
	if has(SQF_MAXPLAYERS) {
		in.Has |= codecs.HasMaxPlayers
		in.MaxPlayers = int(r.MaxPlayers)
	}
	if has(SQF_MAXCLIENTS) {
		in.Has |= codecs.HasMaxClients
		in.MaxClients = int(r.MaxClients)
	}
	if has(SQF_PLAYERDATA) {
		in.Has |= codecs.HasPlayers
		in.Players = make([]codecs.Player, len(r.Players))
		for i, p := range r.Players {
			in.Players[i] = codecs.Player{
				Name: StripColors(p.Name), Score: int(p.Score), Ping: int(p.Ping),
				Team: int(p.Team), HasTeam: r.TeamByte && p.Team != NoTeam,
				Spectator: p.Spectator != 0, Bot: p.Bot != 0,
			}
		}
	}
	switch {
	case has(SQF_TEAMINFO_NAME) || has(SQF_TEAMINFO_SCORE):
		in.Has |= codecs.HasTeams
		in.Teams = make([]codecs.Team, len(r.Teams))
		for i, t := range r.Teams {
			in.Teams[i] = codecs.Team{Name: StripColors(t.Name), Score: int(t.Score)}
		}
		if !has(SQF_TEAMINFO_NAME) {
			for i := range in.Teams {
				in.Teams[i].Name = teamTitle(i)
			}
		}
	case has(SQF_TEAMSCORES):
		in.Has |= codecs.HasTeams
		in.Teams = []codecs.Team{{Name: "Blue", Score: int(r.TeamScores[0])}, {Name: "Red", Score: int(r.TeamScores[1])}}
	}
	return in
}

// teamTitle names team i of the default team table.
func teamTitle(i int) string {
	switch i {
	case TeamBlue:
		return "Blue"
	case TeamRed:
		return "Red"
	case TeamGreen:
		return "Green"
	case TeamGold:
		return "Gold"
	}
	return teamName(uint8(i))
}

// Fields returns the request's fields as json.md's "fields".
func (q *Request) Fields() codecs.Object {
	o := codecs.Object{{Key: "challenge", Value: ServerChallenge}, {Key: "flags", Value: uint32(q.Flags)}, {Key: "time", Value: q.Time}}
	if q.Flags&SQF_EXTENDED_INFO != 0 {
		o = o.Add("flags2", uint32(q.Flags2))
	}
	o = o.Add("segmented_request", q.Segmented)
	if len(q.Extra) > 0 {
		o = o.Add("extra", codecs.Hex(q.Extra))
	}
	return o
}

// Fields returns the master request's fields as json.md's "fields".
func (q *MasterRequest) Fields() codecs.Object {
	o := codecs.Object{{Key: "challenge", Value: q.Command}}
	if q.Command == MasterChallenge {
		o = o.Add("version", q.Version)
	}
	return o
}

// Fields returns the master answer's fields as json.md's "fields":
// "packets" held, the number of the last one and whether it ended the
// list ("final"), the servers in order and, for several packets, each
// packet's own ("packet_list").
func (l *MasterList) Fields() codecs.Object {
	o := codecs.Object{{Key: "response", Value: l.Code}}
	if l.Denied() != "" {
		return o
	}
	o = o.Add("packets", len(l.Packets))
	if n := len(l.Packets); n > 0 {
		last := l.Packets[n-1]
		o = o.Add("packet_number", last.Number).Add("final", last.Final)
	}
	all := l.serverStrings(l.Servers)
	o = o.Add("servers", all)
	if len(l.Packets) > 1 {
		ps := make([]codecs.Object, len(l.Packets))
		at := 0
		for i, p := range l.Packets {
			end := min(at+p.Servers, len(all))
			ps[i] = codecs.Object{{Key: "packet_number", Value: p.Number}, {Key: "final", Value: p.Final},
				{Key: "servers", Value: all[at:end]}}
			at = end
		}
		o = o.Add("packet_list", ps)
	}
	if l.Trailing > 0 {
		o = o.Add("trailing_bytes", l.Trailing)
	}
	return o
}

func (l *MasterList) serverStrings(v []Addr) []string {
	s := make([]string, len(v))
	for i, a := range v {
		s[i] = a.String()
	}
	return s
}
