package deliver

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/querylens/querylens/internal/ctxsleep"
)

// Resolver resolves a host name (net.DefaultResolver is one). Tests
// inject a fake to see a name resolve to a private address.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is a Sender's. The zero Config is a working one for public
// destinations.
type Config struct {
	// Allow is the rule an address must pass after resolution (the
	// server wires the relay's address policy here); nil: PublicAddr.
	Allow func(netip.Addr) bool
	// WebhookAllow are ranges the operator opens in spite of Allow (a
	// receiver on their own network).
	WebhookAllow []netip.Prefix
	// AllowHTTP lets plain http:// destinations through; otherwise only
	// https.
	AllowHTTP bool
	// TestHosts are "ip:port" hosts accepted in place of discord.com and
	// hooks.slack.com: loopback literals only, for tests and demos that
	// run a fake. The address rule still applies (open 127.0.0.0/8 in
	// WebhookAllow).
	TestHosts []string

	Resolver Resolver                                                          // nil: net.DefaultResolver
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error) // dials an address already checked; nil: net.Dialer
	RootCAs  *x509.CertPool                                                    // nil: the system's

	AttemptTimeout time.Duration // per attempt, connecting to reading the answer; 0: 5 s
	MaxAttempts    int           // 0: 6
	MaxWait        time.Duration // the waits between attempts add up to at most this; 0: 10 minutes
	BaseDelay      time.Duration // the first backoff; 0: 1 s
	MaxDelay       time.Duration // the longest backoff (a server's Retry-After may ask for more, within MaxWait); 0: 2 minutes

	Now    func() time.Time                                 // nil: time.Now
	Sleep  func(ctx context.Context, d time.Duration) error // nil: a timer; tests advance a fake clock
	Jitter func() float64                                   // in [0, 1); nil: math/rand/v2
	Logf   func(format string, args ...any)                 // nil: no log; lines never carry a secret
}

// Defaults of Config.
const (
	DefaultAttemptTimeout = 5 * time.Second
	DefaultMaxAttempts    = 6
	DefaultMaxWait        = 10 * time.Minute
	DefaultBaseDelay      = time.Second
	DefaultMaxDelay       = 2 * time.Minute
	MaxResponse           = 64 << 10 // bytes of an answer read, at most
)

var errTestHost = errors.New("deliver: a test host must be a loopback ip:port")

func (c Config) withDefaults() (Config, error) {
	if c.Allow == nil {
		c.Allow = PublicAddr
	}
	if c.Resolver == nil {
		c.Resolver = net.DefaultResolver
	}
	if c.Dial == nil {
		d := &net.Dialer{}
		c.Dial = d.DialContext
	}
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = DefaultBaseDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = ctxsleep.Sleep
	}
	if c.Jitter == nil {
		c.Jitter = jitter
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	for _, h := range c.TestHosts {
		ap, err := netip.ParseAddrPort(h)
		if err != nil || !ap.Addr().IsLoopback() {
			return c, errTestHost
		}
	}
	return c, nil
}
