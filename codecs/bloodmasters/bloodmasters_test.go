package bloodmasters_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// TestVectors checks every published vector against its "truth".
func TestVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name        string
		RequestHex  string `json:"request_hex"`
		ResponseHex string `json:"response_hex"`
		Expected    json.RawMessage
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	type client struct {
		Name      string
		Team      int
		Spectator bool
		Ping      int
	}
	type truth struct {
		Length       int
		Code         int
		TokenHex     string `json:"token_hex"`
		Title        string
		Locked       bool
		Website      string
		MaxClients   int
		MaxPlayers   int
		GameType     int
		Map          string
		NumClients   int
		NumPlayers   int
		Protocol     int
		ScoreLimit   int
		TimeLimit    int
		JoinSmallest bool
		Clients      []client
		Build        string
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			var exp struct{ Truth *truth }
			if err := json.Unmarshal(v.Expected, &exp); err != nil {
				t.Fatal(err)
			}
			if v.ResponseHex == "" {
				var want truth
				if err := json.Unmarshal(v.Expected, &want); err != nil {
					t.Fatal(err)
				}
				tok, err := bloodmasters.DecodeRequest(codectest.Unhex(t, v.RequestHex))
				if err != nil {
					t.Fatal(err)
				}
				if got := hex.EncodeToString(binary.BigEndian.AppendUint32(nil, tok.Token)); got != want.TokenHex {
					t.Errorf("token = %s, want %s", got, want.TokenHex)
				}
				if got := hex.EncodeToString(request(tok.Token)); got != v.RequestHex {
					t.Errorf("AppendRequest = %s, want %s", got, v.RequestHex)
				}
				return
			}
			want := exp.Truth
			b := codectest.Unhex(t, v.ResponseHex)
			r, err := bloodmasters.DecodeResponse(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			var cs []client
			for _, c := range r.Clients {
				cs = append(cs, client{c.Name, int(c.Team), c.Spectator, int(c.Ping)})
			}
			got := truth{
				Length: int(binary.LittleEndian.Uint16(b)), Code: int(b[2]),
				TokenHex: hex.EncodeToString(binary.BigEndian.AppendUint32(nil, r.Token)),
				Title:    r.Title, Locked: r.Locked, Website: r.Website,
				MaxClients: int(r.MaxClients), MaxPlayers: int(r.MaxPlayers), GameType: int(r.GameType),
				Map: r.Map, NumClients: int(r.NumClients), NumPlayers: int(r.NumPlayers), Protocol: int(r.Protocol),
				ScoreLimit: int(r.ScoreLimit), TimeLimit: int(r.TimeLimit), JoinSmallest: r.JoinSmallestTeam,
				Clients: cs, Build: r.Build,
			}
			if len(want.Clients) == 0 {
				want.Clients = nil
			}
			if !reflect.DeepEqual(got, *want) {
				t.Errorf("decoded\n %+v\nwant\n %+v", got, *want)
			}
			if enc, err := bloodmasters.AppendResponse(nil, r); err != nil || !bytes.Equal(enc, b) {
				t.Errorf("AppendResponse = %x, %v; want %x", enc, err, b)
			}
			if req := codectest.Unhex(t, v.RequestHex); !bytes.Equal(request(r.Token), req) {
				t.Errorf("the reply's token does not re-encode to the request %x", req)
			}
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	dm := packet(t, "dm-3-clients")
	// reply builds a reply message around body (everything after the token).
	reply := func(body string) []byte {
		b := codectest.Unhex(t, "0000 0d 00000000"+body)
		binary.LittleEndian.PutUint16(b, uint16(len(b)))
		return b
	}
	const rest = "00 00 10 0a 00 01 6d 00 00 1d 0000 0000 00" // locked..join, protocol 29, no clients
	tests := []struct {
		name     string
		b        []byte
		sentinel error
		field    string
		offset   int
	}{
		{"empty", nil, codecs.ErrShort, "length", 0},
		{"one byte", []byte{7}, codecs.ErrShort, "length", 0},
		{"length zero", codectest.Unhex(t, "0000 0d"), codecs.ErrBadValue, "length", 0},
		{"length below header", codectest.Unhex(t, "0200 0d 00"), codecs.ErrBadValue, "length", 0},
		{"reliable length below its header", codectest.Unhex(t, "0500 8d 0000"), codecs.ErrBadValue, "length", 0},
		{"length past datagram", codectest.Unhex(t, "ffff 0d 00000000 05 41"), codecs.ErrShort, "title", 7},
		{"request, not reply", codectest.Unhex(t, "0700 0d 00000000"), codecs.ErrShort, "title", 7},
		{"no ServerInfo message", codectest.Unhex(t, "0300 04 0300 05"), codecs.ErrUnknownCode, "command", 2},
		{"other message cut", codectest.Unhex(t, "0900 04 00"), codecs.ErrShort, "messages[0].data", 3},
		{"title length past int32", reply("ffffffff0f" + rest), codecs.ErrBadValue, "title", 7},
		{"title length of 6 bytes", reply("808080808000" + rest), codecs.ErrBadValue, "title", 7},
		{"title length cut after 5 bytes", codectest.Unhex(t, "ffff 0d 00000000 8080808080"), codecs.ErrBadValue, "title", 7},
		{"title overruns message", reply("e807" + rest), codecs.ErrTooLong, "title", 7},
		{"title into next message", append(codectest.Unhex(t, "0a00 0d 00000000 05 41 42"), codectest.Unhex(t, "0300 04")...), codecs.ErrTooLong, "title", 7},
		{"clients count hostile", reply("00 00 00 10 0a 00 00 ff 00 1d 0000 0000 00"), codecs.ErrShort, "clients[0].name", 22},
		{"client name overruns", reply("00 00 00 10 0a 00 00 01 00 1d 0000 0000 00 7f41"), codecs.ErrTooLong, "clients[0].name", 22},
		{"client ping cut", reply("00 00 00 10 0a 00 00 01 00 1d 0000 0000 00 014100 00 00"), codecs.ErrShort, "clients[0].ping", 26},
		{"build overruns", reply("00" + rest + "0541"), codecs.ErrTooLong, "build_description", 23},
		{"cut in header", dm[:2], codecs.ErrShort, "command", 2},
		{"cut in token", dm[:5], codecs.ErrShort, "token", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := bloodmasters.DecodeResponse(tc.b, nil)
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.offset)
			if cap(r.Clients) > len(tc.b)/5 {
				t.Errorf("reserved %d client records for %d bytes", cap(r.Clients), len(tc.b))
			}
		})
	}
}

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name     string
		b        string
		token    uint32
		sentinel error
		field    string
		offset   int
	}{
		{"zero token", "0700 0d 00000000", 0, nil, "", 0},
		{"token", "0700 0d 12345678", 0x12345678, nil, "", 0},
		{"empty", "", 0, codecs.ErrShort, "length", 0},
		{"cut", "0700 0d 1234", 0, codecs.ErrShort, "token", 3},
		{"trailing", "0700 0d 12345678 00", 0, codecs.ErrTrailing, "datagram", 7},
		{"reply", "9600 0d 00000000 16426c", 0, codecs.ErrBadValue, "length", 0},
		{"not ServerInfo", "0700 01 00000000", 0, codecs.ErrNotQuery, "command", 2},
		{"reliable", "0700 8d 00000000", 0, codecs.ErrNotQuery, "command", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := bloodmasters.DecodeRequest(codectest.Unhex(t, tc.b))
			if tc.sentinel == nil {
				if err != nil || tok.Token != tc.token {
					t.Fatalf("DecodeRequest = %#x, %v; want %#x", tok, err, tc.token)
				}
				return
			}
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.offset)
		})
	}
}

// TestAppendResponseRoundTrip re-encodes every golden reply and expects the
// reply's own bytes back (the goldens use the game's canonical encoding).
func TestAppendResponseRoundTrip(t *testing.T) {
	for _, g := range goldens(t) {
		t.Run(g.name, func(t *testing.T) {
			r, err := bloodmasters.DecodeResponse(g.b, nil)
			if err != nil {
				t.Skip("not a complete reply:", err)
			}
			var msg []byte
			var p bloodmasters.Parser
			p.Start(g.b)
			for {
				m, err := p.Next()
				if err != nil {
					t.Fatal(err)
				}
				if m.Command.Base() == bloodmasters.CmdServerInfo {
					msg = g.b[m.Offset : m.Offset+m.Len()]
					break
				}
			}
			enc, err := bloodmasters.AppendResponse([]byte("prefix"), r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc[6:], msg) || string(enc[:6]) != "prefix" {
				t.Errorf("AppendResponse =\n %x\nwant\n %x", enc[6:], msg)
			}
		})
	}
}

func TestAppendResponseErrors(t *testing.T) {
	ok := bloodmasters.Response{Title: "x", Protocol: 29, NumClients: 1, Clients: []bloodmasters.Client{{Name: "a"}}}
	tests := []struct {
		name     string
		edit     func(r *bloodmasters.Response)
		sentinel error
		field    string
	}{
		{"clients before 27", func(r *bloodmasters.Response) { r.Protocol = 26 }, codecs.ErrBadValue, "clients"},
		{"count mismatch", func(r *bloodmasters.Response) { r.NumClients = 2 }, codecs.ErrBadValue, "num_clients"},
		{"build before 27", func(r *bloodmasters.Response) { r.Protocol, r.NumClients, r.Clients, r.HasBuild = 26, 0, nil, true }, codecs.ErrBadValue, "build_description"},
		{"extra without build", func(r *bloodmasters.Response) { r.Extra = []byte{1} }, codecs.ErrBadValue, "extra"},
		{"too long", func(r *bloodmasters.Response) { r.Title = strings.Repeat("x", 70000) }, codecs.ErrTooLong, "length"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			dst := []byte("keep")
			out, err := bloodmasters.AppendResponse(dst, r)
			codectest.WantError(t, err, tc.sentinel, tc.field, -1)
			if string(out) != "keep" {
				t.Errorf("dst changed on error: %q", out)
			}
		})
	}
	if _, err := bloodmasters.AppendResponse(nil, ok); err != nil {
		t.Fatal(err)
	}
}

func TestLongStringLength(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 65000} {
		r := bloodmasters.Response{Title: strings.Repeat("t", n), Protocol: 26}
		b, err := bloodmasters.AppendResponse(nil, r)
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		prefix := 1 + btoi(n >= 128) + btoi(n >= 16384)
		if len(b) != 7+prefix+n+9 {
			t.Errorf("%d-byte title: message of %d bytes, want a %d-byte length", n, len(b), prefix)
		}
		got, err := bloodmasters.DecodeResponse(b, nil)
		if err != nil || got.Title != r.Title {
			t.Errorf("%d-byte title: %v", n, err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestStripColors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"^1Red", "Red"},
		{"a^1b^2c", "abc"},
		{"a^", "a"},
		{"^^", ""},
		{"a^^x", "a"}, // the second '^' starts a code, as in the game's Split-based strip
		{"^1^2x", "x"},
		{"x^^^1y", "xy"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := bloodmasters.StripColors(tc.in); got != tc.want {
				t.Errorf("StripColors(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParser(t *testing.T) {
	b := packet(t, "multi-message")
	var p bloodmasters.Parser
	p.Start(b)
	var got []bloodmasters.RawMessage
	for {
		m, err := p.Next()
		if err == bloodmasters.ErrDone {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	want := []struct {
		offset int
		cmd    bloodmasters.Command
		id     uint32
		length int
	}{{0, 3, 0, 19}, {19, 13, 0, 82}, {101, 0x80, 5, 7}}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	var rebuilt []byte
	for i, w := range want {
		m := got[i]
		if m.Offset != w.offset || m.Command != w.cmd || m.PacketID != w.id || m.Len() != w.length {
			t.Errorf("message %d = %+v, want %+v", i, m, w)
		}
		var err error
		if rebuilt, err = bloodmasters.AppendMessage(rebuilt, m); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(rebuilt, b) {
		t.Errorf("AppendMessage rebuilt %x, want %x", rebuilt, b)
	}
	if _, err := p.Next(); err != bloodmasters.ErrDone {
		t.Errorf("after the end: %v", err)
	}

	p.Start(b[:30])
	p.Next()
	_, err := p.Next()
	codectest.WantError(t, err, codecs.ErrShort, "messages[1].data", 22)
	if _, again := p.Next(); again != err {
		t.Errorf("error not sticky: %v", again)
	}
	var zero bloodmasters.Parser
	if _, err := zero.Next(); err != bloodmasters.ErrDone {
		t.Errorf("zero Parser: %v", err)
	}
	if _, err := bloodmasters.AppendMessage(nil, bloodmasters.RawMessage{Data: make([]byte, 70000)}); !errors.Is(err, codecs.ErrTooLong) {
		t.Errorf("oversized message: %v", err)
	}
}

func TestNames(t *testing.T) {
	tests := []struct{ got, want string }{
		{bloodmasters.CmdServerInfo.String(), "ServerInfo"},
		{(bloodmasters.CmdServerInfo | bloodmasters.ReliableBit).String(), "ServerInfo, reliable"},
		{bloodmasters.Command(0x80).String(), "PingOrConfirm, reliable"},
		{bloodmasters.Command(40).String(), "unknown (40)"},
		{bloodmasters.Command(99).String(), "unknown (99)"},
		{bloodmasters.TeamScavenger.String(), "Team Scavenger"},
		{bloodmasters.GameType(5).String(), "unknown (5)"},
		{bloodmasters.TeamBlue.String(), "blue"},
		{bloodmasters.Team(3).String(), "unknown (3)"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestDecodeAllocs is the budget for decoding with spans off: one string
// holding every text field and one slice of client records.
func TestDecodeAllocs(t *testing.T) {
	b := packet(t, "tdm-teams")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := bloodmasters.DecodeResponse(b, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Errorf("DecodeResponse: %v allocs, budget 3", allocs)
	}
	allocs = testing.AllocsPerRun(200, func() { (&bloodmasters.Codec{}).Detect(b) })
	if allocs > 1 {
		t.Errorf("Detect: %v allocs, budget 1", allocs)
	}
}

// TestDecodeResponseRequest: given the request, a reply echoing another
// token is an error at its token, after the packet id of a reliable one.
func TestDecodeResponseRequest(t *testing.T) {
	for _, name := range []string{"dm-3-clients", "reliable-reply"} {
		t.Run(name, func(t *testing.T) {
			b := packet(t, name)
			r, err := bloodmasters.DecodeResponse(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bloodmasters.DecodeResponse(b, &bloodmasters.Request{Token: r.Token}); err != nil {
				t.Errorf("the request it answers: %v", err)
			}
			got, err := bloodmasters.DecodeResponse(b, &bloodmasters.Request{Token: r.Token + 1})
			at := bloodmasters.HeaderLen
			if r.Reliable {
				at += 4
			}
			codectest.WantError(t, err, codecs.ErrBadValue, "token", at)
			if got.Title != r.Title {
				t.Errorf("the reply is not returned with the error: %+v", got)
			}
		})
	}
}

// TestStringsUTF8: strings come out as UTF-8, read from Latin-1 bytes as
// in the other protocol packages, and go back as the same bytes.
func TestStringsUTF8(t *testing.T) {
	b := packet(t, "non-ascii")
	r, err := bloodmasters.DecodeResponse(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range r.Clients {
		found = found || c.Name == "Jörg"
	}
	if !found {
		t.Fatalf("no client named Jörg in %+v", r.Clients)
	}
	out, err := bloodmasters.AppendResponse(nil, r)
	if err != nil || !bytes.Contains(b, out[bloodmasters.HeaderLen+4:]) {
		t.Errorf("re-encoded %x, %v; want the bytes of %x", out, err, b)
	}
}
