package demo

import (
	"encoding/json"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/mumble"
)

// TestMumbleServer: the emulated server answers a ping with its ident,
// and a truncating one with a cut answer that does not decode.
func TestMumbleServer(t *testing.T) {
	ping, _ := mumble.AppendRequest(nil, mumble.Request{Ident: 0xfeedface})
	now := time.Unix(1_800_000_000, 0)
	out := NewMumble(3, Normal).Respond(ping, mumbleFrom, now)
	if len(out) != 1 {
		t.Fatalf("%d answers", len(out))
	}
	r, err := mumble.DecodeResponse(out[0], nil)
	if err != nil || r.Ident != 0xfeedface || r.Users == 0 || r.Users > r.MaxUsers || r.Version.Major() != 1 {
		t.Fatalf("answer %+v, %v", r, err)
	}
	if got := NewMumble(3, Normal).Respond([]byte("not a ping"), mumbleFrom, now); got != nil {
		t.Errorf("answers a stray datagram: %x", got)
	}
	cut := NewMumble(3, Truncated).Respond(ping, mumbleFrom, now)
	if _, err := mumble.DecodeResponse(cut[0], nil); err == nil {
		t.Error("the truncating server's answer decodes")
	}
}

// TestMumbleGameDigInterop asks the emulated Mumble server with GameDig's
// mumbleping: the version, users, max users and bandwidth must be our
// reading of the same answer, and an answer with the users changed on the
// way must make them differ.
func TestMumbleGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	compare := func(gd gdState, m *codecs.Message) []string {
		in := m.Info
		bw, _ := m.Fields.Get("bandwidth")
		gdBW, _ := gd.Raw["allowedbandwidth"].(float64)
		if gd.Version != in.Version || gd.NumPlayers != in.NumPlayers || gd.MaxPlayers != in.MaxPlayers || int(gdBW) != bw.(int) {
			return []string{"GameDig " + gd.Version + " " + strconv.Itoa(gd.NumPlayers) + "/" + strconv.Itoa(gd.MaxPlayers) +
				" bandwidth " + strconv.Itoa(int(gdBW)) + "; ours " + in.Version + " " + strconv.Itoa(in.NumPlayers) + "/" +
				strconv.Itoa(in.MaxPlayers) + " bandwidth " + strconv.Itoa(bw.(int))}
		}
		return nil
	}
	ask := func(addr string) gdState {
		host, port := hostPort(t, addr)
		var gd gdState
		out := runGameDig(t, node, host, port, "protocol-mumbleping")
		if err := json.Unmarshal(out, &gd); err != nil {
			t.Fatalf("gamedig printed %q: %v", out, err)
		}
		return gd
	}
	decode := func(replies [][]byte) *codecs.Message {
		if len(replies) != 1 {
			t.Fatalf("%d answers", len(replies))
		}
		m, err := (&mumble.Codec{}).Decode(replies, codecs.DecodeOptions{})
		if err != nil {
			t.Fatalf("our decoder: %v", err)
		}
		return m
	}

	addr, conversation := recordingServer(t, NewMumble(3, Normal))
	gd := ask(addr)
	queries, replies := conversation()
	if err := (&mumble.Codec{}).CheckQuery(queries[0]); err != nil {
		t.Errorf("GameDig's ping fails CheckQuery: %v", err)
	}
	m := decode(replies)
	if diffs := compare(gd, m); diffs != nil {
		t.Errorf("GameDig and querylens differ: %v", diffs)
	}

	// Users are bytes 12–15: one more than sent.
	addr, conversation = recordingServer(t, NewMumble(3, Normal))
	p, changed := mutatingProxy(t, addr, func(b []byte) []byte {
		if len(b) >= 16 {
			b[15]++
		}
		return b
	})
	gd = ask(p)
	if changed() == 0 {
		t.Fatal("the proxy changed no answer")
	}
	_, replies = conversation()
	if diffs := compare(gd, decode(replies)); diffs == nil {
		t.Error("GameDig read a changed answer, and the comparison saw no difference")
	}
}

// mumbleFrom is the asker the in-memory tests name: a documentation
// address, never sent to.
var mumbleFrom = netip.MustParseAddrPort("192.0.2.1:1")

// TestMumbleQstatInterop asks the emulated Mumble server with Debian's
// qstat (quakestat -mumble): users, max users and the bandwidth must be our
// reading of the same answer; an answer with the users changed on the way
// must make them differ. qstat's version is not compared: it reads it from
// bytes 4–6, which are the ident it sent (01 02 03), so it says "1.2.3" of
// every server (docs/protocols/mumble.md "Other clients").
func TestMumbleQstatInterop(t *testing.T) {
	qstat := needQstat(t)
	compare := func(qs qstatServer, m *codecs.Message) []string {
		bw, _ := m.Fields.Get("bandwidth")
		qbw := ""
		for _, r := range qs.Rules {
			if r.Name == "allowed_bandwidth" {
				qbw = r.Value
			}
		}
		if qs.NumPlayers != m.Info.NumPlayers || qs.MaxPlayers != m.Info.MaxPlayers || qbw != strconv.Itoa(bw.(int)) {
			return []string{"qstat " + strconv.Itoa(qs.NumPlayers) + "/" + strconv.Itoa(qs.MaxPlayers) + " bandwidth " + qbw +
				"; ours " + strconv.Itoa(m.Info.NumPlayers) + "/" + strconv.Itoa(m.Info.MaxPlayers) + " bandwidth " + strconv.Itoa(bw.(int))}
		}
		return nil
	}
	decode := func(replies [][]byte) *codecs.Message {
		if len(replies) != 1 {
			t.Fatalf("%d answers", len(replies))
		}
		m, err := (&mumble.Codec{}).Decode(replies, codecs.DecodeOptions{})
		if err != nil {
			t.Fatalf("our decoder: %v", err)
		}
		return m
	}
	addr, conversation := recordingServer(t, NewMumble(4, Normal))
	qs, out := runQstatOne(t, qstat, "-xml", "-R", "-mumble", addr)
	queries, replies := conversation()
	if err := (&mumble.Codec{}).CheckQuery(queries[0]); err != nil {
		t.Errorf("qstat's ping fails CheckQuery: %v", err)
	}
	if diffs := compare(qs, decode(replies)); diffs != nil {
		t.Errorf("qstat and querylens differ: %v\n%s", diffs, out)
	}

	addr, conversation = recordingServer(t, NewMumble(4, Normal))
	p, changed := mutatingProxy(t, addr, func(b []byte) []byte {
		if len(b) >= 16 {
			b[15]++
		}
		return b
	})
	qs, _ = runQstatOne(t, qstat, "-xml", "-R", "-mumble", p)
	if changed() == 0 {
		t.Fatal("the proxy changed no answer")
	}
	_, replies = conversation()
	if diffs := compare(qs, decode(replies)); diffs == nil {
		t.Error("qstat read a changed answer, and the comparison saw no difference")
	}
}
