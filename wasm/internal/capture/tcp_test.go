package capture

import (
	"bytes"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/pcapng"
)

// tcpPackets are a Minecraft List Ping (port 25565) and a GameSpy v1
// master session (port 28900, the master speaking first), interleaved.
func tcpPackets(t testing.TB) []pcapng.Packet {
	mc, _ := pcapng.ParseEndpoint("127.0.0.1:25565")
	master, _ := pcapng.ParseEndpoint("127.0.0.2:28900")
	c, err := codecs.Lookup("minecraft")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.NewQuery(map[string]string{"host": "127.0.0.1", "port": "25565"})
	if err != nil {
		t.Fatal(err)
	}
	var ping []byte
	for _, m := range q.Start() {
		ping = append(ping, m...)
	}
	js := []byte(`{"description":"a server","players":{"max":10,"online":2},"version":{"name":"1.21.4","protocol":769}}`)
	status := minecraft.AppendStatusResponse(nil, js)
	return []pcapng.Packet{
		{Micros: 1_000_000, TCP: true, Stream: 1, Target: mc, Data: ping},
		{Micros: 1_000_100, TCP: true, Stream: 2, Target: master, Direction: pcapng.Received, Data: []byte(`\basic\\secure\QWERTY\final\`)},
		{Micros: 1_000_200, TCP: true, Stream: 1, Target: mc, Direction: pcapng.Received, Data: status},
		{Micros: 1_000_300, TCP: true, Stream: 2, Target: master, Data: []byte(`\gamename\ut\validate\abcdefgh\final\\list\\gamename\ut\final\`)},
		{Micros: 1_000_400, TCP: true, Stream: 2, Target: master, Direction: pcapng.Received, Data: []byte(`\ip\10.0.0.1:7778\ip\10.0.0.2:7778\final\`)},
	}
}

// TestSessionTCP: TCP turns are rows flagged FlagTCP with their payload
// stored, the protocol of their stream, a reply pointing at its request
// turn, one conversation a stream; the turns open at the end come after
// End.
func TestSessionTCP(t *testing.T) {
	pkts := tcpPackets(t)
	file := pcapng.Append(nil, "test", pkts)
	index := map[string]uint8{}
	for i, c := range codecs.Protocols() {
		index[c.Name()] = uint8(i)
	}
	for _, size := range []int{len(file), 1, 100} {
		s, rows, _, kinds, err := run(t, file, size, 2)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		// The order turns end in: the ping (when the status comes), the
		// status (its stream closes after it), the greeting (when the
		// client speaks), the request (when the list comes), the list.
		want := []struct {
			data  []byte
			proto string
			kind  string
			query int32
		}{
			{pkts[0].Data, "minecraft", "query", -1},
			{pkts[2].Data, "minecraft", "response", 0},
			{pkts[1].Data, "gamespy1", "greeting", -1},
			{pkts[3].Data, "gamespy1", "master-query", -1},
			{pkts[4].Data, "gamespy1", "master-list", 3},
		}
		if len(rows) != len(want) {
			t.Fatalf("size %d: %d rows, want %d", size, len(rows), len(want))
		}
		for i, w := range want {
			r := rows[i]
			got, ok := s.Payload(i)
			kind := "?"
			if int(r.kind) < len(kinds) {
				kind = kinds[r.kind]
			}
			if !ok || !bytes.Equal(got, w.data) || r.flags != FlagTCP|FlagStored || r.off != -1 || r.length != uint32(len(w.data)) {
				t.Errorf("size %d row %d: payload %q (flags %#x, offset %v)", size, i, got, r.flags, r.off)
			}
			if r.proto != index[w.proto] || kind != w.kind || r.query != w.query {
				t.Errorf("size %d row %d: protocol %d kind %s query %d, want %s %s %d", size, i, r.proto, kind, r.query, w.proto, w.kind, w.query)
			}
		}
		if rows[0].conv != rows[1].conv || rows[2].conv == rows[0].conv || rows[2].conv != rows[4].conv ||
			rows[1].group != rows[0].group || rows[4].group != rows[3].group || rows[3].group == rows[0].group {
			t.Errorf("size %d: conversations %d %d %d, groups %d %d %d", size, rows[0].conv, rows[2].conv, rows[4].conv, rows[0].group, rows[1].group, rows[3].group)
		}
	}
}
