package gamespy2

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func equal(t testing.TB, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s:\nwant %#v\n got %#v", what, want, got)
	}
}

// codecError returns err as a *codecs.Error or fails the test.
func codecError(t testing.TB, err error) *codecs.Error {
	t.Helper()
	var e *codecs.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *codecs.Error", err, err)
	}
	return e
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
