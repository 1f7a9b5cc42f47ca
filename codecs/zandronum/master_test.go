package zandronum

import (
	"encoding/binary"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

// masterPackets is the master's own packing (masterserver/main.cpp): its
// size accounting starts at 6 in the first packet and at 5 in later ones,
// and a block joins a packet while that count stays within 1023. It
// returns the number of blocks in each packet.
func masterPackets(blockSizes []int) []int {
	var out []int
	size, n := 6, 0
	for _, b := range blockSizes {
		if size+b > 1023 {
			out = append(out, n)
			size, n = 5, 0
		}
		size += b
		n++
	}
	return append(out, n)
}

func TestMasterListPacking(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ips, ports int
		packets    int
	}{
		{"empty", 0, 1, 1},
		{"one server", 1, 1, 1},
		{"145 single servers fill one packet", 145, 1, 1},
		{"146 single servers need two", 146, 1, 2},
		{"single servers, many packets", 1000, 1, 7},
		{"four ports per IP", 170, 4, 3},
		{"ten ports per IP", 100, 10, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers := multiServers(tc.ips, tc.ports)
			ps := AppendMasterListPayloads(nil, servers)
			equal(t, "packets", tc.packets, len(ps))
			var blocks []int
			for range tc.ips {
				blocks = append(blocks, 5+2*tc.ports)
			}
			var got []int
			for i, p := range ps {
				if len(p) > maxListPacket {
					t.Errorf("packet %d is %d bytes", i, len(p))
				}
				equal(t, "number", byte(i), p[4])
				n := 0
				for j := 6; p[j] != 0; j += 5 + 2*int(p[j]) {
					n++
				}
				got = append(got, n)
			}
			// Where the master's packets stay within 1023 bytes (always,
			// with one port per IP), the split is the master's.
			if tc.ports == 1 && tc.ips > 0 {
				equal(t, "blocks per packet", masterPackets(blocks), got)
			}
			l, err := DecodeMasterListPayloads(ps)
			noErr(t, "decode", err)
			if len(servers) == 0 {
				servers = []Addr{}
			}
			equal(t, "servers", servers, l.Servers)
			equal(t, "complete", true, l.Complete)
		})
	}
	t.Run("more than 255 ports on one IP", func(t *testing.T) {
		var servers []Addr
		for i := range 300 {
			servers = append(servers, Addr{IP: [4]byte{10, 0, 0, 1}, Port: uint16(i)})
		}
		ps := AppendMasterListPayloads(nil, servers)
		l, err := DecodeMasterListPayloads(ps)
		noErr(t, "decode", err)
		equal(t, "servers", servers, l.Servers)
	})
}

func TestMasterListOrder(t *testing.T) {
	servers := multiServers(400, 1)
	ps := AppendMasterList(nil, servers)
	if len(ps) != 3 {
		t.Fatalf("%d packets", len(ps))
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		l, err := DecodeMasterList(permute(ps, order...))
		noErr(t, "DecodeMasterList", err)
		equal(t, "servers", servers, l.Servers)
		equal(t, "packets", []MasterPacket{{0, false, 145}, {1, false, 145}, {2, true, 110}}, l.Packets)
	}
}

func TestMasterListErrors(t *testing.T) {
	ps := AppendMasterListPayloads(nil, multiServers(300, 1))
	if len(ps) != 3 {
		t.Fatalf("%d packets", len(ps))
	}
	single := AppendMasterListPayloads(nil, multiServers(2, 2))[0]
	renumber := func(p []byte, n byte) []byte {
		q := append([]byte(nil), p...)
		q[4] = n
		return q
	}
	withEnd := func(p []byte, end byte) []byte {
		q := append([]byte(nil), p...)
		q[len(q)-1] = end
		return q
	}
	for _, tc := range []struct {
		name     string
		in       [][]byte
		sentinel error
		field    string
		layer    string
	}{
		{"packet missing", [][]byte{ps[0], ps[2]}, codecs.ErrIncomplete, "packets", ""},
		{"end missing", [][]byte{ps[1], ps[0]}, codecs.ErrIncomplete, "packets", ""},
		{"packet twice", [][]byte{ps[0], ps[1], ps[0]}, codecs.ErrBadValue, "packet_number", "payload 2"},
		{"two ends", [][]byte{withEnd(ps[0], 2), ps[1], ps[2]}, codecs.ErrBadValue, "end", "payload 2"},
		{"packet after the end", [][]byte{ps[0], ps[1], ps[2], renumber(ps[1], 3)}, codecs.ErrBadValue, "packet_number", "payload 3"},
		{"bad end byte", [][]byte{withEnd(single, 9)}, codecs.ErrBadValue, "end", "payload"},
		{"no server block marker", [][]byte{codectest.Unhex(t, "06000000 00 09 00 02")}, codecs.ErrBadValue, "server_block", "payload"},
		{"block cut", [][]byte{codectest.Unhex(t, "06000000 00 08 03 01020304 aa29")}, codecs.ErrShort, "blocks[0].ports[1]", "payload"},
		{"255 ports announced", [][]byte{codectest.Unhex(t, "06000000 00 08 ff 01020304 aa29 ab29")}, codecs.ErrShort, "blocks[0].ports[2]", "payload"},
		{"unknown code", [][]byte{codectest.Unhex(t, "09000000")}, codecs.ErrUnknownCode, "response", "payload"},
		{"refusal among packets", [][]byte{ps[0], codectest.Unhex(t, "03000000")}, codecs.ErrBadValue, "response", "payload 1"},
		{"legacy entry cut", [][]byte{codectest.Unhex(t, "00000000 01 01020304")}, codecs.ErrShort, "servers[0].port", "payload"},
		{"legacy bad marker", [][]byte{codectest.Unhex(t, "00000000 05")}, codecs.ErrBadValue, "end", "payload"},
		{"legacy without end", [][]byte{codectest.Unhex(t, "00000000 01 01020304 aa29")}, codecs.ErrShort, "end", "payload"},
		{"short code", [][]byte{codectest.Unhex(t, "0600")}, codecs.ErrShort, "response", "payload"},
		{"nothing", nil, codecs.ErrIncomplete, "packets", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := DecodeMasterListPayloads(tc.in)
			codecErr(t, "DecodeMasterListPayloads", err, tc.sentinel, tc.field, tc.layer)
			if l.Complete {
				t.Error("a failed list is complete")
			}
		})
	}
	t.Run("partial servers kept", func(t *testing.T) {
		l, err := DecodeMasterListPayloads([][]byte{ps[0], ps[2]})
		codecErr(t, "decode", err, codecs.ErrIncomplete, "packets", "")
		equal(t, "servers of the packets held", 145+10, len(l.Servers))
	})
}

func TestMasterReplies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     []byte
		kind   codecs.Kind
		denied string
		n      int
	}{
		{"banned", AppendMasterDenied(nil, MasterBanned), codecs.KindMasterDenied, codecs.DeniedBanned, 0},
		{"too soon", AppendMasterDenied(nil, MasterIgnored), codecs.KindMasterDenied, codecs.DeniedRateLimited, 0},
		{"wrong version", AppendMasterDenied(nil, MasterWrongVersion), codecs.KindMasterDenied, codecs.DeniedWrongVersion, 0},
		{"legacy list", AppendLegacyMasterList(nil, multiServers(3, 2)), codecs.KindMasterList, "", 6},
		{"legacy empty", AppendLegacyMasterList(nil, nil), codecs.KindMasterList, "", 0},
		{"empty list", AppendMasterList(nil, nil)[0], codecs.KindMasterList, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&Codec{}).Decode([][]byte{tc.in}, codecs.DecodeOptions{})
			noErr(t, "Decode", err)
			equal(t, "kind", tc.kind, m.Kind)
			equal(t, "denied", tc.denied, m.Denied)
			equal(t, "servers", tc.n, len(m.Servers))
			if tc.kind == codecs.KindMasterList && m.Servers == nil {
				t.Error("servers is nil")
			}
		})
	}
}

func TestMasterRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload string
		want    MasterRequest
		err     error
	}{
		{"current", "7c5d5600 0200", MasterRequest{MasterChallenge, 2}, nil},
		{"other version", "7c5d5600 0300", MasterRequest{MasterChallenge, 3}, nil},
		{"legacy", "c7000000", MasterRequest{Command: ServerChallenge}, nil},
		{"cut", "7c5d5600 02", MasterRequest{Command: MasterChallenge}, codecs.ErrShort},
		{"unknown", "7d5d5600 0200", MasterRequest{Command: 5660029}, codecs.ErrBadMagic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMasterRequest(Wrap(nil, codectest.Unhex(t, tc.payload)))
			if tc.err != nil {
				codecErr(t, "DecodeMasterRequest", err, tc.err, "", "payload")
			} else {
				noErr(t, "DecodeMasterRequest", err)
			}
			equal(t, "request", tc.want, got)
		})
	}
	equal(t, "payload", codectest.Unhex(t, "7c5d56000200"), binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint32(nil, MasterChallenge), 2))
}
