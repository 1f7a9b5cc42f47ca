package demo

import (
	"bytes"
	"compress/bzip2"
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

// a2sExchange runs a whole conversation of the a2s codec's Query against
// h, calling Respond directly, and returns the result and how many
// datagrams the server sent.
func a2sExchange(t *testing.T, h Handler, from netip.AddrPort, opts map[string]string) (*codecs.Message, int, error) {
	t.Helper()
	c, err := codecs.Lookup("a2s")
	if err != nil {
		t.Fatal(err)
	}
	qy, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	send := qy.Start()
	sent := 0
	for round := 0; round < 10 && len(send) > 0; round++ {
		var next [][]byte
		for _, q := range send {
			replies := h.Respond(q, from, ogpNow)
			sent += len(replies)
			for _, r := range replies {
				more, done, err := qy.Feed(r)
				if err != nil {
					t.Fatalf("Feed(%x): %v", r[:min(len(r), 16)], err)
				}
				next = append(next, more...)
				if done {
					m, err := qy.Result(codecs.DecodeOptions{})
					return m, sent, err
				}
			}
		}
		send = next
	}
	m, err := qy.Result(codecs.DecodeOptions{})
	return m, sent, err
}

func TestA2SExchange(t *testing.T) {
	tests := []struct {
		name      string
		cfg       A2SConfig
		game      string
		datagrams int // one challenge (kept for the later queries), info, players, rules parts
	}{
		{"source", A2SConfig{}, "Team Fortress", 1 + 1 + 1 + 3},
		{"source INFO challenge", A2SConfig{InfoChallenge: true}, "Team Fortress", 1 + 1 + 1 + 3},
		{"source compressed rules", A2SConfig{Compress: true}, "Team Fortress", 1 + 1 + 1 + 1},
		{"goldsrc", A2SConfig{GoldSrc: true, InfoChallenge: true}, "Counter-Strike", 1 + 1 + 1 + 3},
		{"source, one player connecting", A2SConfig{Connecting: 1}, "Team Fortress", 1 + 1 + 1 + 3},
	}
	want := a2sRules()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewA2S(7, tc.cfg, Normal)
			m, sent, err := a2sExchange(t, h, ogpClient, nil)
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			if sent != tc.datagrams {
				t.Errorf("server sent %d datagrams, want %d", sent, tc.datagrams)
			}
			in := m.Info
			if in.GameType != tc.game || !strings.HasPrefix(in.Name, "querylens demo A2S") || in.MaxPlayers != a2sSlots {
				t.Errorf("info %+v", in)
			}
			if len(in.Players)+tc.cfg.Connecting != in.NumPlayers || len(in.Players) < 2 {
				t.Errorf("%d players listed, %d counted, %d connecting", len(in.Players), in.NumPlayers, tc.cfg.Connecting)
			}
			if unlisted := slices.Contains(m.Warnings, codecs.WarnUnlisted); unlisted != (tc.cfg.Connecting > 0) {
				t.Errorf("warnings %v with %d connecting", m.Warnings, tc.cfg.Connecting)
			}
			var rules []a2s.Rule
			for _, r := range in.Rules {
				rules = append(rules, a2s.Rule{Name: r[0], Value: r[1]})
			}
			if !reflect.DeepEqual(rules[len(rules)-len(want.Rules):], want.Rules) {
				t.Errorf("rules differ from a2sRules")
			}
		})
	}
}

// TestA2SOnlyInfo: a server that ignores PLAYER and RULES gives the info
// and a warning naming the queries without a reply.
func TestA2SOnlyInfo(t *testing.T) {
	m, _, err := a2sExchange(t, NewA2S(3, A2SConfig{OnlyInfo: true}, Normal), ogpClient, nil)
	if err != nil {
		t.Fatalf("err = %v, want the info with a warning", err)
	}
	if want := "no reply to A2S_PLAYER (A2S_RULES not asked)"; !slices.Contains(m.Warnings, want) {
		t.Errorf("warnings %q, want %q", m.Warnings, want)
	}
	if m.Info == nil || m.Info.Name == "" || len(m.Info.Players) != 0 {
		t.Errorf("info %+v", m.Info)
	}
}

// TestA2SChallengePerIP: a challenge given to one IP does not work from
// another; a query without one is answered with a challenge.
func TestA2SChallengePerIP(t *testing.T) {
	s := NewA2S(9, A2SConfig{}, Normal).(*a2sServer)
	c := s.challenge(ogpClient, ogpNow.Unix()/a2sEpoch)
	q, _ := a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypePlayerRequest, HasChallenge: true, Challenge: c})
	if r := s.Respond(q, ogpClient, ogpNow); len(r) != 1 || r[0][4] != byte(a2s.TypePlayers) {
		t.Errorf("right challenge: reply %x", r)
	}
	if r := s.Respond(q, ogpOther, ogpNow); len(r) != 1 || r[0][4] != byte(a2s.TypeChallenge) {
		t.Errorf("challenge from another IP: reply %x", r)
	}
}

func TestA2SBehaviors(t *testing.T) {
	q, _ := a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeInfoRequest})
	if r := NewA2S(1, A2SConfig{}, Silent).Respond(q, ogpClient, ogpNow); r != nil {
		t.Errorf("silent answered %x", r)
	}
	r := NewA2S(1, A2SConfig{}, Truncated).Respond(q, ogpClient, ogpNow)
	if _, err := a2s.DecodeResponse(r[0], nil); !errors.Is(err, codecs.ErrShort) {
		t.Errorf("truncated reply decodes: %v", err)
	}
	rl := NewA2S(1, A2SConfig{}, RateLimit)
	if rl.Respond(q, ogpClient, ogpNow) == nil || rl.Respond(q, ogpClient, ogpNow) != nil {
		t.Errorf("rate limit not applied")
	}
}

// TestA2SMaster: the codec's master conversation pages through the whole
// list.
func TestA2SMaster(t *testing.T) {
	var list []a2s.Addr
	for i := range 1000 {
		list = append(list, a2s.Addr{IP: [4]byte{127, 1, byte(i >> 8), byte(i)}, Port: 27015})
	}
	m, sent, err := a2sExchange(t, NewA2SMaster(list, Normal), ogpClient, map[string]string{"master": "true", "filter": `\appid\440`})
	if err != nil {
		t.Fatal(err)
	}
	if sent != (len(list)+a2s.MasterPageSize-1)/a2s.MasterPageSize || len(m.Servers) != len(list) || m.Servers[999] != "127.1.3.231:27015" {
		t.Errorf("%d pages, %d servers", sent, len(m.Servers))
	}
}

// TestA2SRulesBzip2 checks that a2s_bzip2.go holds a2sRules' reply
// compressed. After changing a2sRules, regenerate it with the bzip2 tool:
//
//	A2S_WRITE_BZIP2=1 go test ./demo -run TestA2SRulesBzip2
func TestA2SRulesBzip2(t *testing.T) {
	msg, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: a2sRules()})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("A2S_WRITE_BZIP2") != "" {
		writeA2SBzip2(t, msg)
	}
	got, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(a2sRulesBzip2())))
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("a2s_bzip2.go does not hold a2sRules compressed (%v); regenerate it", err)
	}
}

func writeA2SBzip2(t *testing.T, msg []byte) {
	cmd := exec.Command("bzip2", "-9", "-c")
	cmd.Stdin = bytes.NewReader(msg)
	z, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("// Code generated by A2S_WRITE_BZIP2=1 go test ./demo -run TestA2SRulesBzip2 (bzip2 -9); DO NOT EDIT.\n\n")
	b.WriteString("package demo\n\n")
	b.WriteString("// a2sRulesBzip2 is a2sRules' reply compressed with bzip2 -9: the\n")
	b.WriteString("// standard library only decompresses, and one fixed stream is all the\n")
	b.WriteString("// demo needs.\n")
	b.WriteString("func a2sRulesBzip2() []byte { return []byte(a2sRulesBzip2Data) }\n\n")
	b.WriteString("const a2sRulesBzip2Data = \"\" +\n")
	const hexdig = "0123456789abcdef"
	for i := 0; i < len(z); i += 32 {
		b.WriteString("\t\"")
		for _, c := range z[i:min(len(z), i+32)] {
			b.WriteString("\\x")
			b.WriteByte(hexdig[c>>4])
			b.WriteByte(hexdig[c&15])
		}
		b.WriteString("\"")
		if i+32 < len(z) {
			b.WriteString(" +")
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile("a2s_bzip2.go", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("wrote a2s_bzip2.go; run the test again to check it")
}
