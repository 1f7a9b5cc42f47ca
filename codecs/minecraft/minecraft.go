package minecraft

// Protocol is the registry name of Minecraft Java Edition's Server List
// Ping; BedrockProtocol that of Bedrock Edition's RakNet unconnected ping.
const (
	Protocol        = "minecraft"
	BedrockProtocol = "bedrock"
)

// The usual ports: a Java server's game port, on which it answers the
// List Ping (TCP), and a Bedrock server's (UDP).
const (
	DefaultPort = 25565
	BedrockPort = 19132
)

// Bounds.
const (
	// MaxQueryLen is the longest query CheckQuery accepts: the 1.6 legacy
	// ping with a 253-character host in UTF-16 (541 bytes) and room over.
	MaxQueryLen = 600
	// MaxReplyBytes is the most a status reply may bring (128 KiB): the
	// relay's cap, and the longest packet MessageLen cuts.
	MaxReplyBytes = 128 << 10
	// MaxHostLen is the longest host a handshake carries (a DNS name).
	MaxHostLen = 253
	// MaxFaviconSide is the largest favicon side Minecraft shows.
	MaxFaviconSide = 64
	// PingProtocol is the protocol number the handshake sends by default:
	// -1, "not a client", which every version answers with its own.
	PingProtocol = -1
	// LegacyProtocol is the protocol number a 1.6 legacy ping sends
	// (1.6.4's).
	LegacyProtocol = 78
)

// Packet ids of the status state and the legacy bytes.
const (
	idHandshake  = 0x00 // serverbound, handshake state: proto, host, port, next state
	idStatusReq  = 0x00 // serverbound, status state: empty
	idStatusResp = 0x00 // clientbound, status state: the JSON as a string
	stateStatus  = 1    // the handshake's next state that asks the status

	legacyPing    = 0xfe // FE [01 [FA …]]: the ping of 1.6 and older
	legacyPayload = 0x01
	legacyPlugin  = 0xfa // the 1.6 plugin message "MC|PingHost"
	legacyKick    = 0xff // FF u16 count, UTF-16BE text: the legacy reply
)

// legacyChannel is the 1.6 ping's plugin channel.
const legacyChannel = "MC|PingHost"

// Request is a Server List Ping: the handshake (next state 1) followed by
// the status request in one write, or the legacy ping.
type Request struct {
	// ProtocolVersion is the handshake's protocol number (PingProtocol:
	// -1 asks without naming a version; the legacy ping sends a byte).
	ProtocolVersion int32
	// Host and Port are the server's name and port as the user gave them:
	// proxies (BungeeCord, Velocity) route on them.
	Host string
	Port uint16
	// Legacy asks with the legacy ping, FE 01 FA "MC|PingHost" (1.6), to
	// which servers of 1.4 to 1.6 answer, and newer ones too.
	Legacy bool
}

// Response is a decoded status reply.
type Response struct {
	// Legacy says the reply is the legacy kick packet (FF) rather than a
	// status response.
	Legacy bool
	// JSON is the status response's JSON text (aliases the input).
	JSON []byte
	Status
}

// Status is what a server says of itself.
type Status struct {
	// Description is the server's description (its MOTD) as plain text:
	// the chat component's text without formatting codes.
	Description string
	// Runs are the description's pieces with their formatting.
	Runs []Run
	// VersionName ("1.21.4", "Paper 1.20.1") and VersionProtocol (769).
	VersionName     string
	VersionProtocol int
	HasVersion      bool
	// Online and Max count the players; Sample lists some of them (at
	// most a dozen in vanilla, or a text shown on hover).
	Online, Max int
	HasPlayers  bool
	Sample      []SamplePlayer
	// Favicon is the server's icon, when it sends one.
	Favicon *Favicon
	// ModLoader ("forge", "neoforge", "fml") and Mods, when the server
	// lists its mods (Forge's forgeData, FML's modinfo).
	ModLoader string
	Mods      []Mod
	// EnforcesSecureChat, when sent (1.19.1 and newer).
	EnforcesSecureChat, HasSecureChat bool
}

// Run is one piece of formatted text.
type Run struct {
	Text  string
	Color string // a named colour ("gold") or "#rrggbb"; "": inherited default
	Style uint8  // StyleBold, … or'ed
}

// Text styles of a Run.
const (
	StyleBold = 1 << iota
	StyleItalic
	StyleUnderlined
	StyleStrikethrough
	StyleObfuscated
)

var styleNames = [...]string{"bold", "italic", "underlined", "strikethrough", "obfuscated"}

// SamplePlayer is one player of the status's sample.
type SamplePlayer struct {
	Name, ID string
}

// Mod is one mod a modded server lists.
type Mod struct {
	ID, Version string
}

// Favicon is the server's icon: a data URI holding a PNG. OK says its
// IHDR is a PNG's of at most MaxFaviconSide square; the bytes are not
// decoded here (a server that shows it checks it with image.DecodeConfig
// before decoding it).
type Favicon struct {
	// Data is the URI's base64 text (after "data:image/png;base64,").
	Data          string
	Width, Height int
	OK            bool
	Problem       string // why it is not OK
}

// varInt reads a VarInt at the start of b: its value and length, n == 0
// when b ends before its last byte, n < 0 when it runs past five bytes.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func varInt(b []byte) (v int32, n int) {
	var u uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		u |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return int32(u), i + 1
		}
	}
	return 0, -1
}

// appendVarInt appends v as a VarInt.
//
// Out of line: see "Code size" in codecs/doc.go.
//
//go:noinline
func appendVarInt(b []byte, v int32) []byte {
	u := uint32(v)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// isLegacyReply says whether b starts a legacy reply (FF, a count, UTF-16
// text) rather than a packet whose VarInt length starts with FF: a server
// writes its VarInts in the fewest bytes, so FF 00 is no VarInt, and the
// 1.4–1.6 reply starts "§1". It needs 5 bytes to tell in the worst case;
// known says it could tell.
func isLegacyReply(b []byte) (legacy, known bool) {
	if len(b) == 0 || b[0] != legacyKick {
		return false, len(b) > 0
	}
	if len(b) < 2 {
		return false, false
	}
	if b[1] == 0 {
		return true, true
	}
	if len(b) < 5 {
		return false, false
	}
	return b[3] == 0 && b[4] == 0xa7, true
}

// isLegacyPing says whether b is the legacy ping (FE, FE 01, FE 01 FA …)
// rather than a packet whose VarInt length starts with FE (a length of
// 126 modulo 128, past 127: FE 01 is 254), which a packet id (00) follows
// where the ping has FA.
func isLegacyPing(b []byte) bool {
	return len(b) > 0 && b[0] == legacyPing && (len(b) == 1 || b[1] == legacyPayload && (len(b) == 2 || b[2] == legacyPlugin))
}

// MessageLen is the stream framing of the Java protocol (the relay's
// codecs.Description.MessageLen): the length of the first whole packet in
// b (a VarInt length and that many bytes, or a legacy reply: FF, a count
// of UTF-16 units, the units), or 0 while more bytes are needed. A frame
// that cannot be a reply (a VarInt longer than five bytes, a length of 0
// or past MaxReplyBytes) is cut at its header: the conversation's Feed
// takes that header as a message, says the reply is complete, and its
// Result says what is wrong, so that the reader never waits for a length
// the cap would refuse.
func MessageLen(b []byte) int {
	legacy, known := isLegacyReply(b)
	if !known {
		return 0
	}
	if legacy {
		if len(b) < 3 {
			return 0
		}
		n := 3 + 2*(int(b[1])<<8|int(b[2]))
		switch {
		case n > MaxReplyBytes:
			return 3
		case len(b) < n:
			return 0
		}
		return n
	}
	v, k := varInt(b)
	switch {
	case k == 0:
		return 0
	case k < 0:
		return 5 // five bytes, the fifth with its continuation bit set
	case v <= 0 || int(v) > MaxReplyBytes-k:
		return k
	case len(b) < k+int(v):
		return 0
	}
	return k + int(v)
}
