package relay

import (
	"errors"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// Validate reports every setting that cannot work, after applying the
// defaults, joined into one error (errors.Join), one line each. New panics
// on a config that fails Validate, so call it first to show users a proper
// error.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs configErrors
	c.validateAccess(&errs)
	c.validateDatagram(&errs)
	c.validateTimes(&errs)
	c.validateCounts(&errs)
	c.validateLoopback(&errs)
	c.validateReplyCaps(&errs)
	c.validateQueue(&errs)
	c.validateRates(&errs)
	return errors.Join(errs...)
}

// configErrors collects Validate's errors, each naming its field.
type configErrors []error

func (e *configErrors) bad(field, why string) {
	*e = append(*e, errors.New("relay: config "+field+": "+why))
}

// validateAccess checks the origins, addresses and proxies the relay
// serves and trusts.
func (c *Config) validateAccess(errs *configErrors) {
	for _, p := range c.OriginPatterns {
		if _, err := path.Match(p, ""); err != nil {
			errs.bad("OriginPatterns", "bad pattern "+strconv.Quote(p))
		}
		host := p
		if i := strings.Index(p, "://"); i >= 0 {
			host = p[i+3:]
		}
		if strings.Trim(host, "*?.:[]") == "" {
			errs.bad("OriginPatterns", strconv.Quote(p)+" allows every origin")
		}
	}
	for _, p := range c.AllowTargets {
		if !p.IsValid() {
			errs.bad("AllowTargets", "invalid prefix")
		}
	}
	for _, a := range c.AllowAddrs {
		if !a.IsValid() || a.Port() == 0 {
			errs.bad("AllowAddrs", "invalid address or port 0")
		}
	}
	for _, p := range c.AllowPorts {
		if p == 0 {
			errs.bad("AllowPorts", "port 0 cannot be allowed")
		}
	}
	for _, p := range c.TrustedProxies {
		if !p.IsValid() {
			errs.bad("TrustedProxies", "invalid prefix")
		}
	}
}

// validateDatagram checks the datagram size, which HELLO carries in 16 bits.
func (c *Config) validateDatagram(errs *configErrors) {
	if c.MaxDatagram < 64 || c.MaxDatagram > math.MaxUint16 {
		errs.bad("MaxDatagram", "must be 64..65535")
	}
}

// validateTimes checks the windows, timeouts and cache lifetimes; HELLO
// carries the window and the TTL in milliseconds in 32 bits.
func (c *Config) validateTimes(errs *configErrors) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReplyWindow", c.ReplyWindow}, {"IdleTimeout", c.IdleTimeout},
		{"WriteTimeout", c.WriteTimeout}, {"ResolveTimeout", c.ResolveTimeout},
		{"SharedTimeout", c.SharedTimeout},
	} {
		if d.v < 0 {
			errs.bad(d.name, "must be positive")
		}
	}
	if c.ReplyWindow > time.Duration(math.MaxUint32)*time.Millisecond {
		errs.bad("ReplyWindow", "too long")
	}
	for _, name := range slices.Sorted(maps.Keys(c.ProtocolCacheTTL)) {
		if c.ProtocolCacheTTL[name] > time.Duration(math.MaxUint32)*time.Millisecond {
			errs.bad("ProtocolCacheTTL["+name+"]", "too long")
		}
	}
	if c.CacheTTL > time.Duration(math.MaxUint32)*time.Millisecond {
		errs.bad("CacheTTL", "too long")
	}
}

// validateCounts checks the caps on queries, connections, cache and queues.
func (c *Config) validateCounts(errs *configErrors) {
	for _, n := range []struct {
		name string
		v    int
	}{
		{"MaxReplyBytes", c.MaxReplyBytes}, {"MaxReplyDatagrams", c.MaxReplyDatagrams},
		{"MaxInFlight", c.MaxInFlight}, {"MaxUpstream", c.MaxUpstream},
		{"MaxCacheEntries", c.MaxCacheEntries}, {"MaxCacheBytes", c.MaxCacheBytes},
		{"MaxConns", c.MaxConns}, {"MaxConnsPerIP", c.MaxConnsPerIP},
		{"QueueFrames", c.QueueFrames}, {"QueueBytes", c.QueueBytes},
		{"MaxQueuedBytes", c.MaxQueuedBytes},
		{"MaxStreamBytes", c.MaxStreamBytes}, {"MaxStreamMessages", c.MaxStreamMessages},
		{"MaxStreams", c.MaxStreams}, {"MaxStreamsPerClient", c.MaxStreamsPerClient}, {"MaxStreamsPerHost", c.MaxStreamsPerHost},
		{"StreamDeadline", int(c.StreamDeadline)}, {"StreamConnectTimeout", int(c.StreamConnectTimeout)},
	} {
		if n.v < 0 {
			errs.bad(n.name, "must be positive")
		}
	}
	if c.MaxInFlight > math.MaxUint16 {
		errs.bad("MaxInFlight", "must be at most 65535")
	}
}

// validateLoopback checks Loopback, the limits of clients on loopback.
func (c *Config) validateLoopback(errs *configErrors) {
	if l := c.Loopback; l != nil {
		for _, n := range []struct {
			name string
			v    int
		}{{"MaxInFlight", l.MaxInFlight}, {"QueueFrames", l.QueueFrames}, {"QueueBytes", l.QueueBytes}, {"MaxStreams", l.MaxStreams}} {
			if n.v < 0 {
				errs.bad("Loopback."+n.name, "must be positive")
			}
		}
		lim := c.clientLimits(true)
		if lim.MaxInFlight > math.MaxUint16 {
			errs.bad("Loopback.MaxInFlight", "must be at most 65535")
		}
		if lim.QueueBytes < c.MaxDatagram+wire.ReplyHeader {
			errs.bad("Loopback.QueueBytes", "must hold at least one reply of MaxDatagram bytes")
		}
		for _, r := range []struct {
			name string
			v    shared.Rate
		}{{"ConnRate", lim.ConnRate}, {"IPRate", lim.IPRate}} {
			if !(r.v.PerSecond > 0) || math.IsInf(r.v.PerSecond, 0) || r.v.Burst < 1 {
				errs.bad("Loopback."+r.name, "needs PerSecond > 0 and Burst >= 1")
			}
		}
	}
}

// validateReplyCaps checks what one query may bring back, globally and per protocol.
func (c *Config) validateReplyCaps(errs *configErrors) {
	if c.MaxReplyDatagrams > math.MaxUint16 {
		errs.bad("MaxReplyDatagrams", "must be at most 65535")
	}
	for _, name := range slices.Sorted(maps.Keys(c.ReplyCaps)) {
		rc := c.ReplyCaps[name]
		if rc.Bytes < 0 {
			errs.bad("ReplyCaps["+name+"].Bytes", "must be positive")
		}
		if rc.Datagrams < 0 {
			errs.bad("ReplyCaps["+name+"].Datagrams", "must be positive")
		}
		if rc.Datagrams > math.MaxUint16 {
			errs.bad("ReplyCaps["+name+"].Datagrams", "must be at most 65535")
		}
	}
}

// validateQueue checks the send queue of each connection.
func (c *Config) validateQueue(errs *configErrors) {
	if c.QueueBytes < c.MaxDatagram+wire.ReplyHeader {
		errs.bad("QueueBytes", "must hold at least one reply of MaxDatagram bytes")
	}
}

// validateRates checks the token buckets.
func (c *Config) validateRates(errs *configErrors) {
	for _, r := range []struct {
		name string
		v    shared.Rate
	}{
		{"ConnRate", c.ConnRate}, {"IPRate", c.IPRate}, {"TargetRate", c.TargetRate},
		{"TargetHostRate", c.TargetHostRate}, {"PingRate", c.PingRate}, {"VisitorRate", c.VisitorRate},
	} {
		if !(r.v.PerSecond > 0) || math.IsInf(r.v.PerSecond, 0) || r.v.Burst < 1 {
			errs.bad(r.name, "needs PerSecond > 0 and Burst >= 1")
		}
	}
}
