// Package demo runs emulated game servers and a Zandronum master on
// loopback, built with the codecs' own builders, so that querylens has
// something real to browse on a machine with no internet.
package demo

import (
	"net/netip"
	"time"
)

// A Handler is the protocol logic of one emulated server: given a datagram
// that arrived from a client, it returns the datagrams to send back (none to
// stay silent). Handlers are called from one goroutine per server and may
// keep state (rate-limit tables, players joining and leaving over time).
type Handler interface {
	// Respond answers datagram q received from from at time now.
	Respond(q []byte, from netip.AddrPort, now time.Time) [][]byte
}

// Behavior is how an emulated server misbehaves, like real ones do.
type Behavior uint8

const (
	Normal    Behavior = iota
	Slow               // answers after a delay (SlowDelay)
	RateLimit          // answers one query per client IP every 10 s (Zandronum sends its too-soon reply; others drop)
	Truncated          // cuts its replies short
	Silent             // never answers
	// The hostile servers (Hostile): replies that break the protocol's
	// own rules, so that a page shows "malformed" with the field and
	// offset at fault.
	BadLength // a length field larger than the bytes that follow
	BadCount  // a count larger than the entries that follow
	Endless   // a string that runs to the end of the datagram without its terminator
	// More of them, for the Minecraft servers (demo/minecraft.go).
	BadVarInt // a VarInt longer than the five bytes a 32-bit one may take
	BadJSON   // JSON that does not parse
	BadImage  // an image that is not what the protocol allows (a favicon of 128×128); the rest decodes, with a warning
	Trickle   // writes its reply a byte at a time (TCP), TrickleEvery apart
)

// SlowDelay is how long a Slow server waits before answering.
const SlowDelay = 700 * time.Millisecond

// Hostile reports whether b is one of the hostile servers' behaviours,
// whose replies never decode.
func (b Behavior) Hostile() bool {
	return b == BadLength || b == BadCount || b == Endless || b == BadVarInt || b == BadJSON
}

func (b Behavior) String() string {
	switch b {
	case Slow:
		return "slow"
	case RateLimit:
		return "rate-limited"
	case Truncated:
		return "truncated"
	case Silent:
		return "silent"
	case BadLength:
		return "bad length"
	case BadCount:
		return "bad count"
	case Endless:
		return "endless string"
	case BadVarInt:
		return "long varint"
	case BadJSON:
		return "bad json"
	case BadImage:
		return "bad image"
	case Trickle:
		return "trickle"
	}
	return "normal"
}
