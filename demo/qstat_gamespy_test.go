package demo

import (
	"github.com/querylens/querylens/codecs"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs/gamespy1"
	"github.com/querylens/querylens/codecs/gamespy3"
)

// gs1InOrder sends a GameSpy v1 server's datagrams in the order of their
// numbers instead of the final one first.
type gs1InOrder struct{ h Handler }

func (s gs1InOrder) Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte {
	out := s.h.Respond(q, from, now)
	num := func(b []byte) int {
		r, err := gamespy1.DecodeResponse(b, nil)
		if err != nil {
			return 0
		}
		_, n, _ := strings.Cut(r.QueryID, ".")
		i, _ := strconv.Atoi(n)
		return i
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return num(a) - num(b) })
	return out
}

// qsCase is one qstat interop case: a server, qstat's type flag, how to
// compare, and the reply mutation that must make the comparison fail.
type qsCase struct {
	kind    string // qstat's server type: -gps, -gs3, -gs4
	h       func() Handler
	decode  func(t *testing.T, replies [][]byte) *codecs.Message
	compare func(qs qstatServer, m *codecs.Message, replies [][]byte) []string
	mutate  func(m *codecs.Message) func([]byte) []byte
}

// runQstatCase queries the case's server with qstat directly, where
// qstat's reading must be ours, then through a proxy that changes one
// field of a reply, where it must not.
func runQstatCase(t *testing.T, qstat string, tc qsCase) {
	t.Helper()
	ask := func(addr string) qstatServer {
		qs, _ := runQstatOne(t, qstat, tc.kind, addr, "-P", "-R", "-xml", "-retry", "3", "-timeout", "20")
		return qs
	}
	addr, conversation := recordingServer(t, tc.h())
	qs := ask(addr)
	_, replies := conversation()
	m := tc.decode(t, replies)
	if m.Info == nil || len(m.Info.Players) < 2 || m.Info.Name == "" || m.Info.Map == "" {
		t.Fatalf("an empty server proves little: %+v", m.Info)
	}
	if diffs := tc.compare(qs, m, replies); len(diffs) > 0 {
		t.Errorf("qstat and querylens differ:\n%s", strings.Join(diffs, "\n"))
	}

	addr, conversation = recordingServer(t, tc.h())
	p, changed := mutatingProxy(t, addr, tc.mutate(m))
	qs = ask(p)
	if changed() == 0 {
		t.Fatal("the proxy changed no reply")
	}
	_, replies = conversation()
	if diffs := tc.compare(qs, tc.decode(t, replies), replies); len(diffs) == 0 {
		t.Error("qstat read a changed reply, and the comparison saw no difference")
	}
}

// compareRules lists where qstat's rules and the server keys we read
// differ, the keys qstat shows as elements of their own left out of both.
func compareRules(qs qstatServer, ours map[string]string, shown ...string) []string {
	var diffs []string
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	for _, k := range shown {
		delete(ours, k)
		delete(theirs, k)
	}
	if len(ours) == 0 {
		diffs = append(diffs, "we read no server keys")
	}
	for k, v := range ours {
		if tv, ok := theirs[k]; !ok || tv != v {
			diffs = append(diffs, "rule "+k+": qstat "+strconv.Quote(tv)+", ours "+strconv.Quote(v))
		}
	}
	for k, v := range theirs {
		if _, ok := ours[k]; !ok {
			diffs = append(diffs, "rule "+k+": qstat "+strconv.Quote(v)+", ours none")
		}
	}
	slices.Sort(diffs) // a map's order
	return diffs
}

func compareServer(qs qstatServer, in *codecs.Info) []string {
	if qs.Name != in.Name || qs.Map != in.Map || qs.GameType != in.GameType || qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		return []string{"server: qstat " + strconv.Quote(qs.Name) + " " + qs.Map + " " + qs.GameType + " " + strconv.Itoa(qs.NumPlayers) + "/" +
			strconv.Itoa(qs.MaxPlayers) + "; ours " + strconv.Quote(in.Name) + " " + in.Map + " " + in.GameType + " " +
			strconv.Itoa(in.NumPlayers) + "/" + strconv.Itoa(in.MaxPlayers)}
	}
	return nil
}

// TestGameSpy1QstatInterop queries emulated GameSpy v1 servers (Unreal
// Tournament, Battlefield 1942) with qstat -gps: name, map, game type,
// players, max players, every server key and every player's name, score,
// ping and team must be our reading of the same replies.
//
// Known differences, compared accordingly:
//   - qstat adds a player only while it has fewer than numplayers, so
//     when the players' datagram comes before the one with numplayers (the
//     demo servers send the final datagram first, as Unreal does) it lists
//     none: that case expects no players, and the others have the demo's
//     datagrams sent in order (gs1InOrder);
//   - Battlefield 1942: qstat's score is kills_N, and it names the team
//     from teamname_(N−1); Unreal's team is the number, 255 for none;
//   - qstat's rules are every server key but hostname, mapname,
//     numplayers and maxplayers, which are elements of their own.
func TestGameSpy1QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	renameMap := func(m *codecs.Message) func([]byte) []byte {
		return replaceOnce("\\mapname\\"+m.Info.Map+"\\", "\\mapname\\"+renamed(m.Info.Map)+"\\")
	}
	renamePlayer := func(m *codecs.Message) func([]byte) []byte {
		n := m.Info.Players[0].Name
		return replaceOnce("\\"+n+"\\", "\\"+renamed(n)+"\\")
	}
	for _, tc := range []struct {
		name      string
		h         func() Handler
		noPlayers bool
	}{
		{"ut99 final first", func() Handler { return NewGameSpy1(3, GameSpy1UT99, Normal) }, true},
		{"ut99 ctf", func() Handler { return gs1InOrder{NewGameSpy1(3, GameSpy1UT99, Normal)} }, false},
		{"ut99 dm", func() Handler { return gs1InOrder{NewGameSpy1(4, GameSpy1UT99, Normal)} }, false},
		{"bf1942", func() Handler { return gs1InOrder{NewGameSpy1(3, GameSpy1BF1942, Normal)} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mutate := renamePlayer
			if tc.noPlayers {
				mutate = renameMap
			}
			runQstatCase(t, qstat, qsCase{
				kind:   "-gps",
				h:      tc.h,
				decode: decodeWith(&gamespy1.Codec{}),
				compare: func(qs qstatServer, m *codecs.Message, replies [][]byte) []string {
					return compareGameSpy1Qstat(qs, m, replies, tc.noPlayers)
				},
				mutate: mutate,
			})
		})
	}
}

func compareGameSpy1Qstat(qs qstatServer, m *codecs.Message, replies [][]byte, noPlayers bool) []string {
	in := m.Info
	diffs := compareServer(qs, in)
	// The server keys, and each player's kills, as our decoder reads the
	// datagrams.
	keys := map[string]string{}
	for _, b := range replies {
		r, err := gamespy1.DecodeResponse(b, nil)
		if err != nil {
			return append(diffs, "our decoder: "+err.Error())
		}
		for _, v := range r.Vars {
			if _, n, ok := strings.Cut(v.Key, "_"); ok {
				if _, err := strconv.Atoi(n); err == nil {
					if strings.HasPrefix(v.Key, "kills_") {
						keys[v.Key] = v.Value
					}
					continue // a player's or team's key
				}
			}
			keys[v.Key] = v.Value
		}
	}
	bf := keys["gamename"] == "bfield1942"
	var ours, theirs []playerRow
	for i, p := range in.Players {
		score := p.Score
		if bf {
			score, _ = strconv.Atoi(keys["kills_"+strconv.Itoa(i)])
		}
		team := "255"
		switch {
		case p.HasTeam && bf && p.Team >= 1 && p.Team <= len(in.Teams):
			team = in.Teams[p.Team-1].Name
		case p.HasTeam:
			team = strconv.Itoa(p.Team)
		}
		ours = append(ours, playerRow{p.Name, score, p.Ping, team})
	}
	for k := range keys {
		if strings.HasPrefix(k, "kills_") {
			delete(keys, k)
		}
	}
	if noPlayers {
		ours = nil
	}
	for _, p := range qs.Players {
		theirs = append(theirs, playerRow{p.Name, p.Score, p.Ping, p.Team})
	}
	diffs = append(diffs, comparePlayers("qstat", ours, theirs)...)
	return append(diffs, compareRules(qs, keys, "hostname", "mapname", "numplayers", "maxplayers")...)
}

// TestGameSpy3QstatInterop queries emulated GameSpy v3/v4 servers with
// qstat: -gs3 a challenge-less server, -gs4 the Unreal Tournament 3
// server (a challenge, three packets out of order, player names continued
// across packets) and the Minecraft one. Name, map, game type, players,
// max players, every server key and every player's name, score, ping and
// team must be our reading of the same replies.
//
// The challenge-less server sends its reply with the split header, as
// Battlefield 2 does (qstat -gs3 reads a reply without it only as the
// answer to its short status query), and the Minecraft server answers
// qstat -gs4's GameSpy payload (FF FF FF 01) with its full stat, as
// vanilla Minecraft does: qstat talks to both directly.
//
// Known differences, compared accordingly:
//   - qstat files a player name continued from an earlier packet under
//     <player>, its <name> then "?", and shows the team fields (team_t,
//     score_t) as rules team_tN and score_tN;
//   - qstat's rules are every server key but hostname, mapname (map),
//     numplayers and maxplayers.
func TestGameSpy3QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		name, kind string
		h          func() Handler
	}{
		{"gs3 no challenge", "-gs3", func() Handler { return NewGameSpy3(3, GameSpy3NoChallenge, Normal) }},
		{"gs4 ut3", "-gs4", func() Handler { return NewGameSpy3(3, GameSpy3UT3, Normal) }},
		{"gs4 ut3 seed 4", "-gs4", func() Handler { return NewGameSpy3(4, GameSpy3UT3, Normal) }},
		{"gs4 minecraft", "-gs4", func() Handler { return NewGameSpy3(3, GameSpy3Minecraft, Normal) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runQstatCase(t, qstat, qsCase{
				kind:    tc.kind,
				h:       tc.h,
				decode:  decodeWith(&gamespy3.Codec{}),
				compare: compareGameSpy3Qstat,
				mutate:  renameFirstPlayer,
			})
		})
	}
}

func compareGameSpy3Qstat(qs qstatServer, m *codecs.Message, replies [][]byte) []string {
	in := m.Info
	diffs := compareServer(qs, in)
	keys := map[string]string{}
	for _, b := range replies {
		r, err := gamespy3.DecodeResponse(b, nil)
		if err != nil {
			return append(diffs, "our decoder: "+err.Error())
		}
		for _, kv := range r.Rules {
			keys[kv.Key] = kv.Value
		}
	}
	for i, tm := range in.Teams {
		keys["team_t"+strconv.Itoa(i)] = tm.Name
		keys["score_t"+strconv.Itoa(i)] = strconv.Itoa(tm.Score)
	}
	var ours, theirs []playerRow
	for _, p := range in.Players {
		team := ""
		if p.HasTeam {
			team = strconv.Itoa(p.Team)
		}
		ours = append(ours, playerRow{p.Name, p.Score, p.Ping, team})
	}
	for _, p := range qs.Players {
		name := p.Name
		if name == "?" && p.Player != "" {
			name = p.Player
		}
		theirs = append(theirs, playerRow{name, p.Score, p.Ping, p.Team})
	}
	diffs = append(diffs, comparePlayers("qstat", ours, theirs)...)
	return append(diffs, compareRules(qs, keys, "hostname", "mapname", "map", "numplayers", "maxplayers")...)
}
