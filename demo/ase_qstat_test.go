package demo

import (
	"bytes"
	"encoding/xml"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs/ase"
)

// TestASEQstatInterop queries emulated ASE servers on loopback with
// Debian's qstat (quakestat -eye -P -R -xml), a client written
// independently of querylens and of GameDig: the server's strings,
// counts and rules and each player's fields must be what our decoder
// reads from the same reply, within what qstat reads its own way. qstat
// takes the game port and asks the port 123 above it (ase.QueryPortOffset),
// so it is given the server's port less 123. It files the game name, the
// game port, the mode, the version and the password flag as the rules
// gamename, hostport, gametype, _version and _password before the
// server's own; it ends its player list at an entry whose flags are 0 (the
// flags server lists it last); it prints "?" for a player without a name,
// a team as its name (or its number when it starts with a digit; 0 when
// absent), a skin only when present, and 0 for a score or ping absent.
// A reply changed in one player's ping must make the comparison fail.
func TestASEQstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		name string
		h    Handler
	}{
		{"mta", NewASE(3, ASEMTA, Normal)},
		{"farcry", NewASE(4, ASEFarCry, Normal)},
		{"flags", NewASE(5, ASEFlags, Normal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conversation := recordingServer(t, tc.h)
			ap := netip.MustParseAddrPort(addr)
			game := netip.AddrPortFrom(ap.Addr(), ap.Port()-ase.QueryPortOffset).String()
			_, out := runQstatOne(t, qstat, "-eye", game, "-P", "-R", "-xml", "-retry", "3", "-timeout", "10")
			qs := parseQstatEye(t, out)
			_, replies := conversation()
			r, err := ase.DecodeResponse(replies[len(replies)-1], nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Players) == 0 {
				t.Fatal("an empty server proves little")
			}
			if diffs := aseQstatDiffs(qs, r); len(diffs) > 0 {
				t.Errorf("qstat and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			m := r
			m.Players = append([]ase.Player(nil), r.Players...)
			p := &m.Players[len(m.Players)/2]
			p.Flags |= ase.FlagPing
			p.Ping = strconv.Itoa(aseInt(p.Ping) + 1)
			b, err := ase.AppendResponse(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			if mr, err := ase.DecodeResponse(b, nil); err != nil || len(aseQstatDiffs(qs, mr)) == 0 {
				t.Errorf("a mutated ping goes unnoticed (%v)", err)
			}
		})
	}
}

// qstatEye is qstat's XML of one ASE server: qstatServer's, with each
// player's skin, which only -eye prints.
type qstatEye struct {
	qstatServer
	Players []struct {
		qstatPlayer
		Skin string `xml:"skin"`
	} `xml:"players>player"`
}

// parseQstatEye reads the one server qstat printed.
func parseQstatEye(t *testing.T, out []byte) qstatEye {
	t.Helper()
	var doc struct {
		Servers []qstatEye `xml:"server"`
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.CharsetReader = latin1Reader
	if err := dec.Decode(&doc); err != nil || len(doc.Servers) != 1 {
		t.Fatalf("qstat printed %q: %v", out, err)
	}
	return doc.Servers[0]
}

// aseInt is a number as qstat reads one (atoi: 0 for none).
func aseInt(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// aseQstatDiffs lists where qstat's view differs from our decode.
func aseQstatDiffs(qs qstatEye, r ase.Response) []string {
	var diffs []string
	if qs.Name != r.Name || qs.Map != r.Map || qs.GameType != r.GameType ||
		qs.NumPlayers != aseInt(r.NumPlayers) || qs.MaxPlayers != aseInt(r.MaxPlayers) {
		diffs = append(diffs, "server: qstat "+qs.Name+" "+qs.Map+" "+qs.GameType+" "+strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers)+
			"; ours "+r.Name+" "+r.Map+" "+r.GameType+" "+r.NumPlayers+"/"+r.MaxPlayers)
	}
	want := []string{"gamename=" + r.Game, "hostport=" + r.Port, "gametype=" + r.GameType, "_version=" + r.Version, "_password=" + r.Password}
	for _, x := range r.Rules {
		want = append(want, x.Key+"="+x.Value)
	}
	var theirs []string
	for _, x := range qs.Rules {
		theirs = append(theirs, x.Name+"="+x.Value)
	}
	if strings.Join(theirs, "\n") != strings.Join(want, "\n") {
		diffs = append(diffs, "rules: qstat "+strconv.Quote(strings.Join(theirs, " "))+", ours "+strconv.Quote(strings.Join(want, " ")))
	}
	var ours []string
	for _, p := range r.Players {
		if p.Flags == 0 {
			break // qstat's list ends here
		}
		name, team, skin := "?", "0", ""
		if p.Has(ase.FlagName) {
			name = p.Name
		}
		if p.Has(ase.FlagTeam) {
			team = p.Team
			if p.Team != "" && p.Team[0] >= '0' && p.Team[0] <= '9' {
				team = strconv.Itoa(aseInt(p.Team))
			}
		}
		if p.Has(ase.FlagSkin) {
			skin = p.Skin
		}
		ours = append(ours, name+"|"+strconv.Itoa(aseInt(p.Score))+"|"+strconv.Itoa(aseInt(p.Ping))+"|"+team+"|"+skin)
	}
	var got []string
	for _, p := range qs.Players {
		got = append(got, p.Name+"|"+strconv.Itoa(p.Score)+"|"+strconv.Itoa(p.Ping)+"|"+p.Team+"|"+p.Skin)
	}
	if strings.Join(got, "\n") != strings.Join(ours, "\n") {
		diffs = append(diffs, "players: qstat\n"+strings.Join(got, "\n")+"\nours\n"+strings.Join(ours, "\n"))
	}
	return diffs
}
