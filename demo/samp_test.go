package demo

import (
	"strconv"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/samp"
)

// TestSAMPServer: each flavour answers its own magic only, VC:MP has no
// rules, and the hostile servers spoil what they say.
func TestSAMPServer(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ask := func(h Handler, vcmp bool, op samp.Opcode) []byte {
		b, _ := samp.AppendRequest(nil, samp.Request{Header: samp.NewHeader(vcmp, [4]byte{127, 0, 0, 1}, 7777, op)})
		out := h.Respond(b, mumbleFrom, now)
		if len(out) == 0 {
			return nil
		}
		return out[0]
	}
	for _, f := range []SAMPFlavor{SAMP037, SAMPOpenMP, SAMPVCMP} {
		h := NewSAMP(5, f, Normal)
		vcmp := f == SAMPVCMP
		if ask(h, !vcmp, samp.OpInfo) != nil {
			t.Errorf("flavour %d answers the other magic", f)
		}
		info, err := samp.DecodeResponse(ask(h, vcmp, samp.OpInfo), nil)
		if err != nil || info.Info.Players < 2 || info.Info.Hostname == "" {
			t.Fatalf("flavour %d info: %+v, %v", f, info, err)
		}
		if got := ask(h, vcmp, samp.OpRules); (got == nil) != vcmp {
			t.Errorf("flavour %d rules: %x", f, got)
		}
		list, err := samp.DecodeResponse(ask(h, vcmp, samp.OpDetailed), nil)
		if err != nil || len(list.Players) != int(info.Info.Players) {
			t.Errorf("flavour %d players: %+v, %v", f, list.Players, err)
		}
	}
	if _, err := samp.DecodeResponse(ask(NewSAMP(5, SAMP037, BadLength), false, samp.OpInfo), nil); err == nil {
		t.Error("the BadLength server's info decodes")
	}
	if _, err := samp.DecodeResponse(ask(NewSAMP(5, SAMP037, BadCount), false, samp.OpClients), nil); err == nil {
		t.Error("the BadCount server's list decodes")
	}
}

// TestSAMPGameDigInterop queries the emulated SA-MP 0.3.7, open.mp and
// VC:MP servers with GameDig's samp, gtasao (open.mp: it asks 'c', not
// 'd') and vcmp: name, password, players, max players, version, game
// mode, the info reply's third string (GameDig's raw.map), every
// player's name, score and (from 'd') ping, and every rule must be our
// reading of the same replies, whose text is Windows-1252 (GameDig's
// default for these, as ours). A reply with the first player renamed on
// the way must make them differ.
func TestSAMPGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	for i, tc := range []struct {
		name   string
		flavor SAMPFlavor
		gdType string
		codec  *samp.Codec
	}{
		{"sa-mp", SAMP037, "protocol-samp", &samp.Codec{}},
		{"open.mp", SAMPOpenMP, "protocol-gtasao", &samp.Codec{}},
		{"vc:mp", SAMPVCMP, "protocol-vcmp", &samp.Codec{VCMP: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runGameDigCase(t, node, gdCase{
				h:       func() Handler { return NewSAMP(11, tc.flavor, Normal) },
				gdType:  tc.gdType,
				decode:  decodeWith(tc.codec),
				compare: compareSAMPGameDig,
				mutate: onFirst(i, func(m *codecs.Message) func([]byte) []byte {
					n := string(samp.Windows1252.Append(nil, m.Info.Players[0].Name))
					l := string([]byte{byte(len(n))})
					return replaceOnce(l+n, l+renamed(n))
				}),
			})
		})
	}
}

func compareSAMPGameDig(gd gdState, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	f, _ := m.Fields.Get("info")
	info, _ := f.(codecs.Object)
	third, ok := info.Get("language")
	if !ok {
		third, _ = info.Get("map")
	}
	if gd.Name != in.Name || gd.Password != in.Password || gd.NumPlayers != in.NumPlayers || gd.MaxPlayers != in.MaxPlayers ||
		gd.Version != in.Version || gd.Raw["gamemode"] != in.GameType || gd.Raw["map"] != third {
		diffs = append(diffs, "server: GameDig "+strconv.Quote(gd.Name)+" "+toText(gd.Raw["gamemode"])+" "+toText(gd.Raw["map"])+" "+
			gd.Version+" "+strconv.Itoa(gd.NumPlayers)+"/"+strconv.Itoa(gd.MaxPlayers)+"; ours "+strconv.Quote(in.Name)+" "+
			in.GameType+" "+toText(third)+" "+in.Version+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	_, detailed := m.Fields.Get("detailed")
	var ours, theirs []playerRow
	for _, p := range in.Players {
		ping := -1
		if detailed {
			ping = p.Ping
		}
		ours = append(ours, playerRow{name: p.Name, score: p.Score, ping: ping})
	}
	for _, p := range append(gd.Players, gd.Bots...) {
		theirs = append(theirs, playerRow{name: p.Name, score: p.num("score"), ping: p.num("ping")})
	}
	diffs = append(diffs, comparePlayers("GameDig", ours, theirs)...)
	gdRules, _ := gd.Raw["rules"].(map[string]any)
	if len(gdRules) != len(in.Rules) {
		diffs = append(diffs, "rules: GameDig read "+strconv.Itoa(len(gdRules))+", ours "+strconv.Itoa(len(in.Rules)))
	}
	for _, r := range in.Rules {
		if v, ok := gdRules[r[0]].(string); !ok || v != r[1] {
			diffs = append(diffs, "rule "+r[0]+": GameDig "+strconv.Quote(v)+", ours "+strconv.Quote(r[1]))
		}
	}
	return diffs
}

// TestSAMPHostileDemo: the demo's hostile servers of the family are
// refused by the conversation with the field at fault named.
func TestSAMPHostileDemo(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		b     Behavior
		f     SAMPFlavor
		field string
	}{
		{BadLength, SAMP037, "hostname"},
		{BadCount, SAMPOpenMP, "rules["}, // the rules come before the players, and are spoilt too
	} {
		h := NewSAMP(5, tc.f, tc.b)
		q, _ := (&samp.Codec{}).NewQuery(nil)
		send := q.Start()
		var err error
		for round := 0; len(send) > 0 && round < 3; round++ {
			var next [][]byte
			for _, d := range send {
				for _, r := range h.Respond(d, mumbleFrom, now) {
					more, _, _ := q.Feed(r)
					next = append(next, more...)
				}
			}
			send = next
		}
		_, err = q.Result(codecs.DecodeOptions{})
		e, ok := err.(*codecs.Error)
		if !ok || len(e.Field) < len(tc.field) || e.Field[:len(tc.field)] != tc.field {
			t.Errorf("%v: %v, want an error at %s", tc.b, err, tc.field)
		}
	}
}
