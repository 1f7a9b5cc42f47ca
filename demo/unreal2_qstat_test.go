package demo

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/unreal2"
)

// TestUnreal2QstatInterop queries the emulated UT2004 server with qstat
// (quakestat -ut2s -P -R -xml): name, map, counts, rules and every
// player's name, score, ping and team must be our reading of the same
// replies. qstat's ways, compared accordingly: it joins a repeated rule
// (the mutators) with "|"; it adds the rule gametype; it lists the team
// rows (id 0) among the players and stops reading a datagram at a
// second one (both have id 0), so the Killing Floor server, which has
// none, is the one asked; it drops the character after a colour code
// with the code; it keeps the low byte of each UCS-2 character; it adds
// the game port as the rule hostport. A changed score must make the
// comparison fail.
func TestUnreal2QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	addr, conversation := recordingServer(t, NewUnreal2(4, Unreal2KillingFloor, Normal))
	all, out := runQstat(t, qstat, "-ut2s", addr, "-noportoffset", "-P", "-R", "-xml", "-retry", "1", "-timeout", "2")
	queries, replies := conversation()
	if len(all) != 1 {
		t.Fatalf("%s", out)
	}
	qs := all[0]
	m, err := (&unreal2.Codec{}).Decode(replies, codecs.DecodeOptions{Query: queries[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Info.Players) < 2 {
		t.Fatalf("an empty server proves little: %+v", m.Info)
	}
	if diffs := u2QstatDiffs(qs, m); len(diffs) > 0 {
		t.Errorf("qstat and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
	}
	// A score changed in what we decode is noticed.
	p := m.Info.Players[0]
	var mutated [][]byte
	for _, r := range replies {
		old := append([]byte(p.Name+"\x00"), byte(p.Ping), byte(p.Ping>>8), 0, 0, byte(p.Score))
		nu := append([]byte(p.Name+"\x00"), byte(p.Ping), byte(p.Ping>>8), 0, 0, byte(p.Score+1))
		mutated = append(mutated, bytes.Replace(r, old, nu, 1))
	}
	if m2, err := (&unreal2.Codec{}).Decode(mutated, codecs.DecodeOptions{Query: queries[0]}); err != nil || len(u2QstatDiffs(qs, m2)) == 0 {
		t.Errorf("a changed score goes unnoticed (%v)", err)
	}
}

func u2QstatDiffs(qs qstatServer, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	if qs.Name != u2QstatName(m) || qs.Map != in.Map || qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "server: qstat "+qs.Name+" "+qs.Map+" "+strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers)+
			"; ours "+in.Name+" "+in.Map+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	f, _ := m.Fields.Get("info")
	port, _ := f.(codecs.Object).Get("game_port")
	ours := map[string]string{"gametype": in.GameType, "hostport": strconv.Itoa(port.(int))}
	for _, r := range in.Rules {
		if v, ok := ours[r[0]]; ok {
			ours[r[0]] = v + "|" + r[1]
		} else {
			ours[r[0]] = r[1]
		}
	}
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	if !mapsEqual(ours, theirs) {
		diffs = append(diffs, "rules differ: qstat "+strconv.Quote(strings.Join(sortedPairs(theirs), " "))+"; ours "+strconv.Quote(strings.Join(sortedPairs(ours), " ")))
	}
	// Where each player's name had a colour code.
	colourAt := map[string]map[int]bool{}
	if ps, ok := m.Fields.Get("players"); ok {
		for _, p := range ps.([]codecs.Object) {
			n, _ := p.Get("name")
			if o, ok := n.(codecs.Object); ok {
				text, _ := o.Get("text")
				colourAt[text.(string)] = coloursAt(o)
			}
		}
	}
	var mine, qst []playerRow
	for _, tm := range in.Teams {
		mine = append(mine, playerRow{name: tm.Name, score: tm.Score})
	}
	for _, p := range in.Players {
		team := ""
		if p.HasTeam {
			team = [...]string{"red", "blue"}[p.Team]
		}
		mine = append(mine, playerRow{name: qstatLowBytes(qstatColourRule(p.Name, colourAt[p.Name])), score: p.Score, ping: p.Ping, team: team})
	}
	for _, p := range qs.Players {
		team := p.Team
		if team == "-32767" { // qstat's "none"
			team = ""
		}
		qst = append(qst, playerRow{name: p.Name, score: p.Score + p.Frags, ping: p.Ping, team: team})
	}
	return append(diffs, comparePlayers("qstat", mine, qst)...)
}

// u2QstatName is the server name as qstat shows it: it drops each colour
// code and the character after it (four bytes after the 1B).
func u2QstatName(m *codecs.Message) string {
	f, _ := m.Fields.Get("info")
	n, _ := f.(codecs.Object).Get("name")
	o, ok := n.(codecs.Object)
	if !ok {
		return m.Info.Name
	}
	text, _ := o.Get("text")
	return qstatColourRule(text.(string), coloursAt(o))
}

// coloursAt is where a string object's colour codes stood.
func coloursAt(o codecs.Object) map[int]bool {
	skip := map[int]bool{}
	if cs, ok := o.Get("colours"); ok {
		for _, c := range cs.([]any) {
			at, _ := c.(codecs.Object).Get("at")
			skip[at.(int)] = true
		}
	}
	return skip
}

// qstatColourRule drops the character after each colour code of s.
func qstatColourRule(s string, skip map[int]bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if skip[i] {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// qstatLowBytes is qstat's reading of UCS-2: the low byte of each
// character, as Latin-1.
func qstatLowBytes(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xff {
			r &= 0xff
		}
		b.WriteRune(r)
	}
	return b.String()
}

func sortedPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
