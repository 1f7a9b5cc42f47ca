package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs/gamespy2"
)

// qstatServer is the XML qstat prints for one server (quakestat -xml).
type qstatServer struct {
	Type       string `xml:"type,attr"`
	Status     string `xml:"status,attr"`
	Name       string `xml:"name"`
	GameType   string `xml:"gametype"`
	Map        string `xml:"map"`
	NumPlayers int    `xml:"numplayers"`
	MaxPlayers int    `xml:"maxplayers"`
	Rules      []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:",chardata"`
	} `xml:"rules>rule"`
	Players []qstatPlayer `xml:"players>player"`
}

type qstatPlayer struct {
	Name   string `xml:"name"`
	Ping   int    `xml:"ping"`
	Score  int    `xml:"score"`
	Deaths int    `xml:"deaths"`
	Frags  int    `xml:"frags"`
	Team   string `xml:"team"`
	// Player: qstat's GameSpy v3/v4 reader files a player name
	// continued from an earlier packet here, beside a Name of "?".
	Player string `xml:"player"`
}

// recordingServer answers h's replies on a loopback UDP socket with the
// clock stopped at gs2Now (so that the roster cannot change between two
// queries) and records every query and reply. It stops with the test.
func recordingServer(t *testing.T, h Handler) (addr string, conversation func() (queries, replies [][]byte)) {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		qs, rs  [][]byte
		wg      sync.WaitGroup
		readBuf = make([]byte, 2048)
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			n, from, err := conn.ReadFromUDPAddrPort(readBuf)
			if err != nil {
				return // closed
			}
			if !from.Addr().Unmap().IsLoopback() {
				continue
			}
			q := append([]byte(nil), readBuf[:n]...)
			for _, r := range h.Respond(q, from, gs2Now) {
				// Recorded before it is sent: the client may finish,
				// and the test read the conversation, as soon as the
				// reply arrives.
				mu.Lock()
				qs, rs = append(qs, q), append(rs, r)
				mu.Unlock()
				conn.WriteToUDPAddrPort(r, from)
			}
		}
	}()
	t.Cleanup(func() { conn.Close(); wg.Wait() })
	return conn.LocalAddr().String(), func() ([][]byte, [][]byte) {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(qs), slices.Clone(rs)
	}
}

// needQstat returns the path of Debian's qstat (quakestat), or skips the
// test where it is not installed (fails it in CI, which installs it).
func needQstat(t *testing.T) string {
	t.Helper()
	qstat, err := exec.LookPath("quakestat")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("qstat is not installed (apt-get install qstat): %v", err)
		}
		t.Skip("qstat is not installed (apt-get install qstat)")
	}
	return qstat
}

// runQstat runs qstat with args (which ask for -xml) within 60 s and
// returns the servers it printed and its output.
func runQstat(t *testing.T, qstat string, args ...string) ([]qstatServer, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qstat, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quakestat: %v\n%s", err, stderr.Bytes())
	}
	var doc struct {
		Servers []qstatServer `xml:"server"`
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.CharsetReader = latin1Reader
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("qstat printed %q: %v", out, err)
	}
	return doc.Servers, out
}

// runQstatOne is runQstat for one server, which must be up.
func runQstatOne(t *testing.T, qstat string, args ...string) (qstatServer, []byte) {
	t.Helper()
	servers, out := runQstat(t, qstat, args...)
	if len(servers) != 1 || servers[0].Status != "UP" {
		t.Fatalf("qstat saw %+v\n%s", servers, out)
	}
	return servers[0], out
}

// TestQstatInterop queries emulated GameSpy v2 servers on loopback with
// Debian's qstat (quakestat -gs2 -P -R -xml), a client written
// independently of querylens and of GameDig: the rules, players and team
// names it reports must be what our decoder reads from the same replies.
func TestQstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		name string
		h    Handler
	}{
		{"seed 7", NewGameSpy2(7, Normal)},
		{"seed 8", NewGameSpy2(8, Normal)},
		{"seed 9", NewGameSpy2(9, Normal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conversation := recordingServer(t, tc.h)
			qs, _ := runQstatOne(t, qstat, "-gs2", addr, "-P", "-R", "-xml", "-hpn", "-retry", "1", "-timeout", "10")
			// -hpn prints the map and player names as hex of the bytes on
			// the wire, so they compare exactly. qstat's XML writer drops
			// bytes >= 0x80 from the other text (the host name, rules):
			// those are compared without the non-ASCII letters.
			qs.Map = fromHexLatin1(t, qs.Map)
			for i := range qs.Players {
				qs.Players[i].Name = fromHexLatin1(t, qs.Players[i].Name)
			}

			queries, replies := conversation()
			if len(queries) != 1 {
				t.Fatalf("qstat sent %d queries that were answered, want its one combined query", len(queries))
			}
			req, err := gamespy2.DecodeRequest(queries[0])
			if err != nil {
				t.Fatal(err)
			}
			resp, err := gamespy2.DecodeResponse(replies[0], &req)
			if err != nil {
				t.Fatal(err)
			}
			info := gs2Decode(t, queries[0], replies[0]).Info
			if len(resp.Players.Rows) == 0 || len(resp.Teams.Rows) == 0 || len(resp.Rules) == 0 {
				t.Fatalf("an empty server proves little: %+v", resp)
			}

			// Rules: qstat lists every server key except those it shows
			// as elements of their own.
			asElement := map[string]string{
				"hostname":   qs.Name, // compared as ASCII below
				"mapname":    qs.Map,
				"numplayers": strconv.Itoa(qs.NumPlayers),
				"maxplayers": strconv.Itoa(qs.MaxPlayers),
			}
			theirs := map[string]string{}
			for _, r := range qs.Rules {
				theirs[r.Name] = r.Value
			}
			for _, r := range resp.Rules {
				v, ok := theirs[r.Key]
				if !ok {
					v, ok = asElement[r.Key]
				}
				want := r.Value
				if r.Key != "mapname" {
					want = asciiOnly(want)
				}
				if !ok || v != want {
					t.Errorf("rule %s: ours %q, qstat %q (reported %v)", r.Key, r.Value, v, ok)
				}
				delete(theirs, r.Key)
			}
			for k, v := range theirs {
				t.Errorf("qstat reports rule %s=%q that we did not decode", k, v)
			}
			if qs.Name != asciiOnly(info.Name) || qs.Map != info.Map || qs.NumPlayers != info.NumPlayers || qs.MaxPlayers != info.MaxPlayers || qs.GameType != info.GameType {
				t.Errorf("qstat: %q %q %q %d/%d; ours: %q %q %q %d/%d", qs.Name, qs.Map, qs.GameType, qs.NumPlayers, qs.MaxPlayers,
					info.Name, info.Map, info.GameType, info.NumPlayers, info.MaxPlayers)
			}

			// Players, with their team's name from the team section.
			teamNames := map[string]bool{}
			var ours []qstatPlayer
			for i, p := range info.Players {
				row := resp.Players.Rows[i]
				col := func(name string) int {
					c := resp.Players.Column(name)
					if c < 0 {
						t.Fatalf("no %s column in %v", name, resp.Players.Fields)
					}
					n, err := strconv.Atoi(row[c])
					if err != nil {
						t.Fatalf("player %d %s: %v", i, name, err)
					}
					return n
				}
				if !p.HasTeam || p.Team < 1 || p.Team > len(info.Teams) {
					t.Fatalf("player %+v has no team of %v", p, info.Teams)
				}
				team := info.Teams[p.Team-1].Name
				teamNames[team] = true
				ours = append(ours, qstatPlayer{Name: p.Name, Ping: p.Ping, Score: p.Score,
					Deaths: col("deaths_"), Frags: col("kills_"), Team: team})
			}
			if len(teamNames) < 2 {
				t.Errorf("players on %d teams: the team mapping is barely tested", len(teamNames))
			}
			byName := func(a, b qstatPlayer) int { return strings.Compare(a.Name, b.Name) }
			theirPlayers := slices.Clone(qs.Players) // qstat lists them in its own order
			slices.SortFunc(theirPlayers, byName)
			slices.SortFunc(ours, byName)
			if !slices.Equal(theirPlayers, ours) {
				t.Errorf("players differ:\nqstat %+v\nours  %+v", theirPlayers, ours)
			}
		})
	}
}

// fromHexLatin1 decodes qstat's -hpn hex, which is the bytes on the wire:
// Latin-1, as our decoder reads them.
func fromHexLatin1(t *testing.T, s string) string {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("qstat -hpn printed %q: %v", s, err)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// asciiOnly drops what qstat's XML output drops.
func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x80 {
			return -1
		}
		return r
	}, s)
}

// latin1Reader decodes ISO-8859-1 (qstat's XML encoding) to UTF-8.
func latin1Reader(charset string, r io.Reader) (io.Reader, error) {
	if !strings.EqualFold(charset, "iso-8859-1") {
		return nil, errors.New("unexpected XML charset " + charset)
	}
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		bw := bufio.NewWriter(pw)
		for {
			b, err := br.ReadByte()
			if err != nil {
				bw.Flush()
				pw.Close()
				return
			}
			bw.WriteRune(rune(b))
		}
	}()
	return pr, nil
}
