package server

import (
	"sort"
	"strings"
	"testing"
)

// TestSteamGames checks the table a person picks a game from: sorted by
// name for the picker, no app ID twice, every port a port.
func TestSteamGames(t *testing.T) {
	if len(SteamGames) < 50 {
		t.Errorf("%d games, want at least 50", len(SteamGames))
	}
	if !sort.SliceIsSorted(SteamGames, func(i, j int) bool {
		return strings.ToLower(SteamGames[i].Name) < strings.ToLower(SteamGames[j].Name)
	}) {
		t.Error("SteamGames is not sorted by name")
	}
	seen := map[int]string{}
	for _, g := range SteamGames {
		if g.Name == "" || g.AppID <= 0 || g.Port <= 0 || g.Port > 65535 {
			t.Errorf("%+v: want a name, an app ID and a port", g)
		}
		if o, dup := seen[g.AppID]; dup {
			t.Errorf("app ID %d is both %q and %q", g.AppID, o, g.Name)
		}
		seen[g.AppID] = g.Name
	}
	for _, tc := range []struct {
		appid int
		want  string
	}{{440, `\appid\440`}, {730, `\appid\730`}} {
		if got := (SteamGame{AppID: tc.appid}).Filter(); got != tc.want {
			t.Errorf("Filter(%d) = %q, want %q", tc.appid, got, tc.want)
		}
	}
}
