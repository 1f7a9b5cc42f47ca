package codecs_test

import (
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/minecraft"
)

// TestDetectTurn: a TCP turn's protocol by content, and which side sent
// it; a master's greeting only as a stream's first turn.
func TestDetectTurn(t *testing.T) {
	req, err := minecraft.AppendRequest(nil, minecraft.Request{Host: "play.example", Port: minecraft.DefaultPort, ProtocolVersion: minecraft.PingProtocol})
	if err != nil {
		t.Fatal(err)
	}
	reply := minecraft.AppendStatusResponse(nil, []byte(`{"description":"A server","players":{"online":1,"max":20}}`))
	greeting := []byte(`\basic\\secure\ABCDEF\final\`)
	for _, tc := range []struct {
		name               string
		b                  []byte
		turn               int
		want               string
		master, fromServer bool
		found              bool
	}{
		{"minecraft request", req, 1, minecraft.Protocol, false, false, true},
		{"minecraft reply", reply, 2, minecraft.Protocol, false, true, true},
		{"gamespy1 master greeting", greeting, 1, gamespy1.Protocol, true, true, true},
		{"a greeting past the first turn", greeting, 3, "", false, false, false},
		{"nothing known", []byte("GET / HTTP/1.1\r\n\r\n"), 1, "", false, false, false},
		{"empty", nil, 1, "", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			protos := codecs.Protocols()
			m, ok := codecs.DetectTurn(protos, tc.b, tc.turn)
			if ok != tc.found {
				t.Fatalf("DetectTurn found %v (%+v), want %v", ok, m, tc.found)
			}
			if !ok {
				return
			}
			if m.Codec.Name() != tc.want || m.Master != tc.master || m.FromServer != tc.fromServer || protos[m.Index] != m.Codec {
				t.Errorf("DetectTurn = %s master %v from server %v (index %d), want %s master %v from server %v",
					m.Codec.Name(), m.Master, m.FromServer, m.Index, tc.want, tc.master, tc.fromServer)
			}
		})
	}
}
