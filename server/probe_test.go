package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
	"github.com/querylens/querylens/netquery"
)

func TestCountsOf(t *testing.T) {
	bot := codecs.Player{Name: "bot", Bot: true}
	human := codecs.Player{Name: "human"}
	for _, tc := range []struct {
		name string
		in   codecs.Info
		want Counts
	}{
		{"flagged players are the bots without a number",
			codecs.Info{Has: codecs.HasPlayers, Players: []codecs.Player{human, bot, bot}},
			Counts{Players: 3, Bots: 2}},
		{"the server's bot count wins over the flags",
			codecs.Info{Has: codecs.HasNumPlayers | codecs.HasNumBots | codecs.HasMaxPlayers | codecs.HasPlayers,
				NumPlayers: 10, NumBots: 4, MaxPlayers: 24, Players: []codecs.Player{bot}},
			Counts{Players: 10, Bots: 4, Max: 24}},
		{"a bot count of zero is zero",
			codecs.Info{Has: codecs.HasNumPlayers | codecs.HasNumBots | codecs.HasPlayers, NumPlayers: 1, Players: []codecs.Player{bot}},
			Counts{Players: 1}},
		{"more bots than players is cut to the players",
			codecs.Info{Has: codecs.HasNumPlayers | codecs.HasNumBots, NumPlayers: 2, NumBots: 9},
			Counts{Players: 2, Bots: 2}},
		{"a number without its bit is ignored",
			codecs.Info{Has: codecs.HasName, Name: " x ", NumBots: 5, Players: []codecs.Player{human}},
			Counts{Name: "x", Players: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountsOf(&tc.in); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// cappedExchanger feeds q the datagrams given and reports the relay's
// reply cap as reached.
type cappedExchanger [][]byte

func (c cappedExchanger) Exchange(_ context.Context, _, _ string, q codecs.Query) (netquery.Result, error) {
	q.Start()
	res := netquery.Result{Sent: 1, Capped: true}
	for _, d := range c {
		res.Received++
		if _, done, _ := q.Feed(d); done {
			res.Done = true
		}
	}
	return res, nil
}

// TestProbeCapped: a reply the relay cut at its cap says "truncated",
// and when it does not decode the detail says the relay cut it.
func TestProbeCapped(t *testing.T) {
	info, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: &a2s.Info{Name: "big", Map: "m", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := a2s.SplitResponse(info, 9, a2s.SplitSource, len(info)/2+1)
	if err != nil || len(parts) != 2 {
		t.Fatalf("%d parts, %v", len(parts), err)
	}
	ref, err := New("a2s", "192.0.2.1:27015", map[string]string{"players": "false", "rules": "false"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		dgs    [][]byte
		state  State
		detail string
	}{
		{"whole", [][]byte{info}, Online, ""},
		{"cut", parts[:1], Malformed, "larger than the relay lets one query bring back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Probe(context.Background(), cappedExchanger(tc.dgs), ref, time.Second)
			if rep.State != tc.state || !strings.Contains(rep.Detail, tc.detail) {
				t.Fatalf("state %v, detail %q; want %v with %q", rep.State, rep.Detail, tc.state, tc.detail)
			}
			if rep.Msg == nil || !slices.Contains(rep.Msg.Warnings, codecs.WarnTruncated) {
				t.Fatalf("the message does not say truncated: %+v", rep.Msg)
			}
		})
	}
}

// silentAfter feeds q the datagrams given, then the wait ends with the
// conversation not done (the server fell silent).
type silentAfter [][]byte

func (s silentAfter) Exchange(_ context.Context, _, _ string, q codecs.Query) (netquery.Result, error) {
	q.Start()
	res := netquery.Result{Sent: 1}
	for _, d := range s {
		res.Received++
		if _, done, _ := q.Feed(d); done {
			res.Done = true
		}
	}
	return res, nil
}

// TestProbeUnanswered: an A2S server that answers INFO and ignores PLAYER
// (as many are set to) is online, and the detail names what went
// unanswered.
func TestProbeUnanswered(t *testing.T) {
	info, err := a2s.AppendResponse(nil, a2s.Response{Type: a2s.TypeInfo, Info: &a2s.Info{Name: "quiet", Map: "m", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := New("a2s", "192.0.2.1:27015", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := Probe(context.Background(), silentAfter{info}, ref, time.Second)
	if want := "The server answered, with warnings: no reply to A2S_PLAYER (A2S_RULES not asked)."; rep.State != Online || rep.Detail != want {
		t.Fatalf("state %v, detail %q; want online with %q", rep.State, rep.Detail, want)
	}
	if rep.Msg == nil || rep.Msg.Info == nil || rep.Msg.Info.Name != "quiet" {
		t.Fatalf("the info is lost: %+v", rep.Msg)
	}
}
