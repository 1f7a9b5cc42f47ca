package a2s

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DecodeRequest decodes a query to a server: A2S_INFO (with or without a
// challenge), A2S_PLAYER or A2S_RULES. Trailing bytes are an error wrapping
// codecs.ErrTrailing, returned with the complete request.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	trailing(r)
	return q, r.Err()
}

// DecodeResponse decodes one whole server message (a single datagram, or
// the payload Reassemble returns): a challenge, an info reply in either
// form, a player list or the rules. q, the query it answers, may be nil:
// the layout never depends on it. On error the fields read so far are
// returned. Strings are copied; nothing aliases b.
func DecodeResponse(b []byte, q *Request) (Response, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	a := readResponse(r)
	trailing(r)
	return a, r.Err()
}

// DecodeMasterRequest decodes a Steam master query.
func DecodeMasterRequest(b []byte) (MasterRequest, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readMasterRequest(r)
	trailing(r)
	return q, r.Err()
}

// DecodeMasterReply decodes one datagram of a Steam master's reply.
func DecodeMasterReply(b []byte) (MasterReplyPage, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	p := readMasterReply(r)
	trailing(r)
	return p, r.Err()
}

// trailing fails with ErrTrailing when bytes are left, and records them.
func trailing(r *wire.Reader) {
	if r.Failed() || r.Len() == 0 {
		return
	}
	n := r.Len()
	start := r.Offset()
	r.Bytes("trailing", n)
	r.FailAt("trailing", start, wire.Detailf(codecs.ErrTrailing, "%d bytes after the message", int64(n)))
}

// cstr reads a NUL-terminated string. A2S strings are UTF-8 as sent; the
// span shows them so.
func cstr(r *wire.Reader, field string) string {
	if r.Failed() {
		return ""
	}
	rest := r.Rest()
	for i, c := range rest {
		if c == 0 {
			start := r.Offset()
			s := string(rest[:i])
			r.Skip(field, i+1)
			if r.Recording() {
				r.Mark(field, "cstring", start, s)
			}
			return s
		}
	}
	r.Fail(field, codecs.Detail(codecs.ErrShort, "string has no terminator"))
	return ""
}

// u64 reads a little-endian uint64.
func u64(r *wire.Reader, field string) uint64 {
	start := r.Offset()
	b := r.Skip(field, 8)
	if len(b) < 8 {
		return 0
	}
	v := binary.LittleEndian.Uint64(b)
	if r.Recording() {
		r.Mark(field, "u64le", start, strconv.FormatUint(v, 10))
	}
	return v
}

// char reads a byte that holds a letter and shows it as one.
func char(r *wire.Reader, field string, meaning func(byte) string) byte {
	start := r.Offset()
	b := r.Skip(field, 1)
	if len(b) < 1 {
		return 0
	}
	if r.Recording() {
		v := strconv.Itoa(int(b[0]))
		if b[0] >= 0x20 && b[0] < 0x7f {
			v += " '" + string(rune(b[0])) + "'"
		}
		if m := meaning(b[0]); m != "" {
			v += " " + m
		}
		r.Mark(field, "u8", start, v)
	}
	return b[0]
}

// header reads the four bytes of a single message and checks them.
func header(r *wire.Reader) {
	start := r.Offset()
	b := r.Skip("header", 4)
	if len(b) < 4 {
		return
	}
	if v := binary.LittleEndian.Uint32(b); v != headerSingle {
		r.FailAt("header", start, wire.Detailf(codecs.ErrBadMagic, "got %d, want -1 (FF FF FF FF)", int64(int32(v))))
		return
	}
	if r.Recording() {
		r.Mark("header", "s32le", start, "-1 single message")
	}
}

// readType reads the message type byte.
func readType(r *wire.Reader) Type { return Type(char(r, "type", typeName)) }

// typeName and regionName show a type and a region byte for char: named
// functions, not closures, since readType is inlined and each closure
// would be compiled again at every call site.
func typeName(c byte) string   { return Type(c).String() }
func regionName(c byte) string { return Region(c).String() }

func (t Type) String() string {
	switch t {
	case TypeInfoRequest:
		return "A2S_INFO"
	case TypePlayerRequest:
		return "A2S_PLAYER"
	case TypeRulesRequest:
		return "A2S_RULES"
	case TypeChallenge:
		return "S2C_CHALLENGE"
	case TypeInfo:
		return "info reply (Source)"
	case TypeInfoGoldSrc:
		return "info reply (GoldSrc)"
	case TypePlayers:
		return "player reply"
	case TypeRules:
		return "rules reply"
	}
	return ""
}

// challenge reads a challenge number (sent back as the same four bytes).
func challenge(r *wire.Reader, field string) uint32 {
	start := r.Offset()
	b := r.Skip(field, 4)
	if len(b) < 4 {
		return 0
	}
	v := binary.LittleEndian.Uint32(b)
	if r.Recording() {
		text := string(codecs.AppendHex(nil, b))
		if v == ChallengeRequest {
			text += " asks for a challenge"
		}
		r.Mark(field, "bytes", start, text)
	}
	return v
}

func readRequest(r *wire.Reader) Request {
	var q Request
	header(r)
	start := r.Offset()
	q.Type = readType(r)
	if r.Failed() {
		return q
	}
	switch q.Type {
	case TypeInfoRequest:
		at := r.Offset()
		if s := cstr(r, "payload"); !r.Failed() && s != InfoPayload {
			r.FailAt("payload", at, codecs.Detail(codecs.ErrBadValue, strconv.Quote(s)+", want "+strconv.Quote(InfoPayload)))
		}
		if !r.Failed() && r.Len() > 0 {
			q.HasChallenge = true
			q.Challenge = challenge(r, "challenge")
		}
	case TypePlayerRequest, TypeRulesRequest:
		q.HasChallenge = true
		q.Challenge = challenge(r, "challenge")
	default:
		r.FailAt("type", start, wire.Detailf(codecs.ErrUnknownCode, "query type %d", int64(q.Type)))
	}
	return q
}

func readResponse(r *wire.Reader) Response {
	var a Response
	header(r)
	start := r.Offset()
	a.Type = readType(r)
	if r.Failed() {
		return a
	}
	switch a.Type {
	case TypeChallenge:
		a.Challenge = challenge(r, "challenge")
	case TypeInfo:
		a.Info = &Info{}
		readInfo(r, a.Info)
	case TypeInfoGoldSrc:
		a.Info = &Info{GoldSrc: true}
		readInfoGoldSrc(r, a.Info)
	case TypePlayers:
		a.Players = &Players{}
		readPlayers(r, a.Players)
	case TypeRules:
		a.Rules = &Rules{}
		readRules(r, a.Rules)
	default:
		r.FailAt("type", start, wire.Detailf(codecs.ErrUnknownCode, "reply type %d", int64(a.Type)))
	}
	return a
}

func serverType(c byte) string {
	switch c | 0x20 { // GoldSrc sends upper case
	case 'd':
		return "dedicated"
	case 'l':
		return "listen"
	case 'p':
		return "SourceTV relay"
	}
	return ""
}

func environment(c byte) string {
	switch c | 0x20 {
	case 'l':
		return "Linux"
	case 'w':
		return "Windows"
	case 'm', 'o':
		return "macOS"
	}
	return ""
}

// readInfo reads a Source info reply after its type byte.
func readInfo(r *wire.Reader, in *Info) {
	in.Protocol = r.U8("protocol")
	in.Name = cstr(r, "name")
	in.Map = cstr(r, "map")
	in.Folder = cstr(r, "folder")
	in.Game = cstr(r, "game")
	in.AppID = r.U16LE("app_id")
	in.Players = r.U8("players")
	in.MaxPlayers = r.U8("max_players")
	in.Bots = r.U8("bots")
	in.ServerType = char(r, "server_type", serverType)
	in.Environment = char(r, "environment", environment)
	in.Visibility = r.U8("visibility")
	in.VAC = r.U8("vac")
	if in.AppID == ShipAppID && !r.Failed() {
		in.HasShip = true
		in.Ship.Mode = r.U8("ship.mode")
		in.Ship.Witnesses = r.U8("ship.witnesses")
		in.Ship.Duration = r.U8("ship.duration")
	}
	in.Version = cstr(r, "version")
	if r.Failed() || r.Len() == 0 {
		return // the extra data flag is optional
	}
	in.HasEDF = true
	start := r.Offset()
	if b := r.Skip("edf", 1); len(b) == 1 {
		in.EDF = b[0]
		if r.Recording() {
			r.Mark("edf", "flags:EDF", start, "0x"+strconv.FormatUint(uint64(b[0]), 16)+" "+edfNames(b[0]))
		}
	}
	if in.EDF&EDFPort != 0 {
		in.Port = r.U16LE("port")
	}
	if in.EDF&EDFSteamID != 0 {
		in.SteamID = u64(r, "steam_id")
	}
	if in.EDF&EDFSourceTV != 0 {
		in.SourceTVPort = r.U16LE("sourcetv_port")
		in.SourceTVName = cstr(r, "sourcetv_name")
	}
	if in.EDF&EDFKeywords != 0 {
		in.Keywords = cstr(r, "keywords")
	}
	if in.EDF&EDFGameID != 0 {
		in.GameID = u64(r, "game_id")
	}
}

// readInfoGoldSrc reads a GoldSrc info reply after its type byte.
func readInfoGoldSrc(r *wire.Reader, in *Info) {
	in.Address = cstr(r, "address")
	in.Name = cstr(r, "name")
	in.Map = cstr(r, "map")
	in.Folder = cstr(r, "folder")
	in.Game = cstr(r, "game")
	in.Players = r.U8("players")
	in.MaxPlayers = r.U8("max_players")
	in.Protocol = r.U8("protocol")
	in.ServerType = char(r, "server_type", serverType)
	in.Environment = char(r, "environment", environment)
	in.Visibility = r.U8("visibility")
	in.Mod = r.U8("mod")
	if in.Mod == 1 && !r.Failed() {
		m := &in.ModInfo
		m.Link = cstr(r, "mod.link")
		m.DownloadLink = cstr(r, "mod.download_link")
		m.Null = r.U8("mod.null")
		m.Version = r.U32LE("mod.version")
		m.Size = r.U32LE("mod.size")
		m.Type = r.U8("mod.type")
		m.DLL = r.U8("mod.dll")
	}
	in.VAC = r.U8("vac")
	in.Bots = r.U8("bots")
}

// playerMin is the smallest player entry: index, empty name, score and
// duration.
const playerMin = 1 + 1 + 4 + 4

// readPlayers reads a player reply after its type byte. Entries stop at
// the count or at the end of the datagram, whichever comes first (players
// counted but not listed: Players.Unlisted). The Ship's deaths and money
// follow the list; they are recognised by the bytes left being exactly
// eight per player. Otherwise, bytes left that are whole entries, and a
// multiple of 256 of them, are players past a count that wrapped (servers
// with more than 255 players send it modulo 256).
func readPlayers(r *wire.Reader, p *Players) {
	p.Count = r.U8("count")
	if r.Failed() {
		return
	}
	p.Players = make([]Player, 0, min(int(p.Count), r.Len()/playerMin))
	p.Players = readPlayerList(r, p.Players, 0, int(p.Count))
	if r.Failed() || r.Len() == 0 {
		return
	}
	if r.Len() == 8*len(p.Players) {
		p.Ship = true
		for i := range p.Players {
			r.Enter("players", i)
			p.Players[i].Deaths = r.S32LE("deaths")
			p.Players[i].Money = r.S32LE("money")
			r.Leave()
		}
		return
	}
	if n := wholeEntries(r.Rest()); n > 0 && n%256 == 0 {
		p.Players = readPlayerList(r, p.Players, len(p.Players), n)
	}
}

// readPlayerList reads n entries numbered from first, or fewer when the
// datagram ends between two entries: a server counts the players still
// connecting but does not list them (and CS:GO stops listing past 55), so
// a count above the entries sent is normal. The caller tells it apart from
// a cut entry, which fails at the field it cuts.
func readPlayerList(r *wire.Reader, dst []Player, first, n int) []Player {
	for i := first; i < first+n && !r.Failed() && r.Len() > 0; i++ {
		r.Enter("players", i)
		start := r.Offset()
		var pl Player
		pl.Index = r.U8("index")
		pl.Name = cstr(r, "name")
		pl.Score = r.S32LE("score")
		pl.Duration = r.F32LE("duration")
		if !r.Failed() {
			dst = append(dst, pl)
			if r.Recording() {
				r.Mark("", "group", start, pl.Name)
			}
		}
		r.Leave()
	}
	return dst
}

// wholeEntries counts the player entries b holds when it holds nothing
// else, or returns 0.
func wholeEntries(b []byte) int {
	n := 0
	for len(b) > 0 {
		end := -1
		for i := 1; i < len(b); i++ {
			if b[i] == 0 {
				end = i
				break
			}
		}
		if end < 0 || len(b) < end+1+8 {
			return 0
		}
		b = b[end+1+8:]
		n++
	}
	return n
}

// ruleMin is the smallest rule: two empty strings.
const ruleMin = 2

// readRules reads a rules reply after its type byte.
func readRules(r *wire.Reader, rs *Rules) {
	rs.Count = r.U16LE("count")
	if r.Failed() {
		return
	}
	rs.Rules = make([]Rule, 0, min(int(rs.Count), r.Len()/ruleMin))
	for i := 0; i < int(rs.Count) && !r.Failed(); i++ {
		r.Enter("rules", i)
		start := r.Offset()
		var x Rule
		x.Name = cstr(r, "name")
		x.Value = cstr(r, "value")
		if !r.Failed() {
			rs.Rules = append(rs.Rules, x)
			if r.Recording() {
				r.Mark("", "group", start, x.Name+" = "+x.Value)
			}
		}
		r.Leave()
	}
}

// readMasterRequest reads a Steam master query.
func readMasterRequest(r *wire.Reader) MasterRequest {
	var q MasterRequest
	start := r.Offset()
	if t := r.U8("type"); !r.Failed() && t != MasterQuery {
		r.FailAt("type", start, wire.Detailf(codecs.ErrBadMagic, "got %d, want 0x31 '1'", int64(t)))
		return q
	}
	q.Region = Region(char(r, "region", regionName))
	start = r.Offset()
	seed := cstr(r, "seed")
	if r.Failed() {
		return q
	}
	a, ok := ParseAddr(seed)
	if !ok {
		r.FailAt("seed", start, codecs.Detail(codecs.ErrBadValue, strconv.Quote(seed)+" is not IP:port"))
		return q
	}
	q.Seed = a
	start = r.Offset()
	q.Filter = cstr(r, "filter")
	if !r.Failed() && len(q.Filter) > maxFilter {
		r.FailAt("filter", start, wire.Detailf(codecs.ErrTooLong, "%d bytes, at most %d", int64(len(q.Filter)), maxFilter))
	}
	return q
}

// readMasterReply reads one page of a Steam master's reply.
func readMasterReply(r *wire.Reader) MasterReplyPage {
	var p MasterReplyPage
	header(r)
	start := r.Offset()
	b := r.Skip("type", 2)
	if len(b) < 2 {
		return p
	}
	if b[0] != MasterReply || b[1] != masterReplyEnd {
		r.FailAt("type", start, wire.Detailf(codecs.ErrUnknownCode, "got %d, want 0x66 0x0a", int64(binary.BigEndian.Uint16(b))))
		return p
	}
	if r.Recording() {
		r.Mark("type", "bytes", start, "66 0a master reply")
	}
	p.Servers = make([]Addr, 0, r.Len()/6)
	for i := 0; r.Len() >= 6; i++ {
		start := r.Offset()
		b := r.Skip("", 6)
		var a Addr
		copy(a.IP[:], b)
		a.Port = binary.BigEndian.Uint16(b[4:])
		if a.IsZero() {
			p.End = true
			if r.Recording() {
				r.Mark("end", "addr", start, "0.0.0.0:0 end of list")
			}
			break
		}
		p.Servers = append(p.Servers, a)
		if r.Recording() {
			r.Enter("servers", i)
			r.Mark("", "addr", start, a.String())
			r.Leave()
		}
	}
	if !p.End && r.Len() > 0 {
		r.Fail("servers", wire.Detailf(codecs.ErrShort, "%d bytes of a 6-byte entry", int64(r.Len())))
	}
	return p
}

// edfNames lists the flags of an extra data flag byte.
func edfNames(c byte) string {
	names := [...]struct {
		bit  byte
		name string
	}{{EDFPort, "port"}, {EDFSteamID, "steam_id"}, {EDFSourceTV, "sourcetv"}, {EDFKeywords, "keywords"}, {EDFGameID, "game_id"}}
	s := ""
	for _, n := range names {
		if c&n.bit != 0 {
			if s != "" {
				s += "|"
			}
			s += n.name
		}
	}
	if c&^edfKnown != 0 {
		if s != "" {
			s += "|"
		}
		s += "unknown bits"
	}
	return s
}
