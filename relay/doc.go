// Package relay forwards game-server query datagrams between web pages and
// UDP servers. Browsers cannot send UDP, so a page opens a WebSocket to the
// relay, sends the raw query datagram it built with the codecs (compiled to
// WebAssembly), and decodes the raw replies the relay streams back.
//
// The relay is not an open UDP proxy: it forwards only datagrams that the
// named protocol's codec accepts as a query (codecs.Codec.CheckQuery), only
// to public unicast addresses on ports from 1024 up (unless the operator
// allows more), within rate limits per connection, per client address and
// per target, and it caps what one query may bring back.
//
// # Wire protocol
//
// The WebSocket subprotocol is "querylens.relay.v1" (Subprotocol), or
// "querylens.relay.v1.batch" (SubprotocolBatch), which the relay prefers
// when a client offers both; it refuses a connection that offers neither
// (close 1008). Every message is binary and holds exactly one frame, but for
// BATCH. A frame is a type byte and a payload; integers are big-endian;
// "rest" means the remaining bytes of the message. Fixed-size frames must
// have exactly their size.
//
// Client to relay:
//
//	0x01 QUERY   u32 id | u8 n | protocol (n bytes) | u8 m | target (m bytes) | datagram (rest)
//	0x02 PING    u32 nonce
//	0x03 CANCEL  u32 id
//	0x04 RELEASE u32 id
//
// Relay to client:
//
//	0x80 HELLO   u8 version (1) | u16 max datagram bytes | u32 reply window ms |
//	             u16 max queries in flight per connection | u32 cache TTL ms (0: no cache)
//	0x81 REPLY   u32 id | u32 rtt µs | u8 flags | datagram (rest)
//	0x82 END     u32 id | u8 reason | u16 replies sent
//	0x83 ERROR   u32 id | u8 code | u16 n | message (n bytes, UTF-8)
//	0x84 PONG    u32 nonce
//	0x85 BATCH   (u16 n | frame (n bytes))+, to the message's end
//
// BATCH comes only with SubprotocolBatch: the frames that were queued for
// the client together (its replies that came at once) go in one message of
// at most 64 KiB, in order, each any relay-to-client frame but HELLO and
// BATCH (n ≥ 1). A browser handles one message event for them, not one
// each. A client reads them as if each had come alone; one that cannot
// parse a BATCH should close the connection (relay.js: 4000 with the
// reason). The command line's Client speaks Subprotocol.
//
// A client on SubprotocolBatch may send BATCH too, of client-to-relay
// frames (at most 64 KiB): the relay reads each as if it had come alone,
// in order, each QUERY admitted by the same limits as one sent alone. A
// BATCH that does not split (an empty frame, a length past the message's
// end, a BATCH inside) gets one ERROR code 1 with id 0 naming the byte at
// fault, and none of its frames is read; a frame inside that does not
// parse gets its own ERROR, as it would alone. relay.js sends the frames
// one task of the page makes (the queries and cancels that a message's
// replies lead to) in one BATCH: a browser's WebSocket.send costs far more
// per call than per byte. On Subprotocol, 0x85 from a client is an unknown
// frame (ERROR code 1).
//
// HELLO is the first frame on every connection. The target is "host:port"
// where host is an IPv4 address, a bracketed IPv6 address or a DNS name the
// relay resolves. Query ids are chosen by the client; 0 is reserved, and an
// id may be reused once its query has ended.
//
// For each QUERY the relay sends the datagram once and streams back, as
// REPLY frames, every datagram that arrives from exactly that address and
// port within the reply window. The rtt is measured by the relay from its
// send to that datagram's arrival; for a cached reply it is the RTT measured
// when the reply was fetched. Flags: bit 0, served from the cache; bit 1,
// coalesced (another client's identical query was already in flight and
// its replies were shared).
//
// A query ends with exactly one final frame (none after a RELEASE):
//
//   - END when at least one REPLY was sent, or after a CANCEL (then always,
//     even with 0 replies, so that the client knows the id is free). Reason:
//     0 the window closed, 1 the per-query cap (bytes or datagrams) cut
//     the reply (see "Reply caps"), 2 cancelled. "Replies sent" counts the REPLY frames queued for
//     this id; a client that received fewer lost some to its own slowness
//     (the relay drops replies for a client whose send queue is full).
//   - ERROR otherwise. Codes: 1 bad-frame, 2 unknown-protocol, 3 not-a-query,
//     4 denied (address or port refused by policy), 5 rate-limited, 6 timeout
//     (no reply within the window, or the port is closed, or rule
//     "cooldown": the target left its last 3 queries unanswered and is not
//     asked again for Config.SilentCooldown), 7 resolve (the
//     name did not resolve, or resolved to a refused address), 8 busy (too
//     many in flight, upstream capacity, shutting down), 9 internal. The
//     message always starts with the rule's name and ": " ("private:
//     10.0.0.7:10666", "per-target: 203.0.113.9:10666").
//
// A frame the relay cannot parse gets ERROR code 1 with the frame's id (0 if
// the id could not be read) and the connection stays open. A refused PING
// gets ERROR code 5 with the nonce as id; clients should draw nonces and
// query ids from one counter so that the two never meet. RELEASE ends a
// query like CANCEL but without the END: nothing more is sent for the id
// (a REPLY already on its way may still arrive, and is to be dropped).
// A client that has what it wanted from a query (a conversation's step
// whose reply asks again) releases it. The relay reads a connection's
// frames in order, so a cancelled or released id, its place among
// MaxInFlight and, when no other client asks the same exchange, its
// upstream slot (the client's share of MaxUpstream) are free for every
// frame sent after the CANCEL or RELEASE: a client counts the query out as
// soon as it sent either.
// CANCEL or RELEASE for an id
// that is not open is ignored. A message larger than the read limit (the
// longest QUERY: 517 bytes of header plus the max datagram) closes the
// connection with 1009. The relay closes idle connections with 1000, refuses
// connections over its caps with 1013 and closes with 1001 when it shuts
// down; close reasons start with the rule's name too.
//
// # Policy
//
// Policy.Check decides on an address and port without any I/O. Refused
// address ranges (each with its rule name; see the Rule constants):
// unspecified, loopback, RFC 1918 private, CGNAT 100.64.0.0/10, link-local,
// multicast, broadcast, reserved (240.0.0.0/4, 192.0.0.0/24, 2001::/23, all
// IPv6 outside 2000::/3), documentation, benchmarking, unique-local
// fc00::/7, site-local, and every IPv6 form that embeds an IPv4 address
// (v4-mapped ::ffff:0:0/96, SIIT, v4-compatible, NAT64 64:ff9b::/96 and
// 64:ff9b:1::/48, 6to4 2002::/16 and its relay anycast, Teredo 2001::/32):
// those would let a page reach an IPv4 range through an IPv6 spelling, and
// no game server needs them. Config.AllowTargets lists ranges that pass
// anyway; it is matched literally, so allowing 127.0.0.0/8 does not allow
// the literal target [::ffff:127.0.0.1]. Config.AllowAddrs lists exact addresses and ports
// that pass (the operator's own servers, such as the demo's), without
// per-target limits. Ports 0 and 1..1023 are refused unless in
// Config.AllowPorts (port 0 always).
//
// A name is resolved (with a short shared cache) and every address it
// resolves to must pass; if any is refused the query is refused with code
// 7 naming that address's rule, so that a name cannot smuggle a private
// address next to a public one (DNS rebinding). When all pass, the first
// address in the resolver's order is used. Resolved addresses are unmapped
// first: a resolver reports IPv4 answers in the IPv4-mapped form (Go's
// does for every A record, and cannot tell them from an AAAA record of
// ::ffff:a.b.c.d), and the relay sends to the IPv4 address either way. So
// a name that resolves to ::ffff:127.0.0.1 is judged, and queried, as
// 127.0.0.1, exactly like the literal 127.0.0.1: refused as loopback,
// unless AllowTargets allows 127.0.0.1. Only a target the client spelled
// as a mapped literal is judged as IPv6 (and refused): that spelling is
// the client's choice, and no game server needs it.
//
// # Replies, caching and coalescing
//
// Each upstream exchange has a connected UDP socket on an ephemeral port
// to itself while it runs. The kernel then delivers only datagrams from the
// exact address and port queried (and the relay checks again), a spoofer
// must also guess a port, and two different queries to the same server in
// flight at the same time cannot receive each other's replies, which a
// shared socket could not tell apart for protocols without a request id
// (Zandronum). Sockets are reused: after an exchange the socket is
// connected to the next exchange's target (see sockets.go), never to one
// it served before, so that a late reply cannot reach a later exchange;
// each serves at most 64 exchanges.
//
// Identical queries (same protocol, target and Config.CacheKey of the
// datagram) share one exchange: a query that arrives while one is in flight
// joins it and receives the replies so far and what follows; after the
// window closes, replies stay cached for the TTL (Config.CacheTTL, per
// protocol with Config.ProtocolCacheTTL) so that servers that answer one IP
// once every 10 s still answer every page. An exchange whose askers all
// cancelled stops early and caches what it got. The cache is bounded in
// entries and bytes and evicts the least recently used entries.
//
// # Reply caps
//
// One query may bring back at most a protocol's cap of UDP payload bytes
// (as on the wire: the datagrams' bytes, without UDP or frame headers) in
// at most its cap of datagrams. The caps are one table, Config.ReplyCaps
// (DefaultReplyCaps()), over the global MaxReplyBytes and MaxReplyDatagrams:
//
//	protocol   bytes    datagrams
//	a2s        96 KiB   64          (rules of modded servers; the a2s codec's own caps)
//	others     64 KiB   64
//
// Every datagram up to the cap is sent on as a REPLY. The first one that
// would pass it (the 65th, or the one that would bring the bytes past the
// cap) is dropped and counted in querylens_relay_drops_total{reason="reply-cap"},
// and the exchange ends at once with END reason 1 (byte-cap), so nothing
// after it is read; a reply that fills a cap exactly is not cut and ends
// with the window. What was sent stays cached and shared as usual. A page
// that decodes a cut split reply gets the codec's "incomplete" error naming
// the split part that is missing.
//
// # Resource bounds
//
// Per query: the reply window and the protocol's reply caps. Per
// connection: MaxInFlight ids, a token bucket (ConnRate, PingRate), a send
// queue bounded in frames and bytes (frames beyond it are dropped and
// counted by reason; all queues together hold at most MaxQueuedBytes) with a write timeout that closes a client that stops
// reading, a read limit and an idle timeout. Per client address (IPv6: per
// /64): a token bucket (IPRate) and MaxConnsPerIP. Per target: TargetRate
// per address and port and TargetHostRate per address, charged only for
// queries actually sent upstream and shared between the clients asking:
// once half a bucket is spent, a client that asks that target or host
// more often than an equal share of its rate waits for the top half to
// refill, so that two clients cannot take a server's whole budget from
// the others (sharelimit.go). Config.Loopback replaces the limits per
// client for clients on loopback only (the demo's page on the same
// machine). Relay-wide: MaxConns and MaxUpstream;
// upstream exchanges are shared between client keys: a heavy key (one that
// held exchanges lately, or was refused one in the last 8 reply windows;
// once a quarter of the slots are taken, every key that connected within
// the last window counts too) may hold at most (MaxUpstream - MaxUpstream/16) / (heavy keys) of them
// (rule "upstream-share"), and the last MaxUpstream/16 are kept for light
// keys (rule "upstream-cap" for the others), so that clients that flood
// silent targets, steadily or in pulses, cannot hold every slot for the
// reply window (slots.go).
//
// # Several relays
//
// With Config.SharedCache and Config.SharedLimiter (package
// relay/redisstore), relays behind one load balancer share upstream
// exchanges, cached replies and the per-client and per-target buckets
// through one store; the in-process cache and buckets stay in front and
// serve alone while the store is down (store.go has the flow).
//
// Server.Exchange runs the same path (policy, per-target limits, cache,
// coalescing) in process, for pages rendered on the server; Client is the
// same protocol over a WebSocket for the command line. Both satisfy
// netquery.Exchanger. Server.Peek reads the cache alone, never sending: a
// master's list shows with it what a page asking now would get.
package relay
