package relay

import (
	"context"
	"net/netip"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// Resolver turns a host name into addresses. *net.Resolver satisfies it;
// tests inject a fake so that nothing reaches real DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config tunes a Server. The zero value of every field means its default;
// the defaults are meant for a relay open to the internet.
type Config struct {
	// OriginPatterns lists the origins (host patterns as in path.Match, or
	// "scheme://host" patterns) whose pages may connect, in addition to
	// same-origin requests, which are always allowed. Default: none. A
	// pattern that matches everything ("*") is refused by Validate.
	OriginPatterns []string

	// AllowTargets lists ranges that policy would refuse (private, loopback,
	// ...) but the operator wants to reach, e.g. 127.0.0.0/8 for a demo or
	// a LAN party's 192.168.1.0/24. Default: none.
	AllowTargets []netip.Prefix
	// AllowAddrs lists exact targets (address and port) that policy would
	// refuse but that may be queried: the operator's own servers, such as
	// the demo's on loopback. Unlike AllowTargets, each opens one port of
	// one address. Queries to them are not limited per target (TargetRate,
	// TargetHostRate), since no third party's server is asked. Default:
	// none.
	AllowAddrs []netip.AddrPort
	// AllowPorts lists ports below 1024 that may be queried. Port 0 is
	// never allowed. Default: none.
	AllowPorts []uint16
	// TrustedProxies lists the reverse proxies whose X-Forwarded-For is
	// believed: the client is the rightmost hop that is not one of them,
	// written as an address or with a port ("192.0.2.7:5000",
	// "[2001:db8::7]:5000"). A request whose hop does not parse
	// ("unknown", empty) is refused with 400 (rule "forwarded-for"), never
	// taken for the proxy's own. Default: none (the client is RemoteAddr).
	TrustedProxies []netip.Prefix
	// Resolver resolves target host names. Default: net.DefaultResolver.
	Resolver Resolver
	// ResolveTimeout bounds one lookup. Default 2 s.
	ResolveTimeout time.Duration

	// MaxDatagram is the largest query or reply datagram in bytes; larger
	// replies are dropped. Default 8192 (Zandronum's largest packet).
	MaxDatagram int
	// ReplyWindow is how long the relay listens for replies after sending
	// one query. Default 2 s.
	ReplyWindow time.Duration
	// MaxReplyBytes and MaxReplyDatagrams cap what one query may bring
	// back (bytes are UDP payload bytes, as on the wire). Defaults 64 KiB
	// and 64 datagrams. ReplyCaps overrides them per protocol.
	MaxReplyBytes     int
	MaxReplyDatagrams int
	// MaxStreamBytes and MaxStreamMessages cap what one stream exchange
	// (EXCHANGE, a TCP protocol's conversation) may bring back, where the
	// protocol's ReplyCaps entry leaves a field zero. Defaults 128 KiB and
	// 1024 messages.
	MaxStreamBytes    int
	MaxStreamMessages int
	// StreamDeadline bounds one stream exchange, from its connect to its
	// close: a slow or silent server holds one socket for at most this
	// long. Default 5 s.
	StreamDeadline time.Duration
	// StreamConnectTimeout bounds a stream exchange's connect. Default 3 s.
	StreamConnectTimeout time.Duration
	// MaxStreams, MaxStreamsPerClient and MaxStreamsPerHost cap the TCP
	// connections in progress: in the relay, per client key, and per
	// target address (any port; the operator's own servers, AllowAddrs,
	// are not capped per address). Stream exchanges count in the
	// per-client and per-target rates and in MaxUpstream as well, like
	// queries. Defaults 256, 8 and 2.
	MaxStreams          int
	MaxStreamsPerClient int
	MaxStreamsPerHost   int
	// ReplyCaps overrides MaxReplyBytes and MaxReplyDatagrams per protocol
	// name: the one table of the protocols whose replies differ from the
	// rest. A zero field takes the global value. Default (nil):
	// DefaultReplyCaps(); an empty map: the global caps for every protocol.
	ReplyCaps map[string]ReplyCap

	// MaxInFlight is how many query ids may be open at once on one
	// connection. Default 64.
	MaxInFlight int
	// MaxUpstream is how many upstream exchanges (UDP sockets) may be open
	// at once in the whole relay, shared between client keys (each heavy
	// key gets an equal share of all but the last sixteenth, which is kept
	// for light keys; see slots.go). Default 1024.
	MaxUpstream int

	// SilentCooldown is how long a target that left 3 queries in a row
	// without a reply is answered at once with a timeout (rule
	// "cooldown") instead of being asked again. Default 10 s; negative:
	// never.
	SilentCooldown time.Duration

	// CacheTTL is how long replies stay shared after their window closed.
	// Default 10 s (Zandronum servers and masters answer one IP once every
	// 10 s). Negative: no cache; identical queries in flight are still
	// coalesced.
	CacheTTL time.Duration
	// ProtocolCacheTTL overrides CacheTTL per protocol name.
	ProtocolCacheTTL map[string]time.Duration
	// CacheKey maps a query datagram to the part that decides its answer,
	// leaving out per-asker echo fields, so that identical questions from
	// different pages share one upstream query. Default: the datagram.
	CacheKey func(protocol string, datagram []byte) []byte
	// MaxCacheEntries and MaxCacheBytes bound the cache; least recently
	// used entries are evicted first. Defaults 4096 entries, 16 MiB.
	MaxCacheEntries int
	MaxCacheBytes   int

	// ConnRate limits queries per connection. Default 20/s, burst 100.
	ConnRate shared.Rate
	// IPRate limits queries per client address (IPv6: per /64), across all
	// its connections. Default 40/s, burst 200.
	IPRate shared.Rate
	// TargetRate limits upstream queries to one target address and port,
	// across all clients (cache hits do not count), shared between the
	// clients asking (see sharelimit.go). Default 2/s, and a burst of
	// twice the protocols registered, at least 16 (TargetRateDefault): the
	// burst holds one probe of an address in every protocol (a query each,
	// and the follow-ups of those that answer with a challenge), or one
	// A2S conversation (INFO, PLAYER and RULES, each after a challenge);
	// the rate stays what one server answers a browsing page.
	TargetRate shared.Rate
	// TargetHostRate limits upstream queries to one target IP, any port,
	// shared the same way. Default 20/s, burst 40.
	TargetHostRate shared.Rate
	// PingRate limits PING frames per connection. Default 2/s, burst 10.
	PingRate shared.Rate
	// VisitorRate limits, per client address (IPv6: per /64), the pages
	// that make the server query a game server itself through Exchange
	// (status pages, badges): see AllowVisitor. Default 1/s, burst 30.
	VisitorRate shared.Rate

	// MaxConns caps open connections; MaxConnsPerIP caps them per client
	// address (IPv6: per /64). Defaults 4096 and 8.
	MaxConns      int
	MaxConnsPerIP int
	// IdleTimeout closes a connection that sent nothing and has nothing in
	// flight for this long. Default 60 s.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection whose client does not take a frame
	// within this time. Default 10 s.
	WriteTimeout time.Duration
	// QueueFrames and QueueBytes bound each connection's send queue; frames
	// beyond them are dropped and counted. Defaults 256 frames, 256 KiB.
	QueueFrames int
	QueueBytes  int
	// MaxQueuedBytes bounds the reply bytes queued on all connections
	// together, so that many connections that stop reading cannot hold
	// QueueBytes each without limit. Default 64 MiB.
	MaxQueuedBytes int

	// Loopback, if not nil, replaces the limits per client for clients
	// whose address is loopback (127.0.0.0/8, ::1): the browser of someone
	// who runs the relay on their own machine, as the demo does, may ask
	// every server at once. Other clients keep the limits above. Behind a
	// reverse proxy on the same machine every client looks local unless
	// the proxy is listed in TrustedProxies. Zero fields take the values
	// above.
	Loopback *ClientLimits

	// SharedCache and SharedLimiter, when set, share the reply cache,
	// coalescing and the per-client and per-target rate limits with the
	// other relays using the same store (see package relay/shared,
	// implemented by relay/redisstore). The in-process cache and limits still apply and
	// serve alone while the store is down. Default: none.
	SharedCache   shared.Cache
	SharedLimiter shared.Limiter
	// SharedTimeout bounds each shared store operation; one that takes
	// longer counts as the store being down. Default 250 ms.
	SharedTimeout time.Duration

	// Clock is the time the rate limiters, the upstream shares, the
	// cooldowns, the cache and the client-token leases run on: the one
	// clock the relay decides by. Timeouts on sockets and connections
	// (ReplyWindow, IdleTimeout, WriteTimeout) keep the real time. Default
	// time.Now; tests give a fake one to decide limits without waiting.
	Clock func() time.Time
}

// ClientLimits are the limits that apply to each client (Config.Loopback).
type ClientLimits struct {
	ConnRate    shared.Rate // queries per connection
	IPRate      shared.Rate // queries per client address
	MaxInFlight int         // query ids open at once per connection
	QueueFrames int         // send queue per connection, in REPLY frames
	QueueBytes  int         // send queue per connection, in bytes
	// MaxStreams is MaxStreamsPerClient: TCP connections in progress for
	// the client key.
	MaxStreams int
}

// clientLimits returns the limits of c for clients that are not loopback,
// and of l (its zero fields filled from c) for loopback ones.
func (c *Config) clientLimits(loopback bool) ClientLimits {
	d := ClientLimits{ConnRate: c.ConnRate, IPRate: c.IPRate, MaxInFlight: c.MaxInFlight, QueueFrames: c.QueueFrames, QueueBytes: c.QueueBytes,
		MaxStreams: c.MaxStreamsPerClient}
	if !loopback || c.Loopback == nil {
		return d
	}
	l := *c.Loopback
	orRate(&l.ConnRate, d.ConnRate)
	orRate(&l.IPRate, d.IPRate)
	orInt(&l.MaxInFlight, d.MaxInFlight)
	orInt(&l.QueueFrames, d.QueueFrames)
	orInt(&l.QueueBytes, d.QueueBytes)
	orInt(&l.MaxStreams, d.MaxStreams)
	return l
}

// replyCap is what one query of protocol may bring back: its ReplyCaps
// entry, the global caps where the entry leaves a field zero.
func (c *Config) replyCap(protocol string) ReplyCap {
	rc := c.ReplyCaps[protocol]
	if rc.Bytes == 0 {
		rc.Bytes = c.MaxReplyBytes
	}
	if rc.Datagrams == 0 {
		rc.Datagrams = c.MaxReplyDatagrams
	}
	return rc
}

// largestReplyCap is the most bytes any protocol's query may bring back.
func (c *Config) largestReplyCap() int {
	n := c.MaxReplyBytes
	for _, rc := range c.ReplyCaps {
		n = max(n, rc.Bytes)
	}
	return n
}

// cacheTTL is the TTL for protocol; <= 0 means do not cache.
func (c *Config) cacheTTL(protocol string) time.Duration {
	if d, ok := c.ProtocolCacheTTL[protocol]; ok {
		return d
	}
	return c.CacheTTL
}

// hello is the HELLO the relay sends with this config to a client with
// limits lim.
func (c *Config) hello(lim ClientLimits) wire.Hello {
	ttl := c.CacheTTL
	if ttl < 0 {
		ttl = 0
	}
	return wire.Hello{
		Version:       wire.Version,
		MaxDatagram:   uint16(c.MaxDatagram),
		ReplyWindowMS: uint32(c.ReplyWindow / time.Millisecond),
		MaxInFlight:   uint16(lim.MaxInFlight),
		CacheTTLMS:    uint32(ttl / time.Millisecond),
	}
}
