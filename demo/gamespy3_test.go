package demo

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy3"
)

// gs3Converse runs one conversation of the gamespy3 codec against h, in
// memory (every datagram the conversation sends goes to h, every answer
// back to the conversation), and returns its result and the stat packets
// as h sent them.
func gs3Converse(t *testing.T, h Handler, opts map[string]string, now time.Time) (*codecs.Message, [][]byte, error) {
	t.Helper()
	c, err := codecs.Lookup(gamespy3.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	var stat [][]byte
	send := q.Start()
	for len(send) > 0 {
		d := send[0]
		send = send[1:]
		for _, r := range h.Respond(d, bmTestFrom, now) {
			if r[0] == byte(gamespy3.TypeStat) {
				stat = append(stat, r)
			}
			more, _, err := q.Feed(r)
			if err != nil {
				t.Fatalf("Feed(%x): %v", r, err)
			}
			send = append(send, more...)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	return m, stat, err
}

func TestGameSpy3Flavors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flavor  GameSpy3Flavor
		opts    map[string]string
		packets int
		version string
		teams   bool
	}{
		{"ut3", GameSpy3UT3, nil, 3, "3.5.1", true},
		{"minecraft", GameSpy3Minecraft, map[string]string{"minecraft": "true"}, 1, "1.20.4", false},
		{"no challenge", GameSpy3NoChallenge, map[string]string{"challenge": "false"}, 1, "1.1.1.6156", false},
		{"no challenge asked for one", GameSpy3NoChallenge, nil, 1, "1.1.1.6156", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(0); seed < 5; seed++ {
				h := NewGameSpy3(seed, tc.flavor, Normal)
				for min := 0; min < 90; min += 7 {
					now := bmTestTime.Add(time.Duration(min) * time.Minute)
					m, stat, err := gs3Converse(t, h, tc.opts, now)
					if err != nil || len(m.Warnings) != 0 {
						t.Fatalf("seed %d minute %d: %v, warnings %v", seed, min, err, m.Warnings)
					}
					if len(stat) != tc.packets {
						t.Fatalf("%d stat packets, want %d", len(stat), tc.packets)
					}
					in := m.Info
					if in.Name == "" || in.Map == "" || in.MaxPlayers != gs3MaxPlayers || in.Version != tc.version ||
						in.NumPlayers != len(in.Players) || (len(in.Teams) == 2) != tc.teams {
						t.Fatalf("seed %d minute %d: info %+v", seed, min, in)
					}
					for _, p := range in.Players {
						if p.Name == "" || p.HasTeam != tc.teams {
							t.Fatalf("seed %d minute %d: player %+v", seed, min, p)
						}
					}
				}
			}
		})
	}
}

// TestGameSpy3Split checks what the UT3 server's reply is made to
// exercise: packets out of order and the player names continued from
// packet 0 into packet 1, joined in the right order.
func TestGameSpy3Split(t *testing.T) {
	h := NewGameSpy3(3, GameSpy3UT3, Normal)
	for min := 0; min < 60; min++ {
		now := bmTestTime.Add(time.Duration(min) * time.Minute)
		m, stat, err := gs3Converse(t, h, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		var order []int
		var runs int
		for _, b := range stat {
			r, err := gamespy3.DecodeResponse(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			order = append(order, r.Number)
			for _, s := range r.Sections {
				for _, f := range s.Fields {
					if f.Name == "player_" {
						runs++
					}
				}
			}
		}
		if order[0] != 2 || order[1] != 0 || order[2] != 1 || runs != 2 {
			t.Fatalf("packets %v, %d runs of player_", order, runs)
		}
		want := NewGameSpy3(3, GameSpy3UT3, Normal).(*gs3Server).present(now)
		if len(m.Info.Players) != len(want) {
			t.Fatalf("%d players, want %d", len(m.Info.Players), len(want))
		}
		for i, p := range m.Info.Players {
			if p.Name != want[i].p.name || p.Score != want[i].score || p.Ping != want[i].ping || p.Team != want[i].team {
				t.Fatalf("player %d = %+v, want %+v", i, p, want[i])
			}
		}
		if len(want) >= 2 {
			return // a minute with names in both packets
		}
	}
	t.Fatal("no minute with two players or more")
}

func TestGameSpy3Refusals(t *testing.T) {
	req := func(r gamespy3.Request) []byte {
		b, err := gamespy3.AppendRequest(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	challengeOf := func(h Handler) int32 {
		out := h.Respond(req(gamespy3.Request{Type: gamespy3.TypeChallenge, Session: 1}), bmTestFrom, bmTestTime)
		if len(out) != 1 {
			t.Fatalf("%d challenge replies", len(out))
		}
		r, err := gamespy3.DecodeResponse(out[0], nil)
		v, ok := r.ChallengeValue()
		if err != nil || !ok {
			t.Fatalf("challenge reply %x: %v", out[0], err)
		}
		return v
	}
	ut3 := NewGameSpy3(1, GameSpy3UT3, Normal)
	c := challengeOf(ut3)
	other := netip.MustParseAddrPort("127.0.0.2:40000")
	for _, tc := range []struct {
		name string
		h    Handler
		q    []byte
		from netip.AddrPort
		at   time.Duration
	}{
		{"ut3 without challenge", ut3, req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1}), bmTestFrom, 0},
		{"ut3 wrong challenge", ut3, req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: c + 1}), bmTestFrom, 0},
		{"ut3 challenge of another address", ut3, req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: c}), other, 0},
		{"ut3 stale challenge", ut3, req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: c}), bmTestFrom, 2 * gs3Epoch * time.Second},
		{"minecraft wrong challenge", NewGameSpy3(1, GameSpy3Minecraft, Normal),
			req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: 1, Minecraft: true}), bmTestFrom, 0},
		{"v3 stat query with a challenge", NewGameSpy3(1, GameSpy3NoChallenge, Normal),
			req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 1, HasChallenge: true, Challenge: 1}), bmTestFrom, 0},
		{"not a query", ut3, []byte("\\status\\"), bmTestFrom, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out := tc.h.Respond(tc.q, tc.from, bmTestTime.Add(tc.at)); out != nil {
				t.Errorf("answered %x", out)
			}
		})
	}
	ok := req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 0xf1f2f3f4, HasChallenge: true, Challenge: c})
	if out := ut3.Respond(ok, bmTestFrom, bmTestTime.Add(gs3Epoch*time.Second)); len(out) != 3 {
		t.Errorf("the previous epoch's challenge got %d packets", len(out))
	}
	mc := NewGameSpy3(1, GameSpy3Minecraft, Normal)
	mq := req(gamespy3.Request{Type: gamespy3.TypeStat, Session: 0xf1f2f3f4, HasChallenge: true, Challenge: challengeOf(mc), Minecraft: true})
	out := mc.Respond(mq, bmTestFrom, bmTestTime)
	if r, err := gamespy3.DecodeResponse(out[0], nil); err != nil || r.Session != 0x01020304 {
		t.Errorf("Minecraft session %08x, %v; want the mask applied", r.Session, err)
	}
}

// TestGameSpy3MinecraftLength: the Minecraft server tells the full stat
// by the query's length, as vanilla Minecraft does: the challenge and any
// 4 bytes get the full stat; the challenge alone (the basic stat, which
// the codec does not read) and other lengths get nothing; a challenge
// request is answered whatever follows its session id.
func TestGameSpy3MinecraftLength(t *testing.T) {
	mc := NewGameSpy3(1, GameSpy3Minecraft, Normal)
	hs := mc.Respond([]byte{0xfe, 0xfd, 0x09, 0, 0, 0, 1}, bmTestFrom, bmTestTime)
	if len(hs) != 1 {
		t.Fatalf("%d handshake replies", len(hs))
	}
	r, err := gamespy3.DecodeResponse(hs[0], nil)
	c, ok := r.ChallengeValue()
	if err != nil || !ok {
		t.Fatalf("handshake reply %x: %v", hs[0], err)
	}
	stat := func(payload ...byte) []byte {
		b := binary.BigEndian.AppendUint32([]byte{0xfe, 0xfd, 0x00, 0, 0, 0, 1}, uint32(c))
		return append(b, payload...)
	}
	for _, tc := range []struct {
		name    string
		q       []byte
		packets int
	}{
		{"minecraft payload", stat(0, 0, 0, 0), 1},
		{"gamespy payload (qstat -gs4, GameDig)", stat(0xff, 0xff, 0xff, 0x01), 1},
		{"any 4 bytes", stat(0x12, 0x34, 0x56, 0x78), 1},
		{"basic stat", stat(), 0},
		{"3-byte payload", stat(0, 0, 0), 0},
		{"5-byte payload", stat(0, 0, 0, 0, 0), 0},
		{"handshake padded (GameDig)", []byte{0xfe, 0xfd, 0x09, 0, 0, 0, 1, 0, 0, 0, 0}, 1},
		{"no magic", append([]byte{0xfe, 0xfe}, stat(0, 0, 0, 0)[2:]...), 0},
		{"short", []byte{0xfe, 0xfd, 0x09, 0, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mc.Respond(tc.q, bmTestFrom, bmTestTime)
			if len(out) != tc.packets {
				t.Fatalf("%d packets, want %d", len(out), tc.packets)
			}
			for _, b := range out {
				if _, err := gamespy3.DecodeResponse(b, nil); err != nil {
					t.Errorf("reply %x: %v", b, err)
				}
			}
		})
	}
}

// TestGameSpy3NoChallengeHeader: the challenge-less server answers a
// challenge request with "0" and sends its whole reply with the split
// header (packet 0, the last), as Battlefield 2 does.
func TestGameSpy3NoChallengeHeader(t *testing.T) {
	bf2 := NewGameSpy3(1, GameSpy3NoChallenge, Normal)
	for _, cq := range [][]byte{{0xfe, 0xfd, 0x09, 0, 0, 0, 1}, {0xfe, 0xfd, 0x09, 0, 0, 0, 1, 0, 0, 0, 0}} {
		out := bf2.Respond(cq, bmTestFrom, bmTestTime)
		if len(out) != 1 {
			t.Fatalf("%d replies to %x, want 1", len(out), cq)
		}
		if r, err := gamespy3.DecodeResponse(out[0], nil); err != nil || r.Challenge != "0" {
			t.Errorf("challenge reply %x: %q, %v; want \"0\"", out[0], r.Challenge, err)
		}
	}
	q, err := gamespy3.AppendRequest(nil, gamespy3.Request{Type: gamespy3.TypeStat, Session: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := NewGameSpy3(1, GameSpy3NoChallenge, Normal).Respond(q, bmTestFrom, bmTestTime)
	if len(out) != 1 {
		t.Fatalf("%d packets, want 1", len(out))
	}
	r, err := gamespy3.DecodeResponse(out[0], nil)
	if err != nil || !r.Split || r.Number != 0 || !r.Last || !r.HasRules {
		t.Errorf("reply %x: split %v number %d last %v rules %v, %v", out[0], r.Split, r.Number, r.Last, r.HasRules, err)
	}
}

func TestGameSpy3Behaviors(t *testing.T) {
	if out := NewGameSpy3(1, GameSpy3UT3, Silent).Respond([]byte{0xfe, 0xfd, 9, 0, 0, 0, 1}, bmTestFrom, bmTestTime); out != nil {
		t.Errorf("a silent server answered %x", out)
	}
	for _, f := range []GameSpy3Flavor{GameSpy3UT3, GameSpy3Minecraft, GameSpy3NoChallenge} {
		opts := map[string]string{"minecraft": "true"}
		switch f {
		case GameSpy3UT3:
			opts = nil
		case GameSpy3NoChallenge:
			opts = map[string]string{"challenge": "false"}
		}
		m, _, err := gs3Converse(t, NewGameSpy3(4, f, Truncated), opts, bmTestTime)
		if err == nil && len(m.Warnings) == 0 {
			t.Errorf("flavor %d: a truncated reply decodes cleanly", f)
		}
		h := NewGameSpy3(4, f, RateLimit)
		var answered []bool
		for _, at := range []time.Duration{0, time.Second, 11 * time.Second} {
			_, _, err := gs3Converse(t, h, opts, bmTestTime.Add(at))
			answered = append(answered, err == nil)
			if err != nil && !errors.Is(err, codecs.ErrIncomplete) {
				t.Fatal(err)
			}
		}
		if !answered[0] || answered[1] || !answered[2] {
			t.Errorf("flavor %d: the rate limit answers %v, want once per 10 s", f, answered)
		}
	}
}
