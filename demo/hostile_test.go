package demo

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake2"
)

// converse runs a whole conversation of protocol's Query (with opts)
// against h in memory and returns its result.
func converse(t *testing.T, protocol string, opts map[string]string, h Handler, now time.Time) (*codecs.Message, error) {
	t.Helper()
	c, err := codecs.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		t.Fatal(err)
	}
	from := netip.MustParseAddrPort("192.0.2.1:1")
	send := q.Start()
	for round := 0; round < 10 && len(send) > 0; round++ {
		var next [][]byte
		for _, d := range send {
			for _, r := range h.Respond(d, from, now) {
				more, done, err := q.Feed(r)
				if err != nil {
					return nil, err
				}
				next = append(next, more...)
				if done {
					return q.Result(codecs.DecodeOptions{})
				}
			}
		}
		send = next
	}
	return q.Result(codecs.DecodeOptions{})
}

// recorder keeps every datagram its handler sends.
type recorder struct {
	h    Handler
	sent [][]byte
}

func (r *recorder) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	out := r.h.Respond(q, from, now)
	r.sent = append(r.sent, out...)
	return out
}

// find returns the first datagram sent that starts with prefix.
func (r *recorder) find(t *testing.T, prefix string) []byte {
	t.Helper()
	for _, d := range r.sent {
		if strings.HasPrefix(string(d), prefix) {
			return d
		}
	}
	t.Fatalf("no datagram starting %q among %d", prefix, len(r.sent))
	return nil
}

// TestHostile runs a whole conversation against each hostile server and
// checks that the decoder refuses the answer naming the field and the
// offset the server broke, and keeps what decoded before it.
func TestHostile(t *testing.T) {
	now := time.Unix(1_780_000_000, 0)
	for _, tc := range []struct {
		proto    string
		b        Behavior
		h        Handler
		sentinel error
		// want gives the field and offset expected, from what was sent.
		want func(t *testing.T, r *recorder) (string, int)
	}{
		{"a2s", BadLength, NewA2S(1, A2SConfig{Compress: true}, Normal), codecs.ErrBadValue,
			func(*testing.T, *recorder) (string, int) { return "decompressed_size", 12 }},
		{"a2s", BadCount, NewA2S(1, A2SConfig{}, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				d := r.find(t, "\xff\xff\xff\xffD")
				// The last entry counted lacks two bytes of its
				// duration: it fails where the duration starts.
				return "players[" + strconv.Itoa(int(d[5])-1) + "].duration", len(d) - 2
			}},
		{"a2s", Endless, NewA2S(1, A2SConfig{}, Normal), codecs.ErrShort,
			func(*testing.T, *recorder) (string, int) { return "name", 6 }},
		{"quake3", Endless, NewQuake3(1, Quake3IOQ3, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				return "vars", len(r.find(t, "\xff\xff\xff\xffstatusResponse"))
			}},
		{"quake2", Endless, NewQuake2(1, quake2.Quake2, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				return "vars", len(r.find(t, "\xff\xff\xff\xffprint"))
			}},
		{"quakeworld", Endless, NewQuake2(1, quake2.QuakeWorld, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				return "vars", len(r.find(t, "\xff\xff\xff\xffn")) - 1 // the NUL
			}},
		{"gamespy1", Endless, NewGameSpy1(1, GameSpy1UT99, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				d := r.find(t, "\\")
				return "key", strings.LastIndex(string(d), `\player_99`)
			}},
		{"gamespy3", BadCount, NewGameSpy3(1, GameSpy3UT3, Normal), codecs.ErrIncomplete,
			func(*testing.T, *recorder) (string, int) { return "packets", 0 }},
		{"ase", BadLength, NewASE(1, ASEMTA, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) {
				d := r.find(t, "EYE1")
				return "name", len(d) - 5 // the length byte of the player added at the end
			}},
		{"ase", Endless, NewASE(1, ASEFarCry, Normal), codecs.ErrShort,
			func(t *testing.T, r *recorder) (string, int) { return "rules_end", len(r.find(t, "EYE1")) }},
	} {
		t.Run(tc.proto+" "+tc.b.String(), func(t *testing.T) {
			rec := &recorder{h: Hostile(tc.proto, tc.b, tc.h)}
			m, err := converse(t, tc.proto, nil, rec, now)
			field, off := tc.want(t, rec)
			e, ok := errors.AsType[*codecs.Error](err)
			if !ok {
				t.Fatalf("got %v, want a *codecs.Error", err)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("got %v, want one wrapping %v", err, tc.sentinel)
			}
			if !strings.HasSuffix(e.Field, field) || e.Offset != off {
				t.Errorf("got field %q at offset %d (%v), want %q at %d", e.Field, e.Offset, err, field, off)
			}
			if tc.proto == "a2s" && tc.b != Endless && (m == nil || m.Info == nil || m.Info.Name == "") {
				t.Errorf("the info before the broken reply is lost: %+v", m)
			}
		})
	}
}

// TestDoom3HostileAlwaysBroken checks the demo's hostile id Tech 4 servers
// (Start's, with Start's seeds) at every tenth second of a day: each
// reply must be refused naming a field, whoever is in the game then. A
// server whose players all left once sent a well-formed reply, as its
// spoiling needs a player.
func TestDoom3HostileAlwaysBroken(t *testing.T) {
	const seed = 7 // TestStartServesEveryTarget's
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	n := 0
	for i, o := range demoServers() {
		if o.protocol != "doom3" || !o.b.Hostile() {
			continue
		}
		n++
		h := o.h(seed+int64(i)*7919, o.b) // as Start seeds its servers
		for k := 0; k < 86400; k += 10 {
			now := start.Add(time.Duration(k) * time.Second)
			m, err := converse(t, o.protocol, o.opts, h, now)
			if e, ok := errors.AsType[*codecs.Error](err); !ok || e.Field == "" || m == nil {
				t.Fatalf("doom3 %s (server %d) at %v: %v, want a *codecs.Error naming a field", o.b, i, now, err)
			}
		}
	}
	if n != 2 {
		t.Fatalf("the demo has %d hostile doom3 servers, want 2", n)
	}
}
