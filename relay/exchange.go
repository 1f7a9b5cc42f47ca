package relay

import (
	"context"
	"sync"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/internal/drive"
	"github.com/querylens/querylens/relay/wire"
)

// Exchange runs q against target through the relay's own policy, per-target
// rate limits, cache and coalescing, without a WebSocket: the status page
// uses it so that following a shared link cannot flood a game server.
// Per-connection and per-client limits do not apply (there is no client
// connection); the caller limits its own callers. Refusals are returned as
// *wire.RefusedError; a window that closes before q is done is a nil error with
// Result.Done false.
func (s *Server) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	return s.exchange(ctx, protocol, target, q, false)
}

// ExchangeCached is Exchange that never makes the relay send a datagram:
// each of q's queries is answered from the cache, or by joining an
// identical exchange already in flight, or refused with wire.CodeRateLimited
// and rule not-cached. The API answers the servers a visitor asks beyond
// its limit (AllowVisitor) with it, so that what someone else asked
// recently is still shown and nothing new is asked.
func (s *Server) ExchangeCached(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	return s.exchange(ctx, protocol, target, q, true)
}

func (s *Server) exchange(ctx context.Context, protocol, target string, q codecs.Query, cacheOnly bool) (netquery.Result, error) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return netquery.Result{}, s.refusal(wire.CodeBusy, wire.RuleShuttingDown, "the relay is shutting down")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	l := &local{s: s, protocol: protocol, target: target, cacheOnly: cacheOnly, ev: drive.NewEvents(), active: make(map[uint32]*asker)}
	return drive.Run(ctx, q, l)
}

var _ netquery.OptionsExchanger = (*Server)(nil)

// ExchangeOptions is Exchange for a stream (TCP) protocol: the relay holds
// the conversation itself, its codec building the query from opts (with
// the target's host and port where the query carries them), through the
// same admission as an EXCHANGE frame but the client's own limits (the
// caller limits its visitors) and the same cache and coalescing; the
// reply's bytes feed q. The status page and the other server-side asks
// use it for TCP protocols (netquery.ExchangeFor).
func (s *Server) ExchangeOptions(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (netquery.Result, error) {
	return s.exchangeOptions(ctx, protocol, target, opts, q, false)
}

// ExchangeOptionsCached is ExchangeOptions that never makes the relay
// connect: answered from the cache or an identical exchange in flight,
// or refused (rule not-cached), as ExchangeCached.
func (s *Server) ExchangeOptionsCached(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query) (netquery.Result, error) {
	return s.exchangeOptions(ctx, protocol, target, opts, q, true)
}

func (s *Server) exchangeOptions(ctx context.Context, protocol, target string, opts map[string]string, q codecs.Query, cacheOnly bool) (netquery.Result, error) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		return netquery.Result{}, s.refusal(wire.CodeBusy, wire.RuleShuttingDown, "the relay is shutting down")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	d, err := codecs.LookupDescription(protocol)
	if err != nil {
		return netquery.Result{}, s.refusal(wire.CodeUnknownProtocol, wire.RuleUnknownProtocol, protocol)
	}
	l := &local{s: s, protocol: protocol, target: target, cacheOnly: cacheOnly, ev: drive.NewEvents(), active: make(map[uint32]*asker)}
	a, ref := s.admitStream(ctx, l, 0, protocol, target, opts)
	if ref != nil {
		return netquery.Result{}, ref
	}
	return drive.RunStream(ctx, q, d, a.id, l.Next, l.Cancel)
}

// local is the in-process transport and sink.
type local struct {
	s                *Server
	protocol, target string
	cacheOnly        bool
	ev               *drive.Events
	mu               sync.Mutex
	active           map[uint32]*asker
	lastID           uint32
}

func (l *local) Send(ctx context.Context, d []byte) (uint32, error) {
	a, ref := l.s.admit(ctx, l, 0, l.protocol, l.target, d)
	if ref != nil {
		return 0, ref
	}
	return a.id, nil
}

// open is admission stage 2 for the in-process Exchange: it has no limits
// of its own (the caller limits its visitors), it only numbers the asker.
func (l *local) open(uint32) (*asker, *wire.RefusedError) {
	l.mu.Lock()
	l.lastID++
	a := &asker{sink: l, id: l.lastID, cacheOnly: l.cacheOnly}
	l.active[a.id] = a
	l.mu.Unlock()
	l.s.inflight.Add(1)
	return a, nil
}

func (l *local) Cancel(id uint32) {
	l.mu.Lock()
	a := l.active[id]
	delete(l.active, id)
	l.mu.Unlock()
	if a != nil && l.s.finish(a) {
		a.leave()
	}
}

func (l *local) Next(ctx context.Context) (drive.Event, error) {
	ev, ok := l.ev.Next(ctx, nil)
	if !ok {
		return ev, ctx.Err()
	}
	return ev, nil
}

func (l *local) reply(a *asker, r reply, flags wire.ReplyFlags) {
	if !a.done.Load() {
		typ := wire.FrameReply
		if a.stream {
			typ = wire.FrameChunk
		}
		l.ev.Push(drive.Event{Type: typ, ID: a.id, Data: append([]byte(nil), r.data...), RTT: r.rtt, Flags: flags})
	}
}

func (l *local) end(a *asker, reason wire.EndReason) {
	if l.s.finish(a) {
		l.ev.Push(drive.Event{Type: wire.FrameEnd, ID: a.id, Reason: reason})
	}
}

func (l *local) fail(a *asker, code wire.Code, msg string) {
	if l.s.finish(a) {
		l.ev.Push(drive.Event{Type: wire.FrameError, ID: a.id, Code: code, Msg: msg})
	}
}
