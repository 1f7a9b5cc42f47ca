package zandronum

import (
	"math/bits"

	"github.com/querylens/querylens/codecs"
)

// Fields returns every decoded field of the reply as json.md's "fields":
// snake_case names from zandronum.md, in wire order, only the fields the
// returned flags carry, and "trailing_bytes" last.
func (r *Response) Fields() codecs.Object {
	o := make(codecs.Object, 0, 2).Add("response", r.Code).Add("time", r.Time)
	if r.Code == CodeIgnored || r.Code == CodeBanned {
		return o.Add("trailing_bytes", len(r.Trailing))
	}
	o = o.Add("version", r.Version).Add("flags", uint32(r.Flags))
	for i, f := range responseFields {
		if r.has(int(f.bit)) && (i != timeLeftField || r.Limits.TimeLimit != 0) {
			o = o.Add(f.key, r.fieldValue(i))
		}
	}
	return o.Add("trailing_bytes", len(r.Trailing))
}

// responseFields are the keys of Fields after "flags", in wire order, each
// with the flag bit that carries it (32+bit for SQF2).
var responseFields = [...]struct {
	bit uint8
	key string
}{
	{0, "name"}, {1, "url"}, {2, "email"}, {3, "map"}, {4, "maxclients"}, {5, "maxplayers"}, {6, "pwads"},
	{7, "gamemode"}, {7, "instagib"}, {7, "buckshot"}, {8, "gamename"}, {9, "iwad"},
	{10, "forcepassword"}, {11, "forcejoinpassword"}, {12, "skill"}, {13, "botskill"},
	{14, "dmflags"}, {14, "dmflags2"}, {14, "compatflags"},
	{16, "fraglimit"}, {16, "timelimit"}, {16, "timeleft"}, {16, "duellimit"}, {16, "pointlimit"}, {16, "winlimit"},
	{17, "teamdamage"}, {18, "teamscores"}, {19, "numplayers"}, {20, "players"}, {21, "numteams"},
	{22, "team_names"}, {23, "team_colors"}, {24, "team_scores"}, {25, "testing"}, {25, "testing_name"},
	{26, "data_md5sum"}, {27, "all_dmflags"}, {28, "security"}, {29, "optional_wads"}, {30, "deh"},
	{31, "flags2"}, {32, "pwad_hashes"}, {33, "country"}, {34, "gamemode_name"}, {35, "gamemode_shortname"},
	{36, "voicechat"},
}

// timeLeftField is the index of "timeleft", sent only with a time limit.
const timeLeftField = 21

// fieldValue is the value of responseFields[i].
func (r *Response) fieldValue(i int) any {
	_ = *r // one nil check for the whole function
	switch i {
	case 0:
		return r.Name
	case 1:
		return r.URL
	case 2:
		return r.Email
	case 3:
		return r.Map
	case 4:
		return r.MaxClients
	case 5:
		return r.MaxPlayers
	case 6:
		return nonNil(r.PWADs)
	case 7:
		return uint8(r.GameMode)
	case 8:
		return r.Instagib
	case 9:
		return r.Buckshot
	case 10:
		return r.GameName
	case 11:
		return r.IWAD
	case 12:
		return r.ForcePassword
	case 13:
		return r.ForceJoinPassword
	case 14:
		return r.Skill
	case 15:
		return r.BotSkill
	case 16, 17, 18:
		return r.DMFlags[i-16]
	case 19:
		return r.Limits.FragLimit
	case 20:
		return r.Limits.TimeLimit
	case timeLeftField:
		return r.Limits.TimeLeft
	case 22:
		return r.Limits.DuelLimit
	case 23:
		return r.Limits.PointLimit
	case 24:
		return r.Limits.WinLimit
	case 25:
		return r.TeamDamage
	case 26:
		return []int{int(r.TeamScores[0]), int(r.TeamScores[1])}
	case 27:
		return r.NumPlayers
	case 28:
		return r.playerObjects()
	case 29:
		return r.NumTeams
	case 30:
		names := make([]string, len(r.Teams))
		for i, t := range r.Teams {
			names[i] = t.Name
		}
		return names
	case 31, 32:
		v := make([]int, len(r.Teams))
		for j, t := range r.Teams {
			if i == 31 {
				v[j] = int(t.Color)
			} else {
				v[j] = int(t.Score)
			}
		}
		return v
	case 33:
		return r.Testing
	case 34:
		return r.TestingName
	case 35:
		return r.DataMD5Sum
	case 36:
		v := make([]int, len(r.AllDMFlags))
		for i, x := range r.AllDMFlags {
			v[i] = int(x)
		}
		return v
	case 37:
		return r.Security
	case 38:
		v := make([]int, len(r.OptionalWADs))
		for i, x := range r.OptionalWADs {
			v[i] = int(x)
		}
		return v
	case 39:
		return nonNil(r.DEH)
	case 40:
		return uint32(r.Flags2)
	case 41:
		return nonNil(r.PWADHashes)
	case 42:
		return r.Country
	case 43:
		return r.GameModeName
	case 44:
		return r.GameModeShort
	}
	return r.VoiceChat
}

// playerObjects is the "players" field.
func (r *Response) playerObjects() []codecs.Object {
	ps := make([]codecs.Object, 0, len(r.Players))
	for _, p := range r.Players {
		po := make(codecs.Object, 0, 5).Add("name", p.Name).Add("score", p.Score).Add("ping", p.Ping).Add("spectator", p.Spectator).Add("bot", p.Bot)
		if r.TeamByte {
			po = po.Add("team", p.Team)
		}
		ps = append(ps, po.Add("minutes", p.Minutes))
	}
	return ps
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
	if r.hasFlag(SQF_NAME) {
		in.Has |= codecs.HasName
		in.Name = r.Name
	}
	if r.hasFlag(SQF_MAPNAME) {
		in.Has |= codecs.HasMap
		in.Map = r.Map
	}
	switch {
	case r.has(32+2) && r.GameModeName != "":
		in.Has |= codecs.HasGameType
		in.GameType = r.GameModeName
	case r.hasFlag(SQF_GAMETYPE):
		in.Has |= codecs.HasGameType
		in.GameType = r.GameMode.String()
	}
	if r.hasFlag(SQF_FORCEPASSWORD) {
		in.Has |= codecs.HasPassword
		in.Password = r.ForcePassword != 0
	}
	if r.hasFlag(SQF_NUMPLAYERS) {
		in.Has |= codecs.HasNumPlayers
		in.NumPlayers = int(r.NumPlayers)
	}
	if r.hasFlag(SQF_MAXPLAYERS) {
		in.Has |= codecs.HasMaxPlayers
		in.MaxPlayers = int(r.MaxPlayers)
	}
	if r.hasFlag(SQF_MAXCLIENTS) {
		in.Has |= codecs.HasMaxClients
		in.MaxClients = int(r.MaxClients)
	}
	if r.hasFlag(SQF_PLAYERDATA) {
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
	case r.hasFlag(SQF_TEAMINFO_NAME) || r.hasFlag(SQF_TEAMINFO_SCORE):
		in.Has |= codecs.HasTeams
		in.Teams = make([]codecs.Team, len(r.Teams))
		for i, t := range r.Teams {
			in.Teams[i] = codecs.Team{Name: StripColors(t.Name), Score: int(t.Score)}
		}
		if !r.hasFlag(SQF_TEAMINFO_NAME) {
			for i := range in.Teams {
				in.Teams[i].Name = teamTitle(i)
			}
		}
	case r.hasFlag(SQF_TEAMSCORES):
		in.Has |= codecs.HasTeams
		in.Teams = make([]codecs.Team, 2)
		in.Teams[0] = codecs.Team{Name: "Blue", Score: int(r.TeamScores[0])}
		in.Teams[1] = codecs.Team{Name: "Red", Score: int(r.TeamScores[1])}
	}
	return in
}

// hasFlag is has for the field of SQF flag x.
func (r *Response) hasFlag(x Flag) bool { return r.has(bits.TrailingZeros32(uint32(x))) }

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
	o := make(codecs.Object, 0, 3).Add("challenge", ServerChallenge).Add("flags", uint32(q.Flags)).Add("time", q.Time)
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
	o := make(codecs.Object, 0, 1).Add("challenge", q.Command)
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
	o := make(codecs.Object, 0, 1).Add("response", l.Code)
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
			ps[i] = make(codecs.Object, 0, 3).Add("packet_number", p.Number).Add("final", p.Final).Add("servers", all[at:end])
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
