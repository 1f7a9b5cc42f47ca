package demo

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/bloodmasters"
)

var (
	bmTestTime = time.Date(2026, 3, 14, 20, 0, 0, 0, time.UTC)
	bmTestFrom = netip.MustParseAddrPort("127.0.0.1:40000")
)

// bmAsk sends one query with token to h and decodes the single reply.
func bmAsk(t *testing.T, h Handler, token uint32, from netip.AddrPort, now time.Time) bloodmasters.Response {
	t.Helper()
	out := h.Respond(bmRequest(token), from, now)
	if len(out) != 1 {
		t.Fatalf("got %d datagrams, want 1", len(out))
	}
	r, err := bloodmasters.DecodeResponse(out[0], nil)
	if err != nil {
		t.Fatalf("reply does not decode: %v", err)
	}
	return r
}

func TestBloodmastersReply(t *testing.T) {
	h := NewBloodmasters(1, Normal)
	r := bmAsk(t, h, 0xdeadbeef, bmTestFrom, bmTestTime)
	if r.Token != 0xdeadbeef {
		t.Errorf("token = %#x, not echoed", r.Token)
	}
	if r.Protocol != bloodmasters.ProtocolVersion || !r.HasBuild || r.Title == "" || r.Map == "" || !r.GameType.Known() {
		t.Errorf("reply = %+v", r)
	}
	c, _ := codecs.Lookup("bloodmasters")
	m, err := c.Decode(h.Respond(bmRequest(1), bmTestFrom, bmTestTime), codecs.DecodeOptions{})
	if err != nil || len(m.Warnings) != 0 {
		t.Errorf("codec: %v, warnings %q", err, m.Warnings)
	}
}

// TestBloodmastersOverTime follows several servers for two hours: players
// join and leave, counts stay consistent and within limits, a spectator is
// always there, and teams match the game type.
func TestBloodmastersOverTime(t *testing.T) {
	sawTeams, sawNoTeams := false, false
	for seed := int64(0); seed < 12; seed++ {
		h := NewBloodmasters(seed, Normal)
		rosters := map[string]bool{}
		for min := 0; min < 120; min++ {
			r := bmAsk(t, h, 0, bmTestFrom, bmTestTime.Add(time.Duration(min)*time.Minute))
			if int(r.NumClients) != len(r.Clients) || r.NumClients > r.MaxClients || r.NumPlayers > r.MaxPlayers {
				t.Fatalf("seed %d minute %d: counts %d/%d clients, %d/%d players", seed, min, r.NumClients, r.MaxClients, r.NumPlayers, r.MaxPlayers)
			}
			playing, spectators, key := 0, 0, ""
			for _, c := range r.Clients {
				key += c.Name + ","
				if c.Spectator {
					spectators++
					continue
				}
				playing++
				if r.GameType.Teams() != (c.Team != bloodmasters.NoTeam) || !c.Team.Known() {
					t.Fatalf("seed %d: %s plays %s on team %s", seed, c.Name, r.GameType, c.Team)
				}
				if c.Ping < 0 || c.Ping > 250 {
					t.Fatalf("seed %d: ping %d", seed, c.Ping)
				}
			}
			if playing != int(r.NumPlayers) || spectators != 1 {
				t.Fatalf("seed %d minute %d: %d playing (reply says %d), %d spectators", seed, min, playing, r.NumPlayers, spectators)
			}
			rosters[key] = true
		}
		if len(rosters) < 5 {
			t.Errorf("seed %d: only %d different rosters in two hours", seed, len(rosters))
		}
		sawTeams = sawTeams || NewBloodmasters(seed, Normal).(*bmServer).resp.GameType.Teams()
		sawNoTeams = sawNoTeams || !NewBloodmasters(seed, Normal).(*bmServer).resp.GameType.Teams()
	}
	if !sawTeams || !sawNoTeams {
		t.Errorf("seeds 0..11 do not cover team and free-for-all games (%v %v)", sawTeams, sawNoTeams)
	}
}

func TestBloodmastersDeterministic(t *testing.T) {
	q := bmRequest(5)
	a := NewBloodmasters(42, Normal).Respond(q, bmTestFrom, bmTestTime)
	b := NewBloodmasters(42, Normal).Respond(q, bmTestFrom, bmTestTime)
	if !bytes.Equal(a[0], b[0]) {
		t.Error("same seed and time, different replies")
	}
	c := NewBloodmasters(43, Normal).Respond(q, bmTestFrom, bmTestTime)
	if bytes.Equal(a[0], c[0]) {
		t.Error("different seeds, same reply")
	}
	// Before 1970 the cycles still work.
	bmAsk(t, NewBloodmasters(42, Normal), 0, bmTestFrom, time.Date(1901, 1, 1, 0, 0, 0, 0, time.UTC))
}

func TestBloodmastersBehaviors(t *testing.T) {
	q := bmRequest(9)
	other := netip.MustParseAddrPort("127.0.0.2:40000")
	samePeerNewPort := netip.MustParseAddrPort("127.0.0.1:40001")
	type step struct {
		from    netip.AddrPort
		after   time.Duration // since the first query
		answers bool
	}
	tests := []struct {
		name  string
		b     Behavior
		steps []step
	}{
		{"normal answers every query", Normal, []step{{bmTestFrom, 0, true}, {bmTestFrom, time.Second, true}}},
		{"slow answers (the caller delays)", Slow, []step{{bmTestFrom, 0, true}}},
		{"silent never answers", Silent, []step{{bmTestFrom, 0, false}, {other, time.Minute, false}}},
		{"rate limit per IP for 10 s", RateLimit, []step{
			{bmTestFrom, 0, true},
			{samePeerNewPort, time.Second, false},
			{other, 2 * time.Second, true},
			{bmTestFrom, 9 * time.Second, false},
			{bmTestFrom, 10 * time.Second, true},
			{bmTestFrom, 11 * time.Second, false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewBloodmasters(3, tc.b)
			for i, s := range tc.steps {
				out := h.Respond(q, s.from, bmTestTime.Add(s.after))
				if (len(out) == 1) != s.answers || len(out) > 1 {
					t.Fatalf("step %d: %d datagrams, want answer %v", i, len(out), s.answers)
				}
			}
		})
	}

	t.Run("truncated cuts the reply", func(t *testing.T) {
		full := NewBloodmasters(3, Normal).Respond(q, bmTestFrom, bmTestTime)[0]
		out := NewBloodmasters(3, Truncated).Respond(q, bmTestFrom, bmTestTime)
		if len(out) != 1 || len(out[0]) >= len(full) || !bytes.HasPrefix(full, out[0]) {
			t.Fatalf("truncated reply %x of %x", out, full)
		}
		if _, err := bloodmasters.DecodeResponse(out[0], nil); !errors.Is(err, codecs.ErrShort) {
			t.Errorf("truncated reply decodes: %v", err)
		}
	})
}

func TestBloodmastersRateLimitBounded(t *testing.T) {
	h := NewBloodmasters(3, RateLimit).(*bmServer)
	q := bmRequest(0)
	addr := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, byte(i >> 16), byte(i >> 8), byte(i)}), 1)
	}
	for i := 0; i < maxTracked; i++ {
		if len(h.Respond(q, addr(i), bmTestTime)) != 1 {
			t.Fatalf("client %d refused", i)
		}
	}
	if len(h.Respond(q, addr(maxTracked), bmTestTime.Add(time.Second))) != 0 {
		t.Error("a full table of recent clients admits a newcomer")
	}
	if len(h.Respond(q, addr(maxTracked), bmTestTime.Add(rateWindow))) != 1 || len(h.limit.seen) > maxTracked {
		t.Errorf("expired entries are not dropped: %d tracked", len(h.limit.seen))
	}
}

func TestBloodmastersIgnoresBadQueries(t *testing.T) {
	h := NewBloodmasters(1, Normal)
	for _, q := range [][]byte{nil, {7, 0, 13}, {8, 0, 13, 0, 0, 0, 0, 0}, {7, 0, 14, 0, 0, 0, 0}, []byte("\xfe\xfd\x00CORY\xff\xff\xff")} {
		if out := h.Respond(q, bmTestFrom, bmTestTime); len(out) != 0 {
			t.Errorf("answered %x", q)
		}
	}
}

// bmRequest is the query datagram carrying token.
func bmRequest(token uint32) []byte {
	b, _ := bloodmasters.AppendRequest(nil, bloodmasters.Request{Token: token})
	return b
}
