package a2s_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func fixture(t testing.TB, name string) [][]byte {
	t.Helper()
	return readPacket(t, filepath.Join("testdata", name+".hexlines")).datagrams
}

// TestRoundTrip: every single-datagram fixture decodes with the typed
// decoders and encodes back to the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, p := range readPackets(t) {
		if len(p.datagrams) != 1 {
			continue
		}
		b := p.datagrams[0]
		t.Run(p.name, func(t *testing.T) {
			if !completePrefix(b) {
				t.Fatalf("%x does not round-trip through its typed decoder", b)
			}
		})
	}
}

// TestSplitMissing drops each part of each split fixture: the result is an
// error wrapping ErrIncomplete and the warning "truncated"; feeding every
// part twice changes nothing.
func TestSplitMissing(t *testing.T) {
	c := &a2s.Codec{}
	for _, name := range []string{"rules_split_source", "rules_split_nosize", "players_split_goldsrc", "rules_split_bzip2"} {
		dgs := fixture(t, name)
		full, err := c.Decode(dgs, codecs.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		twice, err := c.Decode(append(slices.Clone(dgs), dgs...), codecs.DecodeOptions{})
		if err != nil || !bytes.Equal(full.AppendJSON(nil)[:100], twice.AppendJSON(nil)[:100]) {
			t.Errorf("%s: duplicates change the result: %v", name, err)
		}
		for drop := range dgs {
			var rest [][]byte
			for _, d := range dgs {
				if !bytes.Equal(d, dgs[drop]) { // every copy of the dropped part
					rest = append(rest, d)
				}
			}
			m, err := c.Decode(rest, codecs.DecodeOptions{Spans: true})
			if !errors.Is(err, codecs.ErrIncomplete) {
				t.Errorf("%s without part %d: err = %v, want ErrIncomplete", name, drop, err)
				continue
			}
			if m == nil || !slices.Contains(m.Warnings, codecs.WarnTruncated) {
				t.Errorf("%s without part %d: no truncated warning", name, drop)
			}
			for _, s := range m.Spans {
				if s.Layer < 0 || s.Layer >= len(m.Layers) || s.Start < 0 || s.Start > s.End || s.End > len(m.Layers[s.Layer].Bytes) {
					t.Errorf("%s without part %d: span %+v outside its layer", name, drop, s)
				}
			}
		}
	}
}

// compressedParts returns the bzip2 fixture's parts in order (0 first).
func compressedParts(t *testing.T) [][]byte {
	dgs := fixture(t, "rules_split_bzip2")
	slices.Reverse(dgs)
	return dgs
}

// TestBzip2Checks: a wrong CRC32, a wrong size and a size beyond
// MaxDecompressed are errors naming the field, in packet 0's layer.
func TestBzip2Checks(t *testing.T) {
	c := &a2s.Codec{}
	cases := []struct {
		name     string
		off      int
		value    uint32
		field    string
		sentinel error
	}{
		{"crc", 16, 1, "crc32", codecs.ErrBadValue},
		{"size small", 12, 100, "decompressed_size", codecs.ErrTooLong},
		{"size large", 12, 5000, "decompressed_size", codecs.ErrBadValue},
		{"size beyond bound", 12, a2s.MaxDecompressed + 1, "decompressed_size", codecs.ErrTooLong},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dgs := compressedParts(t)
			p0 := slices.Clone(dgs[0])
			binary.LittleEndian.PutUint32(p0[tc.off:], tc.value)
			dgs[0] = p0
			m, err := c.Decode(dgs, codecs.DecodeOptions{})
			codectest.WantError(t, err, tc.sentinel, tc.field, tc.off)
			if e, _ := errors.AsType[*codecs.Error](err); e == nil || e.Layer == "" {
				t.Errorf("the error %v names no layer (want packet 0's)", err)
			}
			if m == nil || m.Info != nil {
				t.Errorf("a rejected message still gave info: %+v", m)
			}
		})
	}
	// The older Source form has no size field: the decompressed size and
	// the CRC32 sit two bytes earlier in packet 0, and the errors say so.
	t.Run("form without the size field", func(t *testing.T) {
		dgs := compressedParts(t)
		msg, err := a2s.Reassemble(nil, dgs)
		if err != nil {
			t.Fatal(err)
		}
		var stream []byte
		for i, d := range dgs {
			body := 12
			if i == 0 {
				body = 20
			}
			stream = append(stream, d[body:]...)
		}
		parts, err := a2s.SplitCompressed(msg, stream, 5, a2s.SplitSourceNoSize, len(stream)/3+1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Decode(parts, codecs.DecodeOptions{}); err != nil {
			t.Fatalf("the re-split message does not decode: %v", err)
		}
		for _, tc := range []struct {
			off   int
			field string
		}{{10, "decompressed_size"}, {14, "crc32"}} {
			p0 := slices.Clone(parts[0])
			binary.LittleEndian.PutUint32(p0[tc.off:], binary.LittleEndian.Uint32(p0[tc.off:])+1)
			_, err := c.Decode(append([][]byte{p0}, parts[1:]...), codecs.DecodeOptions{})
			codectest.WantError(t, err, nil, tc.field, tc.off)
		}
	})
	t.Run("corrupt stream", func(t *testing.T) {
		dgs := compressedParts(t)
		p1 := slices.Clone(dgs[1])
		for i := 12; i < len(p1); i++ {
			p1[i] ^= 0x55
		}
		dgs[1] = p1
		_, err := (&a2s.Codec{}).Decode(dgs, codecs.DecodeOptions{})
		codectest.WantError(t, err, codecs.ErrBadValue, "", -1)
	})
}

// rulesParts is a rules reply that a Source server splits into exactly n
// parts of 1,248 payload bytes, and its number of rules.
func rulesParts(t *testing.T, n int, id uint32) ([][]byte, int) {
	t.Helper()
	const body = 1248
	rs := &a2s.Rules{}
	value := strings.Repeat("v", 100)
	for {
		msg, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: rs})
		if err != nil {
			t.Fatal(err)
		}
		if len(msg) > (n-1)*body {
			parts, err := a2s.SplitResponse(msg, id, a2s.SplitSource, body)
			if err != nil || len(parts) != n {
				t.Fatalf("%d parts, %v; want %d", len(parts), err, n)
			}
			return parts, len(rs.Rules)
		}
		rs.Rules = append(rs.Rules, a2s.Rule{Name: "sv_rule_" + strconv.Itoa(len(rs.Rules)), Value: value})
		rs.Count = uint16(len(rs.Rules))
	}
}

// TestCaps: the caps are per reply message, as the relay's are per query:
// a full 64-part rules reply after the info and player replies decodes
// whole; a split message past MaxDatagrams parts or MaxBytes bytes loses
// its later parts; one Decode reads at most four times the caps in all.
// Every drop is counted and the message says truncated.
func TestCaps(t *testing.T) {
	c := &a2s.Codec{}
	info := fixture(t, "info_source_plain")[0]
	players := fixture(t, "players")[0]
	one := fixture(t, "challenge")[0]
	full, nRules := rulesParts(t, a2s.MaxDatagrams, 7)
	over, _ := rulesParts(t, a2s.MaxDatagrams+1, 8)
	// 60 parts of 2,012 bytes: fewer than MaxDatagrams, but only the
	// first 48 fit in MaxBytes.
	big := append([]byte{0xff, 0xff, 0xff, 0xff, byte(a2s.TypeRules)}, make([]byte, 60*2000-5)...)
	bigParts, err := a2s.SplitResponse(big, 9, a2s.SplitSource, 2000)
	if err != nil || len(bigParts) != 60 {
		t.Fatalf("%d parts, %v", len(bigParts), err)
	}
	many := slices.Repeat([][]byte{one}, 4*a2s.MaxDatagrams+5)
	conversation := append([][]byte{info, players}, full...)
	for _, tc := range []struct {
		name    string
		dgs     [][]byte
		dropped int  // 0: nothing dropped, no warning
		whole   bool // decodes without error
	}{
		{"info, players and a 64-part rules reply", conversation, 0, true},
		{"two full rules replies", append(slices.Clone(full), rulesPartsOrFail(t, 10)...), 0, true},
		{"a 65-part rules reply", over, 1, false},
		{"a split message past MaxBytes", bigParts, len(bigParts) - (a2s.MaxBytes / 2012), false},
		{"past four times the caps in all", many, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := c.Decode(tc.dgs, codecs.DecodeOptions{})
			if tc.whole && err != nil {
				t.Fatal(err)
			}
			if !tc.whole {
				codectest.WantError(t, err, codecs.ErrIncomplete, "", -1)
			}
			v, _ := m.Fields.Get("dropped_datagrams")
			truncated := slices.Contains(m.Warnings, codecs.WarnTruncated)
			if tc.dropped == 0 {
				if v != nil || truncated {
					t.Errorf("dropped_datagrams %v, warnings %v; want none", v, m.Warnings)
				}
				return
			}
			if v != tc.dropped || !truncated {
				t.Errorf("dropped_datagrams = %v, warnings %v; want %d, truncated", v, m.Warnings, tc.dropped)
			}
		})
	}
	m, err := c.Decode(conversation, codecs.DecodeOptions{})
	if err != nil || m.Info == nil || !hasRule(m, nRules-1) || len(m.Info.Players) == 0 || m.Info.Name == "" {
		t.Errorf("the conversation decodes without its last rule, or without info or players: %v", err)
	}
}

// hasRule reports whether the message holds rulesParts' rule i.
func hasRule(m *codecs.Message, i int) bool {
	name := "sv_rule_" + strconv.Itoa(i)
	return m.Info != nil && slices.ContainsFunc(m.Info.Rules, func(r [2]string) bool { return r[0] == name })
}

func rulesPartsOrFail(t *testing.T, id uint32) [][]byte {
	t.Helper()
	p, _ := rulesParts(t, a2s.MaxDatagrams, id)
	return p
}

// TestFeedCapsPerQuery: a conversation reads a full 64-part rules reply
// after the info and player replies, without "truncated".
func TestFeedCapsPerQuery(t *testing.T) {
	q, err := (&a2s.Codec{}).NewQuery(nil)
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	full, nRules := rulesParts(t, a2s.MaxDatagrams, 7)
	feed := append([][]byte{fixture(t, "info_source_plain")[0], fixture(t, "players")[0]}, full...)
	done := false
	for i, b := range feed {
		if done {
			t.Fatalf("done after %d of %d datagrams", i, len(feed))
		}
		var err error
		if _, done, err = q.Feed(b); err != nil {
			t.Fatalf("Feed %d: %v", i, err)
		}
	}
	if !done {
		t.Fatal("not done after the rules reply")
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || slices.Contains(m.Warnings, codecs.WarnTruncated) || !hasRule(m, nRules-1) {
		t.Fatalf("result without its last rule (of %d), warnings %v, %v", nRules, m.Warnings, err)
	}
}

// TestQueryKey: the unchallenged INFO and the challenge requests are their
// own keys; challenged queries of one kind share a key whatever the
// challenge, and no key equals another query.
func TestQueryKey(t *testing.T) {
	c := &a2s.Codec{}
	req := func(typ a2s.Type, has bool, ch uint32) []byte {
		b, err := a2s.AppendRequest(nil, a2s.Request{Type: typ, HasChallenge: has, Challenge: ch})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	info := req(a2s.TypeInfoRequest, false, 0)
	infoAsk := req(a2s.TypeInfoRequest, true, a2s.ChallengeRequest)
	if k := c.QueryKey(info); !bytes.Equal(k, info) {
		t.Errorf("unchallenged INFO key %x, want its bytes", k)
	}
	if k := c.QueryKey(infoAsk); !bytes.Equal(k, infoAsk) {
		t.Errorf("INFO asking for a challenge: key %x, want its bytes", k)
	}
	keys := map[string]string{}
	for _, typ := range []a2s.Type{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest} {
		ask := req(typ, true, a2s.ChallengeRequest)
		if k := c.QueryKey(ask); !bytes.Equal(k, ask) {
			t.Errorf("%v challenge request: key %x, want its bytes", typ, k)
		}
		k1 := c.QueryKey(req(typ, true, 0x01020304))
		k2 := c.QueryKey(req(typ, true, 0xdeadbeef))
		k3 := c.QueryKey(req(typ, true, 0))
		if !bytes.Equal(k1, k2) || !bytes.Equal(k1, k3) {
			t.Errorf("%v: challenged keys differ: %x %x %x", typ, k1, k2, k3)
		}
		if c.CheckQuery(k1) == nil {
			t.Errorf("%v: key %x is itself a valid query", typ, k1)
		}
		if bytes.Equal(k1, ask) {
			t.Errorf("%v: challenged key equals the challenge request's", typ)
		}
		if prev, ok := keys[string(k1)]; ok {
			t.Errorf("%v and %s share a key", typ, prev)
		}
		keys[string(k1)] = typ.String()
	}
	if k := c.QueryKey([]byte("nonsense")); k != nil {
		t.Errorf("key of a non-query: %x", k)
	}
	mq := fixture(t, "master_query")[0]
	if k := c.QueryKey(mq); !bytes.Equal(k, mq) {
		t.Errorf("master query key %x", k)
	}
}

// TestCheckQuery: what the relay forwards.
func TestCheckQuery(t *testing.T) {
	c := &a2s.Codec{}
	ok := [][]byte{
		fixture(t, "info_request")[0], fixture(t, "info_request_challenge")[0],
		fixture(t, "player_request_ask")[0], fixture(t, "rules_request")[0], fixture(t, "master_query")[0],
	}
	for _, b := range ok {
		if err := c.CheckQuery(b); err != nil {
			t.Errorf("%x: %v", b, err)
		}
	}
	bad := []struct {
		name     string
		b        []byte
		sentinel error
	}{
		{"reply", fixture(t, "challenge")[0], codecs.ErrUnknownCode},
		{"wrong payload", append([]byte("\xff\xff\xff\xffTSource Engine Querx"), 0), codecs.ErrBadValue},
		{"trailing", append(slices.Clone(fixture(t, "rules_request")[0]), 1), codecs.ErrTrailing},
		{"short challenge", []byte("\xff\xff\xff\xffU\xff\xff"), codecs.ErrShort},
		{"master seed", []byte("1\xffnot an address\x00\x00"), codecs.ErrBadValue},
		{"master filter control byte", []byte("1\xff0.0.0.0:0\x00\\a\x01\x00"), codecs.ErrBadValue},
		{"master no filter end", []byte("1\xff0.0.0.0:0\x00\\appid\\440"), codecs.ErrShort},
		{"too long", append([]byte("1\xff0.0.0.0:0\x00"), strings.Repeat("a", a2s.MaxQueryLen)+"\x00"...), codecs.ErrTooLong},
		{"split part", fixture(t, "rules_split_source")[0][:40], codecs.ErrBadMagic},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			codectest.WantError(t, c.CheckQuery(tc.b), tc.sentinel, "", -1)
		})
	}
}

// TestDetect: each fixture's first datagram is detected as this protocol
// with the right kind.
func TestDetect(t *testing.T) {
	c := &a2s.Codec{}
	want := map[string]codecs.Kind{
		"info_request": codecs.KindQuery, "challenge": codecs.KindChallenge, "info_source_full": codecs.KindResponse,
		"info_goldsrc_mod": codecs.KindResponse, "players": codecs.KindResponse, "rules": codecs.KindResponse,
		"master_query": codecs.KindMasterQuery, "master_pages": codecs.KindMasterList,
	}
	for name, kind := range want {
		b := fixture(t, name)[0]
		k, conf := c.Detect(b)
		if k != kind || conf != codecs.Certain {
			t.Errorf("%s: Detect = %q %d, want %q certain", name, k, conf, kind)
		}
	}
	if _, conf := c.Detect([]byte("\xff\xff\xff\xffOGP\x00")); conf != codecs.NotMine {
		t.Errorf("OGP magic detected as A2S (%d)", conf)
	}
	parts := compressedParts(t)
	if _, conf := c.Detect(parts[0]); conf != codecs.Likely {
		t.Errorf("packet 0 of a split: confidence %d, want likely", conf)
	}
}

// TestGoldSrcModFields: the mod fields sit after the NUL byte that follows
// the download link; a reader that skips it shifts them by one.
func TestGoldSrcModFields(t *testing.T) {
	b := fixture(t, "info_goldsrc_mod")[0]
	a, err := a2s.DecodeResponse(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Info.ModInfo
	if m.Version != 1 || m.Size != 1<<20 || m.Type != 1 || m.DLL != 1 || a.Info.VAC != 1 || a.Info.Bots != 1 {
		t.Errorf("mod fields %+v, vac %d, bots %d", m, a.Info.VAC, a.Info.Bots)
	}
}

// TestParseAddr: the seed's address form.
func TestParseAddr(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"0.0.0.0:0", true}, {"255.255.255.255:65535", true}, {"127.0.0.1:27015", true},
		{"256.0.0.1:1", false}, {"1.2.3:4", false}, {"1.2.3.4", false}, {"1.2.3.4:65536", false},
		{"01.2.3.4:5", false}, {"1.2.3.4:5x", false}, {"", false}, {"1..3.4:5", false},
	} {
		a, ok := a2s.ParseAddr(tc.s)
		if ok != tc.ok || ok && a.String() != tc.s {
			t.Errorf("ParseAddr(%q) = %v, %v", tc.s, a, ok)
		}
	}
}

// TestUnknownEDF: an extra data flag bit this package does not know is
// kept, warned about, and the fields it announces are trailing bytes.
func TestUnknownEDF(t *testing.T) {
	in := sourceInfo()
	in.EDF = a2s.EDFPort | 0x02
	b, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: in})
	if err != nil {
		t.Fatal(err)
	}
	m, err := (&a2s.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	if err != nil || !slices.Contains(m.Warnings, codecs.WarnUnknownFlags) {
		t.Errorf("warnings %v, %v", m.Warnings, err)
	}
	m, err = (&a2s.Codec{}).Decode([][]byte{append(b, 1, 2, 3)}, codecs.DecodeOptions{})
	if err != nil || !slices.Contains(m.Warnings, codecs.WarnTrailing) {
		t.Errorf("with bytes for the unknown flag: warnings %v, %v", m.Warnings, err)
	}
}

// TestPartialInfo: a cut info reply shows the fields read before the cut
// and no others, with spans or without.
func TestPartialInfo(t *testing.T) {
	b := fixture(t, "info_source_full")[0][:0x2c] // cut inside the folder
	for _, spans := range []bool{false, true} {
		m, err := (&a2s.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: spans})
		codectest.WantError(t, err, codecs.ErrShort, "folder", 0x2a)
		in := m.Info
		if in == nil || in.Name == "" || in.Map != "ctf_2fort" || in.Has&(codecs.HasMaxPlayers|codecs.HasNumPlayers|codecs.HasGameType) != 0 || len(in.Rules) != 1 {
			t.Errorf("spans %v: partial info %+v", spans, in)
		}
		f, _ := m.Fields.Get("info")
		if o := f.(codecs.Object); len(o) != 4 { // form, protocol, name, map
			t.Errorf("spans %v: partial fields %v", spans, o)
		}
	}
}

// TestPlayerCountWrapped: 300 players with the count sent as 300 mod 256
// are all read; 300 players with a count of 44 and a cut list are not
// taken for a wrapped count.
func TestPlayerCountWrapped(t *testing.T) {
	p := &a2s.Players{}
	for i := range 300 {
		p.Players = append(p.Players, a2s.Player{Name: "p" + strconv.Itoa(i), Score: int32(i)})
	}
	p.Count = uint8(300 % 256)
	b, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: p})
	if err != nil {
		t.Fatal(err)
	}
	a, err := a2s.DecodeResponse(b, nil)
	if err != nil || len(a.Players.Players) != 300 || a.Players.Players[299].Score != 299 {
		t.Fatalf("%d players, %v", len(a.Players.Players), err)
	}
	m, err := (&a2s.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{Spans: true})
	if err != nil || len(m.Info.Players) != 300 {
		t.Fatalf("codec: %v", err)
	}
	codectest.SpansCover(t, m)
	a, err = a2s.DecodeResponse(b[:len(b)-20], nil)
	if !errors.Is(err, codecs.ErrTrailing) || len(a.Players.Players) != 44 {
		t.Errorf("cut list: %d players, %v", len(a.Players.Players), err)
	}
}

// TestCompressedNoSize: the older Source form (no size field) with
// compression, re-split from the bzip2 fixture's stream, in any order.
func TestCompressedNoSize(t *testing.T) {
	parts := compressedParts(t)
	var stream []byte
	for i, p := range parts {
		at := 12
		if i == 0 {
			at = 20
		}
		stream = append(stream, p[at:]...)
	}
	msg, err := a2s.Reassemble(nil, parts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a2s.SplitCompressed(msg, stream, 5, a2s.SplitSourceNoSize, 50)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(again)
	got, err := a2s.Reassemble(nil, again)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("reassembled %d bytes of %d: %v", len(got), len(msg), err)
	}
	m, err := (&a2s.Codec{}).Decode(again, codecs.DecodeOptions{Spans: true})
	if err != nil || len(m.Info.Rules) != 60 {
		t.Fatalf("decode: %v", err)
	}
	codectest.SpansCover(t, m)
}

// TestPlayersUnlisted: a PLAYER reply that counts more players than it
// lists (players still connecting; CS:GO's list stops at 55) decodes the
// entries sent with a warning and keeps the server's count; an entry cut
// inside is still an error at the field it cuts.
func TestPlayersUnlisted(t *testing.T) {
	players := func(count uint8, listed int) []byte {
		p := &a2s.Players{Count: count}
		for i := range listed {
			p.Players = append(p.Players, a2s.Player{Name: "p" + strconv.Itoa(i), Score: int32(i), Duration: 60})
		}
		b, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypePlayers, Players: p})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		b        []byte
		listed   int
		count    int    // Info.NumPlayers
		warn     bool   // WarnUnlisted
		errField string // "" for no error
	}{
		{"all listed", players(3, 3), 3, 3, false, ""},
		{"none listed", players(0, 0), 0, 0, false, ""},
		{"one connecting", players(4, 3), 3, 4, true, ""},
		{"counted, none listed", players(2, 0), 0, 2, true, ""},
		{"csgo cut at 55", players(64, 55), 55, 64, true, ""},
		{"last entry cut", players(3, 3)[:len(players(3, 3))-2], 2, 0, false, "players[2].duration"},
		{"entry cut in its name", append(players(4, 3), 0, 'x'), 3, 0, false, "players[3].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&a2s.Codec{}).Decode([][]byte{tc.b}, codecs.DecodeOptions{Spans: true})
			if tc.errField != "" {
				e, ok := errors.AsType[*codecs.Error](err)
				if !ok || !errors.Is(err, codecs.ErrShort) || e.Field != tc.errField {
					t.Fatalf("got %v, want a short buffer at %s", err, tc.errField)
				}
				if m == nil || m.Info == nil || len(m.Info.Players) != tc.listed {
					t.Fatalf("partial message %+v, want %d players kept", m, tc.listed)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			codectest.SpansCover(t, m)
			if got := slices.Contains(m.Warnings, codecs.WarnUnlisted); got != tc.warn {
				t.Errorf("warnings %v, want %q: %v", m.Warnings, codecs.WarnUnlisted, tc.warn)
			}
			if len(m.Info.Players) != tc.listed || m.Info.NumPlayers != tc.count {
				t.Errorf("%d players listed, %d counted; want %d, %d", len(m.Info.Players), m.Info.NumPlayers, tc.listed, tc.count)
			}
		})
	}
}
