package demo

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/a2s"
)

// qstatA2S runs Debian's qstat (quakestat -a2s -P -R -xml -hpn) against
// h on loopback and returns what it printed and the replies h sent it.
func qstatA2S(t *testing.T, qstat string, h Handler) (qstatServer, [][]byte) {
	t.Helper()
	addr, conversation := recordingServer(t, h)
	qs, _ := runQstatOne(t, qstat, "-a2s", addr, "-P", "-R", "-xml", "-hpn", "-retry", "1", "-timeout", "20")
	_, replies := conversation()
	return qs, replies
}

// qstatInfoRules are the rules qstat makes out of the info reply; the
// others are the server's own.
var qstatInfoRules = map[string]bool{
	"protocol": true, "gamedir": true, "gamename": true, "bots": true, "dedicated": true, "sv_os": true,
	"secure": true, "version": true, "game_port": true, "hostport": true, "game_tags": true, "game_id": true,
	"steamid": true, "sourcetv_port": true, "sourcetv_name": true,
}

// compareQstat lists where qstat's reading (-hpn: the map and player
// names as hex of the bytes on the wire) and ours of the same replies
// differ: name, map, folder, players, max players, bots, player names and
// scores, and every server rule. Empty: they agree.
func compareQstat(t *testing.T, qs qstatServer, m *codecs.Message) []string {
	t.Helper()
	var diffs []string
	differ := func(what, theirs, ours string) {
		diffs = append(diffs, what+": qstat "+strconv.Quote(theirs)+", ours "+strconv.Quote(ours))
	}
	in := m.Info
	if in == nil {
		return []string{"we decoded no info"}
	}
	unhex := func(s string) string {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatalf("qstat -hpn printed %q: %v", s, err)
		}
		return string(b)
	}
	if qs.Name != asciiOnly(in.Name) {
		differ("name", qs.Name, in.Name)
	}
	if m := unhex(qs.Map); m != in.Map {
		differ("map", m, in.Map)
	}
	if folder, _ := in.Rule("folder"); qs.GameType != folder {
		differ("folder", qs.GameType, folder)
	}
	if qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		differ("players", strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers), strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	if bots, _ := in.Rule("bots"); theirs["bots"] != bots {
		differ("bots", theirs["bots"], bots)
	}
	type player struct {
		name  string
		score int
	}
	var tp, op []player
	for _, p := range qs.Players {
		tp = append(tp, player{unhex(p.Name), p.Score})
	}
	for _, p := range in.Players {
		op = append(op, player{p.Name, p.Score})
	}
	byName := func(a, b player) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(tp, byName) // qstat lists them in its own order
	slices.SortFunc(op, byName)
	if !slices.Equal(tp, op) {
		text := func(ps []player) string {
			var b strings.Builder
			for _, p := range ps {
				b.WriteString(p.name + ":" + strconv.Itoa(p.score) + " ")
			}
			return b.String()
		}
		differ("player list", text(tp), text(op))
	}
	f, _ := m.Fields.Get("rules")
	obj, _ := f.(codecs.Object)
	list, _ := obj.Get("rules")
	rules, _ := list.([]any)
	if len(rules) == 0 {
		diffs = append(diffs, "we decoded no rules")
	}
	for _, x := range rules {
		kv := x.([]string)
		if v, ok := theirs[kv[0]]; !ok || v != asciiOnly(kv[1]) {
			differ("rule "+kv[0], v, kv[1])
		}
		delete(theirs, kv[0])
	}
	for k, v := range theirs {
		if !qstatInfoRules[k] {
			differ("rule "+k, v, "(none)")
		}
	}
	return diffs
}

// TestA2SQstatInterop queries emulated A2S servers on loopback with qstat,
// a client written independently of querylens: its reading of name, map,
// folder, players, max players, bots, player names and scores and the
// rules must be ours of the same replies (challenges, Source and GoldSrc
// split rules and all). Left out is what qstat cannot read: rules split
// with bzip2 compression (it has no bzip2 and reports no rules). A mutated
// reply must make the comparison fail.
func TestA2SQstatInterop(t *testing.T) {
	qstat := needQstat(t)
	c := &a2s.Codec{}
	for _, tc := range []struct {
		name string
		cfg  A2SConfig
	}{
		{"source", A2SConfig{}},
		{"source INFO challenge", A2SConfig{InfoChallenge: true}},
		{"source, one player connecting", A2SConfig{InfoChallenge: true, Connecting: 1}},
		{"goldsrc", A2SConfig{GoldSrc: true}},
		{"goldsrc INFO challenge", A2SConfig{GoldSrc: true, InfoChallenge: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs, replies := qstatA2S(t, qstat, NewA2S(7, tc.cfg, Normal))
			m, err := c.Decode(replies, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Info.Players) < 3 {
				t.Fatalf("an empty server proves little: %+v", m.Info)
			}
			for _, d := range compareQstat(t, qs, m) {
				t.Error(d)
			}

			// The same comparison on a reply with one score changed fails.
			mutated := slices.Clone(replies)
			for i, r := range mutated {
				if len(r) > 5 && r[4] == byte(a2s.TypePlayers) {
					p, _ := a2s.DecodeResponse(r, nil)
					p.Players.Players[0].Score += 1000
					mutated[i], _ = a2s.AppendResponse(nil, p)
				}
			}
			mm, err := c.Decode(mutated, codecs.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := compareQstat(t, qs, mm); len(d) == 0 {
				t.Error("a changed score went unnoticed")
			}
		})
	}
}

// TestA2SQstatMaster lists the demo Steam master with qstat
// (quakestat -stm,outfile): qstat reads only the first page (its
// follow-up query is malformed), and its addresses must be ours of that
// page, in order. A changed address must make the comparison fail.
func TestA2SQstatMaster(t *testing.T) {
	qstat := needQstat(t)
	var list []a2s.Addr
	for i := range 500 {
		list = append(list, a2s.Addr{IP: [4]byte{127, 1, byte(i >> 8), byte(i)}, Port: uint16(27015 + i%3)})
	}
	addr, conversation := recordingServer(t, NewA2SMaster(list, Normal))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	file := t.TempDir() + "/list"
	// qstat cannot tell the list is complete (it never asks for page 2):
	// it writes the file once its master retries (-mi apart) are used up.
	// -timeout, the whole run's limit, stays far above that, or a loaded
	// machine ends the run before the file is written.
	cmd := exec.CommandContext(ctx, qstat, "-stm,outfile", addr+","+file, "-retry", "1", "-mi", "0.5", "-timeout", "40")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("quakestat: %v\n%s%s", err, out, stderr.Bytes())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "a2s" {
			t.Fatalf("qstat wrote %q", line)
		}
		theirs = append(theirs, f[1])
	}
	_, rs := conversation()
	if len(rs) < 1 {
		t.Fatal("the master sent nothing")
	}
	compare := func(page []byte) bool {
		m, err := (&a2s.Codec{}).Decode([][]byte{page}, codecs.DecodeOptions{})
		return err == nil && slices.Equal(m.Servers, theirs)
	}
	if len(theirs) != a2s.MasterPageSize || !compare(rs[0]) {
		t.Errorf("qstat listed %d servers; they differ from our reading of the first page", len(theirs))
	}
	mutated := slices.Clone(rs[0])
	mutated[len(mutated)-1]++ // the last port
	if compare(mutated) {
		t.Error("a changed port went unnoticed")
	}
}
