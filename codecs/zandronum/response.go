package zandronum

import (
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// DecodeResponse decodes a launcher reply datagram (Huffman layer
// included): a full reply (5660023) or a refusal (5660024, 5660025). A
// segment (5660032) is an error here; use DecodeSegmented. On error it
// returns the partial Response.
//
// The layout follows the flags the server returned (docs/protocols/zandronum.md 2.5);
// where they leave the team byte open, the game mode decides, and where the
// reply contradicts that, the other layouts are tried (see Guess).
//
// req is the request the reply answers, or nil when it is not known.
// Knowing the requested flags makes the team-byte rule exact even when
// the server dropped SQF_TEAMINFO_NUMBER; and a reply that echoes another
// time is an error wrapping codecs.ErrBadValue at field "time" (the
// decoded reply is returned too).
func DecodeResponse(b []byte, req *Request) (Response, error) {
	return decodeResponseOne(b, true, req)
}

// DecodeResponsePayload is DecodeResponse for the plain payload of a
// launcher reply.
func DecodeResponsePayload(p []byte, req *Request) (Response, error) {
	return decodeResponseOne(p, false, req)
}

func decodeResponseOne(b []byte, isWire bool, req *Request) (Response, error) {
	s, p, err := scratchFor(b, isWire)
	if err != nil {
		return Response{}, err
	}
	var asked Flag
	if req != nil {
		asked = req.Flags
	}
	resp, err := decodeResponse(s.r, p, 0, nil, asked)
	if err == nil && req != nil && resp.Time != req.Time {
		err = newError("time", 4, "", wire.Detailf(codecs.ErrBadValue, "%d echoed, the request sent %d", int64(resp.Time), int64(req.Time)))
	}
	return resp, done(s, err, isWire)
}

// decodeResponse decodes a reply from the start of layer p (number layer),
// read by r.
func decodeResponse(r *wire.Reader, p []byte, layer int, spans *[]codecs.Span, asked Flag) (Response, error) {
	var resp Response
	resp.Code = r.U32LE("response")
	if r.Failed() {
		return resp, r.Err()
	}
	switch resp.Code {
	case CodeIgnored, CodeBanned:
		resp.Time = r.U32LE("time")
		resp.Trailing = trailing(r)
		return resp, r.Err()
	case CodeAccepted:
		err := decodeBody(r, p, layer, spans, &resp, asked)
		return resp, err
	case CodeSegmented:
		r.FailAt("response", 0, codecs.Detail(codecs.ErrUnknownCode, "5660032 is one segment of a reply; decode it with the other segments"))
	default:
		r.FailAt("response", 0, codecs.Detail(codecs.ErrUnknownCode, strconv.FormatUint(uint64(resp.Code), 10)))
	}
	return resp, r.Err()
}

// trailing consumes and copies what is left in r.
func trailing(r *wire.Reader) []byte {
	n := r.Len()
	if r.Failed() || n == 0 {
		return nil
	}
	start := r.Offset()
	b := r.Skip("trailing", n)
	if r.Recording() {
		r.Mark("trailing", "bytes", start, wire.Msg("%d bytes after the last field", int64(n)))
	}
	return append([]byte(nil), b...)
}

// layout is what the flags of a reply may leave open (docs/protocols/zandronum.md 2.5).
type layout struct {
	teamByte bool // player records carry a team byte
	fewer    bool // one player record fewer than numplayers
	teams    int  // number of teams when SQF_TEAMINFO_NUMBER is absent
}

// body decodes the fields of a reply with one layout.
//
// The reply being filled is passed to each method rather than kept in
// body: escape analysis is not field-sensitive, and the strings body hands
// out would otherwise drag the reply onto the heap.
type body struct {
	r     *wire.Reader
	t     text
	lay   layout
	spans *[]codecs.Span // where r records, or nil
}

// firstLayoutBit is the first field whose decoding depends on the layout.
const firstLayoutBit = 20 // SQF_PLAYERDATA

// decodeBody decodes the reply from the echoed time on: the reassembled
// buffer of a segmented reply starts there, a plain reply after its code.
// r reads layer p (number layer) and stands at the time.
func decodeBody(r *wire.Reader, p []byte, layer int, spans *[]codecs.Span, resp *Response, asked Flag) error {
	t := text(p)
	resp.Time = r.U32LE("time")
	resp.Version = t.cstring(r, "version")
	resp.Flags = Flag(flags32(r, "flags", "flags:SQF", &flagNames))
	b := body{r: r, t: t, spans: spans}
	if r.Failed() {
		return r.Err()
	}
	for bit := range firstLayoutBit {
		if resp.Flags&(1<<bit) != 0 {
			b.field(resp, bit)
			if r.Failed() {
				resp.stop = bit + 1
				return r.Err()
			}
		}
	}

	all, nc := layouts(resp, asked)
	cands := all[:nc]
	mark, snap, nspans := r.Offset(), *resp, spanCount(spans)
	b.lay = cands[0]
	b.tail(resp)
	if b.clean(resp) {
		resp.Guessed = guessOf(resp, cands[0], cands[0])
		return nil
	}
	err := r.Err()
	for _, l := range cands[1:] {
		try := snap
		pr := wire.NewReader(Protocol, p, layer, nil)
		pr.Skip("", mark)
		pb := body{r: pr, t: t, lay: l}
		pb.tail(&try)
		if !pb.clean(&try) || !plausible(&try) {
			continue
		}
		if spans == nil {
			*resp = try
		} else {
			*spans = (*spans)[:nspans]
			*resp = snap
			rr := wire.NewReader(Protocol, p, layer, spans)
			rr.Skip("", mark)
			(&body{r: rr, t: t, lay: l, spans: spans}).tail(resp)
		}
		resp.Guessed = guessOf(resp, cands[0], l)
		return nil
	}
	resp.Guessed = guessOf(resp, cands[0], cands[0])
	return err
}

// plausible reports whether the fields a guessed layout decoded look like
// what a server sends. A guess needs more than a clean decode: a layout
// that is wrong, or a reply that was cut short, can end exactly at the
// last byte by chance.
func plausible(r *Response) bool {
	bit := func(v uint8) bool { return v <= 1 }
	for _, p := range r.Players {
		if !bit(p.Spectator) || !bit(p.Bot) || (r.TeamByte && p.Team > TeamGold && p.Team != NoTeam) {
			return false
		}
	}
	f := r.Flags
	switch {
	case f&SQF_TEAMINFO_NUMBER != 0 && r.NumTeams > 4,
		len(r.Teams) > 4,
		f&SQF_TESTING_SERVER != 0 && !bit(r.Testing),
		f&SQF_ALL_DMFLAGS != 0 && (len(r.AllDMFlags) < 6 || len(r.AllDMFlags) > 16),
		f&SQF_SECURITY_SETTINGS != 0 && !bit(r.Security),
		f&SQF_EXTENDED_INFO != 0 && r.Flags2.Unknown() != 0:
		return false
	}
	for _, i := range r.OptionalWADs {
		if f&SQF_PWADS != 0 && int(i) >= len(r.PWADs) {
			return false
		}
	}
	if f&SQF_EXTENDED_INFO != 0 && r.Flags2&SQF2_COUNTRY != 0 {
		for _, c := range []byte(r.Country) {
			if c < 'A' || c > 'Z' {
				return false
			}
		}
	}
	return true
}

// clean reports whether the layout decoded every byte without error.
func (b *body) clean(resp *Response) bool { return !b.r.Failed() && len(resp.Trailing) == 0 }

// tail decodes the fields from SQF_PLAYERDATA on, then the SQF2 fields,
// then keeps what is left as Trailing.
func (b *body) tail(resp *Response) {
	_, _ = *b, *resp // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	f := resp.Flags
	for bit := firstLayoutBit; bit < 31; bit++ {
		if f&(1<<bit) != 0 {
			b.field(resp, bit)
			if b.r.Failed() {
				resp.stop = bit + 1
				return
			}
		}
	}
	if f&SQF_EXTENDED_INFO != 0 {
		resp.Flags2 = Flag2(flags32(b.r, "flags2", "flags:SQF2", &flag2Names))
		if b.r.Failed() {
			resp.stop = 32
			return
		}
		b.r.Enter("sqf2", -1)
		for bit := range 5 {
			if resp.Flags2&(1<<bit) != 0 {
				b.field2(resp, bit)
				if b.r.Failed() {
					resp.stop = 33 + bit
					break
				}
			}
		}
		b.r.Leave()
	}
	resp.Trailing = trailing(b.r)
}

// layouts returns the layouts to try, the one the flags and mode point to
// first. A TEAMINFO or TEAMSCORES flag in the reply means the mode puts
// players on teams; a requested TEAMINFO_NUMBER missing from the reply
// means it does not; both are exact. Otherwise the mode's table entry
// decides, and the other choice is tried when that does not decode.
func layouts(resp *Response, asked Flag) (out [16]layout, n int) {
	f := resp.Flags
	var pref layout
	exact := true
	switch {
	case f&SQF_TEAMINFO != 0:
		pref.teamByte = true
	case asked&SQF_TEAMINFO_NUMBER != 0:
		pref.teamByte = false
	default:
		exact = false
		if f&SQF_GAMETYPE != 0 {
			info, _ := resp.GameMode.Info()
			pref.teamByte = info.OnTeams
		}
	}
	// Without TEAMINFO_NUMBER the team count is unknown: two teams is the
	// stock setup; the others are tried in turn.
	teamCounts, nt := [4]int{0}, 1
	if f&SQF_TEAMINFO_NUMBER == 0 && f&(SQF_TEAMINFO_NAME|SQF_TEAMINFO_COLOR|SQF_TEAMINFO_SCORE) != 0 {
		teamCounts, nt = [4]int{2, 4, 3, 1}, 4
	}
	players := f&SQF_PLAYERDATA != 0 && resp.NumPlayers > 0
	for _, few := range [2]bool{false, true} {
		if few && !players {
			break
		}
		for _, tb := range [2]bool{pref.teamByte, !pref.teamByte} {
			if tb != pref.teamByte && (exact || !players) {
				break
			}
			for _, tc := range teamCounts[:nt] {
				out[n] = layout{teamByte: tb, fewer: few, teams: tc}
				n++
			}
		}
	}
	return out, n
}

func guessOf(resp *Response, pref, got layout) Guess {
	var g Guess
	if got.teamByte != pref.teamByte {
		g |= GuessTeamByte
	}
	if got.fewer {
		g |= GuessPlayerCount
	}
	if got.teams != 0 && len(resp.Teams) > 0 {
		g |= GuessTeamCount
	}
	return g
}

// capCount bounds a count read from the wire by what the rest of the
// layer can hold when every element takes at least min bytes.
func capCount(r *wire.Reader, n, size int) int {
	return max(0, min(n, r.Len()/size))
}

// field decodes the field of SQF flag 1<<bit (docs/protocols/zandronum.md 2.4), in the
// manner of the server's table of field writers. Bit 15 carries nothing;
// bit 31 is handled by tail. A switch rather than a table of functions
// keeps the decoder's state off the heap.
func (b *body) field(resp *Response, bit int) {
	_, _ = *b, *resp // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	switch bit {
	case 0:
		resp.Name = b.t.cstring(b.r, "name")
	case 1:
		resp.URL = b.t.cstring(b.r, "url")
	case 2:
		resp.Email = b.t.cstring(b.r, "email")
	case 3:
		resp.Map = b.t.cstring(b.r, "map")
	case 4:
		resp.MaxClients = b.r.U8("maxclients")
	case 5:
		resp.MaxPlayers = b.r.U8("maxplayers")
	case 6:
		resp.PWADs = b.strings("pwads")
	case 7:
		resp.GameMode = GameMode(enum8(b.r, "gamemode", gameModeName, ""))
		resp.Instagib = b.r.U8("instagib")
		resp.Buckshot = b.r.U8("buckshot")
	case 8:
		resp.GameName = b.t.cstring(b.r, "gamename")
	case 9:
		resp.IWAD = b.t.cstring(b.r, "iwad")
	case 10:
		resp.ForcePassword = b.r.U8("forcepassword")
	case 11:
		resp.ForceJoinPassword = b.r.U8("forcejoinpassword")
	case 12:
		resp.Skill = b.r.U8("skill")
	case 13:
		resp.BotSkill = b.r.U8("botskill")
	case 14:
		resp.DMFlags[0] = b.r.U32LE("dmflags")
		resp.DMFlags[1] = b.r.U32LE("dmflags2")
		resp.DMFlags[2] = b.r.U32LE("compatflags")
	case 16:
		l := &resp.Limits
		b.r.Enter("limits", -1)
		l.FragLimit = b.r.U16LE("fraglimit")
		l.TimeLimit = b.r.U16LE("timelimit")
		if l.TimeLimit != 0 {
			l.TimeLeft = b.r.U16LE("timeleft")
		}
		l.DuelLimit = b.r.U16LE("duellimit")
		l.PointLimit = b.r.U16LE("pointlimit")
		l.WinLimit = b.r.U16LE("winlimit")
		b.r.Leave()
	case 17:
		resp.TeamDamage = b.r.F32LE("teamdamage")
	case 18:
		for i := range resp.TeamScores {
			b.r.Enter("teamscores", i)
			resp.TeamScores[i] = b.r.S16LE("")
			b.r.Leave()
		}
	case 19:
		resp.NumPlayers = b.r.U8("numplayers")
	case 20:
		b.players(resp)
	case 21:
		resp.NumTeams = b.r.U8("numteams")
	case 22:
		ts := b.teams(resp, 1)
		for i := range ts {
			b.r.Enter("team_names", i)
			ts[i].Name = b.t.cstring(b.r, "")
			b.r.Leave()
		}
	case 23:
		ts := b.teams(resp, 4)
		for i := range ts {
			b.r.Enter("team_colors", i)
			start := b.r.Offset()
			v := b.r.Skip("", 4)
			if len(v) == 4 {
				ts[i].Color = uint32(v[0]) | uint32(v[1])<<8 | uint32(v[2])<<16 | uint32(v[3])<<24
				if b.r.Recording() {
					b.r.Mark("", "u32le", start, "0x"+hex32(ts[i].Color))
				}
			}
			b.r.Leave()
		}
	case 24:
		ts := b.teams(resp, 2)
		for i := range ts {
			b.r.Enter("team_scores", i)
			ts[i].Score = b.r.S16LE("")
			b.r.Leave()
		}
	case 25:
		resp.Testing = b.r.U8("testing")
		resp.TestingName = b.t.cstring(b.r, "testing_name")
	case 26:
		resp.DataMD5Sum = b.t.cstring(b.r, "data_md5sum")
	case 27:
		b.numbers(resp, "all_dmflags", 4)
	case 28:
		resp.Security = b.r.U8("security")
	case 29:
		b.numbers(resp, "optional_wads", 1)
	case 30:
		resp.DEH = b.strings("deh")
	}
}

// field2 decodes the field of SQF2 flag 1<<bit, under the path "sqf2".
func (b *body) field2(resp *Response, bit int) {
	_, _ = *b, *resp // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	switch bit {
	case 0:
		resp.PWADHashes = b.strings("pwad_hashes")
	case 1:
		start := b.r.Offset()
		c := b.r.Skip("country", 3)
		if len(c) == 3 {
			resp.Country = b.t.of(start, c)
			if b.r.Recording() {
				b.r.Mark("country", "chars", start, resp.Country)
			}
		}
	case 2:
		resp.GameModeName = b.t.cstring(b.r, "gamemode_name")
	case 3:
		resp.GameModeShort = b.t.cstring(b.r, "gamemode_shortname")
	case 4:
		resp.VoiceChat = b.r.U8("voicechat")
	}
}

// count reads the BYTE count of list name and bounds it by what is left
// when each element takes at least min bytes. It returns -1 on error; a
// count larger than the rest allows still fails, at the element that runs
// short.
func (b *body) count(name string, size int) int {
	b.r.Enter(name, -1)
	n := int(b.r.U8("count"))
	b.r.Leave()
	if b.r.Failed() {
		return -1
	}
	if c := capCount(b.r, n, size); c < n {
		// Read the elements that fit, so the error names the first one
		// that does not.
		return c + 1
	}
	return n
}

// numbers reads a BYTE count and that many LONGs (size 4, AllDMFlags) or
// BYTEs (size 1, OptionalWADs).
func (b *body) numbers(resp *Response, name string, size int) {
	_, _ = *b, *resp // one nil check here, not one per field access below: smaller code (see "Code size" in codecs/doc.go)
	n := b.count(name, size)
	if n < 0 {
		return
	}
	if size == 4 {
		resp.AllDMFlags = make([]uint32, 0, n)
	} else {
		resp.OptionalWADs = make([]uint8, 0, n)
	}
	for i := range n {
		b.r.Enter(name, i)
		var x uint32
		if size == 4 {
			x = b.r.U32LE("")
		} else {
			x = uint32(b.r.U8(""))
		}
		b.r.Leave()
		if b.r.Failed() {
			break
		}
		if size == 4 {
			resp.AllDMFlags = append(resp.AllDMFlags, x)
		} else {
			resp.OptionalWADs = append(resp.OptionalWADs, uint8(x))
		}
	}
}

// strings reads a BYTE count and that many strings.
func (b *body) strings(name string) []string {
	n := b.count(name, 1)
	if n < 0 {
		return nil
	}
	v := make([]string, 0, n)
	for i := range n {
		b.r.Enter(name, i)
		s := b.t.cstring(b.r, "")
		b.r.Leave()
		if b.r.Failed() {
			break
		}
		v = append(v, s)
	}
	return v
}

// teams returns the team list for a TEAMINFO name, colour or score field,
// creating it with the announced (or, without TEAMINFO_NUMBER, the
// layout's) number of teams, bounded by what the rest can hold.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func (b *body) teams(resp *Response, size int) []Team {
	if resp.Teams != nil {
		return resp.Teams
	}
	n := int(resp.NumTeams)
	if resp.Flags&SQF_TEAMINFO_NUMBER == 0 {
		n = b.lay.teams
	}
	if c := capCount(b.r, n, size); c < n {
		n = c + 1
	}
	resp.Teams = make([]Team, n)
	return resp.Teams
}

// players reads the SQF_PLAYERDATA records: numplayers of them (one fewer
// with layout.fewer), each with a team byte when layout.teamByte.
func (b *body) players(resp *Response) {
	r := b.r
	if resp.Flags&SQF_NUMPLAYERS == 0 {
		r.Fail("players", codecs.Detail(codecs.ErrBadValue, "player data without SQF_NUMPLAYERS"))
		return
	}
	n := int(resp.NumPlayers)
	if b.lay.fewer && n > 0 {
		n--
	}
	// A record takes at least 7 bytes (empty name, no team byte).
	if c := capCount(r, n, 7); c < n {
		n = c + 1
	}
	ps := make([]Player, 0, n)
	spans := b.spans
	for i := range n {
		r.Enter("players", i)
		start, at := r.Offset(), spanCount(spans)
		var p Player
		p.Name = b.t.cstring(r, "name")
		p.Score = r.S16LE("score")
		p.Ping = r.U16LE("ping")
		p.Spectator = r.U8("spectator")
		p.Bot = r.U8("bot")
		if b.lay.teamByte {
			p.Team = enum8(r, "team", teamName, "")
		}
		p.Minutes = r.U8("minutes")
		if r.Recording() {
			markGroup(r, spans, at, "", "group", start, StripColors(p.Name))
		}
		r.Leave()
		if r.Failed() {
			break
		}
		ps = append(ps, p)
	}
	resp.Players = ps
	resp.TeamByte = b.lay.teamByte
}

func gameModeName(v uint8) string { return GameMode(v).String() }

func teamName(v uint8) string {
	switch v {
	case TeamBlue:
		return "blue"
	case TeamRed:
		return "red"
	case TeamGreen:
		return "green"
	case TeamGold:
		return "gold"
	case NoTeam:
		return "no team"
	}
	return wire.Msg("team %d", int64(v))
}
