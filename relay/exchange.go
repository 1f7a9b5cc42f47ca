package relay

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// event is a REPLY, END or ERROR for one query id, as the in-process
// Exchange and the client both see them.
type event struct {
	typ    wire.FrameType
	id     uint32
	data   []byte
	rtt    uint32
	flags  wire.ReplyFlags
	reason wire.EndReason // END
	code   wire.Code
	msg    string
}

// events is an unbounded queue of events with a wake-up channel. Its size
// is bounded by its producers: at most the protocol's reply cap in
// datagrams (Config.ReplyCaps, else MaxReplyDatagrams) plus one per id.
type events struct {
	mu     sync.Mutex
	q      []event
	notify chan struct{}
}

func newEvents() *events { return &events{notify: make(chan struct{}, 1)} }

func (e *events) push(ev event) {
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// next waits for an event, ctx's end or gone's closing (gone may be nil).
func (e *events) next(ctx context.Context, gone <-chan struct{}) (event, bool) {
	for {
		e.mu.Lock()
		if len(e.q) > 0 {
			ev := e.q[0]
			e.q[0] = event{}
			e.q = e.q[1:]
			e.mu.Unlock()
			return ev, true
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-ctx.Done():
			return event{}, false
		case <-gone:
			return event{}, false
		}
	}
}

// transport is what drive needs from the relay: start a query, stop
// listening for one, and wait for the next event.
type transport interface {
	send(ctx context.Context, datagram []byte) (id uint32, err error)
	cancel(id uint32)
	next(ctx context.Context) (event, error)
}

// drive runs q over t until q is done, every query sent has ended, or ctx
// ends. It implements netquery.Exchanger's contract for both the client
// and the in-process relay: a window that closes without a complete
// message is a nil error with Done false; a refusal is a *RefusedError.
func drive(ctx context.Context, q codecs.Query, t transport) (netquery.Result, error) {
	var res netquery.Result
	open := make(map[uint32]bool)
	stop := func() {
		for id := range open {
			t.cancel(id)
		}
	}
	sendAll := func(ds [][]byte) error {
		for _, d := range ds {
			id, err := t.send(ctx, d)
			if err != nil {
				return err
			}
			open[id] = true
			res.Sent++
		}
		return nil
	}
	if err := sendAll(q.Start()); err != nil {
		stop()
		return res, err
	}
	for len(open) > 0 {
		ev, err := t.next(ctx)
		if err != nil {
			stop()
			return res, err
		}
		if !open[ev.id] {
			continue
		}
		switch ev.typ {
		case wire.FrameReply:
			if res.Received == 0 {
				res.RTT = time.Duration(ev.rtt) * time.Microsecond
				res.FromCache = ev.flags&wire.FlagCached != 0
			}
			res.Received++
			more, done, _ := q.Feed(ev.data)
			if done {
				res.Done = true
				stop()
				return res, nil
			}
			if err := sendAll(more); err != nil {
				stop()
				return res, err
			}
			if len(more) > 0 {
				// The reply made q ask again (a challenge, or its next
				// step): the query it answered has given all it will.
				// Cancelled, it stops holding an upstream exchange (and
				// a client's in-flight id) for the rest of the window.
				t.cancel(ev.id)
				delete(open, ev.id)
			}
		case wire.FrameEnd:
			delete(open, ev.id)
			if ev.reason == wire.EndByteCap {
				res.Capped = true
			}
		case wire.FrameError:
			delete(open, ev.id)
			if ev.code == wire.CodeTimeout {
				continue
			}
			stop()
			return res, &wire.RefusedError{ID: ev.id, Code: ev.code, Message: ev.msg}
		}
	}
	return res, nil
}

// Exchange runs q against target through the relay's own policy, per-target
// rate limits, cache and coalescing, without a WebSocket: the status page
// uses it so that following a shared link cannot flood a game server.
// Per-connection and per-client limits do not apply (there is no client
// connection); the caller limits its own callers. Refusals are returned as
// *RefusedError; a window that closes before q is done is a nil error with
// Result.Done false.
func (s *Server) Exchange(ctx context.Context, protocol, target string, q codecs.Query) (netquery.Result, error) {
	return s.exchange(ctx, protocol, target, q, false)
}

// ExchangeCached is Exchange that never makes the relay send a datagram:
// each of q's queries is answered from the cache, or by joining an
// identical exchange already in flight, or refused with CodeRateLimited
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
	l := &local{s: s, protocol: protocol, target: target, cacheOnly: cacheOnly, ev: newEvents(), active: make(map[uint32]*asker)}
	return drive(ctx, q, l)
}

// local is the in-process transport and sink.
type local struct {
	s                *Server
	protocol, target string
	cacheOnly        bool
	ev               *events
	mu               sync.Mutex
	active           map[uint32]*asker
	lastID           uint32
}

func (l *local) send(ctx context.Context, d []byte) (uint32, error) {
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

func (l *local) cancel(id uint32) {
	l.mu.Lock()
	a := l.active[id]
	delete(l.active, id)
	l.mu.Unlock()
	if a != nil && l.s.finish(a) {
		a.leave()
	}
}

func (l *local) next(ctx context.Context) (event, error) {
	ev, ok := l.ev.next(ctx, nil)
	if !ok {
		return ev, ctx.Err()
	}
	return ev, nil
}

func (l *local) reply(a *asker, r reply, flags wire.ReplyFlags) {
	if !a.done.Load() {
		l.ev.push(event{typ: wire.FrameReply, id: a.id, data: append([]byte(nil), r.data...), rtt: r.rtt, flags: flags})
	}
}

func (l *local) end(a *asker, reason wire.EndReason) {
	if l.s.finish(a) {
		l.ev.push(event{typ: wire.FrameEnd, id: a.id, reason: reason})
	}
}

func (l *local) fail(a *asker, code wire.Code, msg string) {
	if l.s.finish(a) {
		l.ev.push(event{typ: wire.FrameError, id: a.id, code: code, msg: msg})
	}
}
