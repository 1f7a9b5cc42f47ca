package demo

import (
	"bytes"
	"context"
	"encoding/xml"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/quake3"
)

// TestQuake3QstatInterop queries emulated Quake III servers on loopback
// with Debian's qstat (quakestat -q3s or -xonotics -P -R -xml), a client
// written independently of querylens: the name, map, player count, rules
// and players it reports must be what our decoder reads from the same
// reply. qstat asks getstatus (and, for -q3s, may ask getinfo before it);
// every reply it got is decoded here.
func TestQuake3QstatInterop(t *testing.T) {
	qstat := needQstat(t)
	for _, tc := range []struct {
		name, kind string
		h          Handler
	}{
		{"ioq3", "-q3s", NewQuake3(3, Quake3IOQ3, Normal)},
		{"ioq3 seed 4", "-q3s", NewQuake3(4, Quake3IOQ3, Normal)},
		{"xonotic", "-xonotics", NewQuake3(5, Quake3Xonotic, Normal)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conversation := recordingServer(t, tc.h)
			qs, out := runQstatOne(t, qstat, tc.kind, addr, "-P", "-R", "-xml", "-retry", "3", "-timeout", "10")
			queries, replies := conversation()
			var status *codecs.Message
			for i, r := range replies {
				m, err := (&quake3.Codec{}).Decode([][]byte{r}, codecs.DecodeOptions{Query: queries[i]})
				if err != nil {
					t.Fatalf("reply to %q does not decode: %v", queries[i], err)
				}
				if f, _ := m.Fields.Get("command"); f == quake3.CmdStatusResponse {
					status = m
				}
			}
			if status == nil {
				t.Fatalf("qstat got no statusResponse: queries %q", queries)
			}
			if len(status.Info.Players) == 0 {
				t.Fatal("an empty server proves little")
			}
			if diffs := q3QstatDiffs(qs, status, tc.kind); len(diffs) > 0 {
				t.Errorf("qstat and querylens differ:\n%s\n%s", strings.Join(diffs, "\n"), out)
			}
			// The comparison sees a difference in one byte: a score
			// changed in the reply we decode must be reported.
			i := slices.IndexFunc(replies, func(r []byte) bool { return bytes.Contains(r, []byte("statusResponse")) })
			mutated := bytes.Replace(replies[i], []byte("\n"+strconv.Itoa(status.Info.Players[0].Score)+" "), []byte("\n"+strconv.Itoa(status.Info.Players[0].Score+1)+" "), 1)
			m, err := (&quake3.Codec{}).Decode([][]byte{mutated}, codecs.DecodeOptions{})
			if err != nil || len(q3QstatDiffs(qs, m, tc.kind)) == 0 {
				t.Errorf("a mutated score goes unnoticed (%v)", err)
			}
		})
	}
}

// q3QstatDiffs lists where qstat's view of a server differs from our
// decode of its statusResponse, within what qstat reads correctly: it
// strips '^' and the next character from names, so DarkPlaces' ^xRGB
// colours leave their three digits in its names (compared with that rule
// applied to the raw name); it shows host name, map and player counts as
// elements and the other keys as rules; frags and score are one number.
func q3QstatDiffs(qs qstatServer, m *codecs.Message, kind string) []string {
	var diffs []string
	in := m.Info
	name := in.Name
	if kind == "-xonotics" {
		raw, _ := in.Rule("hostname")
		name = qstatStrip(raw)
	}
	if qs.Name != name || qs.Map != in.Map || qs.NumPlayers != in.NumPlayers || qs.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "server: qstat "+qs.Name+" "+qs.Map+" "+strconv.Itoa(qs.NumPlayers)+"/"+strconv.Itoa(qs.MaxPlayers)+
			"; ours "+name+" "+in.Map+" "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	theirs := map[string]string{}
	for _, r := range qs.Rules {
		theirs[r.Name] = r.Value
	}
	shown := map[string]bool{"sv_hostname": true, "hostname": true, "mapname": true, "sv_maxclients": true, "clients": true}
	for _, r := range in.Rules {
		v, ok := theirs[r[0]]
		if !ok && shown[r[0]] {
			continue
		}
		if !ok || v != r[1] {
			diffs = append(diffs, "rule "+r[0]+": ours "+strconv.Quote(r[1])+", qstat "+strconv.Quote(v))
		}
	}
	type row struct {
		name        string
		score, ping int
	}
	var ours, theirPlayers []row
	for _, p := range in.Players {
		ours = append(ours, row{p.Name, p.Score, p.Ping})
	}
	for _, p := range qs.Players {
		theirPlayers = append(theirPlayers, row{p.Name, p.Score + p.Frags, p.Ping})
	}
	by := func(a, b row) int { return strings.Compare(a.name, b.name) }
	slices.SortFunc(ours, by)
	slices.SortFunc(theirPlayers, by)
	if !slices.Equal(ours, theirPlayers) {
		diffs = append(diffs, "players differ")
	}
	return diffs
}

// qstatStrip is qstat's colour rule: '^' and the character after it go.
func qstatStrip(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '^' && i+1 < len(s) {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return strings.TrimSpace(b.String())
}

// TestQuake3QstatMaster asks an emulated master with qstat -q3m, which
// then queries every server the master lists: qstat must find each of
// them up, with the name our decoder reads. The list is one datagram with
// the end marker: qstat drops the last entry of a datagram without one
// (docs/protocols/quake3.md, "Pitfalls in other clients"), which the
// in-memory master tests cover for our decoder.
func TestQuake3QstatMaster(t *testing.T) {
	qstat := needQstat(t)
	want := map[string]string{}
	var listed []netip.AddrPort
	for seed := int64(10); seed < 13; seed++ {
		h := NewQuake3(seed, Quake3IOQ3, Normal)
		addr, _ := recordingServer(t, h)
		m, err := q3Converse(t, h, nil, gs2Now)
		if err != nil {
			t.Fatal(err)
		}
		want[addr] = m.Info.Name
		listed = append(listed, netip.MustParseAddrPort(addr))
	}
	master, queries := recordingServer(t, NewQuake3Master("", listed, 10, false))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, qstat, "-q3m", master, "-xml", "-retry", "3", "-timeout", "10")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quakestat: %v\n%s", err, stderr.Bytes())
	}
	var doc struct {
		Servers []struct {
			qstatServer
			Address string `xml:"address,attr"`
		} `xml:"server"`
	}
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.CharsetReader = latin1Reader
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("qstat printed %q: %v", out, err)
	}
	got := map[string]string{}
	for _, s := range doc.Servers {
		if s.Type == "Q3S" && s.Status == "UP" {
			got[s.Address] = s.Name
		}
	}
	if len(got) != len(want) {
		t.Fatalf("qstat found %v up, want %v\n%s", got, want, out)
	}
	for addr, name := range want {
		if got[addr] != name {
			t.Errorf("%s: qstat %q, ours %q", addr, got[addr], name)
		}
	}
	qs, _ := queries()
	if len(qs) == 0 {
		t.Fatal("the master was not asked")
	}
	if q, err := quake3.DecodeRequest(qs[0]); err != nil || !q.IsMaster() {
		t.Errorf("qstat's master query %q: %+v, %v", qs[0], q, err)
	}
}
