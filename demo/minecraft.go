package demo

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs/minecraft"
)

// MinecraftKind is what an emulated Minecraft Java server is.
type MinecraftKind uint8

const (
	// MinecraftVanilla answers the List Ping with a chat component, a
	// sample of players and a favicon, and the legacy ping in the 1.6
	// form, as servers from 1.7 on do.
	MinecraftVanilla MinecraftKind = iota
	// MinecraftForge is a Forge server: forgeData with its mods, a plain
	// string description with § codes, a favicon.
	MinecraftForge
	// MinecraftLegacy is a 1.6 server: it answers only the legacy ping
	// and closes on a List Ping.
	MinecraftLegacy
)

// minecraftNames are the words the demo's server names are made of.
var minecraftNames = []string{"Creeper Hollow", "Redstone Works", "Nether Gate", "Skyblock Isle", "Diamond Depths", "Village Green"}

var minecraftPlayers = []string{"Notch", "jeb_", "Dinnerbone", "Grumm", "Alex", "Steve", "Herobrine", "Kappa"}

// MinecraftServer is an emulated Minecraft Java server (a
// StreamHandler); its Behavior spoils its replies as the hostile ones do.
type MinecraftServer struct {
	kind    MinecraftKind
	b       Behavior
	name    string
	online  int
	max     int
	players []string
	favicon string
	// status and reply are the status JSON and the whole status
	// response, built once: a server's status does not change.
	status []byte
	reply  []byte
}

// NewMinecraft returns an emulated Java server of kind, spoilt as b says
// (BadVarInt: a packet length of six bytes; BadLength: a length beyond
// the data, the connection left open; BadJSON: JSON that does not parse;
// BadImage: a favicon of 128×128; Trickle: a byte at a time).
func NewMinecraft(seed int64, kind MinecraftKind, b Behavior) *MinecraftServer {
	rng := rand.New(rand.NewSource(seed))
	s := &MinecraftServer{kind: kind, b: b, name: minecraftNames[rng.Intn(len(minecraftNames))], max: 20 + 10*rng.Intn(4)}
	s.online = 2 + rng.Intn(5)
	for _, i := range rng.Perm(len(minecraftPlayers))[:s.online] {
		s.players = append(s.players, minecraftPlayers[i])
	}
	side := 64
	if b == BadImage {
		side = 128
	}
	if kind != MinecraftLegacy {
		s.favicon = demoFavicon(side, uint8(seed))
	}
	s.status = s.buildStatus()
	s.reply = minecraft.AppendStatusResponse(nil, s.status)
	return s
}

// Name is the server's name as the pages show it (its description in
// plain text, on one line).
func (s *MinecraftServer) Name() string {
	switch s.kind {
	case MinecraftForge:
		return "querylens Forge " + s.name
	case MinecraftLegacy:
		return "querylens 1.6 " + s.name
	}
	return "querylens " + s.name + " Java demo"
}

// demoFavicons holds the favicon data URIs made so far, by side<<8 |
// shade: a demo of a thousand servers encodes at most a few hundred.
var demoFavicons sync.Map

// demoFavicon is the data URI of demoPNG(side, shade).
func demoFavicon(side int, shade uint8) string {
	k := side<<8 | int(shade)
	if f, ok := demoFavicons.Load(k); ok {
		return f.(string)
	}
	f := "data:image/png;base64," + base64.StdEncoding.EncodeToString(demoPNG(side, shade))
	demoFavicons.Store(k, f)
	return f
}

// demoPNG is a side×side PNG of one colour.
func demoPNG(side int, shade uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			img.Set(x, y, color.RGBA{R: shade, G: uint8(x * 4), B: uint8(y * 4), A: 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// Status is the server's status JSON (a copy: the caller may change it).
func (s *MinecraftServer) Status() []byte { return append([]byte(nil), s.status...) }

// buildStatus marshals the server's status JSON.
func (s *MinecraftServer) buildStatus() []byte {
	type player struct {
		Name string `json:"name"`
		ID   string `json:"id"`
	}
	sample := make([]player, len(s.players))
	for i, p := range s.players {
		sample[i] = player{p, "00000000-0000-4000-8000-" + strconv.FormatInt(int64(100000000000+i), 10)}
	}
	st := map[string]any{
		"version": map[string]any{"name": "1.21.4", "protocol": 769},
		"players": map[string]any{"online": s.online, "max": s.max, "sample": sample},
		"favicon": s.favicon,
	}
	switch s.kind {
	case MinecraftForge:
		st["version"] = map[string]any{"name": "1.20.1", "protocol": 763}
		st["description"] = "§6querylens Forge §r" + s.name
		st["forgeData"] = map[string]any{"channels": []any{}, "fmlNetworkVersion": 3, "truncated": false,
			"mods": []map[string]string{{"modId": "minecraft", "modmarker": "1.20.1"}, {"modId": "forge", "modmarker": "47.2.0"},
				{"modId": "jei", "modmarker": "15.2.0.27"}, {"modId": "create", "modmarker": "0.5.1.f"}}}
	default:
		st["description"] = map[string]any{"text": "", "extra": []any{
			map[string]any{"text": "querylens ", "color": "gold", "bold": true},
			map[string]any{"text": s.name, "color": "aqua"},
			map[string]any{"text": "\n§7Java demo"}}}
		st["enforcesSecureChat"] = true
	}
	b, _ := json.Marshal(st)
	if s.b == BadJSON {
		b = b[:len(b)-1] // the outer object left open
	}
	return b
}

// Reply answers a List Ping (handshake and status request), a ping after
// it (the pong echoes it), and the legacy ping. The status response is
// the server's own, shared by every call: the caller writes it and does
// not change it.
func (s *MinecraftServer) Reply(got []byte) ([]byte, bool) {
	if len(got) > 0 && got[0] == 0xfe {
		// FE 01 FA …: wait for the whole plugin message; FE or FE 01
		// alone (older clients) after a moment's silence is not handled.
		if _, err := minecraft.DecodeRequest(got); err != nil {
			return nil, false
		}
		if s.kind == MinecraftForge {
			return nil, true
		}
		motd := s.Name()
		return minecraft.AppendLegacyResponse(nil, minecraft.LegacyProtocol, "1.6.4", motd, s.online, s.max), true
	}
	if p := pingPacket(got); p != nil {
		return p, true
	}
	if _, err := minecraft.DecodeRequest(got); err != nil {
		return nil, false // more to come (or the idle deadline ends it)
	}
	if s.kind == MinecraftLegacy {
		return nil, true // a 1.6 server does not know the List Ping
	}
	switch s.b {
	case BadVarInt:
		return []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00}, true
	case BadLength:
		// The status packet whose length says 1000 bytes more than
		// follow.
		js := s.Status()
		body := append(appendVarInt([]byte{0}, len(js)), js...)
		return append(appendVarInt(nil, len(body)+1000), body...), true
	}
	// The response built once, shared by every connection: the caller
	// only writes it.
	return s.reply, true
}

// appendVarInt appends v as a Minecraft VarInt.
func appendVarInt(b []byte, v int) []byte {
	u := uint32(v)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// pingPacket returns the pong for a ping packet (09 01 and 8 bytes), or
// nil.
func pingPacket(b []byte) []byte {
	if len(b) == 10 && b[0] == 9 && b[1] == 1 {
		return append([]byte(nil), b...)
	}
	return nil
}

// BedrockServer is an emulated Bedrock server (a Handler): it answers the
// unconnected ping with a pong.
type BedrockServer struct {
	guid   uint64
	name   string
	online int
	max    int
}

// NewBedrock returns an emulated Bedrock server.
func NewBedrock(seed int64, b Behavior) *BedrockServer {
	rng := rand.New(rand.NewSource(seed))
	return &BedrockServer{guid: rng.Uint64(), name: minecraftNames[rng.Intn(len(minecraftNames))], online: rng.Intn(8), max: 10 + 10*rng.Intn(3)}
}

// MOTD is the ';'-separated string the pong carries.
func (s *BedrockServer) MOTD() string {
	return "MCPE;§bquerylens §r" + s.name + " Bedrock demo;748;1.21.44;" + strconv.Itoa(s.online) + ";" + strconv.Itoa(s.max) + ";" +
		strconv.FormatUint(s.guid, 10) + ";Demo level;Survival;1;19132;19133;"
}

func (s *BedrockServer) Respond(q []byte, _ netip.AddrPort, _ time.Time) [][]byte {
	p, err := minecraft.DecodeBedrockRequest(q)
	if err != nil {
		return nil
	}
	return [][]byte{minecraft.AppendBedrockResponse(nil, p.Time, s.guid, s.MOTD())}
}

// minecraftStreams are the demo's Minecraft Java servers (TCP).
var minecraftStreams = []struct {
	kind MinecraftKind
	b    Behavior
	opts map[string]string
}{
	{MinecraftVanilla, Normal, nil},
	{MinecraftForge, Normal, nil},
	{MinecraftLegacy, Normal, map[string]string{"legacy": "true"}},
	{MinecraftVanilla, Trickle, nil},
	{MinecraftVanilla, BadVarInt, nil},
	{MinecraftVanilla, BadLength, nil},
	{MinecraftVanilla, BadJSON, nil},
	{MinecraftVanilla, BadImage, nil},
}
