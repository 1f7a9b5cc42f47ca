package mumble

// Protocol is the name the codec registers under.
const Protocol = "mumble"

// DefaultPort is Mumble's port: the server answers the ping on the UDP
// port of its TCP voice service.
const DefaultPort = 64738

// Wire sizes (docs/protocols/mumble.md "Wire format").
const (
	// RequestLen is the ping: u32 zero, then the 8-byte ident.
	RequestLen = 12
	// ResponseLen is the answer: version u32, ident echo (8 bytes),
	// users u32, max users u32, bandwidth u32; big-endian.
	ResponseLen = 24
	// MaxQueryLen is the longest query CheckQuery accepts: the ping.
	MaxQueryLen = RequestLen
)

// Request is the ping. Ident is any 8 bytes the server echoes (clients send
// a timestamp, to measure the round trip).
type Request struct {
	Ident uint64
}

// Response is the server's answer to a ping.
type Response struct {
	// Version is the server's version as sent: 0x00MMmmpp (major,
	// minor, patch; Version.String).
	Version Version
	// Ident is the request's ident, echoed.
	Ident uint64
	// Users is how many users are connected, MaxUsers how many may be.
	Users, MaxUsers uint32
	// Bandwidth is the most bits per second a client may send.
	Bandwidth uint32
}

// Version is a Mumble version as the ping carries it: the top byte is
// zero, then major, minor and patch, one byte each.
type Version uint32

// Major, Minor and Patch are the version's parts.
func (v Version) Major() int { return int(v >> 16 & 0xff) }
func (v Version) Minor() int { return int(v >> 8 & 0xff) }
func (v Version) Patch() int { return int(v & 0xff) }

// String is "major.minor.patch", as Mumble and GameDig write it.
func (v Version) String() string {
	return itoa(v.Major()) + "." + itoa(v.Minor()) + "." + itoa(v.Patch())
}

// itoa writes a small non-negative number in decimal without strconv's
// tables in the browser module.
func itoa(n int) string {
	var b [3]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 || i == 0 {
			break
		}
	}
	return string(b[i:])
}
