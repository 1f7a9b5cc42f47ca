package demo

import (
	"net/netip"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/zandronum"
)

var client = netip.MustParseAddrPort("127.0.0.1:40000")

func fullRequest(t *testing.T, segmented bool) []byte {
	t.Helper()
	q, err := zandronum.AppendRequest(nil, zandronum.Request{Flags: zandronum.SQF_ALL, Flags2: zandronum.SQF2_ALL, Time: 1234, Segmented: segmented})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func decodeAll(t *testing.T, dgs [][]byte) *codecs.Message {
	t.Helper()
	c, err := codecs.Lookup("zandronum")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Decode(dgs, codecs.DecodeOptions{})
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return m
}

func TestZandronumServerAnswers(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for i := 0; i < 16; i++ {
		h, name := newZandronumServer(1, i, Normal)
		for _, seg := range []bool{false, true} {
			out := h.Respond(fullRequest(t, seg), client, now)
			if len(out) == 0 {
				t.Fatalf("server %d segmented=%v: no reply", i, seg)
			}
			if !seg && len(out) != 1 {
				t.Fatalf("server %d: %d datagrams for a plain reply", i, len(out))
			}
			if seg && i%4 == 1 && len(out) < 2 {
				t.Errorf("server %d: small sv_maxpacketsize but %d segment(s)", i, len(out))
			}
			m := decodeAll(t, out)
			if m.Kind != codecs.KindResponse || m.Info == nil || m.Info.Name != name {
				t.Fatalf("server %d: kind %s info %+v, want name %q", i, m.Kind, m.Info, name)
			}
			if m.Info.NumPlayers != len(m.Info.Players) {
				t.Errorf("server %d: num_players %d but %d players", i, m.Info.NumPlayers, len(m.Info.Players))
			}
		}
	}
}

func TestZandronumServerPlayersChangeOverTime(t *testing.T) {
	h, _ := newZandronumServer(3, 2, Normal)
	seen := map[int]bool{}
	for k := 0; k < 20; k++ {
		out := h.Respond(fullRequest(t, false), client, time.Unix(1_700_000_000+int64(k)*20, 0))
		seen[decodeAll(t, out).Info.NumPlayers] = true
	}
	if len(seen) < 3 {
		t.Errorf("player counts over 20 epochs: %v; want players joining and leaving", seen)
	}
}

func TestZandronumServerBehaviours(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	t.Run("rate limit", func(t *testing.T) {
		h, _ := newZandronumServer(1, 0, RateLimit)
		if m := decodeAll(t, h.Respond(fullRequest(t, false), client, now)); m.Kind != codecs.KindResponse {
			t.Fatalf("first query: %s", m.Kind)
		}
		m := decodeAll(t, h.Respond(fullRequest(t, false), client, now.Add(3*time.Second)))
		if m.Kind != codecs.KindDenied || m.Denied != codecs.DeniedRateLimited {
			t.Fatalf("second query within 10 s: kind %s denied %q", m.Kind, m.Denied)
		}
		other := netip.MustParseAddrPort("127.0.0.2:40000")
		if m := decodeAll(t, h.Respond(fullRequest(t, false), other, now.Add(3*time.Second))); m.Kind != codecs.KindResponse {
			t.Fatalf("another IP: %s", m.Kind)
		}
		if m := decodeAll(t, h.Respond(fullRequest(t, false), client, now.Add(11*time.Second))); m.Kind != codecs.KindResponse {
			t.Fatalf("after 10 s: %s", m.Kind)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		h, _ := newZandronumServer(1, 0, Truncated)
		c, _ := codecs.Lookup("zandronum")
		if _, err := c.Decode(h.Respond(fullRequest(t, false), client, now), codecs.DecodeOptions{}); err == nil {
			t.Fatal("truncated reply decoded without error")
		}
	})
	t.Run("garbage ignored", func(t *testing.T) {
		h, _ := newZandronumServer(1, 0, Normal)
		if out := h.Respond([]byte{0xff, 1, 2, 3}, client, now); out != nil {
			t.Fatalf("answered garbage with %x", out)
		}
	})
}

func TestZandronumMaster(t *testing.T) {
	var listed []netip.AddrPort
	for i := 0; i < 700; i++ { // enough for several list packets
		listed = append(listed, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, byte(i >> 8), byte(i)}), uint16(10666+i)))
	}
	m := newZandronumMaster(listed)
	now := time.Unix(1_700_000_000, 0)
	out := m.Respond(zandronum.AppendMasterRequest(nil), client, now)
	if len(out) < 2 {
		t.Fatalf("%d list packets for 700 servers", len(out))
	}
	// Deliver out of order.
	out[0], out[len(out)-1] = out[len(out)-1], out[0]
	msg := decodeAll(t, out)
	if msg.Kind != codecs.KindMasterList || len(msg.Servers) != len(listed) {
		t.Fatalf("kind %s with %d servers, want %d", msg.Kind, len(msg.Servers), len(listed))
	}
	again := decodeAll(t, m.Respond(zandronum.AppendMasterRequest(nil), client, now.Add(time.Second)))
	if again.Kind != codecs.KindMasterDenied || again.Denied != codecs.DeniedRateLimited {
		t.Fatalf("second request: %s %s", again.Kind, again.Denied)
	}
	if out := m.Respond(zandronum.AppendMasterRequest(nil), client, now.Add(2*time.Second)); out != nil {
		t.Fatal("answered within the 3 s silent window")
	}
	if out := m.Respond(zandronum.AppendMasterRequest(nil), client, now.Add(11*time.Second)); len(out) < 2 {
		t.Fatal("no list after 10 s")
	}
}
