package browse

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/querylens/querylens/server"
)

// TestKeptList: a kept list's servers as the page comes with them:
// what browse-rows.js's fromSummary reads, and nothing else.
func TestKeptList(t *testing.T) {
	master := server.MasterSpec{Protocol: "a2s", Addr: "127.0.0.1:27011", Kept: true}
	yes := true
	at := time.Unix(1700000000, 0).UTC()
	tests := []struct {
		name string
		in   server.Summary
		want string
	}{
		{"online, the master's protocol",
			server.Summary{Protocol: "a2s", Address: "10.0.0.1:27015", Key: "a2s/10.0.0.1:27015", State: server.Online, Name: "Two Fort", Map: "ctf_2fort",
				Game: "tf", Players: 3, Bots: 1, MaxPlayers: 24, Password: &yes, RTTSeconds: 0.0123456, At: at, Source: server.SourceHistory,
				Join: "steam://connect/10.0.0.1:27015", Status: "/s/a2s/10.0.0.1:27015"},
			`{"address":"10.0.0.1:27015","state":"online","name":"Two Fort","map":"ctf_2fort","game":"tf","players":3,"bots":1,"max_players":24,"password":true,"rtt_seconds":0.01235,"status":"/s/a2s/10.0.0.1:27015"}`},
		{"never asked: no state, no counts",
			server.Summary{Protocol: "a2s", Address: "10.0.0.2:27015", Key: "a2s/10.0.0.2:27015", Status: "/s/a2s/10.0.0.2:27015"},
			`{"address":"10.0.0.2:27015","status":"/s/a2s/10.0.0.2:27015"}`},
		{"offline, another protocol, options",
			server.Summary{Protocol: "quake3", Address: "10.0.0.3:27960", Options: map[string]string{"dialect": "cod4"}, State: server.Offline,
				Detail: "No answer.", Status: "/s/quake3/10.0.0.3:27960?dialect=cod4"},
			`{"protocol":"quake3","address":"10.0.0.3:27960","options":{"dialect":"cod4"},"state":"offline","detail":"No answer.","status":"/s/quake3/10.0.0.3:27960?dialect=cod4"}`},
		{"a round trip under a tenth of a millisecond (shown as 0.0 ms)",
			server.Summary{Protocol: "a2s", Address: "10.0.0.4:27015", State: server.Online, RTTSeconds: 0.0000412},
			`{"address":"10.0.0.4:27015","state":"online","rtt_seconds":0.00004}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newKeptList(master, server.MasterList{Master: master, Total: 7, Complete: true, Servers: []server.Summary{tt.in}})
			if l.Total != 7 || !l.Complete || len(l.Servers) != 1 {
				t.Fatalf("list %+v, want the total, complete and the one server", l)
			}
			got, err := json.Marshal(l.Servers[0])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if p := l.Servers[0].protocolOf(master); p != tt.in.Protocol {
				t.Errorf("protocol %q, want %q", p, tt.in.Protocol)
			}
		})
	}
}
