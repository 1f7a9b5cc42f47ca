package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/querylens/querylens/history"
)

// FuzzRecord stores arbitrary samples: each is either refused with an
// *InvalidError naming a field, or stored and read back as Normalize says.
func FuzzRecord(f *testing.F) {
	f.Add("zandronum", "127.0.0.1:10666", uint8(1), int64(1770000000), 3, 1, 16, "MAP01", "name", int64(1500))
	f.Add("", "x", uint8(0), int64(0), -1, 0, 0, "", "", int64(-1))
	f.Add("ogp", "[::1]:1?version=0.04", uint8(2), int64(1770000001), 70000, 5, 1, "\xff\xfe", "\u202e", int64(1<<40))
	s, err := Open(context.Background(), filepath.Join(f.TempDir(), FileName))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, proto, addr string, state uint8, unix int64, players, bots, maxp int, m, name string, rttUS int64) {
		if unix < 0 || unix > 1<<40 || rttUS > 1<<40 || rttUS < -1<<40 {
			return // time.Unix and Duration range, not the store's concern
		}
		sm := history.Sample{Key: history.Key{Protocol: proto, Addr: addr}, At: time.Unix(unix, 0), State: history.State(state),
			Players: players, Bots: bots, MaxPlayers: maxp, Map: m, Name: name, RTT: time.Duration(rttUS) * time.Microsecond}
		ctx := context.Background()
		err := s.Record(ctx, []history.Sample{sm})
		if err != nil {
			var ie *history.InvalidError
			if !errors.As(err, &ie) || ie.Field == "" {
				t.Fatalf("Record(%+v) = %v, want *InvalidError", sm, err)
			}
			return
		}
		got, err := s.Samples(ctx, sm.Key, sm.At, sm.At.Add(time.Second))
		if err != nil || len(got) != 1 {
			t.Fatalf("read back %+v: %d samples, %v", sm, len(got), err)
		}
		want := history.Normalize(sm)
		want.Name = ""
		g := got[0]
		// A sample of that second may have been stored by an earlier input.
		if g.Key != want.Key || !g.At.Equal(want.At) {
			t.Fatalf("got %+v, want %+v", g, want)
		}
	})
}
