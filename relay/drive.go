package relay

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// The conversation driver that the in-process Exchange (exchange.go) and
// the WebSocket Client (client.go) share: drive runs a codecs.Query over a
// transport until it is done.

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
// message is a nil error with Done false; a refusal is a *wire.RefusedError.
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
