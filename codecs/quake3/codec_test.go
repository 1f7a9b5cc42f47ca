package quake3_test

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/quake3"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(quake3.Protocol)
	if err != nil || c.Name() != quake3.Protocol || c.DefaultPort() != 27960 {
		t.Fatalf("Lookup = %v, %v", c, err)
	}
}

func TestCheckQuery(t *testing.T) {
	c := &quake3.Codec{}
	for _, tc := range []struct {
		name  string
		b     string
		field string // "" when accepted
	}{
		{"getstatus", "\xff\xff\xff\xffgetstatus", ""},
		{"getstatus challenge newline", "\xff\xff\xff\xffgetstatus 42\n", ""},
		{"getinfo nul", "\xff\xff\xff\xffgetinfo abc\x00", ""},
		{"getstatus nul (GameDig)", "\xff\xff\xff\xffgetstatus\x00", ""},
		{"getservers", "\xff\xff\xff\xffgetservers 68 empty full", ""},
		{"getservers game", "\xff\xff\xff\xffgetservers Nexuiz 3", ""},
		{"getserversExt", "\xff\xff\xff\xffgetserversExt Xonotic 3 ipv6", ""},
		{"bad magic", "\xff\xff\xff\xfegetstatus", "magic"},
		{"short", "\xff\xff", "magic"},
		{"no command", "\xff\xff\xff\xff", "command"},
		{"reply", "\xff\xff\xff\xffstatusResponse\n", "command"},
		{"connect", "\xff\xff\xff\xffconnect \"\\name\\x\"", "command"},
		{"rcon", "\xff\xff\xff\xffrcon secret status", "command"},
		{"two spaces", "\xff\xff\xff\xffgetstatus  x", "challenge"},
		{"trailing space", "\xff\xff\xff\xffgetinfo ", "challenge"},
		{"control byte", "\xff\xff\xff\xffgetinfo a\x01b", "end"},
		{"two terminators", "\xff\xff\xff\xffgetinfo a\n\n", "end"},
		{"getservers no protocol", "\xff\xff\xff\xffgetservers", "protocol"},
		{"getserversExt no protocol", "\xff\xff\xff\xffgetserversExt Xonotic", "protocol"},
		{"getserversExt word protocol", "\xff\xff\xff\xffgetserversExt Xonotic three", "protocol"},
		{"too long", "\xff\xff\xff\xffgetstatus " + string(bytes.Repeat([]byte{'a'}, 200)), "datagram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckQuery([]byte(tc.b))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			codectest.WantError(t, err, nil, tc.field, -1)
		})
	}
}

func TestDetect(t *testing.T) {
	c := &quake3.Codec{}
	for _, tc := range []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"getstatus", packet(t, "getstatus"), codecs.KindQuery, codecs.Certain},
		{"getservers", packet(t, "getservers"), codecs.KindMasterQuery, codecs.Certain},
		{"status", packet(t, "status-ioq3"), codecs.KindResponse, codecs.Certain},
		{"info", packet(t, "info-ioq3"), codecs.KindResponse, codecs.Certain},
		{"list", packet(t, "servers"), codecs.KindMasterList, codecs.Certain},
		{"listext", packet(t, "serversext"), codecs.KindMasterList, codecs.Certain},
		{"print", []byte("\xff\xff\xff\xffprint\nServer is full.\n"), "", codecs.NotMine},
		{"zeros", make([]byte, 20), "", codecs.NotMine},
		{"short", []byte("\xff\xff\xff\xffget"), "", codecs.NotMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := c.Detect(tc.b)
			if kind != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q, %d; want %q, %d", kind, conf, tc.kind, tc.conf)
			}
		})
	}
}

// TestStatusConversation: getstatus, then its reply; a reply of another
// kind is ignored with an error and the conversation goes on.
func TestStatusConversation(t *testing.T) {
	q, err := (&quake3.Codec{}).NewQuery(map[string]string{"challenge": "1234567"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Start(); len(got) != 1 || string(got[0]) != "\xff\xff\xff\xffgetstatus 1234567" {
		t.Fatalf("Start = %q", got)
	}
	if _, done, err := q.Feed(packet(t, "info-ioq3")); done || err == nil {
		t.Fatalf("an infoResponse to getstatus: done %v, %v", done, err)
	}
	if _, done, err := q.Feed(packet(t, "status-ioq3")); !done || err != nil {
		t.Fatalf("Feed = %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindResponse || m.Info.Name != "Red Rocket Arena" || len(m.Info.Players) != 3 {
		t.Fatalf("Result = %+v, %v", m, err)
	}
}

func TestInfoConversation(t *testing.T) {
	q, err := (&quake3.Codec{}).NewQuery(map[string]string{"query": "info"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Start(); string(got[0]) != "\xff\xff\xff\xffgetinfo" {
		t.Fatalf("Start = %q", got)
	}
	if _, done, err := q.Feed(packet(t, "info-ioq3")); !done || err != nil {
		t.Fatalf("Feed = %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.NumPlayers != 3 || m.Info.MaxPlayers != 12 || !m.Info.Password || m.Info.GameType != "Free For All" {
		t.Fatalf("Result = %+v, %v", m.Info, err)
	}
}

// masterReply is a getserversResponse datagram listing servers.
func masterReply(t *testing.T, cmd string, end bool, servers ...string) []byte {
	t.Helper()
	resp := quake3.Response{Command: cmd, End: end}
	for _, s := range servers {
		resp.Servers = append(resp.Servers, addr(s))
	}
	b, err := quake3.AppendResponse(nil, resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMasterConversation: a list over three datagrams ends at the marker;
// the servers keep their order across datagrams.
func TestMasterConversation(t *testing.T) {
	q, err := (&quake3.Codec{}).NewQuery(map[string]string{"master": "true", "game": "Xonotic", "protocol": "3", "filters": "empty", "ext": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Start(); string(got[0]) != "\xff\xff\xff\xffgetserversExt Xonotic 3 empty" {
		t.Fatalf("Start = %q", got)
	}
	parts := [][]byte{
		masterReply(t, quake3.CmdServersExt, false, "203.0.113.1:26000", "[2001:db8::1]:26001"),
		masterReply(t, quake3.CmdServersExt, false, "203.0.113.2:26000"),
		masterReply(t, quake3.CmdServersExt, true, "203.0.113.3:26000"),
	}
	for i, p := range parts {
		_, done, err := q.Feed(p)
		if err != nil || done != (i == len(parts)-1) {
			t.Fatalf("Feed %d = %v, %v", i, done, err)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{Spans: true})
	want := []string{"203.0.113.1:26000", "[2001:db8::1]:26001", "203.0.113.2:26000", "203.0.113.3:26000"}
	if err != nil || m.Kind != codecs.KindMasterList || !slices.Equal(m.Servers, want) || len(m.Warnings) != 0 {
		t.Fatalf("Result = %v %v %v, %v", m.Kind, m.Servers, m.Warnings, err)
	}
	if len(m.Layers) != 3 || m.Layers[2].Name != "datagram 3" {
		t.Errorf("layers %+v", m.Layers)
	}
	codectest.SpansCover(t, m)
	if m.Spans[len(m.Spans)-2].Field != "servers[3]" {
		t.Errorf("entries are not numbered across datagrams: %+v", m.Spans[len(m.Spans)-2])
	}
}

// TestMasterWithoutEnd: a master that sends no marker leaves the
// conversation open; Result gives what came, with WarnNoEnd.
func TestMasterWithoutEnd(t *testing.T) {
	q, err := (&quake3.Codec{}).NewQuery(map[string]string{"master": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Start(); string(got[0]) != "\xff\xff\xff\xffgetservers 68 empty full" {
		t.Fatalf("Start = %q", got)
	}
	if _, done, err := q.Feed(packet(t, "servers-noend")); done || err != nil {
		t.Fatalf("Feed = %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || len(m.Servers) != 2 || !slices.Contains(m.Warnings, quake3.WarnNoEnd) {
		t.Fatalf("Result = %v %v, %v", m.Servers, m.Warnings, err)
	}
}

func TestDecodeMixedDatagrams(t *testing.T) {
	c := &quake3.Codec{}
	_, err := c.Decode([][]byte{packet(t, "servers-noend"), packet(t, "status-empty")}, codecs.DecodeOptions{})
	e := codectest.WantError(t, err, codecs.ErrBadValue, "command", -1)
	if e.Layer != "datagram 2" {
		t.Errorf("layer %q", e.Layer)
	}
	_, err = c.Decode([][]byte{packet(t, "status-empty"), packet(t, "status-empty")}, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrBadValue, "datagrams", -1)
	_, err = c.Decode(make([][]byte, quake3.MaxMasterDatagrams+1), codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrTooLong, "datagrams", 0)
}

func TestNewQueryOptions(t *testing.T) {
	c := &quake3.Codec{}
	for _, tc := range []struct {
		name  string
		opts  map[string]string
		field string
	}{
		{"challenge with a space", map[string]string{"challenge": "a b"}, "options.challenge"},
		{"challenge with a quote byte", map[string]string{"challenge": "é"}, "options.challenge"},
		{"ext without game", map[string]string{"master": "true", "ext": "true"}, "options.game"},
		{"numeric game", map[string]string{"master": "true", "game": "68"}, "options.game"},
		{"bad filter", map[string]string{"master": "true", "filters": "empty \x01"}, "options.filters"},
		{"protocol too big", map[string]string{"master": "true", "protocol": "70000"}, "options.protocol"},
		{"unknown choice", map[string]string{"query": "players"}, "options.query"},
		{"unknown option", map[string]string{"rcon": "x"}, "options.rcon"},
		{"too long", map[string]string{"master": "true", "filters": string(bytes.Repeat([]byte("full "), 40))}, "options.filters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.NewQuery(tc.opts)
			codectest.WantError(t, err, codecs.ErrBadValue, tc.field, -1)
		})
	}
}

func TestQueryKey(t *testing.T) {
	c := &quake3.Codec{}
	a := c.QueryKey([]byte("\xff\xff\xff\xffgetstatus 111\n"))
	b := c.QueryKey([]byte("\xff\xff\xff\xffgetstatus 222"))
	if a == nil || !bytes.Equal(a, b) {
		t.Errorf("challenges make different keys: %q %q", a, b)
	}
	if i := c.QueryKey([]byte("\xff\xff\xff\xffgetinfo 111")); bytes.Equal(i, a) {
		t.Error("getinfo and getstatus share a key")
	}
	m1 := c.QueryKey([]byte("\xff\xff\xff\xffgetservers 68 empty"))
	m2 := c.QueryKey([]byte("\xff\xff\xff\xffgetservers 68 full"))
	if bytes.Equal(m1, m2) {
		t.Error("master filters share a key")
	}
	if c.QueryKey([]byte("\xff\xff\xff\xffstatusResponse\n")) != nil {
		t.Error("a reply has a query key")
	}
}

// TestRoundTrip: what AppendResponse writes, DecodeResponse reads back.
func TestRoundTrip(t *testing.T) {
	want := quake3.Response{Command: quake3.CmdStatusResponse,
		Vars:    []quake3.Var{{Key: "sv_hostname", Value: "Zürich ^1CTF"}, {Key: "mapname", Value: "q3ctf4"}, {Key: "empty", Value: ""}},
		Players: []quake3.Player{{Score: -3, Ping: 40, Name: "^2a"}, {Score: 9, Ping: 0, Team: 2, HasTeam: true, Name: ""}}}
	b, err := quake3.AppendResponse(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := quake3.DecodeResponse(b, &quake3.Request{Command: quake3.CmdGetStatus})
	if err != nil || !slices.Equal(got.Vars, want.Vars) || !slices.Equal(got.Players, want.Players) {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = quake3.DecodeResponse(b, &quake3.Request{Command: quake3.CmdGetInfo})
	codectest.WantError(t, err, codecs.ErrUnknownCode, "command", 4)
	if _, err := quake3.AppendResponse(nil, quake3.Response{Command: quake3.CmdInfoResponse, Vars: []quake3.Var{{Key: "a\\b"}}}); err == nil {
		t.Error("a key with a backslash was written")
	}
	if _, err := quake3.AppendResponse(nil, quake3.Response{Command: quake3.CmdServers, Servers: []quake3.Addr{addr("[2001:db8::1]:1")}}); err == nil {
		t.Error("an IPv6 entry was written into a getserversResponse")
	}
}

// TestRequestRoundTrip: a master query is written as it reads back, and
// one it could not read back the same is refused: getservers reads a
// number first as its protocol, so its game may not be one; getserversExt
// always names its game first, so any word is its game.
func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    quake3.Request
		want string // "" when refused
	}{
		{"getservers, Quake III's form", quake3.Request{Command: quake3.CmdGetServers, Version: 68, Filters: []string{"empty", "full"}}, "getservers 68 empty full"},
		{"getservers with a game", quake3.Request{Command: quake3.CmdGetServers, Game: "Nexuiz", Version: 3}, "getservers Nexuiz 3"},
		{"getservers with a numeric game", quake3.Request{Command: quake3.CmdGetServers, Game: "0", Version: 0}, ""},
		{"getserversExt with a numeric game", quake3.Request{Command: quake3.CmdGetServersExt, Game: "0", Version: 0}, "getserversExt 0 0"},
		{"getserversExt without a game", quake3.Request{Command: quake3.CmdGetServersExt, Version: 68}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := quake3.AppendRequest(nil, tc.q)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("wrote %q, want a refusal", b)
				}
				codectest.WantError(t, err, codecs.ErrBadValue, "game", 0)
				return
			}
			if err != nil || string(b) != quake3.Magic+tc.want {
				t.Fatalf("wrote %q, %v; want %q", b, err, quake3.Magic+tc.want)
			}
			got, err := quake3.DecodeRequest(b)
			if err != nil || got.Game != tc.q.Game || got.Version != tc.q.Version || !slices.Equal(got.Filters, tc.q.Filters) {
				t.Fatalf("read back %+v, %v", got, err)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	c := &quake3.Codec{}
	m, err := c.Decode([][]byte{packet(t, "status-ioq3")}, codecs.DecodeOptions{Query: []byte("\xff\xff\xff\xffgetstatus 9")})
	if err != nil || !slices.Contains(m.Warnings, quake3.WarnChallenge) {
		t.Errorf("challenge: %v, %v", m.Warnings, err)
	}
	m, _ = c.Decode([][]byte{packet(t, "info-ioq3")}, codecs.DecodeOptions{Query: []byte("\xff\xff\xff\xffgetinfo 1234567")})
	if len(m.Warnings) != 0 {
		t.Errorf("matching challenge warns: %v", m.Warnings)
	}
	b, _ := quake3.AppendResponse(nil, quake3.Response{Command: quake3.CmdStatusResponse,
		Vars: []quake3.Var{{Key: "clients", Value: "4"}, {Key: "Clients", Value: "5"}}, Players: []quake3.Player{{Name: "x"}}})
	m, _ = c.Decode([][]byte{b}, codecs.DecodeOptions{})
	if !slices.Contains(m.Warnings, quake3.WarnPlayerCount) || !slices.Contains(m.Warnings, quake3.WarnDuplicateKey) {
		t.Errorf("warnings %v", m.Warnings)
	}
}

// TestErrorOffsets: hostile replies fail at the byte that is wrong.
func TestErrorOffsets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		b      string
		field  string
		offset int
		err    error
	}{
		{"no newline", "\xff\xff\xff\xffstatusResponse\\a\\b", "command", 18, codecs.ErrBadValue},
		{"score not a number", "\xff\xff\xff\xffstatusResponse\n\\a\\b\nx 1 \"n\"\n", "players[0].score", 24, codecs.ErrBadValue},
		{"name unquoted", "\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 n\n", "players[0].team", 28, codecs.ErrBadValue},
		{"quote then newline", "\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 \"n\n\"\n", "players[0].name", 28, codecs.ErrShort},
		{"junk after player", "\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 \"n\"x", "players[0].end", 31, codecs.ErrBadValue},
		{"entry cut", "\xff\xff\xff\xffgetserversResponse\\\x01\x02\x03", "servers[0]", 22, codecs.ErrShort},
		{"ipv6 in getserversResponse", "\xff\xff\xff\xffgetserversResponse/0123456789abcdef\x00\x01", "servers[0]", 22, codecs.ErrBadValue},
		{"bytes after end", "\xff\xff\xff\xffgetserversResponse\\EOT\x00\x00\x00z", "trailing", 29, codecs.ErrTrailing},
		{"info trailing", "\xff\xff\xff\xffinfoResponse\n\\a\\b\nextra", "trailing", 22, codecs.ErrTrailing},
		{"huge number", "\xff\xff\xff\xffstatusResponse\n\n1234567890 1 \"n\"", "players[0].score", 20, codecs.ErrBadValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&quake3.Codec{}).Decode([][]byte{[]byte(tc.b)}, codecs.DecodeOptions{Spans: true})
			if m == nil {
				t.Fatal("nil message")
			}
			codectest.WantError(t, err, tc.err, tc.field, tc.offset)
		})
	}
}

// TestManyPlayers: a reply of more player lines than the bound fails
// instead of growing without end.
func TestManyPlayers(t *testing.T) {
	b := []byte("\xff\xff\xff\xffstatusResponse\n\n")
	for range 1100 {
		b = append(b, "0 0 \"\"\n"...)
	}
	_, err := (&quake3.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	if !errors.Is(err, codecs.ErrTooLong) {
		t.Fatalf("err = %v", err)
	}
}

// addr is the entry of "ip:port".
func addr(s string) quake3.Addr {
	ap := netip.MustParseAddrPort(s)
	a := quake3.Addr{Is6: ap.Addr().Is6(), Port: ap.Port()}
	if a.Is6 {
		a.IP = ap.Addr().As16()
	} else {
		v4 := ap.Addr().As4()
		copy(a.IP[:], v4[:])
	}
	return a
}

// TestAddrString: entries print as net/netip prints them.
func TestAddrString(t *testing.T) {
	for _, s := range []string{"203.0.113.5:27960", "0.0.0.0:0", "[2001:db8::1]:26001", "[::]:1", "[::1]:2",
		"[2001:db8:0:1:0:0:0:1]:3", "[1:0:0:2:0:0:0:3]:4", "[1:2:3:4:5:6:7:8]:5", "[fe80::]:6", "[0:1:0:1:0:1:0:1]:7"} {
		if got := addr(s).String(); got != netip.MustParseAddrPort(s).String() {
			t.Errorf("%s: String = %s", s, got)
		}
	}
}
