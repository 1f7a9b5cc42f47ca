package deliver

import (
	"context"
	"crypto/sha256"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/querylens/querylens/alerts"
)

// Each destination's pace (a token bucket: burst, then rate per second):
// Discord allows a webhook 5 requests per 2 seconds, Slack an incoming
// webhook about 1 per second; a generic webhook gets a polite 5 per
// second.
var paces = map[alerts.DestKind]struct{ burst, rate float64 }{
	alerts.DestDiscord: {5, 2.5},
	alerts.DestSlack:   {1, 1},
	alerts.DestWebhook: {5, 5},
}

// pacer keeps one bucket per destination.
type pacer struct {
	mu      sync.Mutex
	buckets map[[32]byte]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func (p *pacer) init() { p.buckets = map[[32]byte]*bucket{} }

// paceKey names d's bucket without keeping its secret in the clear: a
// Discord webhook by its id (its messages and edits share the limit),
// others by their URL, hashed.
func paceKey(d alerts.Destination) [32]byte {
	k := string(d.Kind) + " " + d.URL
	if d.Kind == alerts.DestDiscord {
		if u, err := url.Parse(d.URL); err == nil {
			segs := strings.Split(u.Path, "/")
			if len(segs) >= 4 {
				k = string(d.Kind) + " " + u.Host + " " + segs[len(segs)-2]
			}
		}
	}
	return sha256.Sum256([]byte(k))
}

// wait takes a token from key's bucket, sleeping until there is one.
func (p *pacer) wait(ctx context.Context, key [32]byte, kind alerts.DestKind, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	pace := paces[kind]
	for {
		p.mu.Lock()
		t := now()
		b := p.buckets[key]
		if b == nil {
			if len(p.buckets) >= 4096 {
				p.sweep(t)
			}
			b = &bucket{tokens: pace.burst, last: t}
			p.buckets[key] = b
		}
		if el := t.Sub(b.last).Seconds(); el > 0 {
			b.tokens = min(pace.burst, b.tokens+el*pace.rate)
			b.last = t
		}
		if b.tokens >= 1 {
			b.tokens--
			p.mu.Unlock()
			return nil
		}
		need := time.Duration((1 - b.tokens) / pace.rate * float64(time.Second))
		p.mu.Unlock()
		if err := sleep(ctx, need); err != nil {
			return err
		}
	}
}

// sweep forgets the buckets that have been idle long enough to be full.
func (p *pacer) sweep(now time.Time) {
	for k, b := range p.buckets {
		if now.Sub(b.last) > 10*time.Second {
			delete(p.buckets, k)
		}
	}
}
