package doom3

import (
	"encoding/binary"
	"strconv"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/wire"
)

// maxVars bounds the key/value pairs of one reply (a datagram of 1,400
// bytes holds at most 700 empty ones).
const maxVars = 1024

// DecodeRequest decodes a getInfo query: the magic, the command and its
// NUL, then four or eight bytes of challenge and at most eight more.
func DecodeRequest(b []byte) (Request, error) {
	r := wire.NewReader(Protocol, b, 0, nil)
	q := readRequest(r)
	return q, r.Err()
}

func readRequest(r *wire.Reader) Request {
	var q Request
	readMagic(r)
	start := r.Offset()
	if cmd := r.CString("command"); !r.Failed() && string(cmd) != CmdGetInfo {
		r.FailAt("command", start, codecs.Detail(codecs.ErrNotQuery, strconv.Quote(string(cmd))+" is not getInfo"))
	}
	q.Challenge = r.U32LE("challenge")
	if r.Len() >= 4 {
		q.Second, q.HasSecond = r.U32LE("challenge2"), true
	}
	if n := r.Len(); n > 0 && !r.Failed() {
		if n > 8 {
			r.Fail("tail", codecs.Detail(codecs.ErrTooLong, strconv.Itoa(n)+" bytes after the challenge"))
			return q
		}
		q.Tail = append([]byte{}, r.Bytes("tail", n)...)
	}
	return q
}

// readMagic reads the two 0xff bytes every datagram starts with.
func readMagic(r *wire.Reader) {
	start := r.Offset()
	if m := r.Skip("magic", 2); m != nil {
		if string(m) != Magic {
			r.FailAt("magic", start, codecs.ErrBadMagic)
			return
		}
		r.Mark("magic", "bytes", start, "ffff")
	}
}

// DecodeResponse decodes an infoResponse, picking the game from its
// protocol version (GameAuto; see decodeAuto for Wolfenstein). req, the query it answers, may be nil; it
// does not change the reading.
func DecodeResponse(b []byte, req *Request) (Response, error) {
	return decodeAuto(b, nil)
}

// DecodeGame decodes an infoResponse in the dialect of g (GameAuto: from
// the protocol version). On error the fields read so far are returned.
func DecodeGame(b []byte, g Game) (Response, error) {
	var resp Response
	r := wire.NewReader(Protocol, b, 0, nil)
	readResponse(r, &resp, g)
	return resp, r.Err()
}

// GuessGame is the dialect of reply b by its protocol version, as
// GameAuto reads it: major 1 Doom 3, 2 Quake 4, 3 and 4 Prey (retail and
// demo), 10 to 15 ETQW (whose version follows a task id); otherwise Doom
// 3's layout (docs/protocols/doom3.md, "Which game").
func GuessGame(b []byte) Game {
	at := len(Magic) + len(CmdInfoResponse) + 1
	if len(b) < at+8 {
		return GameDoom3
	}
	switch binary.LittleEndian.Uint16(b[at+6:]) {
	case 1:
		return GameDoom3
	case 2:
		return GameQuake4
	case 3, 4:
		return GamePrey
	}
	if len(b) >= at+12 {
		if v := binary.LittleEndian.Uint16(b[at+10:]); v >= 10 && v <= 15 {
			return GameETQW
		}
	}
	return GameDoom3
}

// readResponse reads an infoResponse in the dialect of g into resp.
func readResponse(r *wire.Reader, resp *Response, g Game) {
	_ = *resp // one nil check: see "Code size" in codecs/doc.go
	if g == GameAuto || g >= gameCount {
		g = GuessGame(r.Rest())
	}
	resp.Game = g
	readMagic(r)
	start := r.Offset()
	if cmd := r.CString("command"); !r.Failed() && string(cmd) != CmdInfoResponse {
		r.FailAt("command", start, codecs.Detail(codecs.ErrUnknownCode, strconv.Quote(string(cmd))+" is not infoResponse"))
	}
	if g == GameETQW {
		resp.TaskID = r.U32LE("task_id")
	}
	resp.Challenge = r.U32LE("challenge")
	start = r.Offset()
	if b := r.Skip("protocol", 4); b != nil {
		v := binary.LittleEndian.Uint32(b)
		resp.Major, resp.Minor = uint16(v>>16), uint16(v)
		if r.Recording() {
			r.Mark("protocol", "version", start, resp.Version())
		}
	}
	if g == GameETQW {
		resp.Size = r.U32LE("size")
	}
	readVars(r, resp)
	readPlayers(r, resp)
	if r.Failed() {
		return
	}
	resp.OSMask = r.U32LE("os_mask")
	if g == GameETQW {
		resp.Ranked = r.U8("ranked")
		resp.TimeLeft = r.U32LE("time_left")
		resp.GameState = r.U8("game_state")
		resp.ServerType = r.U8("server_type")
		switch resp.ServerType {
		case ServerRegular:
			resp.Interested = r.U8("interested")
		case ServerTV:
			resp.Connected = r.U32LE("connected")
			resp.MaxTV = r.U32LE("max_viewers")
		}
	}
	if n := r.Len(); n > 0 && !r.Failed() {
		resp.Trailing = r.Bytes("trailing", n)
	}
}

// readVars reads the key/value pairs up to the empty pair that ends them.
func readVars(r *wire.Reader, resp *Response) {
	for i := 0; !r.Failed(); i++ {
		if rest := r.Rest(); len(rest) >= 2 && rest[0] == 0 && rest[1] == 0 {
			r.Bytes("vars_end", 2)
			return
		}
		if i >= maxVars {
			r.Fail("vars", codecs.Detail(codecs.ErrTooLong, "more than "+strconv.Itoa(maxVars)+" pairs"))
			return
		}
		r.Enter("vars", i)
		group := r.Offset()
		k := r.CString("key")
		v := r.CString("value")
		if !r.Failed() {
			resp.Vars = append(resp.Vars, Var{Key: codecs.Latin1(k), Value: codecs.Latin1(v)})
			r.Mark("", "group", group, resp.Vars[len(resp.Vars)-1].Key)
		}
		r.Leave()
	}
}

// readPlayers reads the player records up to the id that ends them (32;
// 16 or 32 from Wolfenstein).
func readPlayers(r *wire.Reader, resp *Response) {
	g, v := resp.Game, uint32(resp.Major)<<16|uint32(resp.Minor)
	for i := 0; !r.Failed(); i++ {
		rest := r.Rest()
		if len(rest) == 0 {
			r.Fail("players_end", codecs.Detail(codecs.ErrShort, "the player list has no end"))
			return
		}
		if id := rest[0]; id == maxPlayersListed || g == GameWolf && id == maxPlayersListed/2 {
			resp.End = r.U8("players_end")
			return
		}
		if i >= maxPlayersListed {
			r.Fail("players", codecs.Detail(codecs.ErrTooLong, "more than "+strconv.Itoa(maxPlayersListed)+" players"))
			return
		}
		r.Enter("players", i)
		group := r.Offset()
		var p Player
		if p.ID = r.U8("id"); p.ID > maxPlayersListed && !r.Failed() {
			r.FailAt("id", group, codecs.Detail(codecs.ErrBadValue, "player id "+strconv.Itoa(int(p.ID))+" is past the last client (31)"))
		}
		p.Ping = r.U16LE("ping")
		if hasRate(g, v) {
			p.Rate, p.HasRate = r.U32LE("rate"), true
		}
		p.Name = codecs.Latin1(r.CString("name"))
		if hasClanPos(g, v) {
			p.ClanPos, p.HasClanPos = r.U8("clan_pos"), true
		}
		if hasClan(g, v) {
			p.Clan, p.HasClan = codecs.Latin1(r.CString("clan")), true
		}
		if hasBot(g) {
			p.Bot, p.HasBot = r.U8("bot"), true
		}
		if !r.Failed() {
			resp.Players = append(resp.Players, p)
			r.Mark("", "group", group, p.Name)
		}
		r.Leave()
	}
}
