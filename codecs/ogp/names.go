package ogp

import (
	"math/bits"

	"github.com/querylens/querylens/codecs/internal/wire"
)

// bitNames names the flags of one VarBitArray. Flags the table does not
// define have no pair. Names are the spec's, in snake_case, as they appear
// in the JSON fields and in span values.
type bitNames struct {
	pairs []bitName
}

// bitName is one flag of a table and its name.
type bitName struct {
	bit  Bits
	name string
}

// known is every flag the table defines.
func (t *bitNames) known() Bits {
	var k Bits
	for _, p := range t.pairs {
		k |= p.bit
	}
	return k
}

// list returns the names of the set flags; undefined flags appear as "k.n".
func (t *bitNames) list(b Bits) []string {
	out := make([]string, 0, bits.OnesCount64(uint64(b)))
	for i := 0; b != 0 && i < 64; i++ {
		if b&(1<<i) == 0 {
			continue
		}
		b &^= 1 << i
		out = append(out, t.name(i))
	}
	return out
}

func (t *bitNames) name(i int) string {
	if t != nil {
		for _, p := range t.pairs {
			if p.bit == 1<<i {
				return p.name
			}
		}
	}
	return wire.Msg("%d.%d", int64(i/7), int64(i%7))
}

// appendList appends the names of the set flags joined by ",".
func (t *bitNames) appendList(dst []byte, b Bits) []byte {
	first := true
	for i := 0; b != 0 && i < 64; i++ {
		if b&(1<<i) == 0 {
			continue
		}
		b &^= 1 << i
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, t.name(i)...)
	}
	return dst
}

var (
	headNames1   = &bitNames{headNames1Pairs[:]}
	headNames004 = &bitNames{headNames004Pairs[:]}

	requestNames1   = &bitNames{requestNames1Pairs[:]}
	requestNames004 = &bitNames{requestNames004Pairs[:]}

	playerFlagNames    = &playerFlagNamesTab
	addOnFlagNames     = &addOnFlagNamesTab
	serverFlagNames004 = &serverFlagNames004Tab
	serverFlagNames1   = &bitNames{serverFlagNames1Pairs[:]}
	limitNames1        = &bitNames{limitNames1Pairs[:]}
)

// The tables the field tables name, by address: a pointer copied from
// another variable would make the field tables code run at start instead
// of data.
var (
	playerFlagNamesTab    = bitNames{playerFlagNamesPairs[:]}
	addOnFlagNamesTab     = bitNames{addOnFlagNamesPairs[:]}
	serverFlagNames004Tab = bitNames{serverFlagNames004Pairs[:]}
)

// The flag-name pairs of the tables above.
var (
	headNames1Pairs = [...]bitName{
		{HeadAnswer, "answer"}, {HeadChallenge, "challenge_number"}, {HeadRequestID, "request_id"},
		{HeadSplit, "split"}, {HeadUTF8, "utf8"},
	}
	headNames004Pairs = [...]bitName{
		{HeadAnswer, "answer"}, {Head004RequestID, "request_id"}, {Head004Challenge, "challenge_number"},
		{HeadSplit, "split"},
	}
	requestNames1Pairs = [...]bitName{
		{ReqServerInfo, "server_info"}, {ReqTeams, "team_list"}, {ReqPlayers, "player_list"},
		{ReqRules, "rule_list"}, {ReqAddOns, "addon_list"}, {ReqLimits, "limit_list"},
		{ReqColoredNames, "colored_names"},
	}
	requestNames004Pairs = [...]bitName{
		{Req004Teams, "team_list"}, {Req004Players, "player_list"}, {Req004Rules, "rule_list"},
		{Req004AddOns, "addon_list"}, {Req004Limits, "limit_list"}, {Req004GameName, "game_name"},
		{Req004ServerFlags, "server_flags"}, {Req004Mod, "mod"}, {Req004HostName, "host_name"},
		{Req004Map, "map"}, {Req004NextMap, "next_map"}, {Req004GameType, "game_type"},
		{Req004PlayerCount, "player_count"}, {Req004SlotMax, "slot_max"}, {Req004BotCount, "bot_count"},
		{Req004ReservedSlots, "reserved_slots"},
	}
	playerFlagNamesPairs = [...]bitName{
		{FlagAlive, "alive"}, {FlagDead, "dead"}, {FlagBot, "bot"}, {FlagBomb, "bomb"}, {FlagVIP, "vip"},
	}
	addOnFlagNamesPairs = [...]bitName{
		{AddOnActive, "active"}, {AddOnAntiCheat, "anti_cheat_tool"}, {AddOnMutator, "mutator"},
		{AddOnAdminTool, "admin_tool"},
	}
	serverFlagNames004Pairs = [...]bitName{
		{SF004Linux, "os_linux"}, {SF004Windows, "os_windows"}, {SF004Mac, "os_mac"},
		{SF004Dedicated, "dedicated"}, {SF004Proxy, "proxy"},
	}
	serverFlagNames1Pairs = [...]bitName{
		{Bits(1 << 0), "type.0"}, {Bits(1 << 1), "type.1"}, {SFPassword, "password"}, {SFProxy, "proxy"},
		{Bits(1 << 4), "os.0"}, {Bits(1 << 5), "os.1"}, {Bits(1 << 6), "os.2"},
	}
	limitNames1Pairs = [...]bitName{
		{limitLeftFlag, "limit_left"}, {Bits(1 << 1), "type.0"}, {Bits(1 << 2), "type.1"},
		{Bits(1 << 3), "type.2"}, {Bits(1 << 4), "type.3"},
	}
)

// byVersion picks the table of version v.
func byVersion[T any](v Version, v1, v004 T) T {
	if v == V004 {
		return v004
	}
	return v1
}

func headNames(v Version) *bitNames    { return byVersion(v, headNames1, headNames004) }
func requestNames(v Version) *bitNames { return byVersion(v, requestNames1, requestNames004) }
func teamNames(v Version) *bitNames    { return byVersion(v, teamNames1, teamNames004) }
func playerNames(v Version) *bitNames  { return byVersion(v, playerNames1, playerNames004) }

// The Requests bits of the five lists, in wire order.
const (
	listTeams = iota
	listPlayers
	listRules
	listAddOns
	listLimits
)

var (
	listBits1   = [...]Bits{ReqTeams, ReqPlayers, ReqRules, ReqAddOns, ReqLimits}
	listBits004 = [...]Bits{Req004Teams, Req004Players, Req004Rules, Req004AddOns, Req004Limits}
)

// listBits returns the Requests bits of the lists in version v.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func listBits(v Version) [5]Bits { return byVersion(v, listBits1, listBits004) }

var serverTypeNames = [...]string{"unknown", "listen", "dedicated", "type 3"}
var osNames = [...]string{"unknown", "windows", "linux", "macintosh", "os 4", "os 5", "os 6", "os 7"}
var limitTypeNames = [...]string{"time", "player score", "round", "team score"}

// ServerType returns the 1.0x server type of flags: "unknown", "listen" or "dedicated".
func ServerType(flags Bits) string { return serverTypeNames[flags&sfTypeMask] }

// OS returns the 1.0x operating system of flags: "unknown", "windows", "linux" or "macintosh".
func OS(flags Bits) string { return osNames[(flags&sfOSMask)>>sfOSShift] }

// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func limitTypeName(t uint8) string {
	if int(t) < len(limitTypeNames) {
		return limitTypeNames[t]
	}
	return wire.Msg("type %d", int64(t))
}
