package relay

// Rule names why the relay refused a query or a connection, or why a
// query ended without a reply. Rule names appear in ERROR messages (before
// the ": "), in close reasons, in RefusedError.Rule and PolicyError.Rule,
// and as the "rule" label of the refusal and timeout metrics. The policy's
// rules (address ranges and ports) are in policy.go; the relay's own are
// below.
type Rule string

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
