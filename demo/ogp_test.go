package demo

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

var (
	ogpClient = netip.MustParseAddrPort("127.0.0.1:40000")
	ogpOther  = netip.MustParseAddrPort("127.0.0.2:40000")
	ogpNow    = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
)

// ogpExchange runs a whole conversation of the ogp codec's Query against h,
// calling Respond directly, and returns the result and how many datagrams
// the last answer took.
func ogpExchange(t *testing.T, h Handler, from netip.AddrPort, now time.Time, opts map[string]string) (*codecs.Message, int, error) {
	t.Helper()
	c, err := codecs.Lookup("ogp")
	if err != nil {
		t.Fatal(err)
	}
	qy, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	send := qy.Start()
	parts := 0
	for round := 0; round < 5 && len(send) > 0; round++ {
		var next [][]byte
		for _, q := range send {
			replies := h.Respond(q, from, now)
			parts = len(replies)
			for _, r := range replies {
				more, done, err := qy.Feed(r)
				if err != nil {
					t.Fatalf("Feed(%x): %v", r, err)
				}
				next = append(next, more...)
				if done {
					m, err := qy.Result(codecs.DecodeOptions{})
					return m, parts, err
				}
			}
		}
		send = next
	}
	m, err := qy.Result(codecs.DecodeOptions{})
	return m, parts, err
}

func TestOGPExchange(t *testing.T) {
	tests := []struct {
		name    string
		version string
		opts    map[string]string
		split   bool
	}{
		{"1.0", "1.0", nil, false},
		{"1.0 split", "1.0", map[string]string{"max_bytes": "500"}, true},
		{"1.0 latin-1, no colours", "1.0", map[string]string{"utf8": "false", "colors": "false"}, false},
		{"0.04", "0.04", map[string]string{"version": "0.04"}, false},
		{"0.04 split", "0.04", map[string]string{"version": "0.04", "max_bytes": "500"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewOGP(7, tc.version, Normal)
			m, parts, err := ogpExchange(t, h, ogpClient, ogpNow, tc.opts)
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			if (parts > 1) != tc.split {
				t.Errorf("answer in %d datagrams", parts)
			}
			in := m.Info
			if m.Kind != codecs.KindResponse || in == nil {
				t.Fatalf("kind %s, info %v", m.Kind, in)
			}
			if v, _ := m.Fields.Get("version"); v != tc.version {
				t.Errorf("version %v", v)
			}
			if in.Name == "" || in.Map == "" || in.GameType != "Freeroam" || in.MaxPlayers != ogpSlots ||
				in.NumPlayers != len(in.Players) || len(in.Teams) != 2 || len(in.Rules) != 4 {
				t.Errorf("info = %+v", in)
			}
			bots, spectators, named := 0, 0, map[string]bool{}
			for _, p := range in.Players {
				named[p.Name] = true
				if p.Bot {
					bots++
				}
				if p.Spectator {
					spectators++
					if p.HasTeam {
						t.Errorf("spectator %q on team %d", p.Name, p.Team)
					}
				} else if !p.HasTeam {
					t.Errorf("player %q on no team", p.Name)
				}
			}
			if bots != 2 || spectators != 1 || !named["Watcher"] {
				t.Errorf("%d bots, %d spectators: %+v", bots, spectators, in.Players)
			}
		})
	}
}

// Names come back as the same text whether sent as UTF-8 or Latin-1.
func TestOGPText(t *testing.T) {
	h := NewOGP(3, "1.0", Normal)
	var names [2]map[string]bool
	for i, utf8 := range []string{"true", "false"} {
		m, _, err := ogpExchange(t, h, ogpClient, ogpNow, map[string]string{"utf8": utf8})
		if err != nil {
			t.Fatal(err)
		}
		names[i] = map[string]bool{}
		for _, p := range m.Info.Players {
			names[i][p.Name] = true
		}
	}
	if len(names[0]) == 0 || len(names[0]) != len(names[1]) {
		t.Fatalf("names %v / %v", names[0], names[1])
	}
	for n := range names[0] {
		if !names[1][n] {
			t.Errorf("%q only in the UTF-8 answer", n)
		}
	}
}

// The answer holds what the query asked for and nothing else.
func TestOGPAnswersWhatWasAsked(t *testing.T) {
	h := NewOGP(5, "1.0", Normal)
	m, _, err := ogpExchange(t, h, ogpClient, ogpNow, map[string]string{"teams": "false", "rules": "false", "info": "false"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"teams", "rules", "server_info"} {
		if _, ok := m.Fields.Get(k); ok {
			t.Errorf("answer has %s", k)
		}
	}
	for _, k := range []string{"players", "addons", "limits"} {
		if _, ok := m.Fields.Get(k); !ok {
			t.Errorf("answer lacks %s", k)
		}
	}
	if m.Info.Has&codecs.HasName != 0 || m.Info.Has&codecs.HasPlayers == 0 {
		t.Errorf("info has %b", m.Info.Has)
	}
}

func ogpQuery(t *testing.T, v ogp.Version, challenge uint32, has bool) []byte {
	t.Helper()
	q := ogp.NewRequest(v)
	q.HasChallenge, q.Challenge = has, challenge
	b, err := ogp.AppendRequest(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerTo decodes h's single answer to q.
func answerTo(t *testing.T, h Handler, q []byte, from netip.AddrPort, now time.Time) ogp.Response {
	t.Helper()
	out := h.Respond(q, from, now)
	if len(out) != 1 {
		t.Fatalf("%d answers", len(out))
	}
	a, err := ogp.DecodeResponse(out[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestOGPChallenge(t *testing.T) {
	for _, v := range []ogp.Version{ogp.V1, ogp.V004} {
		t.Run(v.String(), func(t *testing.T) {
			h := NewOGP(11, v.String(), Normal)
			ask := ogpQuery(t, v, 0, false)
			a := answerTo(t, h, ask, ogpClient, ogpNow)
			wantType := ogp.TypeError
			if v == ogp.V004 {
				wantType = ogp.TypePing
			}
			if !a.HasChallenge || a.Type != wantType || a.Version != v || v == ogp.V1 && a.ErrorID != ogp.ErrorInvalidChallenge {
				t.Fatalf("challenge answer = %+v", a.Header)
			}
			c := a.Challenge
			if other := answerTo(t, h, ask, ogpOther, ogpNow); other.Challenge == c {
				t.Errorf("two clients share challenge %#x", c)
			}
			if again := answerTo(t, h, ask, ogpClient, ogpNow.Add(time.Second)); again.Challenge != c {
				t.Errorf("challenge changed within its minute")
			}
			// The number works for its client, for two minutes at most.
			for _, step := range []struct {
				name string
				from netip.AddrPort
				at   time.Duration
				ok   bool
			}{
				{"its client", ogpClient, 0, true},
				{"a minute later", ogpClient, ogpEpoch * time.Second, true},
				{"another client", ogpOther, 0, false},
				{"three minutes later", ogpClient, 3 * ogpEpoch * time.Second, false},
			} {
				a := answerTo(t, h, ogpQuery(t, v, c, true), step.from, ogpNow.Add(step.at))
				if got := a.Type == ogp.TypeDefault; got != step.ok {
					t.Errorf("%s: answer type %v", step.name, a.Type)
				}
			}
			for _, bad := range []uint32{0, 0xffffffff, c + 1} {
				if a := answerTo(t, h, ogpQuery(t, v, bad, true), ogpClient, ogpNow); a.Type == ogp.TypeDefault {
					t.Errorf("challenge %#x accepted", bad)
				}
			}
		})
	}
}

// Players join and leave over time; the same seed and time give the same
// server.
func TestOGPOverTime(t *testing.T) {
	rosterAt := func(h Handler, at time.Time) string {
		m, _, err := ogpExchange(t, h, ogpClient, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := m.Info.Map + ":"
		for _, p := range m.Info.Players {
			s += p.Name + ","
		}
		return s
	}
	a, b := NewOGP(21, "1.0", Normal), NewOGP(21, "1.0", Normal)
	seen := map[string]bool{}
	for i := range 12 {
		at := ogpNow.Add(time.Duration(i) * 4 * time.Minute)
		ra := rosterAt(a, at)
		if rb := rosterAt(b, at); ra != rb {
			t.Fatalf("same seed, different servers:\n%s\n%s", ra, rb)
		}
		seen[ra] = true
	}
	if len(seen) < 6 {
		t.Errorf("only %d different states in 48 minutes", len(seen))
	}
	if rosterAt(NewOGP(22, "1.0", Normal), ogpNow) == rosterAt(a, ogpNow) {
		t.Errorf("seeds 21 and 22 give the same server")
	}
}

func TestOGPBehaviors(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		h := NewOGP(1, "1.0", Silent)
		if out := h.Respond(ogpQuery(t, ogp.V1, 0, false), ogpClient, ogpNow); out != nil {
			t.Errorf("answered %x", out)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		h := NewOGP(1, "1.0", Truncated)
		_, _, err := ogpExchange(t, h, ogpClient, ogpNow, nil)
		var e *codecs.Error
		if !errors.As(err, &e) || !errors.Is(err, codecs.ErrShort) && !errors.Is(err, codecs.ErrTooLong) {
			t.Errorf("truncated answer decoded: %v", err)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		h := NewOGP(1, "1.0", RateLimit)
		steps := []struct {
			name string
			from netip.AddrPort
			at   time.Duration
			ok   bool
		}{
			{"first", ogpClient, 0, true},
			{"again at once", ogpClient, time.Second, false},
			{"another IP", ogpOther, 2 * time.Second, true},
			{"same IP, other port", netip.AddrPortFrom(ogpClient.Addr(), 50000), 3 * time.Second, false},
			{"after 10 s", ogpClient, 11 * time.Second, true},
		}
		for _, s := range steps {
			_, _, err := ogpExchange(t, h, s.from, ogpNow.Add(s.at), nil)
			if (err == nil) != s.ok {
				t.Errorf("%s: %v", s.name, err)
			}
		}
	})
}

func TestOGPOddQueries(t *testing.T) {
	h := NewOGP(2, "1.0", Normal)
	ping, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Type: ogp.TypePing, HasRequestID: true, RequestID: 42}})
	if a := answerTo(t, h, ping, ogpClient, ogpNow); a.Type != ogp.TypePing || a.RequestID != 42 {
		t.Errorf("ping answer %+v", a.Header)
	}
	rcon, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Type: ogp.TypeRcon}, Raw: []byte("pw")})
	if a := answerTo(t, h, rcon, ogpClient, ogpNow); a.Type != ogp.TypeError || a.ErrorID != ogp.ErrorInvalidType {
		t.Errorf("rcon answer %+v", a)
	}
	body := ogpQuery(t, ogp.V1, 0, false)
	if a := answerTo(t, h, append(body, 1, 2), ogpClient, ogpNow); a.Type != ogp.TypeError || a.ErrorID != ogp.ErrorInvalidQuery {
		t.Errorf("bad body answer %+v", a)
	}
	for name, q := range map[string][]byte{
		"garbage":        []byte("hello"),
		"an answer":      mustAnswer(t),
		"v0.04 to a 1.0": ogpQuery(t, ogp.V004, 0, false),
	} {
		if out := h.Respond(q, ogpClient, ogpNow); out != nil {
			t.Errorf("%s answered: %x", name, out)
		}
	}
	// Header only, with a good challenge: nothing was asked.
	c := answerTo(t, h, ogpQuery(t, ogp.V1, 0, false)[:11], ogpClient, ogpNow).Challenge
	only, _ := ogp.AppendRequest(nil, ogp.Request{Header: ogp.Header{Type: ogp.TypeDefault, HasChallenge: true, Challenge: c}})
	if a := answerTo(t, h, only, ogpClient, ogpNow); a.ErrorID != ogp.ErrorInvalidQuery {
		t.Errorf("header-only query answer %+v", a)
	}
}

func mustAnswer(t *testing.T) []byte {
	t.Helper()
	b, err := ogp.AppendResponse(nil, ogp.Response{Header: ogp.Header{Type: ogp.TypePing}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOGPAnswersEveryEpoch runs a whole conversation against each demo OGP
// server in every challenge epoch of a day: each must end in the server's
// name. A v0.04 challenge number starting with a 00 byte reads as a 1.0x
// datagram too, and the server, the conversation and the relay's check
// each took it for one: the epochs of such numbers went unanswered.
func TestOGPAnswersEveryEpoch(t *testing.T) {
	start := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"1.0", "0.04"} {
		for seed := range int64(2) {
			h := NewOGP(seed*7919+2, v, Normal)
			opts := map[string]string{"version": v}
			want := reportedNameAt("ogp", opts, h, start)
			if want == "" {
				t.Fatalf("%s seed %d: no name at %v", v, seed, start)
			}
			failed := 0
			for s := int64(0); s < 86400; s += ogpEpoch {
				if got := reportedNameAt("ogp", opts, h, start.Add(time.Duration(s)*time.Second)); got != want {
					if failed++; failed <= 3 {
						t.Errorf("%s seed %d at +%ds: name %q, want %q", v, seed, s, got, want)
					}
				}
			}
			if failed > 3 {
				t.Errorf("%s seed %d: %d epochs of %d unanswered", v, seed, failed, 86400/ogpEpoch)
			}
		}
	}
}
