package ogp_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/ogp"
)

func datagram(t *testing.T, name string) []byte {
	t.Helper()
	p := readPacket(t, filepath.Join("testdata", name+".hex"))
	if len(p.datagrams) != 1 {
		t.Fatalf("%s: %d datagrams", name, len(p.datagrams))
	}
	return p.datagrams[0]
}

// The 1.0x challenge exchange of the published OGP test vectors
// (docs/protocols/README.md).
func TestVectorChallenge(t *testing.T) {
	q, err := ogp.DecodeRequest(datagram(t, "v1_challenge_request"))
	if err != nil || q.Version != ogp.V1 || q.Type != ogp.TypeDefault || q.Body || q.HasChallenge || q.Answer {
		t.Fatalf("request = %+v, %v", q, err)
	}
	a, err := ogp.DecodeResponse(datagram(t, "v1_challenge_answer"), nil)
	if err != nil || a.Version != ogp.V1 || a.Type != ogp.TypeError || !a.Answer || !a.HasChallenge ||
		a.Challenge != 0x1337beef || a.ErrorID != ogp.ErrorInvalidChallenge {
		t.Fatalf("answer = %+v, %v", a, err)
	}
	m, err := (&ogp.Codec{}).Decode([][]byte{datagram(t, "v1_challenge_answer")}, codecs.DecodeOptions{})
	if err != nil || m.Kind != codecs.KindChallenge {
		t.Fatalf("kind = %v, %v", m.Kind, err)
	}
	if v, _ := m.Fields.Get("header"); !bytes.Contains(codecs.AppendJSON(nil, v), []byte(`"challenge_number_hex":"efbe3713"`)) {
		t.Errorf("header = %s", codecs.AppendJSON(nil, v))
	}
}

// The official client's full query is what NewQuery sends by default
// once it knows the challenge.
func TestVectorQuery(t *testing.T) {
	want := datagram(t, "v1_query")
	qy, err := (&ogp.Codec{}).NewQuery(map[string]string{"challenge": "0x1337beef"})
	if err != nil {
		t.Fatal(err)
	}
	if got := qy.Start(); len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("Start = %x, want %x", got, want)
	}
	q, err := ogp.DecodeRequest(want)
	if err != nil || !q.Body || q.Challenge != 0x1337beef || !q.UTF8 || q.Requests != ogp.NewRequest(ogp.V1).Requests {
		t.Fatalf("request = %+v, %v", q, err)
	}
}

// The populated 1.0x answer, field by field as the vector's model has it.
func TestVectorAnswer(t *testing.T) {
	a, err := ogp.DecodeResponse(datagram(t, "v1_answer"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Server
	str := func(name string, got []byte, want string) {
		t.Helper()
		if string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if a.GameID != 261 || a.Challenge != 0x1337beef {
		t.Errorf("game id %d, challenge %#x", a.GameID, a.Challenge)
	}
	str("gamename", s.GameName, "Onset")
	str("hostname", s.HostName, "My OGP Server")
	str("gametype", s.GameType, "Freeroam")
	str("gamemode", s.GameMode, "RP")
	str("map", s.Map.Name, "Island")
	if s.ConnectPort != 7777 || s.PlayerCount != 3 || s.SlotMax != 300 || s.BotCount != 0 || s.ReservedSlots != 70000 {
		t.Errorf("server = %+v", s)
	}
	if ogp.ServerType(s.Flags) != "dedicated" || ogp.OS(s.Flags) != "linux" || s.Flags.Has(ogp.SFPassword) || s.Flags.Has(ogp.SFProxy) {
		t.Errorf("server flags %#x", s.Flags)
	}
	wantTeams := []struct {
		name           string
		score, players int
	}{{"Red", -5, 2}, {"Blue", 300, 1}}
	if len(a.Teams) != len(wantTeams) {
		t.Fatalf("teams = %+v", a.Teams)
	}
	for i, w := range wantTeams {
		if x := a.Teams[i]; string(x.Name) != w.name || int(x.Score) != w.score || int(x.PlayerCount) != w.players {
			t.Errorf("team %d = %+v", i, x)
		}
	}
	wantPlayers := []struct {
		flags         ogp.Bits
		slot          uint32
		name          string
		team, score   int32
		kills, deaths uint32
		ping, time    uint16
	}{
		{ogp.FlagAlive, 0, "Alice", 0, 12, 3, 1, 45, 600},
		{ogp.FlagDead | ogp.FlagBot, 254, "Bot1", -1, -200, 0, 70000, 0, 5},
		{ogp.FlagAlive, 2, "Carol", 1, 100000, 300, 2, 999, 65535},
	}
	if len(a.Players) != len(wantPlayers) {
		t.Fatalf("players = %+v", a.Players)
	}
	for i, w := range wantPlayers {
		p := a.Players[i]
		if p.Flags != w.flags || p.Slot != w.slot || string(p.Name) != w.name || p.Team != w.team || p.Score != w.score ||
			p.Kills != w.kills || p.Deaths != w.deaths || p.Ping != w.ping || p.Time != w.time {
			t.Errorf("player %d = %+v", i, p)
		}
	}
	if len(a.Rules) != 2 || string(a.Rules[0].Key) != "version" || string(a.Rules[0].Value) != "1.4.2" ||
		string(a.Rules[1].Key) != "website" || string(a.Rules[1].Value) != "example.org" {
		t.Errorf("rules = %+v", a.Rules)
	}
	wantLimits := []ogp.Limit{{Type: ogp.LimitTime, HasLeft: true, Limit: 1800, Left: 1200}, {Type: ogp.LimitScore, Limit: 50}}
	if len(a.Limits) != 2 || a.Limits[0] != wantLimits[0] || a.Limits[1] != wantLimits[1] {
		t.Errorf("limits = %+v", a.Limits)
	}
	if a.Requests.Has(ogp.ReqAddOns) || len(a.AddOns) != 0 {
		t.Errorf("add-ons = %+v", a.AddOns)
	}

	m, err := (&ogp.Codec{}).Decode([][]byte{datagram(t, "v1_answer")}, codecs.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Info
	if m.Kind != codecs.KindResponse || in == nil || in.Name != "My OGP Server" || in.Map != "Island" || in.GameType != "Freeroam" ||
		in.NumPlayers != 3 || in.MaxPlayers != 300 || in.Password || in.Has&codecs.HasPassword == 0 || len(in.Players) != 3 || len(in.Teams) != 2 {
		t.Fatalf("info = %+v", in)
	}
	bot := in.Players[1]
	if bot.Name != "Bot1" || !bot.Bot || bot.HasTeam || !bot.Spectator || bot.Score != -200 {
		t.Errorf("bot = %+v", bot)
	}
	if p := in.Players[2]; !p.HasTeam || p.Team != 1 || p.Ping != 999 || p.Bot {
		t.Errorf("carol = %+v", p)
	}
}

// The v0.04 query of the vectors, and the VarBitArray encodings.
func TestVectorV004Query(t *testing.T) {
	b := datagram(t, "v004_query")
	q, err := ogp.DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	wantReq := ogp.Req004Teams | ogp.Req004Players | ogp.Req004Rules | ogp.Req004GameName | ogp.Req004HostName |
		ogp.Req004Map | ogp.Req004PlayerCount | ogp.Req004SlotMax
	if q.Version != ogp.V004 || q.Type != ogp.TypeDefault || q.HasChallenge || q.HasRequestID || q.Split ||
		q.Requests != wantReq || q.TeamFields != ogp.TeamName|ogp.TeamScore ||
		q.PlayerFields != ogp.PlayerName|ogp.PlayerFrags|ogp.PlayerPing || q.AddOnFields != 0 {
		t.Fatalf("request = %+v", q)
	}
	out, err := ogp.AppendRequest(nil, q)
	if err != nil || !bytes.Equal(out, b) {
		t.Errorf("re-encoded %x, %v", out, err)
	}
}
