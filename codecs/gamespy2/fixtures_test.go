package gamespy2

import (
	"reflect"
	"testing"
)

func equal(t testing.TB, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s:\nwant %#v\n got %#v", what, want, got)
	}
}

// normal makes decoded and built responses comparable: empty slices are
// nil, and Count is at least the rows held.
func normal(r Response) Response {
	if len(r.Rules) == 0 {
		r.Rules = nil
	}
	for _, t := range []*Table{&r.Players, &r.Teams} {
		if len(t.Fields) == 0 {
			t.Fields = nil
		}
		if len(t.Rows) == 0 {
			t.Rows = nil
		}
		t.Count = max(t.Count, len(t.Rows))
	}
	return r
}

// sample is a small server in the bf1942 style with Latin-1 text.
func sample() Response {
	return Response{
		Sections: ServerSection | PlayerSection | TeamSection,
		Rules: []Rule{{"hostname", "Café Conquest"}, {"gamename", "bfield1942"}, {"gamever", "v1.6.19"},
			{"mapname", "Wake Island"}, {"gametype", "conquest"}, {"numplayers", "2"}, {"maxplayers", "32"},
			{"password", "0"}},
		Players: Table{Fields: []string{"player_", "score_", "ping_", "team_"},
			Rows: [][]string{{"Zoë", "12", "48", "1"}, {"Bob", "-3", "150", "2"}}},
		Teams: Table{Fields: []string{"team_t", "score_t"}, Rows: [][]string{{"Axis", "100"}, {"Allies", "87"}}},
	}
}

// bigServer has more players than fit in one 1400-byte reply.
func bigServer() Response {
	r := Response{
		Sections: ServerSection | PlayerSection | TeamSection,
		Rules:    []Rule{{"hostname", "Big Server"}, {"mapname", "Berlin"}, {"numplayers", "64"}, {"maxplayers", "64"}},
		Players:  Table{Fields: []string{"player_", "score_", "deaths_", "ping_", "team_"}},
		Teams:    Table{Fields: []string{"team_t", "score_t"}, Rows: [][]string{{"Axis", "1"}, {"Allies", "2"}}},
	}
	for i := 0; i < 64; i++ {
		r.Players.Rows = append(r.Players.Rows, []string{"Soldier number " + string(rune('A'+i%26)) + string(rune('a'+i/26)), "10", "3", "75", "1"})
	}
	return r
}
