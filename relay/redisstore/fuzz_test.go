package redisstore

import (
	"strings"
	"testing"

	"github.com/querylens/querylens/relay/shared"
)

// FuzzAddEntry feeds stream entries as Redis would return them (a flat
// field/value list, NUL-separated here) to the decoder: it must never
// panic, and a reply entry must keep its bytes.
func FuzzAddEntry(f *testing.F) {
	f.Add("1-0", "s\x00")                          // the claim
	f.Add("1-1", "d\x00\x00\x01\xff\x00r\x001234") // a reply with its RTT
	f.Add("1-2", "e\x001\x00t\x0010000")           // the end, cached 10 s
	f.Add("1-3", "e\x00x")                         // a bad status
	f.Add("1-4", "q\x00?")                         // an unknown field
	f.Add("1-5", "")                               // no fields
	f.Fuzz(func(t *testing.T, id, flat string) {
		kv := strings.Split(flat, "\x00")
		var e shared.Entry
		err := addEntry(&e, id, kv)
		if err == nil && e.Cursor != id {
			t.Fatalf("cursor %q after entry %q", e.Cursor, id)
		}
		if err == nil && len(kv) >= 2 && kv[0] == "d" && string(e.Replies[0].Data) != kv[1] {
			t.Fatalf("reply %q decoded as %q", kv[1], e.Replies[0].Data)
		}
	})
}
