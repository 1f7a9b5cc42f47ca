package codecs_test

import (
	"bytes"
	"testing"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/codecs/ogp"
)

// TestQueryKey checks that queries differing only in their echo fields get
// the same key in every protocol, and different questions different keys.
func TestQueryKey(t *testing.T) {
	for _, c := range codecs.Protocols() {
		t.Run(c.Name(), func(t *testing.T) {
			q1, err := c.NewQuery(nil)
			if err != nil {
				t.Fatal(err)
			}
			a := q1.Start()[0]
			if err := c.CheckQuery(a); err != nil {
				t.Fatalf("default query fails CheckQuery: %v", err)
			}
			if _, ok := c.(codecs.QueryKeyer); !ok {
				t.Fatalf("%s does not implement QueryKeyer", c.Name())
			}
			key := codecs.QueryKey(c.Name(), a)
			if len(key) == 0 {
				t.Fatal("empty key for a valid query")
			}
			if got := codecs.QueryKey(c.Name(), []byte("not a query")); !bytes.Equal(got, []byte("not a query")) {
				t.Errorf("invalid query key = %x, want the datagram itself", got)
			}
		})
	}
	if got := codecs.QueryKey("no-such-protocol", []byte{1, 2}); !bytes.Equal(got, []byte{1, 2}) {
		t.Errorf("unknown protocol key = %x", got)
	}
}

// TestQueryKeyIgnoresEcho builds two queries per protocol that differ only
// in an echo field and checks they share a key.
func TestQueryKeyIgnoresEcho(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		opts     [2]map[string]string
	}{
		{"zandronum", [2]map[string]string{{"time": "1"}, {"time": "99999"}}},
		{"gamespy2", [2]map[string]string{{"id": "00000001"}, {"id": "deadbeef"}}},
		{"bloodmasters", [2]map[string]string{{"token": "1"}, {"token": "77777"}}},
		{"samp", [2]map[string]string{{"ip": "127.0.0.1", "port": "7777"}, {"ip": "203.0.113.9", "port": "7778"}}},
		{"vcmp", [2]map[string]string{{"ip": "127.0.0.1"}, {"ip": "203.0.113.9"}}},
		{"mumble", [2]map[string]string{{"ident": "0000000000000001"}, {"ident": "a1a2a3a4a5a6a7a8"}}},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			c, err := codecs.Lookup(tc.protocol)
			if err != nil {
				t.Fatal(err) // every protocol is registered by codecs/all
			}
			var keys, raws [2][]byte
			for i, o := range tc.opts {
				q, err := c.NewQuery(o)
				if err != nil {
					t.Fatal(err)
				}
				raws[i] = q.Start()[0]
				keys[i] = codecs.QueryKey(tc.protocol, raws[i])
			}
			if bytes.Equal(raws[0], raws[1]) {
				t.Fatalf("queries are identical (%x); the option did not change the echo field", raws[0])
			}
			if !bytes.Equal(keys[0], keys[1]) {
				t.Errorf("keys differ: %x vs %x", keys[0], keys[1])
			}
		})
	}
}

func TestOGPQueryKeyIgnoresRequestID(t *testing.T) {
	var keys [2][]byte
	for i, id := range []uint32{1, 4242} {
		q := ogp.NewRequest(ogp.V1)
		q.Header.HasChallenge, q.Header.Challenge = true, 0x1337
		q.Header.HasRequestID, q.Header.RequestID = true, id
		b, err := ogp.AppendRequest(nil, q)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = codecs.QueryKey("ogp", b)
	}
	if !bytes.Equal(keys[0], keys[1]) {
		t.Errorf("keys differ: %x vs %x", keys[0], keys[1])
	}
}
