package demo

import (
	"bytes"
	"encoding/json"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// recordingTCPProxy listens on loopback and passes each connection to
// target, recording what the server wrote and handing the client
// mutate's version of each chunk of it (mutate nil: as sent). It returns
// the address to ask, what the server wrote on the connections so far,
// and how many chunks mutate changed.
func recordingTCPProxy(t *testing.T, target string, mutate func([]byte) []byte) (string, func() [][]byte, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		streams [][]byte
		changed int
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp4", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			i := len(streams)
			streams = append(streams, nil)
			mu.Unlock()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			s.SetDeadline(time.Now().Add(20 * time.Second))
			wg.Go(func() {
				defer s.Close()
				buf := make([]byte, 65536)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						s.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			})
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, 65536)
				for {
					n, err := s.Read(buf)
					if n > 0 {
						r := slices.Clone(buf[:n])
						m := r
						if mutate != nil {
							m = mutate(slices.Clone(r))
						}
						mu.Lock()
						streams[i] = append(streams[i], r...)
						if !bytes.Equal(m, r) {
							changed++
						}
						mu.Unlock()
						c.Write(m)
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String(), func() [][]byte {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(streams)
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return changed
		}
}

// serveMinecraftTCP serves h on a loopback port for the test.
func serveMinecraftTCP(t *testing.T, h StreamHandler, b Behavior) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var s streams
	s.lns = []net.Listener{ln}
	var wg sync.WaitGroup
	wg.Add(1)
	go serveTCP(ln, h, b, &s, &wg)
	t.Cleanup(func() { s.close(); wg.Wait() })
	return ln.Addr().String()
}

var sectionCode = regexp.MustCompile(`§.`)

// gdName is a name as GameDig's minecraft protocol makes it: white space
// collapsed, § codes removed.
func gdName(s string) string {
	return sectionCode.ReplaceAllString(strings.Join(strings.Fields(s), " "), "")
}

// flattenChat is a chat component's text, as GameDig's minecraft
// protocol reads it from the raw status (text, then extra in order).
func flattenChat(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["text"].(string)
		if extra, ok := v["extra"].([]any); ok {
			for _, e := range extra {
				s += flattenChat(e)
			}
		}
		return s
	}
	return ""
}

// TestMinecraftGameDigInterop asks the demo's Java servers (vanilla,
// Forge, one trickling a byte at a time) with GameDig's
// protocol-minecraftvanilla and with its minecraft protocol (which asks
// the List Ping, GameSpy v4's Query and the Bedrock ping at once and
// merges them; only the List Ping answers here), through a proxy that
// records the server's stream: the name, the player counts, the sample's
// names and the version must be our reading of the same bytes. Then the
// first case again with the first sampled player renamed in the stream
// GameDig reads: the comparison must fail.
//
// Known differences: protocol-minecraftvanilla sets no name (its raw
// status holds the description, which the test flattens as GameDig's
// minecraft protocol does); neither reads the legacy ping (the 1.6 server
// is not asked); GameDig stops reading once it has as many bytes as the
// packet's length, not counting the length's own VarInt, so a reply that
// arrives in pieces (the trickling server) reaches its JSON parser two or
// three bytes short and fails (5.3.3, protocols/minecraftvanilla.js):
// the trickling server is not asked. protocol-minecraft waits for its
// GameSpy v4 and Bedrock questions to time out (10 s) on a port where
// only TCP answers: it is asked once.
func TestMinecraftGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	type tcase struct {
		name   string
		kind   MinecraftKind
		b      Behavior
		gdType string
	}
	cases := []tcase{
		{"vanilla, protocol-minecraftvanilla", MinecraftVanilla, Normal, "protocol-minecraftvanilla"},
		{"vanilla, protocol-minecraft", MinecraftVanilla, Normal, "protocol-minecraft"},
		{"forge, protocol-minecraftvanilla", MinecraftForge, Normal, "protocol-minecraftvanilla"},
	}
	ask := func(t *testing.T, addr, gdType string) gdState {
		host, port := hostPort(t, addr)
		var gd gdState
		out := runGameDig(t, node, host, port, gdType)
		if err := json.Unmarshal(out, &gd); err != nil {
			t.Fatalf("gamedig printed %q: %v", out, err)
		}
		return gd
	}
	decode := func(t *testing.T, streams [][]byte) *codecs.Message {
		t.Helper()
		if len(streams) != 1 || len(streams[0]) == 0 {
			t.Fatalf("%d connections recorded", len(streams))
		}
		m, err := (&minecraft.Codec{}).Decode([][]byte{streams[0]}, codecs.DecodeOptions{})
		if err != nil {
			t.Fatalf("our decoder: %v", err)
		}
		return m
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewMinecraft(int64(40+i), tc.kind, tc.b)
			addr, streams, _ := recordingTCPProxy(t, serveMinecraftTCP(t, h, tc.b), nil)
			gd := ask(t, addr, tc.gdType)
			m := decode(t, streams())
			if len(m.Info.Players) < 2 || m.Info.Name == "" {
				t.Fatalf("an empty server proves little: %+v", m.Info)
			}
			if diffs := compareMinecraftGameDig(gd, m); len(diffs) > 0 {
				t.Errorf("GameDig and querylens differ:\n%s", strings.Join(diffs, "\n"))
			}
			if i != 0 {
				return
			}
			first := m.Info.Players[0].Name
			addr, streams, changed := recordingTCPProxy(t, serveMinecraftTCP(t, h, tc.b),
				replaceOnce(`"name":"`+first+`"`, `"name":"`+renamed(first)+`"`))
			gd = ask(t, addr, tc.gdType)
			if changed() == 0 {
				t.Fatal("the proxy changed nothing")
			}
			if diffs := compareMinecraftGameDig(gd, decode(t, streams())); len(diffs) == 0 {
				t.Error("GameDig read a changed reply, and the comparison saw no difference")
			}
		})
	}
}

func compareMinecraftGameDig(gd gdState, m *codecs.Message) []string {
	var diffs []string
	in := m.Info
	name := gd.Name
	if name == "" {
		name = gdName(flattenChat(gd.Raw["description"]))
	}
	if name != in.Name {
		diffs = append(diffs, "name: GameDig "+strconv.Quote(name)+", querylens "+strconv.Quote(in.Name))
	}
	if gd.NumPlayers != in.NumPlayers || gd.MaxPlayers != in.MaxPlayers {
		diffs = append(diffs, "players: GameDig "+strconv.Itoa(gd.NumPlayers)+"/"+strconv.Itoa(gd.MaxPlayers)+
			", querylens "+strconv.Itoa(in.NumPlayers)+"/"+strconv.Itoa(in.MaxPlayers))
	}
	version := gd.Version
	if v, ok := gd.Raw["version"].(map[string]any); ok && version == "" {
		version, _ = v["name"].(string)
	}
	if version != in.Version {
		diffs = append(diffs, "version: GameDig "+strconv.Quote(version)+", querylens "+strconv.Quote(in.Version))
	}
	var ours, theirs []playerRow
	for _, p := range in.Players {
		ours = append(ours, playerRow{name: p.Name, score: -1, ping: -1})
	}
	for _, p := range gd.Players {
		theirs = append(theirs, playerRow{name: p.Name, score: -1, ping: -1})
	}
	return append(diffs, comparePlayers("GameDig", ours, theirs)...)
}

// TestBedrockGameDigInterop asks a demo Bedrock server with GameDig's
// protocol-minecraftbedrock: the name (GameDig keeps the § codes, which
// the test strips as its minecraft protocol does), the level as the map,
// the version, the counts, the edition, the server id and the game mode
// must be our reading of the same pong; with the version changed in the
// pong GameDig reads, they must not.
func TestBedrockGameDigInterop(t *testing.T) {
	node := needGameDig(t)
	compare := func(gd gdState, m *codecs.Message) []string {
		var diffs []string
		in := m.Info
		f := func(k string) string { v, _ := m.Fields.Get(k); return plainText(v) }
		for _, c := range [][3]string{
			{"name", gdName(gd.Name), in.Name},
			{"map", gd.Map, in.Map},
			{"version", gd.Version, in.Version},
			{"players", strconv.Itoa(gd.NumPlayers), strconv.Itoa(in.NumPlayers)},
			{"max", strconv.Itoa(gd.MaxPlayers), strconv.Itoa(in.MaxPlayers)},
			{"edition", plainText(gd.Raw["edition"]), f("edition")},
			{"server id", plainText(gd.Raw["serverId"]), f("server_id")},
			{"game mode", plainText(gd.Raw["gameMode"]), in.GameType},
			{"protocol", plainText(gd.Raw["protocolVersion"]), f("protocol")},
			{"IPv4 port", plainText(gd.Raw["ipv4Port"]), f("port_v4")},
		} {
			if c[1] != c[2] {
				diffs = append(diffs, c[0]+": GameDig "+strconv.Quote(c[1])+", querylens "+strconv.Quote(c[2]))
			}
		}
		return diffs
	}
	for _, mutate := range []bool{false, true} {
		h := NewBedrock(7, Normal)
		addr, conversation := recordingServer(t, h)
		ask := addr
		var changed func() int
		if mutate {
			ask, changed = mutatingProxy(t, addr, replaceOnce(";1.21.44;", ";1.21.45;"))
		}
		host, port := hostPort(t, ask)
		out := runGameDig(t, node, host, port, "protocol-minecraftbedrock")
		var gd gdState
		if err := json.Unmarshal(out, &gd); err != nil {
			t.Fatalf("gamedig printed %q: %v", out, err)
		}
		_, replies := conversation()
		m, err := (&minecraft.BedrockCodec{}).Decode(replies[len(replies)-1:], codecs.DecodeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		diffs := compare(gd, m)
		switch {
		case !mutate && len(diffs) > 0:
			t.Errorf("GameDig and querylens differ:\n%s", strings.Join(diffs, "\n"))
		case mutate && changed() == 0:
			t.Error("the proxy changed nothing")
		case mutate && len(diffs) == 0:
			t.Error("GameDig read a changed pong, and the comparison saw no difference")
		}
	}
}

// plainText is a raw GameDig value as text: a string as it is, anything
// else as JSON.
func plainText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
