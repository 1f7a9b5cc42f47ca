package zandronum

import (
	"strconv"
	"unicode/utf8"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
	"github.com/querylens/querylens/internal/ipfmt"
)

// Protocol is the name the package registers and puts in every error.
const Protocol = "zandronum"

// Ports (docs/protocols/zandronum.md 2.9).
const (
	DefaultPort       = 10666 // DEFAULT_SERVER_PORT: launcher queries
	DefaultMasterPort = 15300 // DEFAULT_MASTER_PORT: the master list
)

// First LONG of a launcher request or reply (docs/protocols/zandronum.md 2.1, 2.3, 2.7).
const (
	// ServerChallenge: launcher -> server (and, alone, the legacy list
	// request to a master). Payload:
	//	LONG 199, LONG flags, LONG time, [LONG flags2 if bit 31], [BYTE 2]
	ServerChallenge = 199
	// CodeAccepted: server -> launcher, the full reply. Payload:
	//	LONG 5660023, LONG time, STRING version, LONG flags, fields by flag bit
	CodeAccepted = 5660023
	// CodeIgnored: the launcher's IP queried within sv_queryignoretime.
	// Payload: LONG 5660024, LONG time (exactly 8 bytes).
	CodeIgnored = 5660024
	// CodeBanned: the launcher's IP is banned. Payload: LONG 5660025, LONG time.
	CodeBanned = 5660025
	// CodeSegmented: one segment of a reply cut into chunks. Payload:
	//	LONG 5660032, BYTE number, BYTE total, SHORT offset, SHORT size,
	//	SHORT total size, size bytes of the reply without its first LONG
	CodeSegmented = 5660032
)

// Query lengths CheckQuery accepts.
const (
	// MaxRequestPayload is the longest launcher request a client sends:
	// LONG 199, LONG flags with bit 31, LONG time, LONG flags2, BYTE 2
	// (Doomseeker with extended info and segments). qstat's is 16: 12
	// and a zero flags2 it sends without bit 31.
	MaxRequestPayload = 17
	// MaxQueryLen is the longest query datagram: the request's payload in
	// the raw Huffman form (ff, then the payload), which a client's
	// encoder uses only when the Huffman form would be longer.
	MaxQueryLen = 1 + MaxRequestPayload
)

// Master protocol (docs/protocols/zandronum.md 3).
const (
	// MasterChallenge: launcher -> master. Payload: LONG 5660028, SHORT 2.
	MasterChallenge = 5660028
	// MasterVersion is the only version a master accepts.
	MasterVersion = 2

	MasterBeginList    = 0 // legacy list: LONG 0, {BYTE 1, 4 BYTES ip, SHORT port}..., BYTE 2
	MasterServer       = 1 // BYTE: one entry of the legacy list follows
	MasterEndList      = 2 // BYTE: the whole list ends here
	MasterBanned       = 3 // LONG 3 alone: your IP is banned
	MasterIgnored      = 4 // LONG 4 alone: you asked within 10 s
	MasterWrongVersion = 5 // LONG 5 alone: the version SHORT was not 2
	MasterBeginPart    = 6 // list packet: LONG 6, BYTE number, BYTE 8, blocks, BYTE 0, BYTE 2|7
	MasterEndPart      = 7 // BYTE: more list packets follow
	MasterServerBlock  = 8 // BYTE: blocks {BYTE n, 4 BYTES ip, n SHORT ports} follow, n = 0 ends them
)

// Flag is the launcher query's flag word (SQF_*, docs/protocols/zandronum.md 2.2). The
// server answers fields in ascending bit order; each constant notes what its
// field holds on the wire.
type Flag uint32

// The SQF flags. Bit 15 is unused and stripped by servers.
const (
	SQF_NAME              Flag = 1 << 0  // STRING host name, colour codes removed
	SQF_URL               Flag = 1 << 1  // STRING sv_website
	SQF_EMAIL             Flag = 1 << 2  // STRING sv_hostemail
	SQF_MAPNAME           Flag = 1 << 3  // STRING map lump name
	SQF_MAXCLIENTS        Flag = 1 << 4  // BYTE sv_maxclients
	SQF_MAXPLAYERS        Flag = 1 << 5  // BYTE sv_maxplayers
	SQF_PWADS             Flag = 1 << 6  // BYTE n, n STRINGs
	SQF_GAMETYPE          Flag = 1 << 7  // BYTE mode, BYTE instagib, BYTE buckshot
	SQF_GAMENAME          Flag = 1 << 8  // STRING "DOOM", "DOOM II", "Heretic", "Hexen"
	SQF_IWAD              Flag = 1 << 9  // STRING
	SQF_FORCEPASSWORD     Flag = 1 << 10 // BYTE 0/1
	SQF_FORCEJOINPASSWORD Flag = 1 << 11 // BYTE 0/1
	SQF_GAMESKILL         Flag = 1 << 12 // BYTE skill, 0-based
	SQF_BOTSKILL          Flag = 1 << 13 // BYTE
	SQF_DMFLAGS           Flag = 1 << 14 // LONG dmflags, LONG dmflags2, LONG compatflags (deprecated)
	SQF_LIMITS            Flag = 1 << 16 // SHORT frag, SHORT time, [SHORT timeleft if time != 0], SHORT duel, SHORT point, SHORT win
	SQF_TEAMDAMAGE        Flag = 1 << 17 // FLOAT
	SQF_TEAMSCORES        Flag = 1 << 18 // SHORT blue, SHORT red (deprecated)
	SQF_NUMPLAYERS        Flag = 1 << 19 // BYTE players incl. bots and spectators
	SQF_PLAYERDATA        Flag = 1 << 20 // per player: STRING name, SHORT score, SHORT ping, BYTE spec, BYTE bot, [BYTE team], BYTE minutes
	SQF_TEAMINFO_NUMBER   Flag = 1 << 21 // BYTE teams T
	SQF_TEAMINFO_NAME     Flag = 1 << 22 // T STRINGs
	SQF_TEAMINFO_COLOR    Flag = 1 << 23 // T LONGs
	SQF_TEAMINFO_SCORE    Flag = 1 << 24 // T SHORTs
	SQF_TESTING_SERVER    Flag = 1 << 25 // BYTE 0/1, STRING archive name
	SQF_DATA_MD5SUM       Flag = 1 << 26 // STRING, always empty (deprecated)
	SQF_ALL_DMFLAGS       Flag = 1 << 27 // BYTE n, n LONGs
	SQF_SECURITY_SETTINGS Flag = 1 << 28 // BYTE, bit 0 = sv_enforcemasterbanlist
	SQF_OPTIONAL_WADS     Flag = 1 << 29 // BYTE n, n BYTE indices into the PWAD list
	SQF_DEH               Flag = 1 << 30 // BYTE n, n STRINGs
	SQF_EXTENDED_INFO     Flag = 1 << 31 // LONG flags2, then the SQF2 fields

	// SQF_ALL is every defined bit.
	SQF_ALL Flag = 0xffff7fff
	// SQF_TEAMINFO is every flag a server strips when players are not on teams.
	SQF_TEAMINFO = SQF_TEAMSCORES | SQF_TEAMINFO_NUMBER | SQF_TEAMINFO_NAME | SQF_TEAMINFO_COLOR | SQF_TEAMINFO_SCORE
	// DefaultFlags is what a Query asks for unless told otherwise: every
	// field except the deprecated DMFLAGS, TEAMSCORES and DATA_MD5SUM.
	DefaultFlags = SQF_ALL &^ (SQF_DMFLAGS | SQF_TEAMSCORES | SQF_DATA_MD5SUM)
)

// Flag2 is the extended flag word (SQF2_*), sent after SQF_EXTENDED_INFO.
type Flag2 uint32

// The SQF2 flags.
const (
	SQF2_PWAD_HASHES        Flag2 = 1 << 0 // BYTE n, n STRINGs (MD5 hex, parallel to the PWADs)
	SQF2_COUNTRY            Flag2 = 1 << 1 // 3 raw BYTEs, ISO 3166-1 alpha-3, XIP or XUN
	SQF2_GAMEMODE_NAME      Flag2 = 1 << 2 // STRING
	SQF2_GAMEMODE_SHORTNAME Flag2 = 1 << 3 // STRING
	SQF2_VOICECHAT          Flag2 = 1 << 4 // BYTE sv_allowvoicechat

	SQF2_ALL Flag2 = 0x1f
)

var flagNames = [32]string{
	"SQF_NAME", "SQF_URL", "SQF_EMAIL", "SQF_MAPNAME", "SQF_MAXCLIENTS", "SQF_MAXPLAYERS",
	"SQF_PWADS", "SQF_GAMETYPE", "SQF_GAMENAME", "SQF_IWAD", "SQF_FORCEPASSWORD",
	"SQF_FORCEJOINPASSWORD", "SQF_GAMESKILL", "SQF_BOTSKILL", "SQF_DMFLAGS", "",
	"SQF_LIMITS", "SQF_TEAMDAMAGE", "SQF_TEAMSCORES", "SQF_NUMPLAYERS", "SQF_PLAYERDATA",
	"SQF_TEAMINFO_NUMBER", "SQF_TEAMINFO_NAME", "SQF_TEAMINFO_COLOR", "SQF_TEAMINFO_SCORE",
	"SQF_TESTING_SERVER", "SQF_DATA_MD5SUM", "SQF_ALL_DMFLAGS", "SQF_SECURITY_SETTINGS",
	"SQF_OPTIONAL_WADS", "SQF_DEH", "SQF_EXTENDED_INFO",
}

var flag2Names = [32]string{
	"SQF2_PWAD_HASHES", "SQF2_COUNTRY", "SQF2_GAMEMODE_NAME", "SQF2_GAMEMODE_SHORTNAME", "SQF2_VOICECHAT",
}

// String names the set bits, "SQF_NAME|SQF_URL", with undefined bits as one
// trailing hex number; 0 is "0".
func (f Flag) String() string { return bitNames(uint32(f), &flagNames) }

// String names the set bits as Flag.String does.
func (f Flag2) String() string { return bitNames(uint32(f), &flag2Names) }

// Unknown returns the bits no SQF flag defines (bit 15).
func (f Flag) Unknown() Flag { return f &^ SQF_ALL }

// Unknown returns the bits no SQF2 flag defines.
func (f Flag2) Unknown() Flag2 { return f &^ SQF2_ALL }

func bitNames(v uint32, names *[32]string) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	var unknown uint32
	for i := range 32 {
		bit := uint32(1) << i
		if v&bit == 0 {
			continue
		}
		if names[i] == "" {
			unknown |= bit
			continue
		}
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, names[i]...)
	}
	if unknown != 0 {
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(unknown), 16)
	}
	return string(b)
}

// GameMode is the BYTE of SQF_GAMETYPE (docs/protocols/zandronum.md 2.6).
type GameMode uint8

// The stock game modes (src/gamemode_enums.h).
const (
	ModeCooperative GameMode = iota
	ModeSurvival
	ModeInvasion
	ModeDeathmatch
	ModeTeamPlay
	ModeDuel
	ModeTerminator
	ModeLastManStanding
	ModeTeamLMS
	ModePossession
	ModeTeamPossession
	ModeTeamGame
	ModeCTF
	ModeOneFlagCTF
	ModeSkulltag
	ModeDomination
)

// Score names what a mode's player score counts.
type Score uint8

const (
	ScoreKills Score = iota
	ScoreFrags
	ScoreWins
	ScorePoints
)

func (s Score) String() string {
	switch s {
	case ScoreKills:
		return "kills"
	case ScoreFrags:
		return "frags"
	case ScoreWins:
		return "wins"
	case ScorePoints:
		return "points"
	}
	return wire.Msg("score %d", int64(s))
}

// ModeInfo describes a stock game mode.
type ModeInfo struct {
	Name  string // "Capture the Flag"
	Short string // "CTF"
	// OnTeams is GMF_PLAYERSONTEAMS: player records carry a team byte and
	// the server answers the team flags.
	OnTeams bool
	Score   Score
}

var modes = [...]ModeInfo{
	ModeCooperative:     {"Cooperative", "COOP", false, ScoreKills},
	ModeSurvival:        {"Survival", "SURV", false, ScoreKills},
	ModeInvasion:        {"Invasion", "INVAS", false, ScoreKills},
	ModeDeathmatch:      {"Deathmatch", "DM", false, ScoreFrags},
	ModeTeamPlay:        {"Team Deathmatch", "TDM", true, ScoreFrags},
	ModeDuel:            {"Duel", "DUEL", false, ScoreFrags},
	ModeTerminator:      {"Terminator", "TERM", false, ScoreFrags},
	ModeLastManStanding: {"Last Man Standing", "LMS", false, ScoreWins},
	ModeTeamLMS:         {"Team LMS", "TLMS", true, ScoreWins},
	ModePossession:      {"Possession", "POSS", false, ScorePoints},
	ModeTeamPossession:  {"Team Possession", "TM POSS", true, ScorePoints},
	ModeTeamGame:        {"Team Game", "TM GAME", true, ScorePoints},
	ModeCTF:             {"Capture the Flag", "CTF", true, ScorePoints},
	ModeOneFlagCTF:      {"One-Flag CTF", "1F-CTF", true, ScorePoints},
	ModeSkulltag:        {"Skulltag", "ST", true, ScorePoints},
	ModeDomination:      {"Domination", "DOM", true, ScorePoints},
}

// Info returns the table entry of a stock mode; ok is false for numbers
// the table does not know.
func (m GameMode) Info() (info ModeInfo, ok bool) {
	if int(m) < len(modes) {
		return modes[m], true
	}
	return ModeInfo{}, false
}

// String is the mode's name, or "mode N" for an unknown number.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (m GameMode) String() string {
	if int(m) < len(modes) {
		return modes[m].Name
	}
	return wire.Msg("mode %d", int64(m))
}

// CorrectFlags returns the flags a server running a stock mode answers
// with when asked for flags and flags2 (docs/protocols/zandronum.md 2.5, in the server's
// order): unknown bits dropped; TEAMDAMAGE only in cooperative and team
// modes; the team flags only when players are on teams; NUMPLAYERS with
// PLAYERDATA; OPTIONAL_WADS and DEH only when there are any; and
// EXTENDED_INFO only with a known SQF2 bit left. Decoders never need it
// (they follow the returned flags); servers and tests do.
func CorrectFlags(flags Flag, flags2 Flag2, mode GameMode, optionalWADs, deh bool) (Flag, Flag2) {
	info, known := mode.Info()
	flags &= SQF_ALL
	if known && !info.OnTeams && mode != ModeCooperative && mode != ModeSurvival && mode != ModeInvasion {
		flags &^= SQF_TEAMDAMAGE
	}
	if !info.OnTeams {
		flags &^= SQF_TEAMINFO
	}
	if flags&SQF_PLAYERDATA != 0 {
		flags |= SQF_NUMPLAYERS
	}
	if !optionalWADs {
		flags &^= SQF_OPTIONAL_WADS
	}
	if !deh {
		flags &^= SQF_DEH
	}
	if flags&SQF_EXTENDED_INFO == 0 {
		return flags, 0
	}
	flags2 &= SQF2_ALL
	if flags2 == 0 {
		flags &^= SQF_EXTENDED_INFO
	}
	return flags, flags2
}

// Team numbers in player records (the default team table).
const (
	TeamBlue  = 0
	TeamRed   = 1
	TeamGreen = 2
	TeamGold  = 3
	NoTeam    = 255
)

// Request is a launcher query (docs/protocols/zandronum.md 2.1).
type Request struct {
	Flags Flag
	Time  uint32 // opaque, echoed back
	// Flags2 is on the wire only when Flags has SQF_EXTENDED_INFO; the
	// builder leaves it out otherwise and the decoder leaves it zero.
	Flags2 Flag2
	// Segmented is the optional trailing byte 2: answer with 5660032
	// segments.
	Segmented bool
	// Extra holds bytes after the fields above that mean nothing to a
	// server: an optional byte other than 2, and anything after the
	// optional byte (qstat sends a zero flags2 even without bit 31, which
	// reads as the byte 00 and three more). The builder appends it as is.
	Extra []byte
}

// MasterRequest is a launcher's request to a master (docs/protocols/zandronum.md 3.1, 3.4).
type MasterRequest struct {
	// Command is MasterChallenge, or ServerChallenge for the legacy
	// one-packet list.
	Command uint32
	Version uint16 // with MasterChallenge; MasterVersion
}

// Response is a launcher reply (docs/protocols/zandronum.md 2.3-2.4). Every field after
// Flags is present only when its flag is set in Flags (or Flags2); the
// builder writes exactly the fields the flags name.
//
// Strings are converted from Latin-1 to UTF-8 and are not aliases of the
// input. Player and team names keep their colour escapes (\x1c plus a
// letter or a [name]); StripColors removes them.
type Response struct {
	// Code is CodeAccepted, CodeIgnored or CodeBanned, or CodeSegmented
	// for a reply reassembled from segments. Only CodeAccepted and
	// CodeSegmented carry more than Time.
	Code    uint32
	Time    uint32
	Version string
	Flags   Flag // the flags the server returned, which drive the layout

	Name, URL, Email, Map  string
	MaxClients, MaxPlayers uint8
	PWADs                  []string
	GameMode               GameMode
	Instagib, Buckshot     uint8
	GameName, IWAD         string
	ForcePassword          uint8
	ForceJoinPassword      uint8
	Skill, BotSkill        uint8
	DMFlags                [3]uint32 // SQF_DMFLAGS: dmflags, dmflags2, compatflags
	Limits                 Limits
	TeamDamage             float32
	TeamScores             [2]int16 // SQF_TEAMSCORES: blue, red
	NumPlayers             uint8
	Players                []Player
	// TeamByte says the player records carry a team byte (docs/protocols/zandronum.md
	// 2.5): decoded from the flags and the mode, and written by the builder
	// when set.
	TeamByte     bool
	NumTeams     uint8  // SQF_TEAMINFO_NUMBER
	Teams        []Team // one per team when a TEAMINFO name, colour or score flag is set
	Testing      uint8  // SQF_TESTING_SERVER
	TestingName  string
	DataMD5Sum   string
	AllDMFlags   []uint32
	Security     uint8
	OptionalWADs []uint8 // indices into PWADs
	DEH          []string

	Flags2        Flag2
	PWADHashes    []string
	Country       string // 3 characters
	GameModeName  string
	GameModeShort string
	VoiceChat     uint8

	// Trailing holds bytes after the last field (a copy); the builder
	// appends them as is.
	Trailing []byte
	// Guessed says what the decoder had to infer because the reply did not
	// state it; zero when the layout followed from the flags and the mode.
	Guessed Guess

	// stop is set on a decode that failed: 1 + the bit of the field that
	// failed (32 + 1 + bit for SQF2 fields), so that Fields and Info leave
	// out what was never read. 0 means everything was read.
	stop int
}

// has reports whether the field of flag bit (32+bit for SQF2) is in the
// reply and was read.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (r *Response) has(bit int) bool {
	if bit < 32 {
		if r.Flags&(1<<bit) == 0 {
			return false
		}
	} else if r.Flags&SQF_EXTENDED_INFO == 0 || r.Flags2&(1<<(bit-32)) == 0 {
		return false
	}
	return r.stop == 0 || bit < r.stop
}

// Limits is the SQF_LIMITS field. TimeLeft is on the wire only when
// TimeLimit is not 0.
type Limits struct {
	FragLimit, TimeLimit, TimeLeft, DuelLimit, PointLimit, WinLimit uint16
}

// Player is one record of SQF_PLAYERDATA. Team is meaningful only when the
// Response has TeamByte; NoTeam means on no team.
type Player struct {
	Name      string // raw, colour escapes kept
	Score     int16  // kills, frags, wins or points, by mode (ModeInfo.Score)
	Ping      uint16
	Spectator uint8
	Bot       uint8
	Team      uint8
	Minutes   uint8 // time on the server
}

// Team is one team of the TEAMINFO fields; a value is meaningful when its
// flag is set.
type Team struct {
	Name  string
	Color uint32
	Score int16
}

// Guess records what a decoder inferred by trying layouts (docs/protocols/zandronum.md
// 2.5): the reply alone did not say it.
type Guess uint8

const (
	// GuessTeamByte: the team byte's presence contradicted the game mode
	// (a mod's GAMEMODE lump may change it); the other layout decoded.
	GuessTeamByte Guess = 1 << iota
	// GuessPlayerCount: fewer player records than SQF_NUMPLAYERS counted
	// (a server's invisible spectator is counted but not listed).
	GuessPlayerCount
	// GuessTeamCount: team names, colours or scores came without
	// SQF_TEAMINFO_NUMBER, so the number of teams was inferred.
	GuessTeamCount
)

// Warnings for Guess bits, as they appear in a Message.
const (
	WarnTeamByteGuessed    = "team byte guessed"
	WarnPlayerCountGuessed = "player count differs from numplayers"
	WarnTeamCountGuessed   = "team count guessed"
)

// Denied returns codecs.DeniedRateLimited or codecs.DeniedBanned for the
// two refusal codes, and "" otherwise.
func (r *Response) Denied() string { return deniedReason(r.Code) }

func deniedReason(code uint32) string {
	switch code {
	case CodeIgnored:
		return codecs.DeniedRateLimited
	case CodeBanned:
		return codecs.DeniedBanned
	}
	return ""
}

// Addr is one server of a master list.
type Addr struct {
	IP   [4]byte
	Port uint16
}

// String returns "a.b.c.d:port".
func (a Addr) String() string { return string(a.AppendTo(make([]byte, 0, 21))) }

// AppendTo appends "a.b.c.d:port" to b.
func (a Addr) AppendTo(b []byte) []byte { return ipfmt.AppendIPv4Port(b, &a.IP, a.Port) }

// MasterList is a master's answer: the servers of every list packet in
// packet-number order, or a refusal.
type MasterList struct {
	// Code is MasterBeginPart (the current multi-packet list),
	// MasterBeginList (the legacy single packet), or MasterBanned,
	// MasterIgnored or MasterWrongVersion.
	Code    uint32
	Servers []Addr
	// Packets describes each list packet held, by packet number.
	Packets []MasterPacket
	// Complete: packets 0..k are held and packet k ended the list.
	Complete bool
	// Trailing counts bytes after the end of the list packets.
	Trailing int
}

// MasterPacket is one list packet: its number, whether it ended the list,
// and how many of MasterList.Servers it carried.
type MasterPacket struct {
	Number  uint8
	Final   bool
	Servers int
}

// Denied returns codecs.DeniedBanned, DeniedRateLimited or
// DeniedWrongVersion for the master's refusals, and "" otherwise.
func (l *MasterList) Denied() string { return masterDenied(l.Code) }

func masterDenied(code uint32) string {
	switch code {
	case MasterBanned:
		return codecs.DeniedBanned
	case MasterIgnored:
		return codecs.DeniedRateLimited
	case MasterWrongVersion:
		return codecs.DeniedWrongVersion
	}
	return ""
}

// StripColors removes Zandronum colour escapes from s: \x1c followed by
// one character, or \x1c[name]. An escape cut off by the end of s is
// dropped too.
func StripColors(s string) string {
	i := 0
	for i < len(s) && s[i] != 0x1c {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != 0x1c {
			b = append(b, c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		if s[i] == '[' {
			j := i + 1
			for j < len(s) && s[j] != ']' {
				j++
			}
			i = j + 1
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return string(b)
}
