package masters

import (
	"context"
	"net/netip"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/server"
)

// Peeker reads a relay's cache without sending (relay.Server.Peek).
type Peeker interface {
	Peek(protocol string, target netip.AddrPort, datagram []byte) ([][]byte, bool)
}

// CacheStates is a StateSource reading the relay's cache: for each listed
// server it plays the protocol's conversation against the cached replies
// only (a challenge and the query it leads to included, as the relay keys
// challenged queries alike), and reports what a page asking now would
// see. A server whose conversation the cache cannot finish is left out.
// Nothing is ever sent.
type CacheStates struct {
	Relay Peeker
	Now   func() time.Time
}

// maxPeekRounds bounds a conversation played against the cache: A2S asks
// INFO, PLAYER and RULES, each after a challenge.
const maxPeekRounds = 8

// States implements StateSource.
func (c *CacheStates) States(_ context.Context, refs []server.Ref) map[string]server.Summary {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	out := map[string]server.Summary{}
	// A master lists addresses without options: every such server's
	// conversation starts with the same datagrams, built once, and most
	// peeks miss at the first of them.
	first := map[string][][]byte{}
	for _, ref := range refs {
		if len(ref.Options) == 0 {
			start, ok := first[ref.Protocol]
			if !ok {
				if codec, err := codecs.Lookup(ref.Protocol); err == nil {
					if q, err := codec.NewQuery(nil); err == nil {
						start = q.Start()
					}
				}
				first[ref.Protocol] = start
			}
			target, err := netip.ParseAddrPort(ref.Addr)
			if len(start) == 0 || err != nil {
				continue
			}
			if _, ok := c.Relay.Peek(ref.Protocol, target, start[0]); !ok {
				continue
			}
		}
		if s, ok := c.state(ref, now()); ok {
			out[ref.Key().String()] = s
		}
	}
	return out
}

func (c *CacheStates) state(ref server.Ref, at time.Time) (server.Summary, bool) {
	target, err := netip.ParseAddrPort(ref.Addr)
	if err != nil {
		return server.Summary{}, false
	}
	codec, err := codecs.Lookup(ref.Protocol)
	if err != nil {
		return server.Summary{}, false
	}
	q, err := codec.NewQuery(ref.Options)
	if err != nil {
		return server.Summary{}, false
	}
	send, done := q.Start(), false
	for round := 0; round < maxPeekRounds && len(send) > 0 && !done; round++ {
		var next [][]byte
		for _, d := range send {
			replies, ok := c.Relay.Peek(codec.Name(), target, d)
			if !ok {
				return server.Summary{}, false
			}
			for _, r := range replies {
				more, fin, _ := q.Feed(r)
				next = append(next, more...)
				if fin {
					done = true
					break
				}
			}
			if done {
				break
			}
		}
		send = next
	}
	if !done {
		return server.Summary{}, false
	}
	msg, err := q.Result(codecs.DecodeOptions{NoFields: true})
	if err != nil || msg == nil {
		return server.Summary{}, false
	}
	rep := server.Report{Ref: ref, Codec: codec, Msg: msg, Cached: true, At: at, State: server.Online}
	switch msg.Kind {
	case codecs.KindDenied, codecs.KindMasterDenied:
		return server.Summary{}, false // the server's "too soon": it says nothing of the server
	}
	return server.SummaryOf(rep), true
}

// FirstOf asks each source in turn; the first that knows a server gives
// its state (the relay's cache, fresher, before the history).
type FirstOf []StateSource

// States implements StateSource.
func (f FirstOf) States(ctx context.Context, refs []server.Ref) map[string]server.Summary {
	out := map[string]server.Summary{}
	left := refs
	for _, src := range f {
		if len(left) == 0 {
			break
		}
		got := src.States(ctx, left)
		var rest []server.Ref
		for _, r := range left {
			k := r.Key().String()
			if s, ok := got[k]; ok {
				out[k] = s
			} else {
				rest = append(rest, r)
			}
		}
		left = rest
	}
	return out
}
