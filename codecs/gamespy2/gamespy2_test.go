package gamespy2

import (
	"bytes"
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

var id1020 = [4]byte{0x10, 0x20, 0x30, 0x40}

func TestRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		wire string
	}{
		{"qstat combined", FullRequest(id1020), "fefd0010203040ffffff"},
		{"gamedig server", Request{ID: DefaultID, Server: AllKeys}, "fefd0000000001ff0000"},
		{"gamedig players", Request{ID: DefaultID, Players: AllKeys}, "fefd000000000100ff00"},
		{"gamedig teams", Request{ID: DefaultID, Teams: AllKeys}, "fefd00000000010000ff"},
		{"seed CORY", Request{ID: [4]byte{'C', 'O', 'R', 'Y'}, Server: AllKeys, Players: AllKeys}, "fefd00434f5259ffff00"},
		{"nothing", Request{ID: id1020}, "fefd0010203040000000"},
		{"index mode", Request{ID: id1020, Server: KeyList(KeyHostname, KeyMapname, KeyNumplayers),
			Players: KeyList(KeyPlayer, KeyScore), Teams: AllKeys}, "fefd0010203040 03 010508 02 1516 ff"},
		{"custom key", Request{ID: id1020, Server: KeyList(50, 254)}, "fefd0010203040 02 32fe 00 00"},
		{"exflags", Request{ID: id1020, Server: AllKeys, ExFlags: 0, HasExFlags: true}, "fefd0010203040ff000000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := codectest.Unhex(t, tc.wire)
			got, err := AppendRequest(nil, tc.req)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("AppendRequest = %x, %v; want %x", got, err, want)
			}
			back, err := DecodeRequest(want)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "DecodeRequest", tc.req, back)
			if err := (&Codec{}).CheckQuery(want); (err == nil) != (!tc.req.HasExFlags || tc.req.ExFlags == 0) {
				t.Errorf("CheckQuery = %v", err)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name   string
		wire   string
		field  string
		offset int
		err    error
	}{
		{"empty", "", "magic", 0, codecs.ErrShort},
		{"bad magic", "fefe0010203040ffffff", "magic", 0, codecs.ErrBadMagic},
		{"gs3 ip verify", "fefd0910203040", "packet_type", 2, codecs.ErrNotQuery},
		{"short id", "fefd001020", "id", 3, codecs.ErrShort},
		{"no team byte", "fefd0010203040ffff", "teams.count", 9, codecs.ErrShort},
		{"keys missing", "fefd0010203040 05 0102", "server.keys", 8, codecs.ErrShort},
		{"key zero", "fefd0010203040 02 0100 00 00", "server.keys[1]", 9, codecs.ErrBadValue},
		{"key 255", "fefd0010203040 00 01ff 00", "players.keys[0]", 9, codecs.ErrBadValue},
		{"two extra bytes", "fefd0010203040ffffff0000", "exflags", 11, codecs.ErrTrailing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := codectest.Unhex(t, tc.wire)
			_, err := DecodeRequest(b)
			e := codectest.WantError(t, err, nil, "", -1)
			if e.Field != tc.field || e.Offset != tc.offset || !errors.Is(err, tc.err) {
				t.Errorf("err = %v (field %q offset %d), want %q at %d: %v", err, e.Field, e.Offset, tc.field, tc.offset, tc.err)
			}
			if (&Codec{}).CheckQuery(b) == nil {
				t.Error("CheckQuery accepted it")
			}
		})
	}
}

func TestCheckQueryRejectsSplit(t *testing.T) {
	err := (&Codec{}).CheckQuery(codectest.Unhex(t, "fefd0010203040ffffff01"))
	if e := codectest.WantError(t, err, nil, "", -1); e.Field != "exflags" || e.Offset != 10 {
		t.Errorf("err = %v", err)
	}
}

func TestAppendRequestErrors(t *testing.T) {
	long := make([]Key, MaxKeys+1)
	for i := range long {
		long[i] = 1
	}
	tests := []struct {
		name  string
		req   Request
		field string
	}{
		{"all and list", Request{Server: Keys{All: true, List: []Key{1}}}, "server.keys"},
		{"too many keys", Request{Players: Keys{List: long}}, "players.keys"},
		{"key zero", Request{Teams: KeyList(28, 0)}, "teams.keys[1]"},
		{"key 255", Request{Server: KeyList(255)}, "server.keys[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AppendRequest(nil, tc.req)
			if e := codectest.WantError(t, err, nil, "", -1); e.Field != tc.field {
				t.Errorf("field = %q, want %q", e.Field, tc.field)
			}
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	full := FullRequest(id1020)
	oneByte := sample()
	oneByte.OneByteCounts = true
	empty := Response{Sections: 7, Players: Table{Fields: []string{"player_"}}, Teams: Table{Fields: []string{"team_t"}}}
	noFields := Response{Sections: PlayerSection, Players: Table{Count: 65535}}
	tests := []struct {
		name string
		resp Response
		req  Request
	}{
		{"combined", sample(), full},
		{"server only", Response{Sections: ServerSection, Rules: sample().Rules}, Request{ID: id1020, Server: AllKeys}},
		{"players only", Response{Sections: PlayerSection, Players: sample().Players}, Request{ID: id1020, Players: AllKeys}},
		{"teams only", Response{Sections: TeamSection, Teams: sample().Teams}, Request{ID: id1020, Teams: AllKeys}},
		{"one-byte counts", oneByte, full},
		{"empty server", empty, full},
		{"count without fields", noFields, Request{ID: id1020, Players: AllKeys}},
		{"header only", Response{}, Request{ID: id1020}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AppendResponse(nil, tc.resp, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			want := normal(tc.resp)
			want.ID = tc.req.ID
			for _, req := range []*Request{&tc.req, nil} {
				got, err := DecodeResponse(b, req)
				if err != nil {
					t.Fatalf("DecodeResponse(%x, %v) = %v", b, req != nil, err)
				}
				w := want
				w.Truncated = req == nil && w.Sections == 0 // nothing after the header reads as cut
				equal(t, "decoded", w, normal(got))
			}
		})
	}
}

func TestIndexMode(t *testing.T) {
	req := Request{ID: id1020, Server: KeyList(KeyHostname, KeyMapname, KeyGamemode, 60),
		Players: KeyList(KeyPlayer, KeyPing, KeyDeaths), Teams: KeyList(KeyScoreT)}
	b, err := AppendResponse(nil, sample(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := "0010203040" + "436166e920436f6e717565737400" + "57616b652049736c616e6400" + "00" + "00" +
		"0002" + "5a6feb00" + "343800" + "00" + "426f6200" + "31353000" + "00" +
		"0002" + "31303000" + "383700"
	if !bytes.Equal(b, codectest.Unhex(t, want)) {
		t.Fatalf("AppendResponse =\n%x\nwant\n%s", b, want)
	}
	got, err := DecodeResponse(b, &req)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "rules", []Rule{{"hostname", "Café Conquest"}, {"mapname", "Wake Island"}, {"gamemode", ""}, {"key60", ""}}, got.Rules)
	equal(t, "players", Table{Count: 2, Fields: []string{"player_", "ping_", "deaths_"},
		Rows: [][]string{{"Zoë", "48", ""}, {"Bob", "150", ""}}}, got.Players)
	equal(t, "teams", Table{Count: 2, Fields: []string{"score_t"}, Rows: [][]string{{"100"}, {"87"}}}, got.Teams)
}

func TestTruncatedAt1400(t *testing.T) {
	req := FullRequest(id1020)
	b, err := AppendResponse(nil, bigServer(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != MaxReply || b[len(b)-1] != 0 {
		t.Fatalf("len = %d, last byte %#x; want the SDK's 1400 bytes ending in NUL", len(b), b[len(b)-1])
	}
	for _, r := range []*Request{&req, nil} {
		got, err := DecodeResponse(b, r)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Truncated || got.Players.Count != 64 || len(got.Players.Rows) == 0 || len(got.Players.Rows) >= 64 {
			t.Errorf("truncated %v, count %d, rows %d", got.Truncated, got.Players.Count, len(got.Players.Rows))
		}
		if got.Sections&TeamSection != 0 && len(got.Teams.Rows) > 0 {
			t.Errorf("teams after a full buffer: %v", got.Teams)
		}
	}
	// Appending to a non-empty dst limits only the reply itself.
	b2, _ := AppendResponse([]byte("prefix"), bigServer(), req)
	if !bytes.Equal(b2[6:], b) {
		t.Error("the limit depends on dst")
	}
}

func TestSDKCutPoints(t *testing.T) {
	// Grow the hostname one byte at a time so that the 1400-byte limit
	// falls on every kind of item: a key, a value, the rules' closing NUL,
	// the player count, a field name, a value.
	req := FullRequest(id1020)
	base := sample()
	for n := 1200; n < 1400; n++ {
		r := base
		r.Rules = append([]Rule{{"hostname", string(bytes.Repeat([]byte{'x'}, n))}}, base.Rules[1:]...)
		b, err := AppendResponse(nil, r, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeResponse(b, &req)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(b) >= MaxReply-1 && !got.Truncated {
			t.Errorf("n=%d: %d bytes not flagged truncated", n, len(b))
		}
		if len(b) < MaxReply-1 {
			equal(t, "complete reply", normal(Response{ID: id1020, Sections: 7, Rules: r.Rules, Players: r.Players, Teams: r.Teams}), normal(got))
		}
	}
}

func TestOneByteCounts(t *testing.T) {
	// One-byte counts read as 16 bits would put the count's byte in the
	// high half and the first name's first letter in the low half.
	tests := []struct {
		name string
		resp Response
		req  Request
		cut  int
	}{
		{"combined", sample(), FullRequest(id1020), 0},
		{"players only", Response{Sections: PlayerSection, Players: sample().Players}, Request{ID: id1020, Players: AllKeys}, 0},
		{"players cut", Response{Sections: PlayerSection, Players: sample().Players}, Request{ID: id1020, Players: AllKeys}, 12},
		{"teams only", Response{Sections: TeamSection, Teams: sample().Teams}, Request{ID: id1020, Teams: AllKeys}, 0},
		{"empty", Response{Sections: 7, Players: Table{Fields: []string{"player_"}}, Teams: Table{Fields: []string{"team_t"}}}, FullRequest(id1020), 0},
		{"big server cut", bigServer(), FullRequest(id1020), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.resp.OneByteCounts = true
			b, err := AppendResponse(nil, tc.resp, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			b = b[:len(b)-tc.cut]
			for _, r := range []*Request{&tc.req, nil} {
				got, err := DecodeResponse(b, r)
				if err != nil {
					t.Fatal(err)
				}
				if !got.OneByteCounts {
					t.Errorf("request %v: read as 16-bit counts: %+v", r != nil, got)
				}
				if tc.cut == 0 && !got.Truncated {
					want := normal(tc.resp)
					want.ID = id1020
					equal(t, "decoded", want, normal(got))
				}
			}
		})
	}
}

func TestInferSections(t *testing.T) {
	s := sample()
	for set := Section(0); set < 8; set++ {
		b, _ := AppendResponse(nil, s, SectionRequest(id1020, set))
		got, err := DecodeResponse(b, nil)
		if err != nil || got.Sections != set || got.Truncated != (set == 0) || got.Trailing != 0 {
			t.Errorf("sections %b: got %b, truncated %v, trailing %d, err %v", set, got.Sections, got.Truncated, got.Trailing, err)
		}
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	req := FullRequest(id1020)
	tests := []struct {
		name   string
		wire   string
		req    *Request
		field  string
		offset int
	}{
		{"empty", "", nil, "packet_type", 0},
		{"short id", "001020", nil, "id", 1},
		{"challenge packet", "0110203040", nil, "packet_type", 0},
		{"echo response", "0510203040", nil, "packet_type", 0},
		{"other id", "0000000001686f73746e616d650041000000", &req, "id", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeResponse(codectest.Unhex(t, tc.wire), tc.req)
			e := codectest.WantError(t, err, nil, "", -1)
			if e.Field != tc.field || e.Offset != tc.offset {
				t.Errorf("err = %v, want field %q offset %d", err, tc.field, tc.offset)
			}
		})
	}
}

func TestTrailingBytes(t *testing.T) {
	req := Request{ID: id1020, Server: AllKeys}
	b, _ := AppendResponse(nil, sample(), req)
	b = append(b, 'x', 'y')
	got, err := DecodeResponse(b, &req)
	if err != nil || got.Trailing != 2 || got.Truncated {
		t.Errorf("trailing %d truncated %v err %v", got.Trailing, got.Truncated, err)
	}
}

func TestHostileCounts(t *testing.T) {
	// 65535 players announced in a 40-byte reply: what is decoded and what
	// is allocated are bounded by the input, not by the count.
	b := codectest.Unhex(t, "0010203040"+"00"+"ffff"+"615f00"+"00"+"3100320033003400350036003700"+"ffff"+"00"+"ffff")
	req := FullRequest(id1020)
	got, err := DecodeResponse(b, &req)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || got.Players.Count != 65535 || len(got.Players.Rows) != 8 || cap(got.Players.Rows) > len(b) {
		t.Errorf("players: count %d rows %d cap %d truncated %v", got.Players.Count, len(got.Players.Rows), cap(got.Players.Rows), got.Truncated)
	}
	// A section with no fields and a huge count holds no rows at all.
	b = codectest.Unhex(t, "0010203040"+"ffff00"+"ffff00")
	got, err = DecodeResponse(b, &Request{ID: id1020, Players: AllKeys, Teams: AllKeys})
	if err != nil || got.Players.Rows != nil || got.Teams.Count != 65535 {
		t.Errorf("no fields: %+v, %v", got, err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		DecodeResponse(b, &Request{ID: id1020, Players: AllKeys, Teams: AllKeys})
	})
	if allocs > 2 {
		t.Errorf("allocs = %v", allocs)
	}
}

func TestAppendResponseErrors(t *testing.T) {
	full := FullRequest(id1020)
	tests := []struct {
		name  string
		edit  func(*Response)
		req   Request
		field string
	}{
		{"empty key", func(r *Response) { r.Rules[1].Key = "" }, full, "rules[1].key"},
		{"NUL in value", func(r *Response) { r.Rules[2].Value = "a\x00b" }, full, "rules[2].value"},
		{"NUL in indexed value", func(r *Response) { r.Rules[0].Value = "\x00" }, Request{Server: KeyList(1)}, "rules[0].value"},
		{"empty field", func(r *Response) { r.Players.Fields[1] = "" }, full, "players.fields[1]"},
		{"short row", func(r *Response) { r.Teams.Rows[1] = r.Teams.Rows[1][:1] }, full, "teams[1]"},
		{"NUL in player", func(r *Response) { r.Players.Rows[1][3] = "\x00" }, full, "players[1].team_"},
		{"too many", func(r *Response) { r.Players.Count = 70000 }, full, "players.count"},
		{"too many for a byte", func(r *Response) { r.OneByteCounts = true; r.Teams.Count = 256 }, full, "teams.count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := sample()
			tc.edit(&r)
			_, err := AppendResponse(nil, r, tc.req)
			if e := codectest.WantError(t, err, nil, "", -1); e.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", e.Field, tc.field, err)
			}
		})
	}
}

func TestKeyNames(t *testing.T) {
	for k := Key(1); k <= KeyRegion; k++ {
		if back, ok := KeyByName(k.String()); !ok || back != k {
			t.Errorf("key %d %q -> %d", k, k.String(), back)
		}
	}
	equal(t, "custom", "key77", Key(77).String())
	if _, ok := KeyByName(""); ok {
		t.Error("empty name found")
	}
}

// TestCheckQueryLength: the longest query CheckQuery accepts is
// MaxQueryLen (every key once in each section, and exflags 0); one byte
// more, or a key asked twice, is refused.
func TestCheckQueryLength(t *testing.T) {
	all := make([]Key, MaxKeys)
	for i := range all {
		all[i] = Key(i + 1)
	}
	longest, err := AppendRequest(nil, Request{ID: DefaultID, Server: Keys{List: all}, Players: Keys{List: all},
		Teams: Keys{List: all}, HasExFlags: true})
	if err != nil {
		t.Fatal(err)
	}
	twice := codectest.Unhex(t, "fefd0010203040 03 010501 00 00")
	for _, tc := range []struct {
		name  string
		b     []byte
		err   error
		field string
		off   int
	}{
		{"combined query", codectest.Unhex(t, "fefd0010203040ffffff"), nil, "", 0},
		{"index mode", codectest.Unhex(t, "fefd0010203040 02 0105 01 15 00"), nil, "", 0},
		{"longest", longest, nil, "", 0},
		{"one byte more", append(longest, 0), codecs.ErrTooLong, "datagram", MaxQueryLen},
		{"8 KiB", append(codectest.Unhex(t, "fefd0010203040ffffff"), make([]byte, 8182)...), codecs.ErrTooLong, "datagram", MaxQueryLen},
		{"a key asked twice", twice, codecs.ErrBadValue, "server.keys[2]", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "longest" && len(tc.b) != MaxQueryLen {
				t.Fatalf("longest query is %d bytes, MaxQueryLen %d", len(tc.b), MaxQueryLen)
			}
			err := (&Codec{}).CheckQuery(tc.b)
			if tc.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e := codectest.WantError(t, err, nil, "", -1); !errors.Is(err, tc.err) || e.Field != tc.field || e.Offset != tc.off {
				t.Errorf("err = %v; want %v at %s, offset %d", err, tc.err, tc.field, tc.off)
			}
		})
	}
}
