package demo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	_ "image/png" // DecodeConfig of the favicons
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/codecs/minecraft"
)

// mcutilOut is what tools/gamedig/mcutil.mjs prints: minecraft-server-util's
// result, or the error it refused the server with.
type mcutilOut struct {
	OK     bool         `json:"ok"`
	Error  string       `json:"error"`
	Result mcutilResult `json:"result"`
}

// mcutilResult holds the members of status, statusLegacy and
// statusBedrock's results that the tests compare (a number the library
// could not parse, NaN, comes as null: 0 here).
type mcutilResult struct {
	Version *struct {
		Name     string `json:"name"`
		Protocol int    `json:"protocol"`
	} `json:"version"`
	Players struct {
		Online int `json:"online"`
		Max    int `json:"max"`
		Sample []struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		} `json:"sample"`
	} `json:"players"`
	MOTD struct {
		Raw   string `json:"raw"`
		Clean string `json:"clean"`
	} `json:"motd"`
	Favicon *string `json:"favicon"`
	// Bedrock only.
	Edition    string `json:"edition"`
	ServerGUID string `json:"serverGUID"`
	ServerID   string `json:"serverID"`
	GameMode   string `json:"gameMode"`
	GameModeID int    `json:"gameModeID"`
	PortIPv4   *int   `json:"portIPv4"`
}

// needMCUtil returns node's path, or skips the test where node or
// minecraft-server-util is missing (fails it in CI, which installs both
// with npm ci --prefix tools/gamedig).
func needMCUtil(t *testing.T) string {
	t.Helper()
	return needNodePackage(t, "minecraft-server-util", "minecraft-server-util")
}

// runMCUtil asks addr with minecraft-server-util's ask (status, legacy or
// bedrock), the library's own timeout set to timeout, and returns what it
// printed.
func runMCUtil(t *testing.T, node, ask, addr string, timeout time.Duration) mcutilOut {
	t.Helper()
	host, port := hostPort(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "mcutil.mjs", ask, host, port, strconv.FormatInt(timeout.Milliseconds(), 10))
	cmd.Dir = gameDigDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcutil.mjs %s %s: %v\n%s", ask, addr, err, stderr.Bytes())
	}
	var mc mcutilOut
	if err := json.Unmarshal(out, &mc); err != nil {
		t.Fatalf("mcutil.mjs printed %q: %v", out, err)
	}
	return mc
}

// mcFirstPacket is the first packet of a recorded server stream as our
// codec cuts it (the status response before the pong), or the whole
// stream when it holds no whole packet.
func mcFirstPacket(stream []byte) []byte {
	if msgs, _, _ := codecs.CutStream(stream, minecraft.MessageLen); len(msgs) > 0 {
		return msgs[0]
	}
	return stream
}

// mcOurs is our reading of a recorded stream: the decoded reply, the
// codec's message (for its warnings) and the error.
func mcOurs(stream []byte) (minecraft.Response, *codecs.Message, error) {
	b := mcFirstPacket(stream)
	resp, err := minecraft.DecodeResponse(b, nil)
	m, _ := (&minecraft.Codec{}).Decode([][]byte{b}, codecs.DecodeOptions{})
	return resp, m, err
}

// faviconBytes is the PNG a favicon data URI or its base64 text holds.
func faviconBytes(s string) ([]byte, error) {
	s = strings.TrimPrefix(s, "data:image/png;base64,")
	return base64.StdEncoding.DecodeString(s)
}

// compareMCUtilJava says how minecraft-server-util's reading of a Java
// server's reply (status or legacy) differs from ours, st: the MOTD
// without formatting, the version's name and protocol, the player counts,
// the sample's names and ids in order, and the favicon's bytes. Nothing
// when they agree.
func compareMCUtilJava(mc mcutilResult, st minecraft.Status) []string {
	var diffs []string
	add := func(what, theirs, ours string) {
		if theirs != ours {
			diffs = append(diffs, what+": minecraft-server-util "+strconv.Quote(theirs)+", querylens "+strconv.Quote(ours))
		}
	}
	add("motd", mc.MOTD.Clean, st.Description)
	switch {
	case mc.Version == nil && st.HasVersion:
		diffs = append(diffs, "version: minecraft-server-util none, querylens "+strconv.Quote(st.VersionName))
	case mc.Version != nil:
		add("version name", mc.Version.Name, st.VersionName)
		add("version protocol", strconv.Itoa(mc.Version.Protocol), strconv.Itoa(st.VersionProtocol))
	}
	add("players", strconv.Itoa(mc.Players.Online)+"/"+strconv.Itoa(mc.Players.Max), strconv.Itoa(st.Online)+"/"+strconv.Itoa(st.Max))
	var theirs, ours []string
	for _, p := range mc.Players.Sample {
		theirs = append(theirs, p.Name+" "+p.ID)
	}
	for _, p := range st.Sample {
		ours = append(ours, p.Name+" "+p.ID)
	}
	add("sample", strings.Join(theirs, ", "), strings.Join(ours, ", "))
	switch {
	case mc.Favicon == nil && st.Favicon == nil:
	case mc.Favicon == nil || st.Favicon == nil:
		diffs = append(diffs, "favicon: minecraft-server-util has one: "+strconv.FormatBool(mc.Favicon != nil)+", querylens: "+strconv.FormatBool(st.Favicon != nil))
	default:
		a, errA := faviconBytes(*mc.Favicon)
		b, errB := faviconBytes(st.Favicon.Data)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			diffs = append(diffs, "favicon: minecraft-server-util "+strconv.Itoa(len(a))+" bytes ("+errString(errA)+
				"), querylens "+strconv.Itoa(len(b))+" bytes ("+errString(errB)+"), not the same")
		}
	}
	return diffs
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestMinecraftMCUtilInterop asks the demo's Minecraft Java servers with
// minecraft-server-util 5.4.4 (npm), a client written independently of
// querylens and of GameDig, through a proxy that records the server's
// stream: its status (the List Ping, then a ping whose pong it checks)
// and its statusLegacy (FE 01) must read what our decoder reads from the
// same bytes: the MOTD without formatting, the version's name and
// protocol, the player counts, the sample (names and ids, in order) and
// the favicon's bytes. Then the vanilla server's status and legacy reply
// with one byte of the name changed on the way to the client: the
// comparison must report the MOTD.
//
// Known differences: minecraft-server-util keeps no mods (its status
// result has version, players, motd, favicon only; Forge's forgeData is
// dropped): TestMinecraftForgeModsInterop compares them through GameDig's
// raw status. The Forge demo server does not answer the legacy ping and
// the 1.6 one not the List Ping: TestMinecraftMCUtilInteropHostile asks those.
func TestMinecraftMCUtilInterop(t *testing.T) {
	node := needMCUtil(t)
	type tcase struct {
		name string
		kind MinecraftKind
		b    Behavior
		ask  string
	}
	cases := []tcase{
		{"vanilla, status", MinecraftVanilla, Normal, "status"},
		{"vanilla, legacy ping", MinecraftVanilla, Normal, "legacy"},
		{"forge, status", MinecraftForge, Normal, "status"},
		{"1.6, legacy ping", MinecraftLegacy, Normal, "legacy"},
		// A byte every TrickleEvery: about 700 of them, 4 s.
		{"trickling, status", MinecraftVanilla, Trickle, "status"},
		{"trickling, legacy ping", MinecraftVanilla, Trickle, "legacy"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewMinecraft(int64(50+i), tc.kind, tc.b)
			addr, streams, _ := recordingTCPProxy(t, serveMinecraftTCP(t, h, tc.b), nil)
			mc := runMCUtil(t, node, tc.ask, addr, 20*time.Second)
			if !mc.OK {
				t.Fatalf("minecraft-server-util refused the server: %s", mc.Error)
			}
			rec := streams()
			if len(rec) != 1 {
				t.Fatalf("%d connections recorded", len(rec))
			}
			resp, _, err := mcOurs(rec[0])
			if err != nil {
				t.Fatalf("our decoder: %v", err)
			}
			if resp.Legacy != (tc.ask == "legacy") {
				t.Fatalf("asked %s, and the reply is legacy: %v", tc.ask, resp.Legacy)
			}
			st := resp.Status
			if st.Description == "" || st.Online < 2 || !st.HasVersion || tc.ask == "status" && (len(st.Sample) < 2 || st.Favicon == nil) {
				t.Fatalf("an empty server proves little: %+v", st)
			}
			if diffs := compareMCUtilJava(mc.Result, st); len(diffs) > 0 {
				t.Errorf("minecraft-server-util and querylens differ:\n%s", strings.Join(diffs, "\n"))
			}
			if tc.kind != MinecraftVanilla || tc.b != Normal {
				return
			}

			// One byte of the name changed in the reply the client reads.
			old, new := h.name, renamed(h.name)
			if tc.ask == "legacy" { // UTF-16BE
				old, new = "\x00"+old[:1]+"\x00"+old[1:2], "\x00"+new[:1]+"\x00"+new[1:2]
			}
			addr, streams, changed := recordingTCPProxy(t, serveMinecraftTCP(t, h, tc.b), replaceOnce(old, new))
			mc = runMCUtil(t, node, tc.ask, addr, 20*time.Second)
			if changed() == 0 {
				t.Fatal("the proxy changed nothing")
			}
			if !mc.OK {
				t.Fatalf("minecraft-server-util refused the changed reply: %s", mc.Error)
			}
			resp, _, err = mcOurs(streams()[0])
			if err != nil {
				t.Fatal(err)
			}
			diffs := compareMCUtilJava(mc.Result, resp.Status)
			if len(diffs) != 1 || !strings.HasPrefix(diffs[0], "motd:") {
				t.Errorf("minecraft-server-util read a name changed by one byte, and the comparison said %q", diffs)
			}
		})
	}
}

// TestMinecraftMCUtilInteropHostile asks the demo's hostile Java servers (and
// two that do not speak what they are asked) with minecraft-server-util
// and with our decoder, from the same bytes. Each refuses, except the
// favicon of 128×128, which minecraft-server-util hands over as given
// (it does not look at it) and our decoder keeps with a warning.
//
// How minecraft-server-util fails: a packet length of six VarInt bytes,
// "VarInt exceeds data bounds"; a length 1000 bytes beyond the data, it
// waits for them until its timeout ("Server is offline or unreachable",
// 3 s here), or until the server closes (its idle limit, StreamIdle);
// JSON left open, JSON.parse's message; a server that closes without a
// word, "Socket closed unexpectedly while waiting for data".
func TestMinecraftMCUtilInteropHostile(t *testing.T) {
	node := needMCUtil(t)
	for _, tc := range []struct {
		name      string
		kind      MinecraftKind
		b         Behavior
		ask       string
		theirs    []string // minecraft-server-util's error holds one of these
		oursField string   // the field our decoder's error names
	}{
		{"long VarInt", MinecraftVanilla, BadVarInt, "status", []string{"VarInt exceeds data bounds"}, "length"},
		{"length beyond the data", MinecraftVanilla, BadLength, "status",
			[]string{"Server is offline or unreachable", "Socket closed unexpectedly"}, "length"},
		{"JSON left open", MinecraftVanilla, BadJSON, "status", []string{"JSON"}, "json"},
		{"1.6 server asked the List Ping", MinecraftLegacy, Normal, "status", []string{"Socket closed unexpectedly"}, "length"},
		{"forge server asked the legacy ping", MinecraftForge, Normal, "legacy", []string{"Socket closed unexpectedly"}, "length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewMinecraft(60, tc.kind, tc.b)
			addr, streams, _ := recordingTCPProxy(t, serveMinecraftTCP(t, h, tc.b), nil)
			mc := runMCUtil(t, node, tc.ask, addr, 3*time.Second)
			if mc.OK {
				t.Errorf("minecraft-server-util read the server: %+v", mc.Result)
			} else if !slices.ContainsFunc(tc.theirs, func(s string) bool { return strings.Contains(mc.Error, s) }) {
				t.Errorf("minecraft-server-util failed with %q, want one of %q", mc.Error, tc.theirs)
			}
			var stream []byte
			if rec := streams(); len(rec) == 1 {
				stream = rec[0]
			}
			_, _, err := mcOurs(stream)
			var ce *codecs.Error
			if !errors.As(err, &ce) || ce.Field != tc.oursField {
				t.Errorf("our decoder: %v, want an error at %s", err, tc.oursField)
			}
			t.Logf("minecraft-server-util: %s; querylens: %v", mc.Error, err)
		})
	}

	t.Run("favicon of 128×128", func(t *testing.T) {
		h := NewMinecraft(61, MinecraftVanilla, BadImage)
		addr, streams, _ := recordingTCPProxy(t, serveMinecraftTCP(t, h, BadImage), nil)
		mc := runMCUtil(t, node, "status", addr, 20*time.Second)
		if !mc.OK {
			t.Fatalf("minecraft-server-util refused the server: %s", mc.Error)
		}
		resp, m, err := mcOurs(streams()[0])
		if err != nil {
			t.Fatal(err)
		}
		if fv := resp.Favicon; fv == nil || fv.OK || fv.Width != 128 || fv.Height != 128 || !slices.Contains(m.Warnings, minecraft.WarnFavicon) {
			t.Errorf("our decoder took the favicon as %+v, warnings %q", fv, m.Warnings)
		}
		// minecraft-server-util hands the URI over as sent: a 128×128 PNG.
		var cfg image.Config
		png, err := faviconBytes(*mc.Result.Favicon)
		if err == nil {
			cfg, _, err = image.DecodeConfig(bytes.NewReader(png))
		}
		if err != nil || cfg.Width != 128 || cfg.Height != 128 {
			t.Errorf("minecraft-server-util's favicon: %dx%d, %v", cfg.Width, cfg.Height, err)
		}
		// The rest reads alike (our decoder keeps no bytes of a favicon
		// it flags).
		st := resp.Status
		st.Favicon, mc.Result.Favicon = nil, nil
		if diffs := compareMCUtilJava(mc.Result, st); len(diffs) > 0 {
			t.Errorf("minecraft-server-util and querylens differ:\n%s", strings.Join(diffs, "\n"))
		}
	})
}

// TestMinecraftForgeModsInterop: the Forge server's mods, which
// minecraft-server-util drops, as GameDig's protocol-minecraftvanilla
// keeps them in its raw status (forgeData.mods, modId and modmarker),
// must be our reading of the same reply; with one mod's id changed on
// the way to GameDig, they must not.
func TestMinecraftForgeModsInterop(t *testing.T) {
	node := needGameDig(t)
	h := NewMinecraft(62, MinecraftForge, Normal)
	compare := func(gd gdState, mods []minecraft.Mod) string {
		var theirs, ours []string
		if fd, ok := gd.Raw["forgeData"].(map[string]any); ok {
			ms, _ := fd["mods"].([]any)
			for _, m := range ms {
				o, _ := m.(map[string]any)
				theirs = append(theirs, plainText(o["modId"])+" "+plainText(o["modmarker"]))
			}
		}
		for _, m := range mods {
			ours = append(ours, m.ID+" "+m.Version)
		}
		if !slices.Equal(theirs, ours) {
			return "mods: GameDig " + strconv.Quote(strings.Join(theirs, ", ")) + ", querylens " + strconv.Quote(strings.Join(ours, ", "))
		}
		return ""
	}
	for _, mutate := range []bool{false, true} {
		var change func([]byte) []byte
		if mutate {
			change = replaceOnce(`"modId":"jei"`, `"modId":"jey"`)
		}
		addr, streams, changed := recordingTCPProxy(t, serveMinecraftTCP(t, h, Normal), change)
		host, port := hostPort(t, addr)
		var gd gdState
		if out := runGameDig(t, node, host, port, "protocol-minecraftvanilla"); json.Unmarshal(out, &gd) != nil {
			t.Fatalf("gamedig printed %q", out)
		}
		resp, _, err := mcOurs(streams()[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Mods) < 4 || resp.ModLoader == "" {
			t.Fatalf("no mods to compare: %+v", resp.Status)
		}
		diff := compare(gd, resp.Mods)
		switch {
		case !mutate && diff != "":
			t.Errorf("GameDig and querylens differ: %s", diff)
		case mutate && changed() == 0:
			t.Error("the proxy changed nothing")
		case mutate && diff == "":
			t.Error("GameDig read a changed mod id, and the comparison saw no difference")
		}
	}
}

// compareMCUtilBedrock says how minecraft-server-util's reading of a
// Bedrock pong differs from ours: the MOTD (both lines, § codes removed),
// the edition, version and protocol, the counts, the server GUID (which
// it reads as a signed 64-bit number), the server id, the game mode and
// its number, the IPv4 port.
func compareMCUtilBedrock(mc mcutilResult, p minecraft.BedrockResponse) []string {
	var diffs []string
	f := p.Fields
	motd := sectionCode.ReplaceAllString(f[minecraft.BedrockName], "")
	if f[minecraft.BedrockLine2] != "" {
		motd += "\n" + sectionCode.ReplaceAllString(f[minecraft.BedrockLine2], "")
	}
	version, protocol := "", ""
	if mc.Version != nil {
		version, protocol = mc.Version.Name, strconv.Itoa(mc.Version.Protocol)
	}
	port := ""
	if mc.PortIPv4 != nil {
		port = strconv.Itoa(*mc.PortIPv4)
	}
	for _, c := range [][3]string{
		{"motd", mc.MOTD.Clean, motd},
		{"edition", mc.Edition, f[minecraft.BedrockEdition]},
		{"version", version, f[minecraft.BedrockVersion]},
		{"protocol", protocol, f[minecraft.BedrockProtocolNum]},
		{"players", strconv.Itoa(mc.Players.Online) + "/" + strconv.Itoa(mc.Players.Max), strconv.Itoa(p.Players) + "/" + strconv.Itoa(p.Max)},
		{"server GUID", mc.ServerGUID, strconv.FormatInt(int64(p.ServerGUID), 10)},
		{"server id", mc.ServerID, f[minecraft.BedrockServerID]},
		{"game mode", mc.GameMode, f[minecraft.BedrockGameMode]},
		{"game mode number", strconv.Itoa(mc.GameModeID), f[minecraft.BedrockGameModeNum]},
		{"IPv4 port", port, f[minecraft.BedrockPortV4]},
	} {
		if c[1] != c[2] {
			diffs = append(diffs, c[0]+": minecraft-server-util "+strconv.Quote(c[1])+", querylens "+strconv.Quote(c[2]))
		}
	}
	return diffs
}

// TestBedrockMCUtilInterop asks the demo's Bedrock server with
// minecraft-server-util's statusBedrock (the RakNet unconnected ping):
// every field of the pong it reports must be our reading of it; with one
// byte of the name changed in the pong it reads, the comparison must
// report the MOTD.
func TestBedrockMCUtilInterop(t *testing.T) {
	node := needMCUtil(t)
	for _, mutate := range []bool{false, true} {
		h := NewBedrock(8, Normal)
		addr, conversation := recordingServer(t, h)
		ask, changed := addr, func() int { return 0 }
		if mutate {
			ask, changed = mutatingProxy(t, addr, replaceOnce(h.name, renamed(h.name)))
		}
		mc := runMCUtil(t, node, "bedrock", ask, 20*time.Second)
		if !mc.OK {
			t.Fatalf("minecraft-server-util refused the server: %s", mc.Error)
		}
		_, replies := conversation()
		if len(replies) == 0 {
			t.Fatal("no pong was sent")
		}
		p, err := minecraft.DecodeBedrockResponse(replies[len(replies)-1], nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Count < 12 || p.Max == 0 {
			t.Fatalf("a pong of %d fields proves little: %q", p.Count, p.MOTD)
		}
		diffs := compareMCUtilBedrock(mc.Result, p)
		switch {
		case !mutate && len(diffs) > 0:
			t.Errorf("minecraft-server-util and querylens differ:\n%s", strings.Join(diffs, "\n"))
		case mutate && changed() == 0:
			t.Error("the proxy changed no pong")
		case mutate && (len(diffs) != 1 || !strings.HasPrefix(diffs[0], "motd:")):
			t.Errorf("minecraft-server-util read a name changed by one byte, and the comparison said %q", diffs)
		}
	}
}
