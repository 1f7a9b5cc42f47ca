package wire

// Rule names why the relay refused a query or a connection, or why a
// query ended without a reply. Rule names appear in ERROR messages (before
// the ": "), in close reasons, in RefusedError.Rule and PolicyError.Rule,
// and as the "rule" label of the refusal and timeout metrics. The policy's
// rules (address ranges and ports) come first, then the relay's own.
type Rule string

// The policy's rules (the relay's Policy.Check): address ranges and ports.
const (
	RuleUnspecified   Rule = "unspecified"     // 0.0.0.0/8, ::
	RuleLoopback      Rule = "loopback"        // 127.0.0.0/8, ::1
	RulePrivate       Rule = "private"         // RFC 1918
	RuleCGNAT         Rule = "cgnat"           // 100.64.0.0/10
	RuleLinkLocal     Rule = "link-local"      // 169.254.0.0/16, fe80::/10
	RuleMulticast     Rule = "multicast"       // 224.0.0.0/4, ff00::/8
	RuleBroadcast     Rule = "broadcast"       // 255.255.255.255
	RuleReserved      Rule = "reserved"        // 240.0.0.0/4, 192.0.0.0/24, 2001::/23, IPv6 outside 2000::/3
	RuleDocumentation Rule = "documentation"   // TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20
	RuleBenchmarking  Rule = "benchmarking"    // 198.18.0.0/15, 2001:2::/48
	RuleUniqueLocal   Rule = "unique-local"    // fc00::/7
	RuleSiteLocal     Rule = "site-local"      // fec0::/10 (deprecated)
	RuleV4Mapped      Rule = "v4-mapped"       // ::ffff:0:0/96, ::ffff:0:0:0/96
	RuleV4Compatible  Rule = "v4-compatible"   // ::/96 (deprecated)
	RuleNAT64         Rule = "nat64"           // 64:ff9b::/96, 64:ff9b:1::/48
	Rule6to4          Rule = "6to4"            // 2002::/16, 192.88.99.0/24
	RuleTeredo        Rule = "teredo"          // 2001::/32
	RuleDiscard       Rule = "discard"         // 100::/64
	RuleZoned         Rule = "zoned"           // an address with a zone (%eth0)
	RuleInvalid       Rule = "invalid"         // not an address
	RulePortZero      Rule = "port-zero"       // port 0
	RuleWellKnownPort Rule = "well-known-port" // ports 1..1023 not in AllowPorts
)

// Rules of the request (admission stage 1) and of the frames.
const (
	RuleUnknownProtocol   Rule = "unknown-protocol"    // no codec by that name
	RuleDatagramSize      Rule = "datagram-size"       // a query longer than MaxDatagram
	RuleNotAQuery         Rule = "not-a-query"         // the codec's CheckQuery refused the datagram
	RuleTarget            Rule = "target"              // the target is not "host:port" (ParseTarget)
	RuleBadFrame          Rule = "bad-frame"           // a frame that does not parse, or goes the wrong way
	RuleDuplicateID       Rule = "duplicate-id"        // a query id already open on the connection
	RuleFrameTooBig       Rule = "frame-too-big"       // a message over the read limit (close 1009)
	RulePerConnectionPing Rule = "per-connection-ping" // PingRate
)

// Rules of the asker's own limits (admission stage 2) and of connections.
const (
	RuleInFlight      Rule = "in-flight"       // MaxInFlight ids open on the connection
	RulePerConnection Rule = "per-connection"  // ConnRate
	RulePerIP         Rule = "per-ip"          // IPRate
	RuleVisitorRate   Rule = "visitor-rate"    // VisitorRate (AllowVisitor)
	RuleConnCap       Rule = "conn-cap"        // MaxConns
	RulePerIPConnCap  Rule = "per-ip-conn-cap" // MaxConnsPerIP
	RuleOrigin        Rule = "origin"          // an Origin outside OriginPatterns
	RuleHandshake     Rule = "handshake"       // the WebSocket handshake failed
	RuleSubprotocol   Rule = "subprotocol"     // the client did not offer Subprotocol
	RuleForwardedFor  Rule = "forwarded-for"   // a trusted proxy's X-Forwarded-For hop does not parse
	RuleIdle          Rule = "idle"            // IdleTimeout (close 1000)
	RuleSlowReader    Rule = "slow-reader"     // WriteTimeout (the connection is dropped)
	RuleShuttingDown  Rule = "shutting-down"   // Shutdown began
)

// Rules of routing and upstream admission (stages 3 and 4).
const (
	RuleResolve       Rule = "resolve"         // the name did not resolve
	RuleCacheChurn    Rule = "cache-churn"     // the exchange to join kept ending
	RuleCooldown      Rule = "cooldown"        // the target left its last queries unanswered (silence)
	RuleUpstreamCap   Rule = "upstream-cap"    // MaxUpstream
	RuleUpstreamShare Rule = "upstream-share"  // the client key's share of MaxUpstream
	RulePerTarget     Rule = "per-target"      // TargetRate
	RulePerTargetHost Rule = "per-target-host" // TargetHostRate
	RuleNotCached     Rule = "not-cached"      // ExchangeCached: no cached answer and no exchange in flight to join
)

// Rules of an exchange that ended without a reply.
const (
	RuleTimeout     Rule = "timeout"     // no reply within the window
	RuleUnreachable Rule = "unreachable" // ICMP port unreachable
	RuleUpstream    Rule = "upstream"    // the upstream socket failed (code internal)
)

// Rules of stream exchanges (EXCHANGE, SubprotocolStream).
const (
	RuleNotStream     Rule = "not-a-stream"    // EXCHANGE for a datagram protocol, or QUERY for a stream one
	RuleOptions       Rule = "options"         // the codec refused the options (NewQuery)
	RuleTargetInQuery Rule = "target-in-query" // the options name another host or port than the target
	RuleTCPPerClient  Rule = "tcp-per-client"  // MaxStreamsPerClient connections in progress
	RuleTCPPerTarget  Rule = "tcp-per-target"  // MaxStreamsPerHost connections in progress to one host
	RuleTCPCap        Rule = "tcp-cap"         // MaxStreams connections in progress in the relay
)
