package relay

import (
	"context"
	"sync"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// The sending half of a connection: the frames that end or answer a
// query, the bounded send queue, and the writer that empties it, alone or
// in BATCH messages.

// batchBufs lends the writer a buffer for a BATCH message while it writes
// one, so that an idle connection holds none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, wire.MaxBatch); return &b }}

func (c *conn) sendError(id uint32, e *wire.RefusedError) {
	c.push(wire.AppendError(nil, id, e.Code, e.Message))
}

// reply, end and fail make conn a sink.

func (c *conn) reply(a *asker, r reply, flags wire.ReplyFlags) {
	if a.stream {
		c.chunk(a, r, flags)
		return
	}
	fr := wire.AppendReply(make([]byte, 0, wire.ReplyHeader+len(r.data)), a.id, r.rtt, flags, r.data)
	c.mu.Lock()
	if a.done.Load() {
		c.mu.Unlock()
		return
	}
	ok, start := c.pushLocked(fr), false
	if ok {
		a.replies++
		start = c.claimWriterLocked()
	}
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
}

func (c *conn) end(a *asker, reason wire.EndReason) {
	c.final(a, func(n int) []byte { return wire.AppendEnd(nil, a.id, reason, uint16(n)) })
}

func (c *conn) fail(a *asker, code wire.Code, msg string) {
	c.final(a, func(int) []byte { return wire.AppendError(nil, a.id, code, msg) })
}

func (c *conn) final(a *asker, frame func(replies int) []byte) {
	c.mu.Lock()
	if !c.s.finish(a) {
		c.mu.Unlock()
		return
	}
	if c.active[a.id] == a {
		delete(c.active, a.id)
	}
	start := c.pushLocked(frame(a.replies)) && c.claimWriterLocked()
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
}

// push queues one frame and makes sure a writer runs.
func (c *conn) push(fr []byte) {
	c.mu.Lock()
	start := c.pushLocked(fr) && c.claimWriterLocked()
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
}

// pushLocked queues fr if the queue has room, counting a drop otherwise.
// REPLY frames count against QueueFrames and QueueBytes, the others
// against ctrlMax.
func (c *conn) pushLocked(fr []byte) bool {
	s := c.s
	switch {
	case c.closed:
		s.metrics.drops.add(DropClosed, 1)
		return false
	case isData(fr):
		if c.qdata >= c.lim.QueueFrames || c.qbytes+len(fr) > c.lim.QueueBytes {
			s.metrics.drops.add(DropQueueFull, 1)
			return false
		}
		if s.queued.Add(int64(len(fr))) > int64(s.cfg.MaxQueuedBytes) {
			s.queued.Add(-int64(len(fr)))
			s.metrics.drops.add(DropRelayQueueFull, 1)
			return false
		}
		c.qdata++
		c.qbytes += len(fr)
	default:
		if c.qctrl >= c.ctrlMax() {
			s.metrics.drops.add(DropQueueFull, 1)
			return false
		}
		c.qctrl++
	}
	c.queue = append(c.queue, fr)
	return true
}

// unqueueLocked takes frames that were queued (written or dropped) off
// the connection's and the relay's queue budgets.
func (c *conn) unqueueLocked(frames [][]byte) {
	bytes := 0
	for _, fr := range frames {
		if isData(fr) {
			c.qdata--
			bytes += len(fr)
		} else {
			c.qctrl--
		}
	}
	c.qbytes -= bytes
	c.s.queued.Add(-int64(bytes))
}

// isData says fr carries reply bytes (REPLY, CHUNK), which count against
// QueueFrames and QueueBytes.
func isData(fr []byte) bool {
	t := wire.FrameType(fr[0])
	return t == wire.FrameReply || t == wire.FrameChunk
}

// claimWriterLocked reports whether the caller must start the writer.
func (c *conn) claimWriterLocked() bool {
	if c.writing || c.closed {
		return false
	}
	c.writing = true
	return true
}

// startWriter is called with the writer claimed; the handler goroutine is
// still running (the queue is open), so adding to the wait group is safe.
func (c *conn) startWriter() {
	c.s.wg.Add(1)
	go c.write()
}

func (c *conn) write() {
	s := c.s
	defer s.wg.Done()
	var spare [][]byte
	for {
		c.mu.Lock()
		batch := c.queue
		if len(batch) == 0 || c.closed {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.queue = spare[:0]
		c.mu.Unlock()

		// The watchdog, not a context, bounds the batch: a context per
		// write would cost the library a timer registration per frame.
		c.watchdog.Reset(s.cfg.WriteTimeout)
		var err error
		if c.cork != nil {
			c.cork.cork()
		}
		for i := 0; i < len(batch); {
			j := messageEnd(batch, i, c.batches)
			if err == nil {
				if j > i+1 {
					buf := batchBufs.Get().(*[]byte)
					*buf = wire.AppendBatch((*buf)[:0], batch[i:j])
					err = c.ws.Write(context.Background(), websocket.MessageBinary, *buf)
					batchBufs.Put(buf)
				} else {
					err = c.ws.Write(context.Background(), websocket.MessageBinary, batch[i])
				}
			}
			for _, fr := range batch[i:j] {
				if err == nil {
					s.metrics.framesOut.add(wire.FrameType(fr[0]).String(), 1)
				} else {
					s.metrics.drops.add(DropClosed, 1)
				}
			}
			i = j
		}
		if c.cork != nil {
			if uerr := c.cork.uncork(); err == nil && uerr != nil {
				err = uerr
			}
		}
		slow := !c.watchdog.Stop()
		c.mu.Lock()
		c.unqueueLocked(batch)
		clear(batch)
		spare = batch
		if err != nil {
			c.writing = false
			c.closed = true
			c.mu.Unlock()
			if slow {
				s.metrics.refusals.add(string(wire.RuleSlowReader), 1)
				c.log.Info("relay: slow reader closed", "timeout", s.cfg.WriteTimeout)
			}
			c.ws.CloseNow()
			return
		}
		c.mu.Unlock()
	}
}

// messageEnd is where the message that starts with frame i of queued ends:
// after frame i alone, or with batches (wire.SubprotocolBatch) after as many as
// fit in one BATCH of at most maxBatch bytes.
func messageEnd(queued [][]byte, i int, batches bool) int {
	j := i + 1
	if !batches {
		return j
	}
	size := 1 + 2 + len(queued[i])
	for j < len(queued) && size+2+len(queued[j]) <= wire.MaxBatch {
		size += 2 + len(queued[j])
		j++
	}
	return j
}
