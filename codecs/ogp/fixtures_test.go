package ogp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/ogp"
)

// packet is one testdata/*.hex file: its first comment line says where
// the bytes came from; every other non-comment line is one datagram.
type packet struct {
	name      string
	source    string
	datagrams [][]byte
}

func readPacket(t testing.TB, path string) packet {
	t.Helper()
	datagrams, source := codectest.ReadHexFile(t, path)
	return packet{name: strings.TrimSuffix(filepath.Base(path), ".hex"), source: source, datagrams: datagrams}
}

func readPackets(t testing.TB) []packet {
	t.Helper()
	paths, err := filepath.Glob("testdata/*.hex")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.hex: %v", err)
	}
	var out []packet
	for _, p := range paths {
		out = append(out, readPacket(t, p))
	}
	return out
}

func writePacket(t testing.TB, name, source string, datagrams [][]byte) {
	t.Helper()
	codectest.WriteHexFile(t, filepath.Join("testdata", name+".hex"), source, datagrams)
}

// full returns a 1.0x answer using every field the protocol defines, with
// text that needs UTF-8.
func full() ogp.Response {
	return ogp.Response{
		Header: ogp.Header{Version: ogp.V1, Type: ogp.TypeDefault, HasChallenge: true, Challenge: 0x01020304,
			HasRequestID: true, RequestID: 77, UTF8: true},
		GameID:   0xbeef,
		Requests: ogp.ReqServerInfo | ogp.ReqTeams | ogp.ReqPlayers | ogp.ReqRules | ogp.ReqAddOns | ogp.ReqLimits | ogp.ReqColoredNames,
		Server: ogp.ServerInfo{
			Fields: ogp.InfoGameName | ogp.InfoServerFlags | ogp.InfoHostName | ogp.InfoConnectPort | ogp.InfoMod |
				ogp.InfoGameType | ogp.InfoGameMode | ogp.InfoMap | ogp.InfoNextMap | ogp.InfoPlayerCount |
				ogp.InfoSlotMax | ogp.InfoBotCount | ogp.InfoReservedSlots,
			GameName:       []byte("Onset"),
			Flags:          ogp.SFDedicated | ogp.SFPassword | ogp.SFWindows,
			HostName:       []byte("Zoë's ☃ server"),
			HostNameColors: ogp.Colors{0x00, 0x04, 0x05, 0x92, 0x1f, 0xf8},
			ConnectPort:    7777,
			ModName:        []byte("Roleplay"),
			ModFields:      ogp.ModIdentifier | ogp.ModSize | ogp.ModVersion | ogp.ModURL | ogp.ModAuthor,
			ModIdentifier:  []byte("rp"),
			ModSize:        123456,
			ModVersion:     []byte("2.1"),
			ModURL:         []byte("https://example.org/rp"),
			ModAuthor:      []byte("someone"),
			GameType:       []byte("Freeroam"),
			GameMode:       []byte("RP"),
			MapFields:      ogp.MapFileName | ogp.MapFileSize | ogp.MapFileMD5 | ogp.MapVersion | ogp.MapURL | ogp.MapAuthor,
			Map: ogp.MapInfo{Name: []byte("Island"), File: []byte("island"), FileSize: 1 << 20,
				FileMD5: [16]byte{0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e},
				Version: []byte("3"), URL: []byte("https://example.org/island"), Author: []byte("mapper")},
			NextMap:       ogp.MapInfo{Name: []byte("Desert"), File: []byte("desert"), FileSize: 2 << 20, Version: []byte("1")},
			PlayerCount:   2,
			SlotMax:       64,
			BotCount:      1,
			ReservedSlots: 2,
		},
		TeamFields: ogp.TeamName | ogp.TeamScore | ogp.TeamAveragePing | ogp.TeamAverageLoss | ogp.TeamPlayerCount | ogp.TeamColor,
		Teams: []ogp.Team{
			{Name: []byte("Red"), NameColors: ogp.Colors{0x00, 0x04}, Score: -127, AveragePing: 40, AverageLoss: 1, PlayerCount: 1, Color: 0xf800},
			{Name: []byte("Blue"), NameColors: ogp.Colors{}, Score: 40000, AveragePing: 60, PlayerCount: 1, Color: 0x001f},
		},
		PlayerFields: ogp.PlayerFlags | ogp.PlayerSlot | ogp.PlayerName | ogp.PlayerTeam | ogp.PlayerClass | ogp.PlayerRace |
			ogp.PlayerScore | ogp.PlayerFrags | ogp.PlayerKills | ogp.PlayerDeath | ogp.PlayerSuicides | ogp.PlayerTeamKills |
			ogp.PlayerID | ogp.PlayerGlobalID | ogp.PlayerPing | ogp.PlayerLoss | ogp.PlayerModel | ogp.PlayerTime | ogp.PlayerAddress,
		Players: []ogp.Player{
			{Flags: ogp.FlagAlive | ogp.FlagVIP, Slot: 0, Name: []byte("Åsa"), NameColors: ogp.Colors{0x01, 0x9f, 0x00, 0x00},
				Team: 0, Class: []byte("medic"), Race: []byte("human"), Score: 300, Frags: 12, Kills: 12, Deaths: 3,
				Suicides: 1, TeamKills: 0, ID: 1001, GlobalID: []byte("STEAM_0:1:42"), Ping: 35, Loss: 0,
				Model: []byte("sam"), Time: 1234, Address: []byte{127, 0, 0, 1}},
			{Flags: ogp.FlagDead | ogp.FlagBot, Slot: 300, Name: []byte("Bot"), NameColors: ogp.Colors{},
				Team: 1, Score: -128, Frags: -2, Kills: 70000, Deaths: 254, ID: 1002, GlobalID: []byte(""),
				Ping: 0, Model: []byte("bot"), Time: 60, Address: []byte{}},
		},
		Rules:       []ogp.Rule{{Key: []byte("version"), Value: []byte("1.4.2")}, {Key: []byte("motd"), Value: []byte("¡hola!")}},
		AddOnFields: ogp.AddOnFlags | ogp.AddOnShortName | ogp.AddOnLongName | ogp.AddOnVersion,
		AddOns: []ogp.AddOn{
			{Flags: ogp.AddOnActive | ogp.AddOnAntiCheat, ShortName: []byte("ac"), LongName: []byte("Anti Cheat"), Version: []byte("9")},
			{Flags: ogp.AddOnAdminTool, ShortName: []byte("adm"), LongName: []byte("Admin"), Version: []byte("1.0")},
		},
		Limits: []ogp.Limit{
			{Type: ogp.LimitTime, HasLeft: true, Limit: 1800, Left: 65536},
			{Type: ogp.LimitRound, Limit: 10},
			{Type: ogp.LimitTeamScore, HasLeft: true, Limit: 100, Left: 40},
		},
	}
}

// full004 is a v0.04 answer using every field v0.04 defines.
func full004() ogp.Response {
	return ogp.Response{
		Header: ogp.Header{Version: ogp.V004, Type: ogp.TypeDefault, HasChallenge: true, Challenge: 0xcafef00d,
			HasRequestID: true, RequestID: 5},
		GameID: 7,
		Requests: ogp.Req004Teams | ogp.Req004Players | ogp.Req004Rules | ogp.Req004AddOns | ogp.Req004Limits |
			ogp.Req004GameName | ogp.Req004ServerFlags | ogp.Req004Mod | ogp.Req004HostName | ogp.Req004Map |
			ogp.Req004NextMap | ogp.Req004GameType | ogp.Req004PlayerCount | ogp.Req004SlotMax | ogp.Req004BotCount |
			ogp.Req004ReservedSlots,
		Server: ogp.ServerInfo{
			GameName: []byte("Half-Life"), Flags: ogp.SF004Linux | ogp.SF004Dedicated,
			ModName: []byte("Counter-Strike"), ModDir: []byte("cstrike"), HostName: []byte("Caf\xe9 de_dust"),
			Map: ogp.MapInfo{Name: []byte("Dust"), File: []byte("de_dust")}, NextMap: ogp.MapInfo{Name: []byte("Aztec"), File: []byte("")},
			GameType: []byte("Bomb"), PlayerCount: 3, SlotMax: 0xfe, BotCount: 0xffff, ReservedSlots: 0x12345678,
		},
		TeamFields: ogp.TeamName | ogp.TeamScore | ogp.TeamAveragePing | ogp.TeamAverageLoss | ogp.TeamPlayerCount,
		Teams: []ogp.Team{{Name: []byte("T"), Score: -3, AveragePing: 50, AverageLoss: 2, PlayerCount: 2},
			{Name: []byte("CT"), Score: 70000, AveragePing: 40, PlayerCount: 0}},
		PlayerFields: ogp.PlayerFlags | ogp.PlayerSlot | ogp.PlayerName | ogp.PlayerTeam | ogp.PlayerClass | ogp.PlayerRace |
			ogp.PlayerScore | ogp.PlayerFrags | ogp.PlayerKills | ogp.PlayerDeath | ogp.PlayerSuicides | ogp.PlayerTeamKills |
			ogp.PlayerID | ogp.PlayerGlobalID | ogp.PlayerPing | ogp.PlayerLoss | ogp.PlayerModel | ogp.PlayerTime,
		Players: []ogp.Player{
			{Flags: ogp.FlagAlive, Slot: 1, Name: []byte("J\xfcrgen"), Team: 0, Class: []byte(""), Race: []byte(""), Score: 5, Frags: -1,
				Kills: 255, Deaths: 0xffff, Suicides: 0, TeamKills: 1, ID: 9, GlobalID: []byte("x"), Ping: 80, Loss: 3, Model: []byte("gign"), Time: 77},
			{Flags: ogp.FlagBot, Slot: 2, Name: []byte("Bot"), Team: 255, Score: -5, Frags: 0, Kills: 0x10000, ID: 10,
				GlobalID: []byte(""), Model: []byte(""), Ping: 0, Time: 1},
			{Slot: 3, Name: []byte("Spec"), Team: 1, Class: []byte("c"), Race: []byte("r"), GlobalID: []byte(""), Model: []byte("")},
		},
		Rules:       []ogp.Rule{{Key: []byte("mp_timelimit"), Value: []byte("30")}},
		AddOnFields: ogp.AddOnFlags | ogp.AddOnShortName,
		AddOns:      []ogp.AddOn{{Flags: ogp.AddOnActive, ShortName: []byte("amx")}},
		Limits:      []ogp.Limit{{Type: ogp.LimitTime, HasLeft: true, Limit: 1800, Left: 0xfffe}, {Type: 100, Limit: 0xff}},
	}
}
