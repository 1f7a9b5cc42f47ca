package relay

import (
	"strconv"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// The reading half of a connection: each client message, split into
// frames when it is a BATCH, and each frame acted on.

// handle reads one client message.
func (c *conn) handle(typ websocket.MessageType, b []byte) {
	s := c.s
	if typ != websocket.MessageBinary {
		s.metrics.framesIn.add("text", 1)
		c.sendError(0, s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, "text message; frames are binary"))
		return
	}
	if c.batches && len(b) > 0 && wire.FrameType(b[0]) == wire.FrameBatch {
		// A client on wire.SubprotocolBatch may send its frames together too:
		// each is read as if it had come alone, in order. A BATCH that
		// does not split is refused whole, none of its frames read.
		frames, err := wire.SplitBatch(b)
		s.metrics.framesIn.add(wire.FrameBatch.String(), 1)
		if err != nil {
			s.metrics.drops.add(DropBadFrame, 1)
			c.sendError(0, s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, err.(*wire.BadFrameError).Detail()))
			return
		}
		for _, fr := range frames {
			c.handleFrame(fr)
		}
		return
	}
	c.handleFrame(b)
}

// handleFrame reads one client frame, alone in its message or from a
// BATCH.
func (c *conn) handleFrame(b []byte) {
	s := c.s
	f, err := wire.ParseFrame(b)
	label := "unknown"
	if f.Type.Known() && len(b) > 0 {
		label = f.Type.String()
	}
	s.metrics.framesIn.add(label, 1)
	if err != nil {
		s.metrics.drops.add(DropBadFrame, 1)
		c.sendError(f.ID, s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, err.(*wire.BadFrameError).Detail()))
		return
	}
	switch f.Type {
	case wire.FrameQuery:
		c.query(f)
	case wire.FrameExchange:
		c.exchangeFrame(f)
	case wire.FramePing:
		c.mu.Lock()
		ok := c.ping.allow(s.now(), s.cfg.PingRate)
		c.mu.Unlock()
		if !ok {
			c.sendError(f.ID, s.refusal(wire.CodeRateLimited, wire.RulePerConnectionPing, "too many pings"))
			return
		}
		c.push(wire.AppendIDFrame(nil, wire.FramePong, f.ID))
	case wire.FrameCancel:
		c.cancelID(f.ID, true)
	case wire.FrameRelease:
		c.cancelID(f.ID, false)
	default:
		c.sendError(f.ID, s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, f.Type.String()+" frames go from the relay to the client"))
	}
}

func (c *conn) query(f wire.Frame) {
	if f.ID == 0 {
		c.sendError(0, c.s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, "id 0 is reserved"))
		return
	}
	if _, ref := c.s.admit(c.ctx, c, f.ID, f.Protocol, f.Target, f.Datagram); ref != nil {
		c.sendError(f.ID, ref)
	}
}

// open is admission stage 2 for a connection: the id must be free, and
// the connection's and the client address's limits must allow the query.
func (c *conn) open(id uint32) (*asker, *wire.RefusedError) {
	s := c.s
	var code wire.Code
	var rule wire.Rule
	now := s.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.active[id] != nil:
		code, rule = wire.CodeBadFrame, wire.RuleDuplicateID
	case len(c.active) >= c.lim.MaxInFlight:
		code, rule = wire.CodeBusy, wire.RuleInFlight
	case s.isClosing():
		code, rule = wire.CodeBusy, wire.RuleShuttingDown
	case !c.rate.allow(now, c.lim.ConnRate):
		code, rule = wire.CodeRateLimited, wire.RulePerConnection
	case !c.ipRate.allow(c.key, now):
		code, rule = wire.CodeRateLimited, wire.RulePerIP
	}
	if rule != "" {
		return nil, s.refusal(code, rule, "query "+strconv.FormatUint(uint64(id), 10))
	}
	a := &asker{sink: c, id: id, client: c.key, maxStreams: c.lim.MaxStreams}
	if c.active == nil {
		c.active = make(map[uint32]*asker)
	}
	c.active[id] = a
	s.inflight.Add(1)
	return a, nil
}

// cancelID ends query id for a CANCEL (withEnd: the client gets END
// reason cancelled) or a RELEASE (nothing more is sent for it). Either way
// the id and its place among MaxInFlight are free before the next frame
// is read, and the exchange stops if no one else asks it, its upstream
// slot free then too (fetch.leave).
func (c *conn) cancelID(id uint32, withEnd bool) {
	c.mu.Lock()
	a := c.active[id]
	if a == nil || !c.s.finish(a) {
		c.mu.Unlock()
		return
	}
	delete(c.active, id)
	start := false
	if withEnd {
		start = c.pushLocked(wire.AppendEnd(nil, id, wire.EndCancelled, uint16(a.replies))) && c.claimWriterLocked()
	}
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
	a.leave()
}
