package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy2"
)

var (
	gs2Client = netip.MustParseAddrPort("127.0.0.1:40000")
	gs2Other  = netip.MustParseAddrPort("127.0.0.2:40000")
	gs2Now    = time.Date(2026, 3, 14, 20, 5, 0, 0, time.UTC)
)

func gs2Query(t *testing.T, q gamespy2.Request) []byte {
	t.Helper()
	b, err := gamespy2.AppendRequest(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gs2Decode decodes replies (any sections) into one server view.
func gs2Decode(t *testing.T, replies ...[]byte) *codecs.Message {
	t.Helper()
	c, err := codecs.Lookup("gamespy2")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Decode(replies, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGameSpy2RequestForms(t *testing.T) {
	id := [4]byte{1, 2, 3, 4}
	h := NewGameSpy2(1, Normal)
	full := h.Respond(gs2Query(t, gamespy2.FullRequest(id)), gs2Client, gs2Now)
	if len(full) != 1 {
		t.Fatalf("%d replies", len(full))
	}
	whole := gs2Decode(t, full[0])
	in := whole.Info
	if in.Name == "" || in.Map == "" || in.MaxPlayers != gs2MaxPlayers || len(in.Teams) != 2 ||
		in.NumPlayers != len(in.Players) || in.NumPlayers == 0 || len(whole.Warnings) != 0 {
		t.Fatalf("info %+v, warnings %v", in, whole.Warnings)
	}
	tests := []struct {
		name string
		reqs []gamespy2.Request
	}{
		{"split like GameDig", []gamespy2.Request{{ID: id, Server: gamespy2.AllKeys}, {ID: id, Players: gamespy2.AllKeys}, {ID: id, Teams: gamespy2.AllKeys}}},
		{"server and players", []gamespy2.Request{{ID: id, Server: gamespy2.AllKeys, Players: gamespy2.AllKeys}, {ID: id, Teams: gamespy2.AllKeys}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var replies [][]byte
			for _, r := range tc.reqs {
				replies = append(replies, h.Respond(gs2Query(t, r), gs2Client, gs2Now)...)
			}
			if got := gs2Decode(t, replies...); !equalJSON(got.Fields, whole.Fields) {
				t.Errorf("merged replies differ from the combined one:\n%s\n%s", codecs.AppendJSON(nil, got.Fields), codecs.AppendJSON(nil, whole.Fields))
			}
		})
	}
	t.Run("key numbers", func(t *testing.T) {
		req := gamespy2.Request{ID: id, Server: gamespy2.KeyList(gamespy2.KeyHostname, gamespy2.KeyMapname, gamespy2.KeyNumplayers),
			Players: gamespy2.KeyList(gamespy2.KeyPlayer, gamespy2.KeyPing), Teams: gamespy2.KeyList(gamespy2.KeyTeamT, gamespy2.KeyScoreT)}
		replies := h.Respond(gs2Query(t, req), gs2Client, gs2Now)
		resp, err := gamespy2.DecodeResponse(replies[0], &req)
		if err != nil {
			t.Fatal(err)
		}
		got := resp.Info()
		if got.Name != in.Name || got.Map != in.Map || got.NumPlayers != in.NumPlayers || len(got.Players) != len(in.Players) {
			t.Fatalf("index mode %+v, combined %+v", got, in)
		}
		for i, p := range got.Players {
			if p.Name != in.Players[i].Name || p.Ping != in.Players[i].Ping {
				t.Errorf("player %d: %+v vs %+v", i, p, in.Players[i])
			}
		}
	})
}

func equalJSON(a, b codecs.Object) bool {
	return bytes.Equal(codecs.AppendJSON(nil, a), codecs.AppendJSON(nil, b))
}

func TestGameSpy2OverTime(t *testing.T) {
	req := gs2Query(t, gamespy2.FullRequest([4]byte{}))
	h := NewGameSpy2(42, Normal)
	again := NewGameSpy2(42, Normal)
	first := h.Respond(req, gs2Client, gs2Now)[0]
	if !bytes.Equal(first, again.Respond(req, gs2Client, gs2Now)[0]) {
		t.Error("same seed and time, different replies")
	}
	rosters := map[string]bool{}
	maps := map[string]bool{}
	for m := 0; m < 240; m += 10 {
		in := gs2Decode(t, h.Respond(req, gs2Client, gs2Now.Add(time.Duration(m)*time.Minute))[0]).Info
		var names []byte
		for _, p := range in.Players {
			names = append(names, p.Name+","...)
			if p.Ping <= 0 || p.Score < 0 || !p.HasTeam || p.Team < 1 || p.Team > 2 {
				t.Errorf("minute %d: player %+v", m, p)
			}
		}
		if in.NumPlayers > gs2MaxPlayers {
			t.Errorf("minute %d: %d players", m, in.NumPlayers)
		}
		rosters[string(names)] = true
		maps[in.Map] = true
	}
	if len(rosters) < 5 || len(maps) < 3 {
		t.Errorf("%d rosters and %d maps in 4 hours", len(rosters), len(maps))
	}
	if other := NewGameSpy2(43, Normal).Respond(req, gs2Client, gs2Now)[0]; bytes.Equal(other, first) {
		t.Error("another seed, the same server")
	}
}

func TestGameSpy2Behaviors(t *testing.T) {
	req := gs2Query(t, gamespy2.FullRequest([4]byte{9, 9, 9, 9}))
	t.Run("silent", func(t *testing.T) {
		if r := NewGameSpy2(1, Silent).Respond(req, gs2Client, gs2Now); r != nil {
			t.Errorf("answered %x", r)
		}
	})
	t.Run("not a query", func(t *testing.T) {
		h := NewGameSpy2(1, Normal)
		for _, q := range [][]byte{nil, {0xfe, 0xfd}, {0xfe, 0xfd, 0x09, 1, 2, 3, 4}, []byte("\\status\\")} {
			if r := h.Respond(q, gs2Client, gs2Now); r != nil {
				t.Errorf("answered %x with %x", q, r)
			}
		}
	})
	t.Run("truncated", func(t *testing.T) {
		r := NewGameSpy2(1, Truncated).Respond(req, gs2Client, gs2Now)
		m := gs2Decode(t, r[0])
		if len(m.Warnings) != 1 || m.Warnings[0] != codecs.WarnTruncated || m.Info.Name == "" {
			t.Errorf("warnings %v info %+v", m.Warnings, m.Info)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		h := NewGameSpy2(1, RateLimit)
		steps := []struct {
			from   netip.AddrPort
			after  time.Duration
			answer bool
		}{
			{gs2Client, 0, true},
			{gs2Client, time.Second, false},
			{netip.AddrPortFrom(gs2Client.Addr(), 5555), 2 * time.Second, false}, // same IP, other port
			{gs2Other, 3 * time.Second, true},
			{gs2Client, 9 * time.Second, false},
			{gs2Client, 10 * time.Second, true},
		}
		for i, s := range steps {
			got := h.Respond(req, s.from, gs2Now.Add(s.after)) != nil
			if got != s.answer {
				t.Errorf("step %d: answered %v, want %v", i, got, s.answer)
			}
		}
		// A full table of recent clients refuses newcomers, not known ones.
		srv := h.(*gs2Server)
		late := gs2Now.Add(time.Minute)
		for i := 0; len(srv.limit.seen) < maxTracked; i++ {
			srv.limit.seen[netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})] = late
		}
		for k := range srv.limit.seen {
			srv.limit.seen[k] = late.Add(-rateWindow) // every window just over
		}
		srv.limit.seen[gs2Other.Addr()] = late // one still fresh
		if h.Respond(req, gs2Client, late) == nil {
			t.Error("a known client was refused")
		}
		for k := range srv.limit.seen {
			srv.limit.seen[k] = late
		}
		if h.Respond(req, netip.MustParseAddrPort("127.0.0.9:1"), late) != nil {
			t.Error("a newcomer was answered with the table full")
		}
	})
}

// TestGameDigInterop runs the emulated server on a loopback UDP socket and
// queries it with GameDig (npm, installed with npm ci --prefix tools/gamedig),
// a client written independently of querylens: the name, map and players
// GameDig reports must be what our decoder reports for the same replies.
func TestGameDigInterop(t *testing.T) {
	dir := filepath.Join("..", "tools", "gamedig")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "gamedig", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("GameDig is not installed (run npm ci --prefix tools/gamedig): %v", err)
		}
		t.Skipf("GameDig is not installed (npm ci --prefix tools/gamedig): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h := NewGameSpy2(7, Normal)
	var (
		mu      sync.Mutex
		queries [][]byte
		replies [][]byte
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() { // answers until the socket closes, with the clock stopped at gs2Now
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if !from.Addr().Unmap().IsLoopback() {
				continue
			}
			q := append([]byte(nil), buf[:n]...)
			for _, r := range h.Respond(q, from, gs2Now) {
				mu.Lock() // recorded before it is sent, as in recordingServer
				queries, replies = append(queries, q), append(replies, r)
				mu.Unlock()
				conn.WriteToUDPAddrPort(r, from)
			}
		}
	}()
	defer wg.Wait()
	defer conn.Close()

	port := conn.LocalAddr().(*net.UDPAddr).Port
	cmd := exec.CommandContext(ctx, node, "query.mjs", "127.0.0.1", strconv.Itoa(port))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gamedig: %v\n%s", err, stderr.Bytes())
	}
	var gd struct {
		Name       string `json:"name"`
		Map        string `json:"map"`
		NumPlayers int    `json:"numplayers"`
		MaxPlayers int    `json:"maxplayers"`
		Version    string `json:"version"`
		Players    []struct {
			Name string `json:"name"`
			Raw  struct {
				Score int `json:"score"`
				Ping  int `json:"ping"`
				Team  int `json:"team"`
			} `json:"raw"`
		} `json:"players"`
	}
	if err := json.Unmarshal(out, &gd); err != nil {
		t.Fatalf("gamedig printed %q: %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queries) != 3 {
		t.Fatalf("GameDig sent %d queries, want its three single-section ones", len(queries))
	}
	var conversation [][]byte
	for i := range queries {
		conversation = append(conversation, queries[i], replies[i])
	}
	ours := gs2Decode(t, conversation...).Info
	if gd.Name != ours.Name || gd.Map != ours.Map || gd.NumPlayers != ours.NumPlayers ||
		gd.MaxPlayers != ours.MaxPlayers || gd.Version != ours.Version || len(gd.Players) != len(ours.Players) {
		t.Fatalf("GameDig saw %+v\nwe decoded %+v", gd, ours)
	}
	if len(ours.Players) == 0 || ours.Name == "" || ours.Map == "" {
		t.Fatalf("an empty server proves little: %+v", ours)
	}
	for i, p := range gd.Players {
		o := ours.Players[i]
		if p.Name != o.Name || p.Raw.Score != o.Score || p.Raw.Ping != o.Ping || p.Raw.Team != o.Team {
			t.Errorf("player %d: GameDig %+v, ours %+v", i, p, o)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("timed out")
	}
}
