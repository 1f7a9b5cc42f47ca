package zandronum

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestFlagString(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"zero", Flag(0).String(), "0"},
		{"one", SQF_NAME.String(), "SQF_NAME"},
		{"two", (SQF_NAME | SQF_EXTENDED_INFO).String(), "SQF_NAME|SQF_EXTENDED_INFO"},
		{"unused bit 15", (SQF_MAPNAME | 0x8000).String(), "SQF_MAPNAME|0x8000"},
		{"flags2", (SQF2_COUNTRY | SQF2_VOICECHAT).String(), "SQF2_COUNTRY|SQF2_VOICECHAT"},
		{"flags2 unknown", Flag2(0x120).String(), "0x120"},
	} {
		t.Run(tc.name, func(t *testing.T) { equal(t, "String", tc.want, tc.got) })
	}
	equal(t, "Unknown", Flag(0x8000), (SQF_ALL | 0x8000).Unknown())
	equal(t, "Unknown2", Flag2(0x20), Flag2(0x3f).Unknown())
}

func TestGameModes(t *testing.T) {
	for _, tc := range []struct {
		mode    GameMode
		name    string
		short   string
		onTeams bool
		score   string
	}{
		{ModeCooperative, "Cooperative", "COOP", false, "kills"},
		{ModeDeathmatch, "Deathmatch", "DM", false, "frags"},
		{ModeTeamPlay, "Team Deathmatch", "TDM", true, "frags"},
		{ModeLastManStanding, "Last Man Standing", "LMS", false, "wins"},
		{ModeTeamLMS, "Team LMS", "TLMS", true, "wins"},
		{ModePossession, "Possession", "POSS", false, "points"},
		{ModeCTF, "Capture the Flag", "CTF", true, "points"},
		{ModeDomination, "Domination", "DOM", true, "points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, ok := tc.mode.Info()
			equal(t, "known", true, ok)
			equal(t, "info", ModeInfo{tc.name, tc.short, tc.onTeams, info.Score}, info)
			equal(t, "score", tc.score, info.Score.String())
			equal(t, "String", tc.name, tc.mode.String())
		})
	}
	if _, ok := GameMode(16).Info(); ok {
		t.Error("mode 16 is known")
	}
	equal(t, "unknown", "mode 16", GameMode(16).String())
	// The spec's "players on teams" column: modes 4, 8 and 10 to 15.
	for m := range GameMode(16) {
		info, _ := m.Info()
		want := m == 4 || m == 8 || m >= 10
		if info.OnTeams != want {
			t.Errorf("mode %d OnTeams = %v", m, info.OnTeams)
		}
	}
}

func TestStripColors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Alice", "Alice"},
		{"letter", "\x1cDBob", "Bob"},
		{"named", "\x1c[Gold]Boss\x1c-", "Boss"},
		{"middle", "a\x1cRb\x1cGc", "abc"},
		{"cut escape", "Bob\x1c", "Bob"},
		{"cut name", "Bob\x1c[Gol", "Bob"},
		{"latin1 after escape", "\x1cé!", "!"},
	} {
		t.Run(tc.name, func(t *testing.T) { equal(t, "StripColors", tc.want, StripColors(tc.in)) })
	}
}

// TestCorrectFlags is docs/protocols/zandronum.md 2.5 as a table.
func TestCorrectFlags(t *testing.T) {
	ask := SQF_ALL | 0x8000
	for _, tc := range []struct {
		name          string
		flags         Flag
		flags2        Flag2
		mode          GameMode
		optional, deh bool
		want          Flag
		want2         Flag2
	}{
		{"dm drops team damage and team flags", ask, 0, ModeDeathmatch, true, true,
			SQF_ALL &^ (SQF_TEAMDAMAGE | SQF_TEAMINFO | SQF_EXTENDED_INFO), 0},
		{"coop keeps team damage, drops team flags", ask, SQF2_ALL, ModeCooperative, true, true,
			SQF_ALL &^ SQF_TEAMINFO, SQF2_ALL},
		{"ctf keeps everything", ask, SQF2_ALL, ModeCTF, true, true, SQF_ALL, SQF2_ALL},
		{"possession drops team damage", SQF_TEAMDAMAGE | SQF_NAME, 0, ModePossession, false, false, SQF_NAME, 0},
		{"team possession keeps it", SQF_TEAMDAMAGE, 0, ModeTeamPossession, false, false, SQF_TEAMDAMAGE, 0},
		{"player data forces numplayers", SQF_PLAYERDATA, 0, ModeDuel, false, false, SQF_PLAYERDATA | SQF_NUMPLAYERS, 0},
		{"no optional wads, no deh", SQF_OPTIONAL_WADS | SQF_DEH | SQF_NAME, 0, ModeCTF, false, false, SQF_NAME, 0},
		{"unknown flags2 only drops extended info", SQF_EXTENDED_INFO | SQF_NAME, 0x40, ModeCTF, false, false, SQF_NAME, 0},
		{"flags2 masked", SQF_EXTENDED_INFO, 0xff, ModeCTF, false, false, SQF_EXTENDED_INFO, SQF2_ALL},
		{"flags2 ignored without bit 31", SQF_NAME, SQF2_ALL, ModeCTF, false, false, SQF_NAME, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, f2 := CorrectFlags(tc.flags, tc.flags2, tc.mode, tc.optional, tc.deh)
			equal(t, "flags", tc.want, f)
			equal(t, "flags2", tc.want2, f2)
		})
	}
}

// teamReply builds a reply in mode with the given returned flags, whose
// player records carry a team byte when teamByte.
func teamReply(mode GameMode, flags Flag, teamByte bool) Response {
	r := Response{
		Code: CodeAccepted, Time: 7, Version: "v", Flags: flags, GameMode: mode, NumPlayers: 2,
		Players: []Player{
			{Name: "a", Score: 1, Ping: 10, Team: TeamRed, Minutes: 3},
			{Name: "b", Score: 2, Ping: 20, Team: NoTeam, Spectator: 1, Minutes: 4},
		},
		TeamByte: teamByte, NumTeams: 2,
		Teams:      []Team{{Name: "Blue", Score: 5}, {Name: "Red", Score: 6}},
		AllDMFlags: []uint32{1, 2, 3, 4, 5, 6}, Security: 1,
	}
	if !teamByte {
		for i := range r.Players {
			r.Players[i].Team = 0
		}
	}
	if flags&(SQF_TEAMINFO_NAME|SQF_TEAMINFO_COLOR|SQF_TEAMINFO_SCORE) == 0 {
		r.Teams = nil
	}
	return r
}

// TestTeamByteRule is docs/protocols/zandronum.md 2.5's rule for the team byte in player
// records, and what the decoder does when a reply contradicts the mode.
func TestTeamByteRule(t *testing.T) {
	base := SQF_GAMETYPE | SQF_NUMPLAYERS | SQF_PLAYERDATA | SQF_ALL_DMFLAGS | SQF_SECURITY_SETTINGS
	noMode := SQF_NUMPLAYERS | SQF_PLAYERDATA | SQF_ALL_DMFLAGS | SQF_SECURITY_SETTINGS
	teamInfo := SQF_TEAMINFO_NUMBER | SQF_TEAMINFO_NAME | SQF_TEAMINFO_SCORE
	for _, tc := range []struct {
		name     string
		mode     GameMode
		flags    Flag
		teamByte bool // what the server sent
		asked    Flag // what the launcher asked for, if known
		guess    Guess
	}{
		{"teaminfo returned: exact", ModeCTF, base | teamInfo, true, 0, 0},
		{"teaminfo returned overrides a non-team mode", ModeDeathmatch, base | teamInfo, true, 0, 0},
		{"teamscores alone is enough", ModeCTF, base | SQF_TEAMSCORES, true, 0, 0},
		{"asked teaminfo, not returned: exact", ModeCTF, base, false, teamInfo, 0},
		{"mode ctf", ModeCTF, base, true, 0, 0},
		{"mode dm", ModeDeathmatch, base, false, 0, 0},
		{"mode tlms", ModeTeamLMS, base, true, 0, 0},
		{"mod adds teams to dm", ModeDeathmatch, base, true, 0, GuessTeamByte},
		{"mod removes teams from ctf", ModeCTF, base, false, 0, GuessTeamByte},
		{"unknown mode with team byte", GameMode(40), base, true, 0, GuessTeamByte},
		{"unknown mode without", GameMode(40), base, false, 0, 0},
		{"no mode, no team info, team byte", ModeCTF, noMode, true, 0, GuessTeamByte},
		{"no mode, no team info, no team byte", ModeCTF, noMode, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := teamReply(tc.mode, tc.flags, tc.teamByte)
			b, err := AppendResponse(nil, r)
			noErr(t, "AppendResponse", err)
			got, err := DecodeResponse(b, &Request{Flags: tc.asked, Time: r.Time})
			noErr(t, "decode", err)
			equal(t, "TeamByte", tc.teamByte, got.TeamByte)
			equal(t, "Guessed", tc.guess, got.Guessed)
			if tc.flags&SQF_GAMETYPE == 0 {
				r.GameMode = 0
			}
			if tc.flags&SQF_TEAMINFO_NUMBER == 0 {
				r.NumTeams = 0
			}
			r.Guessed = tc.guess
			equal(t, "reply", r, got)
		})
	}
}

// TestGuesses covers the layouts a reply alone does not pin down.
func TestGuesses(t *testing.T) {
	base := SQF_GAMETYPE | SQF_NUMPLAYERS | SQF_PLAYERDATA | SQF_ALL_DMFLAGS | SQF_SECURITY_SETTINGS
	t.Run("invisible spectator: one record fewer than numplayers", func(t *testing.T) {
		r := teamReply(ModeDeathmatch, base, false)
		r.NumPlayers = 3
		b, err := AppendResponse(nil, r)
		noErr(t, "AppendResponse", err)
		got, err := DecodeResponse(b, nil)
		noErr(t, "decode", err)
		equal(t, "players", r.Players, got.Players)
		equal(t, "Guessed", GuessPlayerCount, got.Guessed)
		m, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
		noErr(t, "Decode", err)
		equal(t, "warnings", []string{WarnPlayerCountGuessed}, m.Warnings)
	})
	for _, n := range []int{1, 2, 3, 4} {
		t.Run("team names without a count: "+string(rune('0'+n))+" teams", func(t *testing.T) {
			r := teamReply(ModeCTF, base|SQF_TEAMINFO_NAME|SQF_TEAMINFO_SCORE, true)
			r.NumTeams = 0
			r.Teams = []Team{{Name: "Blue", Score: 1}, {Name: "Red", Score: 2}, {Name: "Green", Score: 3}, {Name: "Gold", Score: 4}}[:n]
			b, err := AppendResponse(nil, r)
			noErr(t, "AppendResponse", err)
			got, err := DecodeResponse(b, nil)
			noErr(t, "decode", err)
			equal(t, "teams", r.Teams, got.Teams)
			equal(t, "Guessed", GuessTeamCount, got.Guessed)
		})
	}
	t.Run("a cut reply is not taken for a guessed layout", func(t *testing.T) {
		// The DM vector cut inside the last player: with one record fewer
		// the rest happens to end exactly at the cut, but its values are
		// not what a server sends.
		p, err := Unwrap(nil, vectorDatagram(vecDM, "response")(t)[0])
		noErr(t, "Unwrap", err)
		_, err = DecodeResponsePayload(p[:216], nil)
		codecErr(t, "cut", err, codecs.ErrShort, "players[3].ping", "-")
	})
}

func TestTimeLeft(t *testing.T) {
	for _, tc := range []struct {
		name  string
		l     Limits
		bytes int
	}{
		{"no time limit, no time left", Limits{FragLimit: 30}, 10},
		{"time limit, time left", Limits{TimeLimit: 20, TimeLeft: 13}, 12},
		{"time left 0 is still sent", Limits{TimeLimit: 1}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Response{Code: CodeAccepted, Version: "v", Flags: SQF_LIMITS, Limits: tc.l}
			p, err := AppendResponsePayload(nil, r)
			noErr(t, "AppendResponsePayload", err)
			equal(t, "size", 4+4+2+4+tc.bytes, len(p))
			got, err := DecodeResponsePayload(p, nil)
			noErr(t, "decode", err)
			equal(t, "limits", tc.l, got.Limits)
			_, has := got.Fields().Get("timeleft")
			equal(t, "timeleft in fields", tc.l.TimeLimit != 0, has)
		})
	}
}

// TestFieldRoundTrip builds a reply with each flag alone (and all of
// them) and decodes it back.
func TestFieldRoundTrip(t *testing.T) {
	full := extendedResponse()
	for bit := range 32 {
		f := Flag(1) << bit
		if f&SQF_ALL == 0 {
			continue
		}
		t.Run(f.String(), func(t *testing.T) {
			r := full
			r.Flags = f
			if f == SQF_PLAYERDATA {
				r.Flags |= SQF_NUMPLAYERS
			}
			if f&(SQF_TEAMINFO_NAME|SQF_TEAMINFO_COLOR|SQF_TEAMINFO_SCORE) != 0 {
				r.Flags |= SQF_TEAMINFO_NUMBER
			}
			p, err := AppendResponsePayload(nil, r)
			noErr(t, "AppendResponsePayload", err)
			got, err := DecodeResponsePayload(p, nil)
			noErr(t, "decode", err)
			p2, err := AppendResponsePayload(nil, got)
			noErr(t, "AppendResponsePayload again", err)
			equal(t, "payload", p, p2)
			again := mustDecodePayload(t, p2)
			equal(t, "fields", jsonOf(got.Fields()), jsonOf(again.Fields()))
		})
	}
	t.Run("all", func(t *testing.T) {
		p, err := AppendResponsePayload(nil, full)
		noErr(t, "AppendResponsePayload", err)
		got, err := DecodeResponsePayload(p, nil)
		noErr(t, "decode", err)
		equal(t, "reply", full, got)
	})
	for _, f2 := range []Flag2{SQF2_PWAD_HASHES, SQF2_COUNTRY, SQF2_GAMEMODE_NAME, SQF2_GAMEMODE_SHORTNAME, SQF2_VOICECHAT} {
		t.Run(f2.String(), func(t *testing.T) {
			r := full
			r.Flags, r.Flags2 = SQF_EXTENDED_INFO, f2
			p, err := AppendResponsePayload(nil, r)
			noErr(t, "AppendResponsePayload", err)
			got := mustDecodePayload(t, p)
			equal(t, "flags2", f2, got.Flags2)
			p2, _ := AppendResponsePayload(nil, got)
			equal(t, "payload", p, p2)
		})
	}
}

func mustDecodePayload(t testing.TB, p []byte) Response {
	t.Helper()
	r, err := DecodeResponsePayload(p, nil)
	noErr(t, "DecodeResponsePayload", err)
	return r
}

// TestUnknownFlags: bit 15 carries nothing; unknown SQF2 bits leave their
// bytes as trailing ones; both are warned about.
func TestUnknownFlags(t *testing.T) {
	r := Response{Code: CodeAccepted, Version: "v", Flags: SQF_NAME | 0x8000 | SQF_MAPNAME, Name: "n", Map: "m"}
	b, err := AppendResponse(nil, r)
	noErr(t, "AppendResponse", err)
	m, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	noErr(t, "Decode", err)
	equal(t, "warnings", []string{codecs.WarnUnknownFlags}, m.Warnings)
	equal(t, "map", "m", m.Info.Map)

	r = Response{Code: CodeAccepted, Version: "v", Flags: SQF_EXTENDED_INFO, Flags2: SQF2_VOICECHAT | 0x100, VoiceChat: 1, Trailing: []byte{9, 9}}
	b, err = AppendResponse(nil, r)
	noErr(t, "AppendResponse", err)
	m, err = (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	noErr(t, "Decode", err)
	equal(t, "warnings", []string{codecs.WarnUnknownFlags, codecs.WarnTrailing}, m.Warnings)
	v, _ := m.Fields.Get("trailing_bytes")
	equal(t, "trailing_bytes", any(2), v)
}

// TestHostile feeds replies whose counts and lengths promise more than
// the packet holds.
func TestHostile(t *testing.T) {
	head := "775d5600 01000000 7600" // code, time, version "v"
	for _, tc := range []struct {
		name     string
		payload  string
		sentinel error
		field    string
		offset   int
	}{
		{"255 pwads in a short packet", head + "40000000 ff 612e77616400 622e77616400", codecs.ErrShort, "pwads[2]", 27},
		{"255 all_dmflags", head + "00000008 ff 01000000", codecs.ErrShort, "all_dmflags[1]", 19},
		{"255 players, no records", head + "00001800 ff", codecs.ErrShort, "players[0].name", 15},
		{"string without terminator", head + "01000000 4e6f4e756c", codecs.ErrShort, "name", 14},
		{"player data without numplayers", head + "00001000 00", codecs.ErrBadValue, "players", 14},
		{"255 deh", head + "00000040 ff", codecs.ErrShort, "deh[0]", 15},
		{"255 optional wads", head + "00000020 ff 00", codecs.ErrShort, "optional_wads[1]", 16},
		{"255 team names", head + "0000e000 ff 4100", codecs.ErrShort, "team_names[1]", 17},
		{"cut flags2", head + "00000080 1f00", codecs.ErrShort, "flags2", 14},
		{"cut country", head + "00000080 02000000 5849", codecs.ErrShort, "sqf2.country", 18},
		{"unknown code", "7a5d5600 00000000", codecs.ErrUnknownCode, "response", 0},
		{"empty", "", codecs.ErrShort, "response", 0},
		{"denied cut", "785d5600 0102", codecs.ErrShort, "time", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := codectest.Unhex(t, tc.payload)
			r, err := DecodeResponsePayload(p, nil)
			e := codecErr(t, "DecodeResponsePayload", err, tc.sentinel, tc.field, "")
			equal(t, "offset", tc.offset, e.Offset)
			if len(p) >= 4 {
				equal(t, "partial code kept", code(p), r.Code)
			}
			// The same through the Huffman layer and the codec.
			m, err := (&Codec{}).Decode([][]byte{Wrap(nil, p)}, codecs.DecodeOptions{Spans: true})
			e = codecErr(t, "Decode", err, tc.sentinel, tc.field, "payload")
			equal(t, "offset", tc.offset, e.Offset)
			if m == nil {
				t.Fatal("no partial message")
			}
		})
	}
}

func TestPartialResult(t *testing.T) {
	p, err := Unwrap(nil, vectorDatagram(vecCTF, "response")(t)[0])
	noErr(t, "Unwrap", err)
	m, err := (&Codec{}).Decode([][]byte{Wrap(nil, p[:200])}, codecs.DecodeOptions{})
	codecErr(t, "cut", err, codecs.ErrShort, "", "payload")
	equal(t, "kind", codecs.KindResponse, m.Kind)
	equal(t, "name", "CTF Night", m.Info.Name)
	if len(m.Info.Players) != 2 {
		t.Errorf("players decoded before the cut: %d, want 2", len(m.Info.Players))
	}
	o := codecs.ErrorObject(err, m)
	if s := jsonOf(o); !strings.Contains(s, `"partial":{"kind":"response"`) || !strings.Contains(s, `"field":"players[2].name"`) ||
		strings.Contains(s, `"security"`) || strings.Contains(s, `"teams"`) {
		t.Errorf("error object: %s", s)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        Response
		sentinel error
		field    string
	}{
		{"NUL in a string", Response{Flags: SQF_NAME, Name: "a\x00b"}, codecs.ErrBadValue, "name"},
		{"256 pwads", Response{Flags: SQF_PWADS, PWADs: make([]string, 256)}, codecs.ErrTooLong, "pwads"},
		{"country of 2", Response{Flags: SQF_EXTENDED_INFO, Flags2: SQF2_COUNTRY, Country: "DE"}, codecs.ErrBadValue, "sqf2.country"},
		{"players without numplayers", Response{Flags: SQF_PLAYERDATA}, codecs.ErrBadValue, "players"},
		{"players and numplayers disagree", Response{Flags: SQF_PLAYERDATA | SQF_NUMPLAYERS, NumPlayers: 5, Players: make([]Player, 2)}, codecs.ErrBadValue, "players"},
		{"teams and numteams disagree", Response{Flags: SQF_TEAMINFO_NUMBER | SQF_TEAMINFO_NAME, NumTeams: 3, Teams: make([]Team, 2)}, codecs.ErrBadValue, "team_names"},
		{"segment code", Response{Code: CodeSegmented}, codecs.ErrBadValue, "response"},
		{"unknown code", Response{Code: 1}, codecs.ErrUnknownCode, "response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AppendResponse(nil, tc.r)
			codecErr(t, "AppendResponse", err, tc.sentinel, tc.field, "")
		})
	}
	if _, err := AppendSegmentedPayloads(nil, Response{}, 12); !errors.Is(err, codecs.ErrBadValue) {
		t.Errorf("AppendSegmentedPayloads with no room: %v", err)
	}
}

func TestTeamDamageNaN(t *testing.T) {
	r := Response{Code: CodeAccepted, Version: "v", Flags: SQF_TEAMDAMAGE, TeamDamage: float32(math.NaN())}
	b, err := AppendResponse(nil, r)
	noErr(t, "AppendResponse", err)
	m, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	noErr(t, "Decode", err)
	if s := string(m.AppendJSON(nil)); !strings.Contains(s, `"teamdamage":null`) {
		t.Errorf("NaN team damage: %s", s)
	}
}

// TestEmptyValues: a string the server sends empty is "" in the neutral
// view; a field its flags leave out is missing from it.
func TestEmptyValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  Flag
		flags2 Flag2
		want   string
	}{
		{"empty strings", SQF_NAME | SQF_MAPNAME | SQF_PLAYERDATA | SQF_NUMPLAYERS | SQF_GAMETYPE | SQF_TEAMINFO_NUMBER | SQF_TEAMINFO_NAME,
			0, `{"name":"","map":"","game_type":"Capture the Flag","version":"","num_players":1,"players":[{"name":"","score":0,"ping":0,"team":0,"spectator":false,"bot":false}],"teams":[{"name":"","score":0},{"name":"","score":0}]}`},
		{"mode name sent empty", SQF_EXTENDED_INFO, SQF2_GAMEMODE_NAME, `{"game_type":"","version":""}`},
		{"mode name empty, mode number sent", SQF_GAMETYPE | SQF_EXTENDED_INFO, SQF2_GAMEMODE_NAME, `{"game_type":"Cooperative","version":""}`},
		{"nothing sent", 0, 0, `{"version":""}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := Response{Code: CodeAccepted, Flags: tc.flags, Flags2: tc.flags2, NumPlayers: 1,
				Players: []Player{{}}, NumTeams: 2, Teams: []Team{{}, {}}, TeamByte: true}
			if tc.flags&SQF_GAMETYPE != 0 && tc.flags2 == 0 {
				resp.GameMode = ModeCTF
			}
			b, err := AppendResponse(nil, resp)
			noErr(t, "AppendResponse", err)
			m, err := (&Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
			noErr(t, "Decode", err)
			if got := string(codecs.AppendJSON(nil, m.Object()[2].Value)); got != tc.want {
				t.Errorf("info\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestDecodeResponseRequest: given the request, a reply (or refusal)
// echoing another time is an error at the payload's time field, and the
// reply is returned with it.
func TestDecodeResponseRequest(t *testing.T) {
	for _, resp := range []Response{extendedResponse(), {Code: CodeIgnored, Time: 7}} {
		b, err := AppendResponse(nil, resp)
		noErr(t, "AppendResponse", err)
		_, err = DecodeResponse(b, &Request{Flags: resp.Flags, Time: resp.Time})
		noErr(t, "the request it answers", err)
		got, err := DecodeResponse(b, &Request{Flags: resp.Flags, Time: resp.Time + 1})
		if e := codecErr(t, "another time", err, codecs.ErrBadValue, "time", "payload"); e.Offset != 4 {
			t.Errorf("offset %d", e.Offset)
		}
		equal(t, "reply returned", resp.Version, got.Version)
	}
}
