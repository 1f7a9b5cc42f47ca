package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/history"
)

func TestSummaryJSON(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ref := Ref{Protocol: "zandronum", Addr: "127.0.0.1:10666"}
	tests := []struct {
		name string
		sum  Summary
		want []string
	}{
		{"report", SummaryOf(Report{
			Ref: ref, State: Online, At: at, RTT: 25 * time.Millisecond,
			Msg: &codecs.Message{Info: &codecs.Info{
				Has:  codecs.HasName | codecs.HasMap | codecs.HasPassword | codecs.HasNumPlayers | codecs.HasMaxPlayers,
				Name: "\x1cDDuel", Map: "MAP01", Password: true, NumPlayers: 3, MaxPlayers: 8,
			}},
		}), []string{`"state":"online"`, `"name":"Duel"`, `"players":3`, `"max_players":8`, `"password":true`,
			`"rtt_seconds":0.025`, `"source":"query"`, `"key":"zandronum/127.0.0.1:10666"`, `"status":"/s/zandronum/127.0.0.1:10666"`}},
		{"cached offline", SummaryOf(Report{Ref: ref, State: Offline, Detail: "No answer.", Cached: true, At: at}),
			[]string{`"state":"offline"`, `"detail":"No answer."`, `"source":"cache"`}},
		{"sample", SummaryOfSample(ref, history.Sample{Key: ref.Key(), At: at, State: history.StateRateLimited, Players: 2}),
			[]string{`"state":"rate-limited"`, `"source":"history"`, `"players":2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.sum)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
			var back Summary
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.State != tt.sum.State {
				t.Errorf("state %v read back as %v", tt.sum.State, back.State)
			}
		})
	}
	var s State
	if err := json.Unmarshal([]byte(`"sleeping"`), &s); err == nil {
		t.Error("an unknown state name was read")
	}
}
