// Package drive runs a query's conversation over the relay's protocol
// for both its ends in Go: the relay's in-process Exchange and the
// WebSocket client (package relay/client). Run sends the query's
// datagrams through a Transport and feeds the query the REPLY, END and ERROR
// events that come back, until the query is done, every datagram sent has
// ended, or the context ends.
package drive

import (
	"context"
	"sync"
	"time"

	"github.com/querylens/querylens/codecs"
	"github.com/querylens/querylens/netquery"
	"github.com/querylens/querylens/relay/wire"
)

// Event is a REPLY, END or ERROR for one query id, as the in-process
// Exchange and the client both see them.
type Event struct {
	Type   wire.FrameType
	ID     uint32
	Data   []byte
	RTT    uint32
	Flags  wire.ReplyFlags
	Reason wire.EndReason // END
	Code   wire.Code
	Msg    string
}

// Events is an unbounded queue of events with a wake-up channel. Its size
// is bounded by its producers: at most the protocol's reply cap in
// datagrams (the relay's Config.ReplyCaps, else MaxReplyDatagrams) plus
// one per id.
type Events struct {
	mu     sync.Mutex
	q      []Event
	notify chan struct{}
}

// NewEvents returns an empty queue.
func NewEvents() *Events { return &Events{notify: make(chan struct{}, 1)} }

// Push adds ev and wakes a waiting Next.
func (e *Events) Push(ev Event) {
	e.mu.Lock()
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// next waits for an Event, ctx's end or gone's closing (gone may be nil).
func (e *Events) Next(ctx context.Context, gone <-chan struct{}) (Event, bool) {
	for {
		e.mu.Lock()
		if len(e.q) > 0 {
			ev := e.q[0]
			e.q[0] = Event{}
			e.q = e.q[1:]
			e.mu.Unlock()
			return ev, true
		}
		e.mu.Unlock()
		select {
		case <-e.notify:
		case <-ctx.Done():
			return Event{}, false
		case <-gone:
			return Event{}, false
		}
	}
}

// Transport is what Run needs from the relay: start a query, stop
// listening for one, and wait for the next event.
type Transport interface {
	Send(ctx context.Context, datagram []byte) (id uint32, err error)
	Cancel(id uint32)
	Next(ctx context.Context) (Event, error)
}

// Run runs q over t until q is done, every query sent has ended, or ctx
// ends. It implements netquery.Exchanger's contract for both the client
// and the in-process relay: a window that closes without a complete
// message is a nil error with Done false; a refusal is a *wire.RefusedError.
func Run(ctx context.Context, q codecs.Query, t Transport) (netquery.Result, error) {
	var res netquery.Result
	open := make(map[uint32]bool)
	stop := func() {
		for id := range open {
			t.Cancel(id)
		}
	}
	sendAll := func(ds [][]byte) error {
		for _, d := range ds {
			id, err := t.Send(ctx, d)
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
		ev, err := t.Next(ctx)
		if err != nil {
			stop()
			return res, err
		}
		if !open[ev.ID] {
			continue
		}
		switch ev.Type {
		case wire.FrameReply:
			if res.Received == 0 {
				res.RTT = time.Duration(ev.RTT) * time.Microsecond
				res.FromCache = ev.Flags&wire.FlagCached != 0
			}
			res.Received++
			more, done, _ := q.Feed(ev.Data)
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
				t.Cancel(ev.ID)
				delete(open, ev.ID)
			}
		case wire.FrameEnd:
			delete(open, ev.ID)
			if ev.Reason == wire.EndByteCap {
				res.Capped = true
			}
		case wire.FrameError:
			delete(open, ev.ID)
			if ev.Code == wire.CodeTimeout {
				continue
			}
			stop()
			return res, &wire.RefusedError{ID: ev.ID, Code: ev.Code, Message: ev.Msg}
		}
	}
	return res, nil
}

// RunStream runs q over a stream exchange (an EXCHANGE) already asked as
// id: the CHUNK events' bytes feed q through a codecs.Stream cut with d's
// MessageLen (what q asks to write is the relay's to write: its own query
// holds the conversation), until END or ERROR. Done is END done; Capped,
// END cap; Received counts the messages fed. next waits for the id's
// events; cancel is called when ctx ends first.
func RunStream(ctx context.Context, q codecs.Query, d codecs.Description, id uint32, next func(context.Context) (Event, error), cancel func(uint32)) (netquery.Result, error) {
	res := netquery.Result{Sent: 1}
	start := time.Now()
	// The relay has capped the reply: the stream here only cuts it.
	st := codecs.NewStream(q, d.MessageLen, codecs.ReplyCap{Bytes: 1 << 30, Datagrams: 1 << 30})
	st.Start() // what the relay's own query wrote, for a q that records it
	for {
		ev, err := next(ctx)
		if err != nil {
			cancel(id)
			return res, err
		}
		if ev.ID != id {
			continue
		}
		switch ev.Type {
		case wire.FrameChunk:
			if st.Bytes() == 0 {
				res.RTT = time.Since(start)
				res.FromCache = ev.Flags&wire.FlagCached != 0
			}
			st.Take(ev.Data)
			res.Received = st.Messages()
		case wire.FrameEnd:
			res.Done = ev.Reason == wire.EndDone && st.Stop() == codecs.StreamDone
			res.Capped = ev.Reason == wire.EndStreamCap
			return res, nil
		case wire.FrameError:
			return res, &wire.RefusedError{ID: ev.ID, Code: ev.Code, Message: ev.Msg}
		}
	}
}
