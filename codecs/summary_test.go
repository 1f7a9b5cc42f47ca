package codecs_test

import (
	"errors"
	"testing"

	"github.com/querylens/querylens/codecs"
)

func TestSummary(t *testing.T) {
	info := &codecs.Info{
		Has:  codecs.HasName | codecs.HasMap | codecs.HasGameType | codecs.HasPlayers | codecs.HasMaxClients | codecs.HasPassword,
		Name: "\x1cDDuel \x1c[Gold]Room ", Map: "MAP01", GameType: "Duel", Password: true, MaxClients: 8,
		Players: []codecs.Player{{Name: "\x1cRBob"}, {Name: "Bot One", Bot: true}},
	}
	for _, tc := range []struct {
		name string
		m    *codecs.Message
		err  error
		want string
	}{
		{"response", &codecs.Message{Kind: codecs.KindResponse, Info: info, Fields: codecs.Object{}.Add("country", "DEU")},
			nil, `{"kind":"response","row":["Duel Room","MAP01","Duel",2,1,8,true,"DEU","Duel Room\nMAP01\nDuel\nBob\nBot One",false,"",""]}`},
		{"num players and max players win", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{
			Has: codecs.HasNumPlayers | codecs.HasMaxPlayers | codecs.HasMaxClients, NumPlayers: 5, MaxPlayers: 10, MaxClients: 12}},
			nil, `{"kind":"response","row":["","","",5,0,10,false,"","\n\n",false,"",""]}`},
		{"a server's bot count wins over flagged players", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{
			Has:        codecs.HasNumPlayers | codecs.HasNumBots | codecs.HasMaxPlayers | codecs.HasAntiCheat | codecs.HasOS | codecs.HasKeywords | codecs.HasPlayers,
			NumPlayers: 6, NumBots: 2, MaxPlayers: 24, AntiCheat: true, OS: "Linux", Keywords: "cp,\x1cRvalve ",
			Players: []codecs.Player{{Name: "a", Bot: true}}}},
			nil, `{"kind":"response","row":["","","",6,2,24,false,"","\n\n\na\ncp,valve",true,"Linux","cp,valve"]}`},
		{"a bot count above the players is cut to them", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{
			Has: codecs.HasNumPlayers | codecs.HasNumBots, NumPlayers: 3, NumBots: 200}},
			nil, `{"kind":"response","row":["","","",3,3,0,false,"","\n\n",false,"",""]}`},
		{"fields without their bits stay blank", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{
			NumBots: 4, AntiCheat: true, OS: "Linux", Keywords: "x", Players: []codecs.Player{{Bot: true}}}},
			nil, `{"kind":"response","row":["","","",1,1,0,false,"","\n\n\n",false,"",""]}`},
		{"country not a string", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{}, Fields: codecs.Object{}.Add("country", 7)},
			nil, `{"kind":"response","row":["","","",0,0,0,false,"","\n\n",false,"",""]}`},
		{"escapes in every string", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{
			Has: codecs.HasName | codecs.HasPlayers, Name: "a\"b\\c<d>\xff", Map: "e\u2028f", Players: []codecs.Player{{Name: "x\x1c[Red]&y"}}},
			Fields: codecs.Object{}.Add("country", "\"")},
			nil, `{"kind":"response","row":["a\"b\\c\u003cd\u003e\ufffd","e\u2028f","",1,0,0,false,"\"","a\"b\\c\u003cd\u003e\ufffd\ne\u2028f\n\nx\u0026y",false,"",""]}`},
		{"denied", &codecs.Message{Kind: codecs.KindDenied, Denied: codecs.DeniedBanned}, nil, `{"kind":"denied","denied":"banned"}`},
		{"master list", &codecs.Message{Kind: codecs.KindMasterList, Servers: []string{"127.0.0.1:10666"}},
			nil, `{"kind":"master-list","servers":["127.0.0.1:10666"]}`},
		{"empty master list", &codecs.Message{Kind: codecs.KindMasterList}, nil, `{"kind":"master-list","servers":[]}`},
		{"error keeps the partial row", &codecs.Message{Kind: codecs.KindResponse, Info: &codecs.Info{Has: codecs.HasName, Name: "Half"}},
			codecs.NewError("zandronum", "map", 12, codecs.ErrShort),
			`{"kind":"response","error":{"protocol":"zandronum","field":"map","offset":12,"message":"short buffer"},"row":["Half","","",0,0,0,false,"","Half\n\n",false,"",""]}`},
		{"error without a message", nil, errors.New("no reply"), `{"error":{"message":"no reply"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(codecs.AppendSummaryJSON(nil, tc.m, tc.err)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestStripColors(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                "plain",
		"  padded ":            "padded",
		"\x1cDRed":             "Red",
		"\x1c[Gold]Boss\x1cR!": "Boss!",
		"\x1c[unclosed":        "unclosed",
		"tab\tand\x7fdel":      "tabanddel",
		"trailing escape\x1c":  "trailing escape",
		"\x1cé multibyte code": " multibyte code"[1:],
	} {
		if got := codecs.StripColors(in); got != want {
			t.Errorf("StripColors(%q) = %q, want %q", in, got, want)
		}
	}
}
