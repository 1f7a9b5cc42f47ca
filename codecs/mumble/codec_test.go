package mumble_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
	"github.com/querylens/querylens/codecs/mumble"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(mumble.Protocol)
	if err != nil || c.DefaultPort() != 64738 {
		t.Fatalf("Lookup = %v, %v", c, err)
	}
}

// TestConversation: the ping carries the ident option, the answer
// completes the conversation, and its ident need not match.
func TestConversation(t *testing.T) {
	q, err := (&mumble.Codec{}).NewQuery(map[string]string{"ident": "a1a2a3a4a5a6a7a8"})
	if err != nil {
		t.Fatal(err)
	}
	ping := q.Start()[0]
	if err := (&mumble.Codec{}).CheckQuery(ping); err != nil {
		t.Fatalf("CheckQuery(own ping): %v", err)
	}
	req, err := mumble.DecodeRequest(ping)
	if err != nil || req.Ident != 0xa1a2a3a4a5a6a7a8 {
		t.Fatalf("ping %x: %+v, %v", ping, req, err)
	}
	if _, done, err := q.Feed(make([]byte, 11)); done || err == nil {
		t.Fatalf("an 11-byte datagram: done %v, %v", done, err)
	}
	answer := mumble.AppendResponse(nil, mumble.Response{Version: mumble.NewVersion(1, 5, 255), Ident: 42, Users: 3, MaxUsers: 50, Bandwidth: 558000})
	if _, done, err := q.Feed(answer); !done || err != nil {
		t.Fatalf("Feed(answer) = %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Info
	if in.Version != "1.5.255" || in.NumPlayers != 3 || in.MaxPlayers != 50 || len(m.Warnings) != 0 {
		t.Errorf("info %+v, warnings %v", in, m.Warnings)
	}
	m, _ = (&mumble.Codec{}).Decode([][]byte{answer}, codecs.DecodeOptions{Query: ping})
	if len(m.Warnings) != 1 || m.Warnings[0] != mumble.WarnIdent {
		t.Errorf("told the ping, warnings %v; want %q", m.Warnings, mumble.WarnIdent)
	}

	// A cut answer ends the conversation; Result names the field.
	q, _ = (&mumble.Codec{}).NewQuery(nil)
	if _, done, err := q.Feed(answer[:16]); !done || err == nil {
		t.Fatalf("Feed(cut answer) = %v, %v", done, err)
	}
	_, err = q.Result(codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrShort, "max_users", 16)
}

func TestBadOptions(t *testing.T) {
	for _, v := range []string{"", "01", "zz02030405060708", "010203040506070809"} {
		_, err := (&mumble.Codec{}).NewQuery(map[string]string{"ident": v})
		codectest.WantError(t, err, codecs.ErrBadValue, "options.ident", -1)
	}
}

func TestCheckQuery(t *testing.T) {
	c := &mumble.Codec{}
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"ping", make([]byte, 12), true},
		{"short", make([]byte, 11), false},
		{"long", make([]byte, 13), false},
		{"type", []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.CheckQuery(tc.b); (err == nil) != tc.ok {
				t.Errorf("CheckQuery = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestQueryKey(t *testing.T) {
	var keys [2][]byte
	for i, id := range []string{"0000000000000001", "ffffffffffffffff"} {
		q, _ := (&mumble.Codec{}).NewQuery(map[string]string{"ident": id})
		keys[i] = codecs.QueryKey(mumble.Protocol, q.Start()[0])
	}
	if string(keys[0]) != string(keys[1]) {
		t.Errorf("keys differ: %x %x", keys[0], keys[1])
	}
}
