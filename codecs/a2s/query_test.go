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
		b, _ := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeChallenge, Challenge: s.challenge})
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
		parts, err := a2s.SplitResponse(b, 99, a2s.SplitSource, n)
		if err != nil {
			s.t.Fatal(err)
		}
		slices.Reverse(parts)
		return append(parts, parts[0]) // out of order, one duplicate
	}
	return [][]byte{b}
}

// converse runs q against s until done or silence.
func converse(t *testing.T, q codecs.Query, s *server) bool {
	t.Helper()
	send := q.Start()
	for range 20 {
		if len(send) == 0 {
			return false
		}
		var replies [][]byte
		for _, b := range send {
			replies = append(replies, s.reply(b)...)
		}
		send = nil
		if len(replies) == 0 {
			return false
		}
		for _, r := range replies {
			more, done, err := q.Feed(r)
			if err != nil {
				t.Fatalf("Feed(%x): %v", r[:min(len(r), 16)], err)
			}
			if done {
				return true
			}
			send = append(send, more...)
		}
	}
	t.Fatal("conversation did not end")
	return false
}

func TestConversation(t *testing.T) {
	c := &a2s.Codec{}
	cases := []struct {
		name      string
		srv       server
		opts      map[string]string
		done      bool
		wantErr   error
		warn      string
		asked     string
		players   int
		rules     int
		truncated bool
	}{
		{name: "no INFO challenge", srv: server{challenge: 0x11223344}, done: true, players: 3, rules: 80 + 10,
			asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "INFO challenge", srv: server{challenge: 0x55667788, infoChal: true}, done: true, players: 3, rules: 90,
			asked: "A2S_INFO A2S_INFO A2S_PLAYER A2S_RULES"},
		{name: "split rules", srv: server{challenge: 7, split: map[a2s.Type]int{a2s.TypeRulesRequest: 300}}, done: true, players: 3, rules: 90,
			asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "ignores PLAYER and RULES", srv: server{challenge: 7, ignore: map[a2s.Type]bool{a2s.TypePlayerRequest: true, a2s.TypeRulesRequest: true}},
			warn: "no reply to A2S_PLAYER (A2S_RULES not asked)", rules: 10, asked: "A2S_INFO A2S_PLAYER"},
		{name: "ignores RULES", srv: server{challenge: 7, ignore: map[a2s.Type]bool{a2s.TypeRulesRequest: true}},
			warn: "no reply to A2S_RULES", players: 3, rules: 10, asked: "A2S_INFO A2S_PLAYER A2S_PLAYER A2S_RULES"},
		{name: "silent", srv: server{challenge: 7, ignore: map[a2s.Type]bool{a2s.TypeInfoRequest: true}},
			wantErr: codecs.ErrIncomplete, asked: "A2S_INFO"},
		{name: "info only", srv: server{challenge: 7}, opts: map[string]string{"players": "false", "rules": "false"}, done: true, rules: 10,
			asked: "A2S_INFO"},
		{name: "rules only", srv: server{challenge: 7}, opts: map[string]string{"info": "false", "players": "0"}, done: true, rules: 80,
			asked: "A2S_RULES A2S_RULES"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.t = t
			q, err := c.NewQuery(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			done := converse(t, q, &tc.srv)
			if done != tc.done {
				t.Errorf("done = %v, want %v", done, tc.done)
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
			if tc.asked == "A2S_INFO" && tc.wantErr != nil {
				return // nothing came: no info to check
			}
			if m.Kind != codecs.KindResponse || m.Info == nil {
				t.Fatalf("kind %q info %v", m.Kind, m.Info)
			}
			if len(m.Info.Players) != tc.players || len(m.Info.Rules) != tc.rules {
				t.Errorf("%d players and %d rules, want %d and %d", len(m.Info.Players), len(m.Info.Rules), tc.players, tc.rules)
			}
			if err == nil {
				codectest.SpansCover(t, m)
			}
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

// TestFeedWrongReply: a reply to another query than the one asked (a late
// copy of an earlier reply) is refused and the conversation goes on.
func TestFeedWrongReply(t *testing.T) {
	q, _ := (&a2s.Codec{}).NewQuery(nil)
	q.Start()
	info := fixture(t, "info_source_full")[0]
	if _, done, err := q.Feed(info); done || err != nil {
		t.Fatalf("info: done %v, %v", done, err)
	}
	_, done, err := q.Feed(info)
	codectest.WantError(t, err, codecs.ErrBadValue, "type", 4)
	if done {
		t.Error("done after a repeated info reply")
	}
	if _, done, err := q.Feed(fixture(t, "players")[0]); done || err != nil {
		t.Fatalf("players: done %v, %v", done, err)
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
