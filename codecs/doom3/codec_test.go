package doom3_test

import (
	"reflect"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/internal/codectest"
)

func TestRegistered(t *testing.T) {
	c, err := codecs.Lookup(doom3.Protocol)
	if err != nil || c.Title() != "Doom 3 / id Tech 4" || c.DefaultPort() != 27666 {
		t.Fatalf("Lookup = %v, %v", c, err)
	}
	d := codecs.DescriptionOf(c)
	if !reflect.DeepEqual(d.Ports, []int{27666, 28004, 27719, 27733, 27758}) || !d.AllPlayers {
		t.Errorf("description = %+v", d)
	}
	opts := c.Options()
	if len(opts) != 2 || opts[0].Name != "game" || opts[1].Name != "challenge" || !opts[1].Echo {
		t.Errorf("Options = %+v", opts)
	}
}

func TestDetect(t *testing.T) {
	d3 := packet(t, "doom3")
	tests := []struct {
		name string
		b    []byte
		kind codecs.Kind
		conf codecs.Confidence
	}{
		{"request", packet(t, "request"), codecs.KindQuery, codecs.Certain},
		{"qstat's request", codectest.Unhex(t, "ffff 676574496e666f00 00000000"), codecs.KindQuery, codecs.Certain},
		{"reply", d3, codecs.KindResponse, codecs.Certain},
		{"etqw", packet(t, "etqw"), codecs.KindResponse, codecs.Certain},
		{"wolf", packet(t, "wolf"), codecs.KindResponse, codecs.Certain},
		{"cut reply", d3[:40], codecs.KindResponse, codecs.Likely},
		{"empty", nil, "", codecs.NotMine},
		{"quake3 getinfo", []byte("\xff\xff\xff\xffgetinfo xyz"), "", codecs.NotMine},
		{"other command", []byte("\xff\xffgetServers\x00\x00\x00\x00\x00"), "", codecs.NotMine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, conf := (&doom3.Codec{}).Detect(tc.b)
			if kind != tc.kind || conf != tc.conf {
				t.Errorf("Detect = %q %d, want %q %d", kind, conf, tc.kind, tc.conf)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	tests := []struct {
		name     string
		b        string
		sentinel error
	}{
		{"qstat", "ffff 676574496e666f00 00000000", nil},
		{"gamedig", "ffff 676574496e666f00 50694e47506f4e6700", nil},
		{"short challenge", "ffff 676574496e666f00 0000", codecs.ErrShort},
		{"other command", "ffff 676574496e666600 00000000", codecs.ErrNotQuery},
		{"bad magic", "fffe 676574496e666f00 00000000", codecs.ErrBadMagic},
		{"long tail", "ffff 676574496e666f00 00000000 00000000 000000000000000000", codecs.ErrTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := (&doom3.Codec{}).CheckQuery(codectest.Unhex(t, tc.b))
			if tc.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			codectest.WantError(t, err, tc.sentinel, "", -1)
		})
	}
}

// TestGames: each golden reply is read in its game's layout, picked from
// the version; the wrong layout named by the option fails.
func TestGames(t *testing.T) {
	for name, want := range map[string]doom3.Game{
		"doom3": doom3.GameDoom3, "quake4": doom3.GameQuake4, "prey": doom3.GamePrey, "etqw": doom3.GameETQW,
		"etqw-tv": doom3.GameETQW, "wolf": doom3.GameWolf,
	} {
		t.Run(name, func(t *testing.T) {
			b := packet(t, name)
			r, err := doom3.DecodeResponse(b, nil)
			if err != nil || r.Game != want {
				t.Fatalf("DecodeResponse: game %v, %v; want %v", r.Game, err, want)
			}
			if r2, err := doom3.DecodeGame(b, want); err != nil || !reflect.DeepEqual(r, r2) {
				t.Errorf("DecodeGame(%v) = %v", want, err)
			}
			other := doom3.GameQuake4
			if want == doom3.GameQuake4 {
				other = doom3.GameDoom3
			}
			if _, err := doom3.DecodeGame(b, other); err == nil && want != doom3.GameWolf {
				t.Errorf("read as %v too", other)
			}
			enc, err := doom3.AppendResponse(nil, r)
			if err != nil || string(enc) != string(b) {
				t.Errorf("AppendResponse does not give the reply back: %v", err)
			}
		})
	}
}

// TestInfo checks the neutral view: keys without case, colour codes
// stripped, the map's path cut, the protocol version as version, bots.
func TestInfo(t *testing.T) {
	tests := []struct {
		name, srv, mapName, version string
		max, players                int
		password                    bool
	}{
		{"doom3", "querylens Doom 3 demo #13", "game/mp/d3dm2", "1.41", 8, 4, true},
		{"prey", "querylens Prey demo #95", "game/dmradar", "3.1", 8, 5, true},
		{"etqw", "querylens ETQW demo #78", "salvage", "10.20", 24, 13, false},
		{"doom3-empty-trailing", "été Empty", "game/mp/d3dm3", "1.41", 4, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&doom3.Codec{}).Decode([][]byte{packet(t, tc.name)}, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			in := m.Info
			if in.Name != tc.srv || in.Map != tc.mapName || in.Version != tc.version || in.MaxPlayers != tc.max ||
				in.NumPlayers != tc.players || in.Password != tc.password {
				t.Errorf("info = %q %q %q %d/%d password %v", in.Name, in.Map, in.Version, in.NumPlayers, in.MaxPlayers, in.Password)
			}
		})
	}
	m, _ := (&doom3.Codec{}).Decode([][]byte{packet(t, "etqw-tv")}, codecs.DecodeOptions{})
	if ps := m.Info.Players; len(ps) != 2 || ps[0].Bot || !ps[1].Bot {
		t.Errorf("ETQW's bot flag: %+v", ps)
	}
	m, _ = (&doom3.Codec{}).Decode([][]byte{packet(t, "quake4-odd")}, codecs.DecodeOptions{})
	if in := m.Info; in.Name != "Odd" || in.Has&codecs.HasMaxPlayers != 0 || in.Players[0].Name != "A" {
		t.Errorf("quake4-odd: %+v", in)
	}
}

func TestWarnings(t *testing.T) {
	tests := map[string][]string{
		"doom3":                nil,
		"etqw":                 nil,
		"wolf":                 nil,
		"doom3-empty-trailing": {codecs.WarnTrailing},
		"quake4-odd":           {doom3.WarnPlayerOrder, doom3.WarnDuplicateKey},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := (&doom3.Codec{}).Decode([][]byte{packet(t, name)}, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Warnings) != len(want) || (len(want) > 0 && !reflect.DeepEqual(m.Warnings, want)) {
				t.Errorf("warnings = %q, want %q", m.Warnings, want)
			}
		})
	}
	// The goldens answer GameDig's PiNGPoNg: Doom 3 echoes PiNG, ETQW both.
	for _, name := range []string{"doom3", "etqw"} {
		m, _ := (&doom3.Codec{}).Decode([][]byte{packet(t, name)}, codecs.DecodeOptions{Query: packet(t, "request")})
		if len(m.Warnings) != 0 {
			t.Errorf("%s: %q", name, m.Warnings)
		}
		q, _ := doom3.AppendRequest(nil, doom3.Request{Challenge: 1})
		m, _ = (&doom3.Codec{}).Decode([][]byte{packet(t, name)}, codecs.DecodeOptions{Query: q})
		if !reflect.DeepEqual(m.Warnings, []string{doom3.WarnChallenge}) {
			t.Errorf("%s: challenge mismatch: %q", name, m.Warnings)
		}
	}
}

// TestQuery drives a conversation: the game option picks the layout.
func TestQuery(t *testing.T) {
	q, err := (&doom3.Codec{}).NewQuery(map[string]string{"game": "wolf", "challenge": "258"})
	if err != nil {
		t.Fatal(err)
	}
	start := q.Start()
	if len(start) != 1 || string(start[0]) != "\xff\xffgetInfo\x00\x02\x01\x00\x00\x02\x01\x00\x00" {
		t.Fatalf("Start = %q", start)
	}
	if _, done, err := q.Feed([]byte("\xff\xffgetInfo\x00\x00\x00\x00\x00")); done || err == nil {
		t.Errorf("a query fed as the reply: done %v, %v", done, err)
	}
	if _, done, err := q.Feed(packet(t, "wolf")); !done || err != nil {
		t.Fatalf("Feed = %v, %v", done, err)
	}
	m, err := q.Result(codecs.DecodeOptions{})
	if err != nil || m.Info.NumPlayers != 4 {
		t.Fatalf("Result = %+v, %v", m, err)
	}
	if g, _ := m.Fields.Get("game"); g != "wolf" {
		t.Errorf("game = %v", g)
	}
	if _, err := (&doom3.Codec{}).NewQuery(map[string]string{"game": "doom4"}); err == nil {
		t.Error("game doom4 accepted")
	}
	k1 := (&doom3.Codec{}).QueryKey(start[0])
	q2, _ := (&doom3.Codec{}).NewQuery(map[string]string{"game": "wolf", "challenge": "7"})
	if k2 := (&doom3.Codec{}).QueryKey(q2.Start()[0]); k1 == nil || string(k1) != string(k2) {
		t.Errorf("QueryKey differs by challenge: %x %x", k1, k2)
	}
}

func TestDecodeDatagrams(t *testing.T) {
	d3 := packet(t, "doom3")
	_, err := (&doom3.Codec{}).Decode(nil, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrIncomplete, "datagrams", 0)
	_, err = (&doom3.Codec{}).Decode([][]byte{d3, d3}, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrBadValue, "datagrams", 0)
	_, err = (&doom3.Codec{}).Decode([][]byte{append([]byte{0xfe}, d3[1:]...)}, codecs.DecodeOptions{})
	codectest.WantError(t, err, codecs.ErrBadMagic, "magic", 0)
}

// TestEmptyValues: empty strings everywhere encode and decode back.
func TestEmptyValues(t *testing.T) {
	for g := doom3.GameDoom3; g <= doom3.GameWolf; g++ {
		r := doom3.Response{Game: g, Major: 10, Minor: 20, Vars: []doom3.Var{{"k", ""}, {"", "v"}}, Players: []doom3.Player{{ID: 0}}}
		b, err := doom3.AppendResponse(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := doom3.DecodeGame(b, g)
		if err != nil || len(got.Vars) != 2 || len(got.Players) != 1 || got.Players[0].Name != "" {
			t.Errorf("%v: %+v, %v", g, got, err)
		}
	}
	if _, err := doom3.AppendResponse(nil, doom3.Response{Vars: []doom3.Var{{"", ""}}}); err == nil {
		t.Error("an empty pair encodes")
	}
	if _, err := doom3.AppendResponse(nil, doom3.Response{Players: []doom3.Player{{ID: 32}}}); err == nil {
		t.Error("player id 32 encodes")
	}
	_, err := doom3.AppendResponse(nil, doom3.Response{Players: []doom3.Player{{ID: 1, Name: "a\x00b"}}})
	codectest.WantError(t, err, codecs.ErrBadValue, "players[0]", -1)
	_, err = doom3.AppendResponse(nil, doom3.Response{Vars: []doom3.Var{{"k", "v"}, {"k\x00", "v"}}})
	codectest.WantError(t, err, codecs.ErrBadValue, "vars[1]", -1)
}
