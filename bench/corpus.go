package bench

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/querylens/querylens/codecs"
	_ "github.com/querylens/querylens/codecs/all"
	"github.com/querylens/querylens/codecs/doom3"
	"github.com/querylens/querylens/codecs/minecraft"
	"github.com/querylens/querylens/codecs/quake2"
	"github.com/querylens/querylens/demo"
)

// Packet is one message as a client receives it: the reply datagrams of
// one conversation, and the query they answer (GameSpy v2 layouts depend
// on it; nil where the protocol does not need it).
type Packet struct {
	Protocol  string
	Name      string
	Datagrams [][]byte
	Query     []byte
}

// Bytes is the total size of the datagrams.
func (p Packet) Bytes() int {
	n := 0
	for _, d := range p.Datagrams {
		n += len(d)
	}
	return n
}

// corpusFiles are the codecs' own golden packets used as benchmark input,
// relative to the repository root: one datagram a line, "#" comments.
var corpusFiles = []struct{ protocol, name, path string }{
	{"zandronum", "response", "codecs/zandronum/testdata/response_extended.hex"},
	{"zandronum", "segmented", "codecs/zandronum/testdata/segmented.hex"},
	{"zandronum", "master-list", "codecs/zandronum/testdata/master_multi.hex"},
	{"ogp", "v1", "codecs/ogp/testdata/v1_full_answer.hex"},
	{"ogp", "v1-split", "codecs/ogp/testdata/v1_split_answer.hex"},
	{"ogp", "v0.04", "codecs/ogp/testdata/v004_full_answer.hex"},
}

// corpusTime fixes the emulated servers' clock, so the corpus is the same
// on every run.
var corpusTime = time.Date(2026, 3, 14, 20, 5, 0, 0, time.UTC)

// Corpus returns the packets every decode benchmark uses, native and wasm
// alike: the golden files above (root is the repository root) and whole
// conversations with the demo's emulated servers of the other protocols,
// driven by each codec's own Query.
func Corpus(root string) ([]Packet, error) {
	var out []Packet
	for _, f := range corpusFiles {
		dgs, err := readHexDatagrams(filepath.Join(root, filepath.FromSlash(f.path)))
		if err != nil {
			return nil, err
		}
		out = append(out, Packet{Protocol: f.protocol, Name: f.name, Datagrams: dgs})
	}
	for _, c := range []struct {
		protocol, name string
		h              demo.Handler
	}{
		{"gamespy2", "full", demo.NewGameSpy2(7, demo.Normal)},
		{"bloodmasters", "full", demo.NewBloodmasters(7, demo.Normal)},
		{"a2s", "challenged", demo.NewA2S(7, demo.A2SConfig{InfoChallenge: true}, demo.Normal)},
		{"a2s", "bzip2", demo.NewA2S(8, demo.A2SConfig{Compress: true}, demo.Normal)},
		{"quake3", "status", demo.NewQuake3(7, demo.Quake3IOQ3, demo.Normal)},
		{"quake2", "status", demo.NewQuake2(7, quake2.Quake2, demo.Normal)},
		{"quakeworld", "status", demo.NewQuake2(7, quake2.QuakeWorld, demo.Normal)},
		{"hexen2", "status", demo.NewQuake2(7, quake2.Hexen2, demo.Normal)},
		{"fivem", "getinfo", demo.NewFiveM(7, false)},
		{"gamespy1", "split", demo.NewGameSpy1(7, demo.GameSpy1UT99, demo.Normal)},
		{"gamespy3", "split", demo.NewGameSpy3(7, demo.GameSpy3UT3, demo.Normal)},
		{"doom3", "etqw", demo.NewDoom3(7, doom3.GameETQW, demo.Normal)},
		{"ase", "mta", demo.NewASE(7, demo.ASEMTA, demo.Normal)},
		{"unreal2", "lists", demo.NewUnreal2(7, demo.Unreal2UT2004, demo.Normal)},
		{"mumble", "ping", demo.NewMumble(7, demo.Normal)},
		{"samp", "sa-mp", demo.NewSAMP(7, demo.SAMP037, demo.Normal)},
		{"samp", "open.mp", demo.NewSAMP(8, demo.SAMPOpenMP, demo.Normal)},
		{"vcmp", "vc:mp", demo.NewSAMP(9, demo.SAMPVCMP, demo.Normal)},
		{"bedrock", "pong", demo.NewBedrock(7, demo.Normal)},
	} {
		p, err := Converse(c.protocol, c.h, nil, corpusTime)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.protocol, err)
		}
		p.Name = c.name
		out = append(out, p)
	}
	// Minecraft Java's List Ping is a TCP conversation: its one reply
	// packet, as the demo's vanilla and Forge servers write it.
	for _, k := range []struct {
		name string
		kind demo.MinecraftKind
	}{{"vanilla", demo.MinecraftVanilla}, {"forge", demo.MinecraftForge}} {
		s := demo.NewMinecraft(7, k.kind, demo.Normal)
		q, _ := minecraft.AppendRequest(nil, minecraft.Request{ProtocolVersion: minecraft.PingProtocol, Host: "localhost", Port: minecraft.DefaultPort})
		reply, _ := s.Reply(q)
		out = append(out, Packet{Protocol: minecraft.Protocol, Name: k.name, Query: q, Datagrams: [][]byte{reply}})
	}
	return out, nil
}

// Converse runs protocol's query conversation (codec.NewQuery(opts))
// against handler h in memory, at time now, and returns what the client
// received and the last query it sent.
func Converse(protocol string, h demo.Handler, opts map[string]string, now time.Time) (Packet, error) {
	c, err := codecs.Lookup(protocol)
	if err != nil {
		return Packet{}, err
	}
	q, err := c.NewQuery(opts)
	if err != nil {
		return Packet{}, err
	}
	from := netip.MustParseAddrPort("127.0.0.1:40000")
	p := Packet{Protocol: protocol}
	pending := q.Start()
	for round := 0; round < 8 && len(pending) > 0; round++ {
		var next [][]byte
		for _, d := range pending {
			p.Query = d
			for _, r := range h.Respond(d, from, now) {
				p.Datagrams = append(p.Datagrams, r)
				more, done, _ := q.Feed(r)
				if done {
					return p, nil
				}
				next = append(next, more...)
			}
		}
		pending = next
	}
	return p, errors.New("the conversation did not complete")
}

// readHexDatagrams reads a golden .hex file: one datagram a line, spaces
// allowed inside a line, lines starting with "#" ignored.
func readHexDatagrams(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(line), ""))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no datagrams", path)
	}
	return out, nil
}
