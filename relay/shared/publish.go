package shared

import (
	"context"
	"sync"
	"time"
)

// publishDelay is how long the owner holds a reply for more replies or
// the end of its exchange before writing it to the store.
const publishDelay = 2 * time.Millisecond

// Publisher writes one owned exchange to the store, in order, batching
// what arrives within publishDelay. Its goroutine ends with the end.
type Publisher struct {
	s    *Stores
	key  string
	wake chan struct{}

	mu      sync.Mutex
	pending []Reply
	end     bool
	status  Status
	ttl     time.Duration
}

// NewPublisher starts the publisher of the exchange this relay owns under
// key (Claim's ClaimOwner); wg counts its goroutine until Finish's batch
// is written.
func (s *Stores) NewPublisher(key string, wg *sync.WaitGroup) *Publisher {
	p := &Publisher{s: s, key: key, wake: make(chan struct{}, 1)}
	wg.Add(1)
	go p.run(wg)
	return p
}

func (p *Publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Publisher) run(wg *sync.WaitGroup) {
	defer wg.Done()
	s := p.s
	for {
		<-p.wake
		p.mu.Lock()
		end := p.end
		p.mu.Unlock()
		if !end {
			t := time.NewTimer(publishDelay)
			select {
			case <-t.C:
			case <-p.wake: // the end, or more replies: either way, go
				p.mu.Lock()
				end = p.end
				p.mu.Unlock()
				if !end {
					<-t.C
				}
			}
			t.Stop()
		}
		p.mu.Lock()
		batch := Publish{Replies: p.pending, End: p.end, Status: p.status, TTL: p.ttl}
		p.pending = nil
		p.mu.Unlock()
		if len(batch.Replies) > 0 || batch.End {
			if s.CacheHealth.Usable() {
				ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
				if err := s.Cache.Publish(ctx, p.key, batch); err != nil {
					s.CacheHealth.Fail(err)
				}
				cancel()
			}
		}
		if batch.End {
			return
		}
	}
}

// Add hands one reply the owner received (b is copied) to the other
// relays.
func (p *Publisher) Add(b []byte, rtt time.Duration) {
	p.mu.Lock()
	p.pending = append(p.pending, Reply{Data: append([]byte(nil), b...), RTT: uint32(min(rtt/time.Microsecond, 1<<32-1))})
	p.mu.Unlock()
	p.poke()
}

// Finish ends the owner's entry with status; a Done entry stays cached for
// ttl (none when ttl <= 0), others carry no TTL.
func (p *Publisher) Finish(status Status, ttl time.Duration) {
	if status != Done || ttl <= 0 {
		ttl = 0
	}
	p.mu.Lock()
	p.end, p.status, p.ttl = true, status, ttl
	p.mu.Unlock()
	p.poke()
}
