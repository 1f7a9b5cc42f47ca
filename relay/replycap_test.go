package relay

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// The relay's A2S cap is the codec's: a conversation the relay lets
// through is one the codec reads whole.
func TestReplyCapsMatchCodecs(t *testing.T) {
	got := DefaultReplyCaps[a2s.Protocol]
	if want := (ReplyCap{Bytes: a2s.MaxBytes, Datagrams: a2s.MaxDatagrams}); got != want {
		t.Fatalf("DefaultReplyCaps[%q] = %+v, want the codec's %+v", a2s.Protocol, got, want)
	}
	c := Config{}.withDefaults()
	if rc := c.replyCap("zandronum"); rc != (ReplyCap{Bytes: DefaultMaxReplyBytes, Datagrams: DefaultMaxReplyDatagrams}) {
		t.Fatalf("a protocol without an entry gets %+v, want the global caps", rc)
	}
	c = Config{ReplyCaps: map[string]ReplyCap{"x": {Datagrams: 3}}}.withDefaults()
	if rc := c.replyCap("x"); rc != (ReplyCap{Bytes: DefaultMaxReplyBytes, Datagrams: 3}) {
		t.Fatalf("a zero field of an entry gives %+v, want the global bytes", rc)
	}
	if rc := c.replyCap(a2s.Protocol); rc.Bytes != DefaultMaxReplyBytes {
		t.Fatalf("a table without a2s still caps it at %+v", rc)
	}
	for _, bad := range []map[string]ReplyCap{{"a2s": {Bytes: -1}}, {"a2s": {Datagrams: -1}}, {"a2s": {Datagrams: 1 << 16}}} {
		if err := (Config{ReplyCaps: bad}).Validate(); err == nil || !strings.Contains(err.Error(), "ReplyCaps[a2s]") {
			t.Errorf("ReplyCaps %v: got %v, want an error naming ReplyCaps[a2s]", bad, err)
		}
	}
}

// rulesSplit is an A2S rules reply of at most size bytes of payload (each
// rule is 1,011 bytes after the 7-byte head), split into parts datagrams
// (the Source form with the size field, 12 bytes of header each).
func rulesSplit(t *testing.T, size, parts int) [][]byte {
	t.Helper()
	var rs a2s.Rules
	for i := 0; 7+(i+1)*1011 <= size; i++ {
		rs.Rules = append(rs.Rules, a2s.Rule{Name: "rule_" + strconv.Itoa(1000+i), Value: strings.Repeat("v", 1000)})
	}
	rs.Count = uint16(len(rs.Rules))
	msg, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeRules, Rules: &rs})
	if err != nil {
		t.Fatal(err)
	}
	dgs, err := a2s.SplitResponse(msg, 7, a2s.SplitSource, (len(msg)+parts-1)/parts)
	if err != nil {
		t.Fatal(err)
	}
	if len(dgs) != parts {
		t.Fatalf("split into %d datagrams, want %d", len(dgs), parts)
	}
	return dgs
}

func wireBytes(dgs [][]byte) int {
	n := 0
	for _, d := range dgs {
		n += len(d)
	}
	return n
}

// TestReplyCapPerProtocol checks the per-protocol table end to end: an A2S
// rules reply of 90 KiB in 64 datagrams passes whole and decodes, while
// the same bytes under another protocol stop at 64 KiB; whatever passes a
// cap is dropped, counted, and ends the exchange with END byte-cap, and a
// reply that fills a cap exactly is not cut.
func TestReplyCapPerProtocol(t *testing.T) {
	ctx := testCtx(t, 30*time.Second)
	big := rulesSplit(t, 90<<10-64*12, 64) // 90 KiB on the wire with the part headers
	if n := wireBytes(big); n <= DefaultMaxReplyBytes || n > 90<<10 {
		t.Fatalf("the A2S reply is %d bytes on the wire, want 64 KiB < n <= 90 KiB", n)
	}
	tooMany := rulesSplit(t, 40<<10, 70) // past 64 datagrams, within 96 KiB
	tooBig := rulesSplit(t, 100<<10, 60) // past 96 KiB, within 64 datagrams
	smallParts := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = append([]byte("RA"), bytes.Repeat([]byte{'x'}, 98)...)
		}
		return out
	}

	a2sQuery := func(challenge uint32) []byte {
		q, err := a2s.AppendRequest(nil, a2s.Request{Type: a2s.TypeRulesRequest, HasChallenge: true, Challenge: challenge})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	for _, tc := range []struct {
		name    string
		proto   string
		reply   [][]byte
		reason  wire.EndReason
		replies int
		drops   float64
	}{
		{"a2s 90 KiB in 64 datagrams passes", a2s.Protocol, big, wire.EndWindow, 64, 0},
		{"a2s past 64 datagrams is capped", a2s.Protocol, tooMany, wire.EndByteCap, 64, 1},
		{"a2s past 96 KiB is capped", a2s.Protocol, tooBig, wire.EndByteCap, len(tooBig) * (96 << 10) / wireBytes(tooBig), 1},
		{"another protocol stops at 64 KiB", testProto, big, wire.EndByteCap, len(big) * (64 << 10) / wireBytes(big), 1},
		{"another protocol stops at 64 datagrams", testProto, smallParts(70), wire.EndByteCap, 64, 1},
		{"64 datagrams exactly are not cut", testProto, smallParts(64), wire.EndWindow, 64, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newResponder(t, func([]byte) [][]byte { return tc.reply })
			cfg := testConfig()
			f := newRelay(t, cfg)
			// Loopback may drop a burst under load: ask again (a new
			// datagram, so not from the cache) when fewer came back than
			// the cap lets through.
			var replies []wire.Frame
			var final wire.Frame
			for attempt := uint32(1); attempt <= 3; attempt++ {
				c := dialRaw(t, ctx, f.url)
				d := []byte("RQcap" + strconv.Itoa(int(attempt)))
				if tc.proto == a2s.Protocol {
					d = a2sQuery(attempt)
				}
				c.sendRaw(ctx, wire.AppendQuery(nil, attempt, tc.proto, r.addr, d))
				replies, final = c.collect(ctx, attempt)
				if len(replies) >= tc.replies {
					break
				}
			}
			wantEnd(t, final, tc.reason, tc.replies)
			if got := f.metric(`querylens_relay_drops_total{reason="reply-cap"}`); got != tc.drops {
				t.Errorf("reply-cap drops %v, want %v", got, tc.drops)
			}
			if tc.proto != a2s.Protocol {
				return
			}
			dgs := make([][]byte, len(replies))
			for i, fr := range replies {
				dgs[i] = append([]byte(nil), fr.Datagram...)
			}
			m, err := (&a2s.Codec{}).Decode(dgs, codecs.DecodeOptions{})
			switch {
			case tc.reason == wire.EndWindow:
				if err != nil || m.Info == nil || len(m.Info.Rules) < 80 {
					t.Fatalf("the reply that passed does not decode whole: %v", err)
				}
			case err == nil:
				t.Fatal("a capped split reply decoded without an error")
			default:
				var e *codecs.Error
				if !errors.As(err, &e) || !errors.Is(err, codecs.ErrIncomplete) {
					t.Fatalf("a capped split reply: %v, want a codecs.Error wrapping ErrIncomplete", err)
				}
			}
		})
	}
}

// TestExchangeCapped: both Exchangers (in process and over a WebSocket)
// report a reply the relay cut at its cap, and only such a reply.
func TestExchangeCapped(t *testing.T) {
	ctx := testCtx(t, 20*time.Second)
	flood := func(n int) func([]byte) [][]byte {
		return func([]byte) [][]byte {
			out := make([][]byte, n)
			for i := range out {
				out[i] = []byte("RA" + strconv.Itoa(i))
			}
			return out
		}
	}
	f := newRelay(t, testConfig())
	cl, err := Dial(ctx, f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	for _, tc := range []struct {
		name   string
		n      int
		capped bool
	}{
		{"past the cap", 70, true},
		{"within it", 10, false},
	} {
		for _, ex := range []struct {
			name string
			x    interface {
				Exchange(context.Context, string, string, codecs.Query) (netquery.Result, error)
			}
		}{{"in process", f.srv}, {"client", cl}} {
			t.Run(tc.name+" "+ex.name, func(t *testing.T) {
				r := newResponder(t, flood(tc.n))
				res, err := ex.x.Exchange(ctx, testProto, r.addr, &testQuery{tag: tc.name + ex.name, parts: 1000})
				if err != nil {
					t.Fatal(err)
				}
				if res.Capped != tc.capped || res.Done {
					t.Fatalf("got %+v, want Capped %v and not done", res, tc.capped)
				}
				if tc.capped && res.Received != DefaultMaxReplyDatagrams {
					t.Fatalf("received %d, want the cap's %d", res.Received, DefaultMaxReplyDatagrams)
				}
			})
		}
	}
}
