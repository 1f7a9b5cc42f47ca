package server

import (
	"testing"

	"github.com/querylens/querylens/codecs"
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
