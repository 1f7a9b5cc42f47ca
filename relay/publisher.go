package relay

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/relay/wire"
)

// publishDelay is how long the owner holds a reply for more replies or
// the end of its exchange before writing it to the store.
const publishDelay = 2 * time.Millisecond

// publisher writes one owned exchange to the store, in order, batching
// what arrives within publishDelay. Its goroutine ends with the end.
type publisher struct {
	f    *fetch
	wake chan struct{}

	mu      sync.Mutex
	pending []SharedReply
	end     bool
	status  SharedStatus
	ttl     time.Duration
}

// startPublisher starts the publisher of an exchange f owns.
func (f *fetch) startPublisher() {
	p := &publisher{f: f, wake: make(chan struct{}, 1)}
	f.pub = p
	f.s.wg.Add(1)
	go p.run()
}

func (p *publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *publisher) run() {
	s := p.f.s
	defer s.wg.Done()
	sh := s.shared
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
		batch := SharedPublish{Replies: p.pending, End: p.end, Status: p.status, TTL: p.ttl}
		p.pending = nil
		p.mu.Unlock()
		if len(batch.Replies) > 0 || batch.End {
			if sh.cacheDep.usable() {
				ctx, cancel := context.WithTimeout(context.Background(), sh.timeout)
				if err := sh.cache.Publish(ctx, p.f.sharedKey, batch); err != nil {
					sh.cacheDep.fail(err)
				}
				cancel()
			}
		}
		if batch.End {
			return
		}
	}
}

// publish hands one reply the owner received to the other relays.
func (f *fetch) publish(b []byte, rtt time.Duration) {
	p := f.pub
	p.mu.Lock()
	p.pending = append(p.pending, SharedReply{Data: append([]byte(nil), b...), RTT: uint32(min(rtt/time.Microsecond, 1<<32-1))})
	p.mu.Unlock()
	p.poke()
}

// sharedFinish ends the owner's shared entry.
func (f *fetch) sharedFinish(status SharedStatus) {
	p := f.pub
	ttl := f.ttl
	if status != SharedDone || ttl <= 0 {
		ttl = 0
	}
	p.mu.Lock()
	p.end, p.status, p.ttl = true, status, ttl
	p.mu.Unlock()
	p.poke()
}

// ownerStatus maps how the owner's exchange ended to the shared status.
func ownerStatus(out outcome, got bool) SharedStatus {
	switch {
	case got:
		return SharedDone
	case out.code == wire.CodeTimeout:
		return SharedTimeout
	}
	return SharedAbandoned
}
