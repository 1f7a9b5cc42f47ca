package relay

import (
	"cmp"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/relay/shared"
	"github.com/querylens/querylens/relay/wire"
)

// Defaults for the zero fields of Config.
const (
	DefaultMaxDatagram       = 8192
	DefaultReplyWindow       = 2 * time.Second
	DefaultMaxReplyBytes     = 64 << 10
	DefaultMaxReplyDatagrams = 64
	DefaultMaxInFlight       = 64
	DefaultMaxUpstream       = 1024
	DefaultCacheTTL          = 10 * time.Second
	DefaultSilentCooldown    = 10 * time.Second
	DefaultMaxCacheEntries   = 4096
	DefaultMaxCacheBytes     = 16 << 20
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerIP     = 8
	DefaultIdleTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultResolveTimeout    = 2 * time.Second
	DefaultQueueFrames       = 256
	DefaultQueueBytes        = 256 << 10
	DefaultMaxQueuedBytes    = 64 << 20

	DefaultMaxStreamBytes       = 128 << 10
	DefaultMaxStreamMessages    = 1024
	DefaultStreamDeadline       = 5 * time.Second
	DefaultStreamConnectTimeout = 3 * time.Second
	DefaultMaxStreams           = 256
	DefaultMaxStreamsPerClient  = wire.DefaultStreamsPerClient
	DefaultMaxStreamsPerHost    = 2
)

// ReplyCap is what one query of a protocol may bring back: at most Bytes
// bytes of UDP payload in at most Datagrams datagrams. The datagram that
// would pass either is dropped, counted (drops, reason "reply-cap") and
// ends the exchange with END reason wire.EndByteCap; nothing after it is read.
type ReplyCap struct {
	Bytes     int
	Datagrams int
}

// DefaultReplyCaps returns the caps of the protocols whose caps differ
// from DefaultMaxReplyBytes and DefaultMaxReplyDatagrams, as each
// protocol's description says them (codecs.Description.ReplyCap).
func DefaultReplyCaps() map[string]ReplyCap {
	caps := map[string]ReplyCap{}
	for _, c := range codecs.Protocols() {
		d := codecs.DescriptionOf(c)
		if rc := d.ReplyCap; d.Transport == codecs.TCP && rc != (codecs.ReplyCap{}) {
			caps[c.Name()] = ReplyCap{Bytes: cmp.Or(rc.Bytes, DefaultMaxStreamBytes), Datagrams: cmp.Or(rc.Datagrams, DefaultMaxStreamMessages)}
		} else if rc != (codecs.ReplyCap{}) {
			caps[c.Name()] = ReplyCap{Bytes: cmp.Or(rc.Bytes, DefaultMaxReplyBytes), Datagrams: cmp.Or(rc.Datagrams, DefaultMaxReplyDatagrams)}
		}
	}
	return caps
}

// Default rates (see Config).
var (
	DefaultConnRate = shared.Rate{PerSecond: 20, Burst: 100}
	DefaultIPRate   = shared.Rate{PerSecond: 40, Burst: 200}
	// DefaultTargetRate is the per-target rate's floor: its burst grows
	// with the protocols registered (TargetRateDefault).
	DefaultTargetRate     = shared.Rate{PerSecond: 2, Burst: 16}
	DefaultTargetHostRate = shared.Rate{PerSecond: 20, Burst: 40}
	DefaultPingRate       = shared.Rate{PerSecond: 2, Burst: 10}
	DefaultVisitorRate    = shared.Rate{PerSecond: 1, Burst: 30}
)

func orInt(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func orDur(v *time.Duration, d time.Duration) {
	if *v == 0 {
		*v = d
	}
}

func orRate(v *shared.Rate, d shared.Rate) {
	if *v == (shared.Rate{}) {
		*v = d
	}
}

// TargetRateDefault is the per-target rate a Config that sets none gets:
// DefaultTargetRate, with a burst that holds one probe of an address in
// every registered protocol (a query each and the follow-up of those that
// answer with a challenge: two per protocol), so that detection does not
// run out of its budget as protocols are added; the rate stays what one
// server answers a browsing page.
func TargetRateDefault() shared.Rate {
	r := DefaultTargetRate
	r.Burst = max(r.Burst, 2*len(codecs.Protocols()))
	return r
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	orInt(&c.MaxDatagram, DefaultMaxDatagram)
	orDur(&c.ReplyWindow, DefaultReplyWindow)
	orInt(&c.MaxReplyBytes, DefaultMaxReplyBytes)
	orInt(&c.MaxReplyDatagrams, DefaultMaxReplyDatagrams)
	if c.ReplyCaps == nil {
		c.ReplyCaps = DefaultReplyCaps() // read only, never written
	}
	orInt(&c.MaxStreamBytes, DefaultMaxStreamBytes)
	orInt(&c.MaxStreamMessages, DefaultMaxStreamMessages)
	orDur(&c.StreamDeadline, DefaultStreamDeadline)
	orDur(&c.StreamConnectTimeout, DefaultStreamConnectTimeout)
	orInt(&c.MaxStreams, DefaultMaxStreams)
	orInt(&c.MaxStreamsPerClient, DefaultMaxStreamsPerClient)
	orInt(&c.MaxStreamsPerHost, DefaultMaxStreamsPerHost)
	orInt(&c.MaxInFlight, DefaultMaxInFlight)
	orInt(&c.MaxUpstream, DefaultMaxUpstream)
	orDur(&c.CacheTTL, DefaultCacheTTL)
	orDur(&c.SilentCooldown, DefaultSilentCooldown)
	orInt(&c.MaxCacheEntries, DefaultMaxCacheEntries)
	orInt(&c.MaxCacheBytes, DefaultMaxCacheBytes)
	orRate(&c.ConnRate, DefaultConnRate)
	orRate(&c.IPRate, DefaultIPRate)
	orRate(&c.TargetRate, TargetRateDefault())
	orRate(&c.TargetHostRate, DefaultTargetHostRate)
	orRate(&c.PingRate, DefaultPingRate)
	orRate(&c.VisitorRate, DefaultVisitorRate)
	orInt(&c.MaxConns, DefaultMaxConns)
	orInt(&c.MaxConnsPerIP, DefaultMaxConnsPerIP)
	orDur(&c.IdleTimeout, DefaultIdleTimeout)
	orDur(&c.WriteTimeout, DefaultWriteTimeout)
	orDur(&c.ResolveTimeout, DefaultResolveTimeout)
	orInt(&c.QueueFrames, DefaultQueueFrames)
	orInt(&c.QueueBytes, DefaultQueueBytes)
	orInt(&c.MaxQueuedBytes, DefaultMaxQueuedBytes)
	orDur(&c.SharedTimeout, shared.DefaultTimeout)
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}
