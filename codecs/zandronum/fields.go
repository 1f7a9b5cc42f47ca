package zandronum

import (
	"math/bits"

	"github.com/querylens/querylens/codecs"
)

// Fields returns every decoded field of the reply as docs/protocols/json.md's "fields":
// snake_case names from docs/protocols/zandronum.md, in wire order, only the fields the
// returned flags carry, and "trailing_bytes" last.
func (r *Response) Fields() codecs.Object {
	o := make(codecs.Object, 0, 2)
	o.Put("response", r.Code)
	o.Put("time", r.Time)
	if r.Code != CodeIgnored && r.Code != CodeBanned {
		o.Put("version", r.Version)
		o.Put("flags", uint32(r.Flags))
		for i := range responseFields {
			f := &responseFields[i]
			if r.has(int(f.bit)) && (f.sent == nil || f.sent(r)) {
				o.Put(f.key, f.value(r))
			}
		}
	}
	o.Put("trailing_bytes", len(r.Trailing))
	return o
}

// responseField is one key of Fields after "flags": the flag bit that
// carries it (32+bit for SQF2), how to read its value from the reply, and,
// for a field its flag does not always carry, when it was sent.
type responseField struct {
	bit   uint8
	key   string
	value func(r *Response) any
	sent  func(r *Response) bool // nil: whenever the flag is set
}

// countryBit carries "country" (SQF2_COUNTRY), the one field a decode
// with DecodeOptions.NoFields keeps.
const countryBit = 32 + 1

// responseFields are the keys of Fields after "flags", in wire order. Each
// entry carries its own value, so a field can be added or moved without
// touching the others; TestFieldsTable checks the order against the
// decoder's and every value against the reply. The price: called through
// the table, the readers make the compiler move a decoded reply to the
// heap (one allocation of about 512 bytes per Codec.Decode; 45 -> 46
// allocations for a CTF reply), which the old switch by position avoided.
var responseFields = [...]responseField{
	{0, "name", func(r *Response) any { return r.Name }, nil},
	{1, "url", func(r *Response) any { return r.URL }, nil},
	{2, "email", func(r *Response) any { return r.Email }, nil},
	{3, "map", func(r *Response) any { return r.Map }, nil},
	{4, "maxclients", func(r *Response) any { return r.MaxClients }, nil},
	{5, "maxplayers", func(r *Response) any { return r.MaxPlayers }, nil},
	{6, "pwads", func(r *Response) any { return nonNil(r.PWADs) }, nil},
	{7, "gamemode", func(r *Response) any { return uint8(r.GameMode) }, nil},
	{7, "instagib", func(r *Response) any { return r.Instagib }, nil},
	{7, "buckshot", func(r *Response) any { return r.Buckshot }, nil},
	{8, "gamename", func(r *Response) any { return r.GameName }, nil},
	{9, "iwad", func(r *Response) any { return r.IWAD }, nil},
	{10, "forcepassword", func(r *Response) any { return r.ForcePassword }, nil},
	{11, "forcejoinpassword", func(r *Response) any { return r.ForceJoinPassword }, nil},
	{12, "skill", func(r *Response) any { return r.Skill }, nil},
	{13, "botskill", func(r *Response) any { return r.BotSkill }, nil},
	{14, "dmflags", func(r *Response) any { return r.DMFlags[0] }, nil},
	{14, "dmflags2", func(r *Response) any { return r.DMFlags[1] }, nil},
	{14, "compatflags", func(r *Response) any { return r.DMFlags[2] }, nil},
	{16, "fraglimit", func(r *Response) any { return r.Limits.FragLimit }, nil},
	{16, "timelimit", func(r *Response) any { return r.Limits.TimeLimit }, nil},
	{16, "timeleft", func(r *Response) any { return r.Limits.TimeLeft }, func(r *Response) bool { return r.Limits.TimeLimit != 0 }},
	{16, "duellimit", func(r *Response) any { return r.Limits.DuelLimit }, nil},
	{16, "pointlimit", func(r *Response) any { return r.Limits.PointLimit }, nil},
	{16, "winlimit", func(r *Response) any { return r.Limits.WinLimit }, nil},
	{17, "teamdamage", func(r *Response) any { return r.TeamDamage }, nil},
	{18, "teamscores", func(r *Response) any { return []int{int(r.TeamScores[0]), int(r.TeamScores[1])} }, nil},
	{19, "numplayers", func(r *Response) any { return r.NumPlayers }, nil},
	{20, "players", func(r *Response) any { return r.playerObjects() }, nil},
	{21, "numteams", func(r *Response) any { return r.NumTeams }, nil},
	{22, "team_names", func(r *Response) any { return each(r.Teams, func(t Team) string { return t.Name }) }, nil},
	{23, "team_colors", func(r *Response) any { return each(r.Teams, func(t Team) int { return int(t.Color) }) }, nil},
	{24, "team_scores", func(r *Response) any { return each(r.Teams, func(t Team) int { return int(t.Score) }) }, nil},
	{25, "testing", func(r *Response) any { return r.Testing }, nil},
	{25, "testing_name", func(r *Response) any { return r.TestingName }, nil},
	{26, "data_md5sum", func(r *Response) any { return r.DataMD5Sum }, nil},
	{27, "all_dmflags", func(r *Response) any { return each(r.AllDMFlags, func(x uint32) int { return int(x) }) }, nil},
	{28, "security", func(r *Response) any { return r.Security }, nil},
	{29, "optional_wads", func(r *Response) any { return each(r.OptionalWADs, func(x uint8) int { return int(x) }) }, nil},
	{30, "deh", func(r *Response) any { return nonNil(r.DEH) }, nil},
	{31, "flags2", func(r *Response) any { return uint32(r.Flags2) }, nil},
	{32, "pwad_hashes", func(r *Response) any { return nonNil(r.PWADHashes) }, nil},
	{countryBit, "country", func(r *Response) any { return r.Country }, nil},
	{34, "gamemode_name", func(r *Response) any { return r.GameModeName }, nil},
	{35, "gamemode_shortname", func(r *Response) any { return r.GameModeShort }, nil},
	{36, "voicechat", func(r *Response) any { return r.VoiceChat }, nil},
}

// playerObjects is the "players" field.
func (r *Response) playerObjects() []codecs.Object {
	ps := make([]codecs.Object, 0, len(r.Players))
	for _, p := range r.Players {
		po := make(codecs.Object, 0, 5)
		po.Put("name", p.Name)
		po.Put("score", p.Score)
		po.Put("ping", p.Ping)
		po.Put("spectator", p.Spectator)
		po.Put("bot", p.Bot)
		if r.TeamByte {
			po.Put("team", p.Team)
		}
		po.Put("minutes", p.Minutes)
		ps = append(ps, po)
	}
	return ps
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

// Info returns the protocol-neutral view of a full reply (docs/protocols/json.md "info"):
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
	// The mode's own name, else the name of its number; a name sent
	// empty with no number to fall back on stays "" (sent, not missing).
	switch {
	case r.has(32+2) && (r.GameModeName != "" || !r.hasFlag(SQF_GAMETYPE)):
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

// Fields returns the request's fields as docs/protocols/json.md's "fields".
func (q *Request) Fields() codecs.Object {
	o := make(codecs.Object, 0, 3)
	o.Put("challenge", ServerChallenge)
	o.Put("flags", uint32(q.Flags))
	o.Put("time", q.Time)
	if q.Flags&SQF_EXTENDED_INFO != 0 {
		o.Put("flags2", uint32(q.Flags2))
	}
	o.Put("segmented_request", q.Segmented)
	if len(q.Extra) > 0 {
		o.Put("extra", codecs.Hex(q.Extra))
	}
	return o
}

// Fields returns the master request's fields as docs/protocols/json.md's "fields".
func (q *MasterRequest) Fields() codecs.Object {
	o := make(codecs.Object, 0, 1).Add("challenge", q.Command)
	if q.Command == MasterChallenge {
		o = o.Add("version", q.Version)
	}
	return o
}

// Fields returns the master answer's fields as docs/protocols/json.md's "fields":
// "packets" held, the number of the last one and whether it ended the
// list ("final"), the servers in order and, for several packets, each
// packet's own ("packet_list").
func (l *MasterList) Fields() codecs.Object {
	o := make(codecs.Object, 0, 1)
	o.Put("response", l.Code)
	if l.Denied() != "" {
		return o
	}
	o.Put("packets", len(l.Packets))
	if n := len(l.Packets); n > 0 {
		last := l.Packets[n-1]
		o.Put("packet_number", last.Number)
		o.Put("final", last.Final)
	}
	all := l.serverStrings(l.Servers)
	o.Put("servers", all)
	if len(l.Packets) > 1 {
		ps := make([]codecs.Object, len(l.Packets))
		at := 0
		for i, p := range l.Packets {
			end := min(at+p.Servers, len(all))
			po := make(codecs.Object, 0, 3)
			po.Put("packet_number", p.Number)
			po.Put("final", p.Final)
			po.Put("servers", all[at:end])
			ps[i] = po
			at = end
		}
		o.Put("packet_list", ps)
	}
	if l.Trailing > 0 {
		o.Put("trailing_bytes", l.Trailing)
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
