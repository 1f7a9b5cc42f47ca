// Package relay forwards game-server query datagrams between web pages and
// UDP servers. Browsers cannot send UDP, so a page opens a WebSocket to the
// relay, sends the raw query datagram it built with the codecs (compiled to
// WebAssembly), and decodes the raw replies the relay streams back.
//
// The wire protocol (subprotocols, frames, the conversation, error codes
// and how it grows) is described in docs/relay-protocol.md; its frames,
// targets and refusal codes are package relay/wire. This package is the
// server: New returns a *Server, an http.Handler that never listens on its
// own.
//
// The relay is not an open UDP proxy: it forwards only datagrams that the
// named protocol's codec accepts as a query (codecs.Codec.CheckQuery), only
// to public unicast addresses on ports from 1024 up (unless the operator
// allows more), within rate limits per connection, per client address and
// per target, and it caps what one query may bring back.
//
// # Where things are
//
//	server.go, clientaddr.go   Server, New, the WebSocket handshake, the client's address (X-Forwarded-For)
//	config*.go                 Config, its defaults, and Validate with one method per section
//	conn*.go, cork.go          one WebSocket connection: reading frames, the send queue, the writer
//	admit.go                   admission of one query, stage by stage
//	policy.go, resolve.go      which addresses may be queried; names resolved and judged
//	exchange.go, upstream.go   the in-process Exchange (over relay/internal/drive); one upstream exchange shared by its askers
//	stream.go                  stream (TCP) exchanges: EXCHANGE, its admission, the connections in progress, the conversation held
//	cache.go, peek.go          cached replies; Peek reads them without sending
//	limit.go, sharelimit.go    token buckets, and per-target buckets shared between clients
//	slots.go, silence.go       upstream capacity shared between clients; silent targets cool down
//	sockets*.go                connected UDP sockets, reused
//	shared*.go                 the relay's use of a shared store (package relay/shared)
//	metrics.go, health.go      /metrics and /healthz
//
// # Policy
//
// Policy.Check decides on an address and port without any I/O; the rule
// names are wire.Rule*. Config.AllowTargets lists ranges that pass anyway,
// matched literally (allowing 127.0.0.0/8 does not allow the literal
// [::ffff:127.0.0.1]); Config.AllowAddrs lists exact addresses and ports
// that pass without per-target limits. A name is resolved (with a short
// shared cache) and every address it resolves to must pass, so that a name
// cannot smuggle a private address next to a public one (DNS rebinding).
// Resolved addresses are unmapped first (a resolver reports A records as
// ::ffff:a.b.c.d), so a name that resolves to ::ffff:127.0.0.1 is judged,
// and queried, as 127.0.0.1; only a target the client spelled as a mapped
// literal is judged as IPv6, and refused.
//
// # Exchanges, caching and reply caps
//
// Each upstream exchange has a connected UDP socket to itself while it
// runs, so the kernel delivers only datagrams from the exact address and
// port queried, and two queries in flight to one server cannot receive
// each other's replies. Sockets are reused, never for a target they served
// before (sockets.go). Identical queries (protocol, target and
// Config.CacheKey of the datagram) share one exchange, and its replies stay
// cached for Config.CacheTTL; an exchange whose askers all cancelled stops
// early. One query brings back at most its protocol's cap
// (Config.ReplyCaps over MaxReplyBytes and MaxReplyDatagrams); the datagram
// that would pass it is dropped and counted (reply-cap) and the exchange
// ends with END reason byte-cap.
//
// # Resource bounds
//
// Per connection: MaxInFlight ids, token buckets (ConnRate, PingRate), a
// send queue bounded in frames and bytes (all queues together by
// MaxQueuedBytes) with a write timeout, a read limit and an idle timeout.
// Per client address (IPv6: per /64): IPRate and MaxConnsPerIP. Per target:
// TargetRate and TargetHostRate, charged only for queries sent upstream and
// shared between the clients asking (sharelimit.go). Relay-wide: MaxConns
// and MaxUpstream, whose slots are shared between client keys so that a
// client that floods silent targets cannot hold them all (slots.go).
// Config.Loopback replaces the per-client limits for loopback clients.
//
// # Several relays
//
// With Config.SharedCache and Config.SharedLimiter (package relay/shared,
// implemented by relay/redisstore), relays behind one load balancer share
// upstream exchanges, cached replies and the per-client and per-target
// buckets through one store; the in-process cache and buckets stay in
// front and serve alone while the store is down.
//
// Server.Exchange runs the same path (policy, per-target limits, cache,
// coalescing) in process, for pages rendered on the server; package
// relay/client speaks the protocol over a WebSocket for the command line.
// Both satisfy netquery.Exchanger and share one conversation driver
// (relay/internal/drive). Server.Peek reads the cache alone, never
// sending.
package relay
