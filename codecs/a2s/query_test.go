package a2s_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// server is a scripted A2S server for the conversation tests: it answers
// each query from the table, by the query's type and whether its challenge
// is the right one.
type server struct {
	t         *testing.T
	challenge uint32
	infoChal  bool // INFO needs the challenge too
	rotate    bool // a new challenge after each challenge reply: never satisfied
	dupChal   bool // each challenge reply sent twice
	reverse   bool // the replies to a batch of queries sent last first
	ignore    map[a2s.Type]bool
	split     map[a2s.Type]int // split the reply into parts of this many bytes
	asked     []string
}

func (s *server) reply(q []byte) [][]byte {
	s.t.Helper()
	r, err := a2s.DecodeRequest(q)
	if err != nil {
		s.t.Fatalf("client sent %x: %v", q, err)
	}
	s.asked = append(s.asked, r.Type.String())
	if s.ignore[r.Type] {
		return nil
	}
	needs := r.Type != a2s.TypeInfoRequest || s.infoChal
	if needs && (!r.HasChallenge || r.Challenge != s.challenge) {
		if r.HasChallenge && r.Challenge == 0 {
			s.t.Errorf("client sent four zero bytes for a challenge")
		}
		if s.rotate {
			s.challenge++
		}
		b, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: s.challenge})
		if s.dupChal {
			return [][]byte{b, b}
		}
		return [][]byte{b}
	}
	var a a2s.Response
	switch r.Type {
	case a2s.TypeInfoRequest:
		a = a2s.Response{Type: a2s.TypeInfo, Info: sourceInfo()}
	case a2s.TypePlayerRequest:
		a = a2s.Response{Type: a2s.TypePlayers, Players: demoPlayers(false)}
	case a2s.TypeRulesRequest:
		a = a2s.Response{Type: a2s.TypeRules, Rules: demoRules(80)}
	}
	b, err := a2s.AppendResponse(nil, a)
	if err != nil {
		s.t.Fatal(err)
	}
	if n := s.split[r.Type]; n > 0 {
		parts, err := a2s.SplitResponse(b, 99+uint32(len(s.asked)), a2s.SplitSource, n)
		if err != nil {
			s.t.Fatal(err)
		}
		slices.Reverse(parts)
		return append(parts, parts[0]) // out of order, one duplicate
	}
	return [][]byte{b}
}

// converse runs q against s until done or silence: each round sends what
// q asked and feeds it every reply. It returns whether q was done and
// after how many rounds.
func converse(t *testing.T, q codecs.Query, s *server) (bool, int) {
	t.Helper()
	send := q.Start()
	for round := 1; round <= 20; round++ {
		if len(send) == 0 {
			return false, round - 1
		}
		var replies [][]byte
		for _, b := range send {
			replies = append(replies, s.reply(b)...)
		}
		if s.reverse {
			slices.Reverse(replies)
		}
		send = nil
		if len(replies) == 0 {
			return false, round
		}
		for _, r := range replies {
			more, done, err := q.Feed(r)
			if err != nil {
				t.Fatalf("Feed(%x): %v", r[:min(len(r), 16)], err)
			}
			if done {
				return true, round
			}
			send = append(send, more...)
		}
	}
	t.Fatal("conversation did not end")
	return false, 0
}

func TestConversation(t *testing.T) {
	c := &a2s.Codec{}
	ignore := func(ts ...a2s.Type) map[a2s.Type]bool {
		m := map[a2s.Type]bool{}
		for _, t := range ts {
			m[t] = true
		}
		return m
	}
	noRules := map[string]string{"rules": "false"}
	cases := []struct {
		name      string
		srv       server
		opts      map[string]string
		done      bool
		rounds    int
		wantErr   error
		warn      string
		asked     string
		players   int
		rules     int
		truncated bool
	}{
		{name: "no INFO challenge", srv: server{challenge: 0x11223344}, done: true, rounds: 2, players: 3, rules: 80 + 10,
			asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "challenge only on PLAYER", srv: server{challenge: 0x11223344}, opts: noRules, done: true, rounds: 2, players: 3, rules: 10,
			asked: "A2S_INFO A2S_PLAYER A2S_PLAYER"},
		// Both challenge replies carry the same value: the second sends nothing.
		{name: "INFO challenge", srv: server{challenge: 0x55667788, infoChal: true}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "INFO challenge, no rules", srv: server{challenge: 0x55667788, infoChal: true}, opts: noRules, done: true, rounds: 2, players: 3, rules: 10,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER"},
		{name: "duplicate challenge", srv: server{challenge: 9, infoChal: true, dupChal: true}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		// The challenge to PLAYER comes before the info: INFO is not answered
		// yet, so it is sent again with the challenge, and its second reply
		// ignored.
		{name: "replies out of order", srv: server{challenge: 5, reverse: true}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "out of order, INFO challenge", srv: server{challenge: 5, infoChal: true, reverse: true}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "split rules", srv: server{challenge: 7, split: map[a2s.Type]int{a2s.TypeRulesRequest: 300}}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "split rules and players, out of order", srv: server{challenge: 7, reverse: true,
			split: map[a2s.Type]int{a2s.TypeRulesRequest: 300, a2s.TypePlayerRequest: 40}}, done: true, rounds: 2, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "ignores PLAYER and RULES", srv: server{challenge: 7, ignore: ignore(a2s.TypePlayerRequest, a2s.TypeRulesRequest)}, rounds: 1,
			warn: "no reply to A2S_PLAYER (A2S_RULES not asked)", rules: 10, asked: "A2S_INFO A2S_PLAYER"},
		{name: "PLAYER ignored", srv: server{challenge: 7, ignore: ignore(a2s.TypePlayerRequest)}, opts: noRules, rounds: 1,
			warn: "no reply to A2S_PLAYER", rules: 10, asked: "A2S_INFO A2S_PLAYER"},
		{name: "PLAYER ignored once challenged", srv: server{challenge: 7, infoChal: true, ignore: ignore(a2s.TypePlayerRequest)}, rounds: 2,
			warn: "no reply to A2S_PLAYER", rules: 90, asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "ignores RULES", srv: server{challenge: 7, ignore: ignore(a2s.TypeRulesRequest)}, rounds: 2,
			warn: "no reply to A2S_RULES", players: 3, rules: 10, asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "ignores INFO", srv: server{challenge: 7, ignore: ignore(a2s.TypeInfoRequest)}, rounds: 2,
			warn: "no reply to A2S_INFO", players: 3, rules: 80, asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "silent", srv: server{challenge: 7, ignore: ignore(a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest)}, rounds: 1,
			wantErr: codecs.ErrIncomplete, asked: "A2S_INFO A2S_PLAYER"},
		{name: "new challenge every time", srv: server{challenge: 7, infoChal: true, rotate: true}, done: true, rounds: 2,
			wantErr: codecs.ErrIncomplete, asked: "A2S_INFO A2S_PLAYER A2S_INFO A2S_PLAYER A2S_RULES A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "info only", srv: server{challenge: 7}, opts: map[string]string{"players": "false", "rules": "false"}, done: true, rounds: 1, rules: 10,
			asked: "A2S_INFO"},
		{name: "rules only", srv: server{challenge: 7}, opts: map[string]string{"info": "false", "players": "0"}, done: true, rounds: 2, rules: 80,
			asked: "A2S_RULES A2S_RULES"},
		{name: "players and rules", srv: server{challenge: 7}, opts: map[string]string{"info": "false"}, done: true, rounds: 2, players: 3, rules: 80,
			asked: "A2S_PLAYER A2S_PLAYER A2S_RULES"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.t = t
			q, err := c.NewQuery(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			done, rounds := converse(t, q, &tc.srv)
			if done != tc.done || rounds != tc.rounds {
				t.Errorf("done = %v after %d rounds, want %v after %d", done, rounds, tc.done, tc.rounds)
			}
			if got := strings.Join(tc.srv.asked, " "); got != tc.asked {
				t.Errorf("asked %q, want %q", got, tc.asked)
			}
			m, err := q.Result(codecs.DecodeOptions{Spans: true})
			if tc.wantErr != nil {
				codectest.WantError(t, err, tc.wantErr, "reply", -1)
			} else if err != nil {
				t.Fatalf("Result: %v", err)
			}
			if tc.warn != "" && !slices.Contains(m.Warnings, tc.warn) || tc.warn == "" && len(m.Warnings) > 0 {
				t.Errorf("warnings %q, want %q", m.Warnings, tc.warn)
			}
			if tc.wantErr != nil {
				return // no reply: no info to check
			}
			if m.Kind != codecs.KindResponse || m.Info == nil {
				t.Fatalf("kind %q info %v", m.Kind, m.Info)
			}
			if len(m.Info.Players) != tc.players || len(m.Info.Rules) != tc.rules {
				t.Errorf("%d players and %d rules, want %d and %d", len(m.Info.Players), len(m.Info.Rules), tc.players, tc.rules)
			}
			codectest.SpansCover(t, m)
		})
	}
}

// TestChallengeLoop: a server that answers every query with a new
// challenge ends the conversation after a bounded number of tries.
func TestChallengeLoop(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(map[string]string{"info": "false", "rules": "false"})
	q.Start()
	done := false
	for i := 0; i < 10 && !done; i++ {
		b, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: uint32(i + 1)})
		_, done, _ = q.Feed(b)
	}
	if !done {
		t.Fatal("never gave up")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "reply", -1)
	if m.Kind != codecs.KindChallenge {
		t.Errorf("kind %q, want challenge", m.Kind)
	}
}

// TestFeedCaps: a server that keeps sending is cut at the caps, and the
// result says truncated.
func TestFeedCaps(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(map[string]string{"info": "false", "players": "false"})
	q.Start()
	part := make([]byte, 1400)
	copy(part, "\xfe\xff\xff\xff\x01\x00\x00\x00\xff\x01") // part 1 of 255: never completes
	done := false
	n := 0
	for ; n < 200 && !done; n++ {
		part[9] = byte(n%254 + 1)
		_, done, _ = q.Feed(slices.Clone(part))
	}
	if !done || n > a2s.MaxDatagrams+1 {
		t.Fatalf("done %v after %d datagrams", done, n)
	}
	m, _ := q.Result(codecs.DecodeOptions{})
	if !slices.Contains(m.Warnings, codecs.WarnTruncated) {
		t.Errorf("warnings %v, want truncated", m.Warnings)
	}
}

// TestMasterPaging: the conversation asks page after page, seeded with the
// last address, until 0.0.0.0:0.
func TestMasterPaging(t *testing.T) {
	var list []a2s.Addr
	for i := range 600 {
		list = append(list, a2s.Addr{IP: [4]byte{127, 0, byte(i >> 8), byte(i)}, Port: 27015})
	}
	q, err := (&a2s.Codec{}).NewQuery(map[string]string{"master": "true", "region": "europe", "filter": `\appid\440`})
	if err != nil {
		t.Fatal(err)
	}
	send := q.Start()
	pages := 0
	for len(send) > 0 {
		mq, err := a2s.DecodeMasterRequest(send[0])
		if err != nil {
			t.Fatal(err)
		}
		if mq.Region != a2s.RegionEurope || mq.Filter != `\appid\440` {
			t.Fatalf("query %+v", mq)
		}
		pages++
		var done bool
		send, done, err = q.Feed(a2s.MasterPage(nil, list, mq.Seed))
		if err != nil || done != (len(send) == 0) {
			t.Fatalf("Feed: %v done %v", err, done)
		}
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pages != 3 || m.Kind != codecs.KindMasterList || len(m.Servers) != len(list) || m.Servers[599] != list[599].String() {
		t.Errorf("%d pages, kind %q, %d servers", pages, m.Kind, len(m.Servers))
	}
}

// TestMasterLoop: a master that sends the same page again does not make
// the conversation loop.
func TestMasterLoop(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(map[string]string{"master": "true"})
	q.Start()
	page := a2s.AppendMasterReply(nil, []a2s.Addr{{IP: [4]byte{127, 0, 0, 1}, Port: 1}}, false)
	if _, done, _ := q.Feed(page); done {
		t.Fatal("done after one page")
	}
	if _, done, _ := q.Feed(page); !done {
		t.Fatal("not done when the master repeats itself")
	}
}

func TestOptions(t *testing.T) {
	c := &a2s.Codec{}
	for _, tc := range []struct {
		name string
		opts map[string]string
	}{
		{"nothing asked", map[string]string{"info": "false", "players": "false", "rules": "false"}},
		{"unknown", map[string]string{"colour": "red"}},
		{"region", map[string]string{"region": "mars"}},
		{"filter", map[string]string{"filter": "\\a\x01"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.NewQuery(tc.opts)
			e := codectest.WantError(t, err, codecs.ErrBadValue, "", -1)
			if !strings.HasPrefix(e.Field, "options.") {
				t.Errorf("field %q", e.Field)
			}
		})
	}
	q, _ := c.NewQuery(nil)
	first := q.Start()[0]
	want, _ := a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeInfoRequest})
	if !bytes.Equal(first, want) {
		t.Errorf("first query %x, want the unchallenged INFO", first)
	}
}

// TestFeedIgnores: datagrams that do not belong are errors that keep the
// conversation going.
func TestFeedIgnores(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(nil)
	q.Start()
	for _, b := range [][]byte{{1}, []byte("\xff\xff\xff\xffZ1234"), []byte("\x00\x00\x00\x00\x00")} {
		if _, done, err := q.Feed(b); done || err == nil {
			t.Errorf("Feed(%x) = done %v, err %v", b, done, err)
		} else if _, ok := errors.AsType[*codecs.Error](err); !ok {
			t.Errorf("Feed(%x): %T", b, err)
		}
	}
}

// TestFeedStaleParts: a part of another message (a late copy, a short
// part) among a split reply's parts does not stop it from completing, and
// is not kept.
func TestFeedStaleParts(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(map[string]string{"info": "false", "players": "false"})
	q.Start()
	stale := fixture(t, "players_split_goldsrc")[1]         // packet 0 of another message
	short := []byte("\xfe\xff\xff\xff\x55\x66\x77\x08\x03") // another id
	parts := fixture(t, "rules_split_source")
	feed := append([][]byte{stale, short}, parts...)
	done := false
	for _, b := range feed {
		_, done, _ = q.Feed(b)
	}
	if !done {
		t.Fatal("not done")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Info.Rules) != 60 {
		t.Errorf("%d rules", len(m.Info.Rules))
	}
}

// TestMasterNotCapped: a master's list is not cut at the datagram cap of a
// server query: each page answers its own query.
func TestMasterNotCapped(t *testing.T) {
	var dgs [][]byte
	for i := range 90 {
		page := []a2s.Addr{{IP: [4]byte{127, 0, byte(i), 1}, Port: 1}}
		dgs = append(dgs, a2s.AppendMasterReply(nil, page, i == 89))
	}
	m, err := (&a2s.Codec{}).Decode(dgs, codecs.DecodeOptions{})
	if err != nil || len(m.Servers) != 90 || slices.Contains(m.Warnings, codecs.WarnTruncated) {
		t.Errorf("%d servers, warnings %v, %v", len(m.Servers), m.Warnings, err)
	}
}

// TestFeedWrongReply: a second reply to an answered query (to the query
// sent again with a challenge) is ignored; a reply to a query not asked is
// refused; the conversation goes on.
func TestFeedWrongReply(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(map[string]string{"rules": "false"})
	q.Start()
	info := fixture(t, "info_source_full")[0]
	for range 2 {
		if _, done, err := q.Feed(info); done || err != nil {
			t.Fatalf("info: done %v, %v", done, err)
		}
	}
	_, done, err := q.Feed(fixture(t, "rules")[0])
	codectest.WantError(t, err, codecs.ErrBadValue, "type", 4)
	if done {
		t.Error("done after a reply to RULES, not asked")
	}
	if _, done, err := q.Feed(fixture(t, "players")[0]); !done || err != nil {
		t.Fatalf("players: done %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info == nil || m.Info.Name == "" || len(m.Info.Players) == 0 {
		t.Fatalf("result %+v, %v", m.Info, err)
	}
}

// TestStartBatch: Start sends INFO and the challenge request of the first
// of PLAYER and RULES asked; a challenge sends every step still open with
// it, once per challenge value.
func TestStartBatch(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(nil)
	send := q.Start()
	if len(send) != 2 || hex.EncodeToString(send[1]) != "ffffffff55ffffffff" {
		t.Fatalf("Start sends %x", send)
	}
	chal, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: 0x01020304})
	more, _, _ := q.Feed(chal)
	var got []string
	for _, b := range more {
		got = append(got, hex.EncodeToString(b))
	}
	want := []string{"ffffffff54536f7572636520456e67696e6520517565727900" + "04030201", "ffffffff5504030201", "ffffffff5604030201"}
	if !slices.Equal(got, want) {
		t.Errorf("after a challenge, sends %q, want %q", got, want)
	}
	if more, _, _ := q.Feed(chal); len(more) > 0 {
		t.Errorf("the same challenge again sends %x", more)
	}
}

// TestDecodeOrder: Codec.Decode reads a conversation's replies in any
// order: the info after the players and the rules gives the same message.
func TestDecodeOrder(t *testing.T) {
	c := &a2s.Codec{}
	info, players, rules := fixture(t, "info_source_full")[0], fixture(t, "players")[0], fixture(t, "rules_split_source")
	inOrder := append([][]byte{info, players}, rules...)
	late := append(append([][]byte{players}, rules...), info)
	a, err := c.Decode(inOrder, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Decode(late, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Info == nil || a.Info.Name == "" || len(a.Info.Players) == 0 || len(a.Info.Rules) < 60 {
		t.Fatalf("in order: %+v", a.Info)
	}
	if ja, jb := string(a.AppendJSON(nil)), string(b.AppendJSON(nil)); ja != jb {
		t.Errorf("info after players:\n%s\nin order:\n%s", jb, ja)
	}
}

// TestChallengeRequests: PLAYER and RULES ask for a challenge with
// FF FF FF FF, never with four zero bytes (which some servers ignore).
func TestChallengeRequests(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"info": "false", "rules": "false"}, "ffffffff55ffffffff"},
		{map[string]string{"info": "false", "players": "false"}, "ffffffff56ffffffff"},
	} {
		q, err := (&a2s.Codec{}).NewQuery(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		send := q.Start()
		if len(send) != 1 || hex.EncodeToString(send[0]) != tc.want {
			t.Errorf("%v: first query %x, want %s", tc.opts, send, tc.want)
		}
	}
}
