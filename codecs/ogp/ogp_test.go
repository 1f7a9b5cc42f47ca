package ogp_test

import (
	"bytes"
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/ogp"
)

// Every single-datagram testdata packet is canonical: decoding and
// encoding again gives the same bytes.
func TestRoundTrip(t *testing.T) {
	for _, p := range readPackets(t) {
		if len(p.datagrams) != 1 {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			b := p.datagrams[0]
			var out []byte
			var err error
			if h, _, _ := ogp.DecodeHeader(b); h.Answer {
				a, derr := ogp.DecodeResponse(b, nil)
				if derr != nil {
					t.Fatal(derr)
				}
				out, err = ogp.AppendResponse(nil, a)
			} else {
				q, derr := ogp.DecodeRequest(b)
				if derr != nil {
					t.Fatal(derr)
				}
				out, err = ogp.AppendRequest(nil, q)
			}
			if err != nil || !bytes.Equal(out, b) {
				t.Errorf("re-encoded %x, %v\n         want %x", out, err, b)
			}
		})
	}
}

// Split answers: reassembled in any order, they decode to the answer that
// was split, and splitting it again gives the same parts.
func TestSplitRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    ogp.Response
		max  int
	}{{"1.0x", full(), 150}, {"v0.04", full004(), 100}, {"1.0x at 500", full(), 500}, {"fits", full004(), 1400}} {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := ogp.SplitResponse(tc.a, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				if len(p) > tc.max {
					t.Errorf("part of %d bytes", len(p))
				}
			}
			rev := append([][]byte(nil), parts...)
			sort.Slice(rev, func(i, j int) bool { return i > j })
			joined, err := ogp.Reassemble(nil, rev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ogp.DecodeResponse(joined, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.a
			want.Answer = true
			if len(parts) > 1 {
				want.Split, want.SplitCount = true, uint8(len(parts))
			}
			if !reflect.DeepEqual(normalize(got), normalize(want)) {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
			}
			again, err := ogp.SplitResponse(got, tc.max)
			if err != nil || !reflect.DeepEqual(again, parts) {
				t.Errorf("split again: %v", err)
			}
		})
	}
}

func TestSplitResponseLimits(t *testing.T) {
	if _, err := ogp.SplitResponse(full(), 20); !errors.Is(err, codecs.ErrTooLong) {
		t.Errorf("header larger than the packet: %v", err)
	}
	big := full004()
	for i := 0; i < 300; i++ {
		big.Rules = append(big.Rules, ogp.Rule{Key: []byte("key"), Value: bytes.Repeat([]byte{'v'}, 200)})
	}
	if _, err := ogp.SplitResponse(big, 100); !errors.Is(err, codecs.ErrTooLong) {
		t.Errorf("more than 255 parts: %v", err)
	}
}

func TestReassembleErrors(t *testing.T) {
	parts, err := ogp.SplitResponse(full(), 150)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ogp.SplitResponse(full004(), 100)
	changed := append([]byte(nil), parts[1]...)
	changed[len(changed)-1] ^= 1
	whole, _ := ogp.AppendResponse(nil, full())
	query, _ := ogp.AppendRequest(nil, ogp.NewRequest(ogp.V1))
	tests := []struct {
		name      string
		datagrams [][]byte
		want      error
		layer     string
	}{
		{"none", nil, codecs.ErrIncomplete, ""},
		{"missing", [][]byte{parts[0], parts[2]}, codecs.ErrIncomplete, ""},
		{"other answer", [][]byte{parts[0], other[1]}, codecs.ErrBadValue, "wire 1"},
		{"different duplicate", [][]byte{parts[1], changed}, codecs.ErrBadValue, "wire 1"},
		{"unsplit among parts", [][]byte{parts[0], whole}, codecs.ErrBadValue, "wire 1"},
		{"query among parts", [][]byte{query, parts[0]}, codecs.ErrBadValue, "wire 0"},
		{"bad header", [][]byte{parts[0], {0xff, 0xff}}, codecs.ErrShort, "wire 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ogp.Reassemble(nil, tc.datagrams)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if e := codectest.WantError(t, err, nil, "", -1); e.Layer != tc.layer {
				t.Errorf("layer %q, want %q", e.Layer, tc.layer)
			}
		})
	}
	if b, err := ogp.Reassemble(nil, [][]byte{whole}); err != nil || !bytes.Equal(b, whole) {
		t.Errorf("unsplit answer: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	v004 := func(a ogp.Response) ogp.Response { a.Version = ogp.V004; return a }
	withPlayer := func(v ogp.Version, f ogp.Bits, p ogp.Player) ogp.Response {
		req := ogp.ReqPlayers
		if v == ogp.V004 {
			req = ogp.Req004Players
		}
		return ogp.Response{Header: ogp.Header{Version: v, Type: ogp.TypeDefault}, Requests: req, PlayerFields: f, Players: []ogp.Player{p}}
	}
	answers := []struct {
		name  string
		a     ogp.Response
		field string
	}{
		{"NUL in a name", withPlayer(ogp.V1, ogp.PlayerName, ogp.Player{Name: []byte("a\x00b")}), "players[0].name"},
		{"v0.04 slot past a byte", withPlayer(ogp.V004, ogp.PlayerSlot, ogp.Player{Slot: 300}), "players[0].slot"},
		{"v0.04 team -1", withPlayer(ogp.V004, ogp.PlayerTeam, ogp.Player{Team: -1}), "players[0].team"},
		{"v0.04 frags past 16 bits", withPlayer(ogp.V004, ogp.PlayerFrags, ogp.Player{Frags: 40000}), "players[0].frags"},
		{"bad colours", func() ogp.Response {
			a := withPlayer(ogp.V1, ogp.PlayerName, ogp.Player{Name: []byte("x"), NameColors: ogp.Colors{0x00}})
			a.Requests |= ogp.ReqColoredNames
			return a
		}(), "players[0].name_colors"},
		{"1.0x limit type 16", ogp.Response{Header: ogp.Header{Type: ogp.TypeDefault}, Requests: ogp.ReqLimits,
			Limits: []ogp.Limit{{Type: 16}}}, "limits[0].type"},
		{"v0.04 limit type 128", v004(ogp.Response{Header: ogp.Header{Type: ogp.TypeDefault}, Requests: ogp.Req004Limits,
			Limits: []ogp.Limit{{Type: 128}}}), "limits[0].type"},
		{"error type in v0.04", v004(ogp.Response{Header: ogp.Header{Type: ogp.TypeError}}), "header.type"},
		{"banned type in 1.0x", ogp.Response{Header: ogp.Header{Type: ogp.TypeBanned}}, "header.type"},
		{"padding in v0.04", v004(ogp.Response{Header: ogp.Header{Type: ogp.TypePing, Padding: []byte{1}}}), "header.padding"},
		{"unknown version", ogp.Response{Header: ogp.Header{Version: 7}}, "header.version"},
		{"split number past count", ogp.Response{Header: ogp.Header{Type: ogp.TypePing, Split: true, SplitCount: 2, SplitNo: 2}}, "header.split_packet_no"},
		{"header too long", ogp.Response{Header: ogp.Header{Type: ogp.TypePing, Padding: make([]byte, 300)}}, "header.head_size"},
	}
	for _, tc := range answers {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ogp.AppendResponse(nil, tc.a)
			if e := codectest.WantError(t, err, nil, "", -1); e.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", e.Field, tc.field, err)
			}
		})
	}
	requests := []struct {
		name  string
		q     ogp.Request
		field string
	}{
		{"answer-only type", ogp.Request{Header: ogp.Header{Type: ogp.TypeError}}, "header.type"},
		{"max bytes below 500", ogp.Request{Header: ogp.Header{Type: ogp.TypeDefault, Split: true, MaxBytesPerPacket: 100}}, "header.max_bytes_per_packet"},
		{"v0.04 max bytes 0", ogp.Request{Header: ogp.Header{Version: ogp.V004, Type: ogp.TypeDefault, Split: true}}, "header.max_bytes_per_packet"},
	}
	for _, tc := range requests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ogp.AppendRequest(nil, tc.q)
			if e := codectest.WantError(t, err, nil, "", -1); e.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", e.Field, tc.field, err)
			}
		})
	}
}

// Decoding errors name the field and the offset; hostile counts are
// refused before anything is allocated for them.
func TestDecodeErrors(t *testing.T) {
	const h1 = "ffffffff4f475000 030101 0000" // 1.0x answer header, game id; the body starts at 13
	tests := []struct {
		name   string
		hex    string
		query  bool
		want   error
		field  string
		offset int
	}{
		{"bad magic", "ffffffff4f475001030100", true, codecs.ErrBadMagic, "header.magic", 7},
		{"short magic", "ffff", true, codecs.ErrShort, "header.prefix", 0},
		{"unknown type", "ffffffff4f475000030900", true, codecs.ErrUnknownCode, "header.type", 9},
		{"head size too small", "ffffffff4f475000 040106 aabbcc09 ddeeff11", true, codecs.ErrBadValue, "header.head_size", 8},
		{"answer-only type in a query", "ffffffff4f47500003ff00", true, codecs.ErrBadValue, "header.head_flags", 10},
		{"answer to DecodeRequest", "ffffffff4f47500007ff03efbe371303", true, codecs.ErrNotQuery, "header.head_flags", 10},
		{"query to DecodeResponse", "ffffffff4f475000030100", false, codecs.ErrBadValue, "header.head_flags", 10},
		{"max bytes below 500", "ffffffff4f475000 050108 f301 07000000000000", true, codecs.ErrBadValue, "header.max_bytes_per_packet", 11},
		{"split number past count", "ffffffff4f47500005ff090202 04", false, codecs.ErrBadValue, "header.split_packet_no", 11},
		{"trailing bytes", "ffffffff4f47500007ff03efbe371303 00", false, codecs.ErrTrailing, "", 16},
		{"query trailing bytes", "ffffffff4f475000030100 00000000000000 00", true, codecs.ErrTrailing, "", 18},
		{"short 1.0x query body", "ffffffff4f475000030100 0000", true, codecs.ErrShort, "mod_fields", 13},
		{"team count past the input", h1 + "02 ffffffffff 01 00", false, codecs.ErrShort, "teams[1].name", 21},
		{"fieldless players", h1 + "04 ff00000100 00 000000", false, codecs.ErrTooLong, "player_count", 14},
		{"rule count", h1 + "08 fe0001 0000", false, codecs.ErrShort, "rules[1].key", 19},
		{"limit count", h1 + "20 05 0000", false, codecs.ErrShort, "limits[1].type", 17},
		{"fieldless add-ons", h1 + "10 fe0001 00 00", false, codecs.ErrTooLong, "addon_count", 14},
		{"address length", h1 + "04 01 80808001 ffffffff7f 00", false, codecs.ErrShort, "players[0].address", 24},
		{"colour size", h1 + "8101 04 6100 feffff 00", false, codecs.ErrShort, "server_info.host_name_colors", 21},
		{"colour entry overrun", h1 + "8101 04 6100 02 0092 1122", false, codecs.ErrBadValue, "server_info.host_name_colors[0]", 19},
		{"unterminated string", h1 + "01 01 4f6e", false, codecs.ErrShort, "server_info.game_name", 15},
		{"v0.04 team count", "ffffffff4f475000 0102 0000 01 ffffffffffffff 01 00", false, codecs.ErrShort, "teams[1].name", 22},
		{"v0.04 fieldless teams", "ffffffff4f475000 0102 0000 01 ffffffffffffff 00 00", false, codecs.ErrTooLong, "team_count", 13},
		{"v0.04 player list", "ffffffff4f475000 0102 0000 02 01 04 41", false, codecs.ErrShort, "players[0].name", 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := codectest.Unhex(t, tc.hex)
			var err error
			if tc.query {
				_, err = ogp.DecodeRequest(b)
			} else {
				_, err = ogp.DecodeResponse(b, nil)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if e := codectest.WantError(t, err, nil, "", -1); e.Field != tc.field || e.Offset != tc.offset || e.Protocol != "ogp" {
				t.Errorf("field %q at %d, want %q at %d (%v)", e.Field, e.Offset, tc.field, tc.offset, err)
			}
			m, cerr := (&ogp.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
			if m == nil || (cerr == nil) != (errors.Is(err, codecs.ErrTrailing) || errors.Is(err, codecs.ErrNotQuery) ||
				tc.name == "query to DecodeResponse") {
				t.Errorf("codec: %v", cerr)
			}
		})
	}
}

// A bit array that selects fields with flags no version defines is decoded
// as far as the known flags go, with a warning.
func TestUnknownLayoutFlags(t *testing.T) {
	b := codectest.Unhex(t, "ffffffff4f475000030101 0000 40") // Requests 0.6: not defined
	m, err := (&ogp.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	if err != nil || len(m.Warnings) != 1 || m.Warnings[0] != codecs.WarnUnknownFlags {
		t.Fatalf("warnings %v, %v", m.Warnings, err)
	}
}

// A decoding error keeps what was decoded before it, and only that.
func TestPartial(t *testing.T) {
	b := datagram(t, "v1_answer")
	cut := b[:100] // inside players[0].name "Alice"
	for _, spans := range []bool{false, true} {
		m, err := (&ogp.Codec{}).Decode([][]byte{cut}, codecs.DecodeOptions{Spans: spans})
		if e := codectest.WantError(t, err, nil, "", -1); e.Field != "players[0].name" {
			t.Fatalf("err = %v", err)
		}
		in := m.Info
		if in == nil || in.Name != "My OGP Server" || in.NumPlayers != 3 || len(in.Teams) != 2 || len(in.Players) != 1 ||
			in.Players[0].Name != "" || in.Has&codecs.HasRules != 0 {
			t.Errorf("spans %v: info = %+v", spans, in)
		}
		js := string(codecs.AppendJSON(nil, codecs.ErrorObject(err, m)))
		for _, want := range []string{`"field":"players[0].name"`, `"offset":97`, `"players":[{"flags":["alive"],"slot":0}]`} {
			if !bytes.Contains([]byte(js), []byte(want)) {
				t.Errorf("spans %v: %s lacks %s", spans, js, want)
			}
		}
	}
}

// Decoding into a reused Response does not allocate; a fresh decode
// allocates only its lists.
func TestDecodeAllocs(t *testing.T) {
	b := datagram(t, "v1_answer")
	var a ogp.Response
	if err := a.Decode(b, nil); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { a.Decode(b, nil) }); n != 0 {
		t.Errorf("reused Answer: %v allocs, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { ogp.DecodeResponse(b, nil) }); n > 4 {
		t.Errorf("DecodeResponse: %v allocs, want <= 4 (teams, players, rules, limits)", n)
	}
	var q ogp.Request
	qb := datagram(t, "v1_query")
	if n := testing.AllocsPerRun(100, func() { q.Decode(qb) }); n != 0 {
		t.Errorf("Request.Decode: %v allocs, want 0", n)
	}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf, _ = ogp.AppendResponse(buf[:0], a) }); n != 0 {
		t.Errorf("AppendResponse into a large enough buffer: %v allocs, want 0", n)
	}
	// The message costs about one allocation per string, list and object
	// of the JSON (this answer has about 130 of them), and nothing per byte.
	c := &ogp.Codec{}
	dgs := [][]byte{b}
	if n := testing.AllocsPerRun(50, func() { c.Decode(dgs, codecs.DecodeOptions{}) }); n > 140 {
		t.Errorf("Codec.Decode without spans: %v allocs, want <= 140", n)
	}
}

// normalize returns a copy of v with empty slices made nil, so that values
// compare equal whether a field was decoded as empty or never set.
func normalize[T any](v T) T {
	x := reflect.ValueOf(&v).Elem()
	normalizeValue(x)
	return v
}

func normalizeValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				normalizeValue(v.Index(i))
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			normalizeValue(v.Field(i))
		}
	}
}

// TestDecodeResponseRequest: given a query with a RequestID, an answer
// that echoes another, or none, is an error at the RequestID (or at the
// header flags that say there is none), and the answer is returned too.
func TestDecodeResponseRequest(t *testing.T) {
	a := full()
	b, err := ogp.AppendResponse(nil, a)
	if err != nil {
		t.Fatal(err)
	}
	q := ogp.NewRequest(ogp.V1)
	if _, err := ogp.DecodeResponse(b, &q); err != nil {
		t.Errorf("a query without a RequestID: %v", err)
	}
	q.HasRequestID, q.RequestID = true, a.RequestID
	if _, err := ogp.DecodeResponse(b, &q); err != nil {
		t.Errorf("the query it answers: %v", err)
	}
	q.RequestID++
	got, err := ogp.DecodeResponse(b, &q)
	// 1.0x header: magic (8), HeadSize, Type, HeadFlags (1 byte here), the
	// challenge number (4), then the RequestID.
	codectest.WantError(t, err, codecs.ErrBadValue, "header.request_id", 8+1+1+1+4)
	if string(got.Server.HostName) != string(a.Server.HostName) {
		t.Errorf("the answer is not returned with the error")
	}
	a.HasRequestID = false
	b, _ = ogp.AppendResponse(nil, a)
	_, err = ogp.DecodeResponse(b, &q)
	codectest.WantError(t, err, codecs.ErrBadValue, "header.request_id", 10)
}
