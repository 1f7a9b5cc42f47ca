package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/querylens/querylens/relay/wire"
)

// conn is one client connection. Its goroutine (the HTTP handler's) reads
// frames; a writer goroutine exists only while frames are queued, so an
// idle connection costs one goroutine and its buffers.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	raw    net.Conn  // the hijacked connection under ws
	cork   *corkConn // what ws writes to, over raw; nil in tests that build conns by hand
	key    netip.Addr
	lim    ClientLimits // the Config's, or Config.Loopback's for a loopback client
	ipRate rateLimiter[netip.Addr]
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	lastRead atomic.Int64 // Server.now() of the last frame, in ns

	mu      sync.Mutex
	active  map[uint32]*asker
	rate    bucket
	ping    bucket
	queue   [][]byte
	qdata   int // REPLY frames queued or being written
	qbytes  int // their bytes
	qctrl   int // other frames queued or being written
	writing bool
	closed  bool
	idle    *time.Timer

	watchdog *time.Timer // armed while the writer writes; fires on a stalled client

	batches bool // the client chose SubprotocolBatch: frames queued together go in one message
}

// batchBufs lends the writer a buffer for a BATCH message while it writes
// one, so that an idle connection holds none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, wire.MaxBatch); return &b }}

// batchInBufs lends the reader of a SubprotocolBatch connection a buffer
// for a message longer than a frame (a client's BATCH is at most maxBatch
// bytes; one more tells a longer one).
var batchInBufs = sync.Pool{New: func() any { b := make([]byte, wire.MaxBatch+1); return &b }}

func newConn(s *Server, ws *websocket.Conn, raw net.Conn, key netip.Addr, loopback bool, log *slog.Logger) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{s: s, ws: ws, raw: raw, key: key, log: log, ctx: ctx, cancel: cancel,
		lim: s.cfg.clientLimits(loopback), ipRate: s.ipRate}
	if loopback && s.cfg.Loopback != nil {
		c.ipRate = s.localRate
	}
	c.watchdog = time.AfterFunc(time.Hour, func() { raw.Close() })
	c.watchdog.Stop()
	now := s.now()
	c.rate.last, c.ping.last = now, now
	c.lastRead.Store(int64(now))
	return c
}

// ctrlMax bounds the control frames (END, ERROR, PONG, HELLO) queued on one
// connection. They are kept apart from the REPLY budget so that a full
// queue of replies does not swallow the frame that ends a query.
func (c *conn) ctrlMax() int { return 2*c.lim.MaxInFlight + 16 }

func (c *conn) serve() {
	s := c.s
	limit := s.readLimit()
	batchIn := c.batches && wire.MaxBatch > limit
	if batchIn {
		// A BATCH from the client: at most 64 KiB, as the relay's own.
		limit = wire.MaxBatch
	}
	c.ws.SetReadLimit(int64(limit))
	c.mu.Lock()
	start := c.pushLocked(wire.AppendHello(nil, s.cfg.hello(c.lim))) && c.claimWriterLocked()
	c.idle = time.AfterFunc(s.cfg.IdleTimeout, c.checkIdle)
	c.mu.Unlock()
	if start {
		c.startWriter()
	}
	for {
		// No context: the read ends when the connection is closed (idle,
		// shutdown, write failure), and a context would cost a timer
		// registration per frame.
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.ended(err)
			break
		}
		// A message is read into a frame's buffer, borrowed while it is
		// read; a client's BATCH that outgrows it goes on in a buffer of
		// 64 KiB, borrowed only then, so that a batch client trickling a
		// short message holds no more than a v1 client does.
		bufs := &s.frameBufs
		bp := bufs.Get().(*[]byte)
		n, err := readMessage(r, *bp, 0)
		if batchIn && errors.Is(err, websocket.ErrMessageTooBig) {
			big := batchInBufs.Get().(*[]byte)
			copy(*big, (*bp)[:n])
			bufs.Put(bp)
			bufs, bp = &batchInBufs, big
			n, err = readMessage(r, *bp, n)
		}
		if err != nil {
			bufs.Put(bp)
			c.ended(err)
			break
		}
		c.lastRead.Store(int64(s.now()))
		c.handle(typ, (*bp)[:n])
		bufs.Put(bp)
	}
	c.cleanup()
}

// readMessage reads the rest of one message into buf, whose first n bytes
// hold its start, and returns the message's length; ErrMessageTooBig
// when it fills buf (the connection's read limit keeps messages shorter).
func readMessage(r io.Reader, buf []byte, n int) (int, error) {
	for {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if n == len(buf) {
			return n, websocket.ErrMessageTooBig
		}
	}
}

func (c *conn) ended(err error) {
	reason := "error"
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		// The library has sent close 1009. Closing with the handshake reads
		// and discards the rest of the message until the client's close
		// frame, so that the client sees the status instead of a reset.
		reason = "too-big"
		c.s.metrics.refusals.add(string(wire.RuleFrameTooBig), 1)
		c.ws.Close(websocket.StatusMessageTooBig, string(wire.RuleFrameTooBig))
	case websocket.CloseStatus(err) != -1:
		reason = "closed-" + strconv.Itoa(int(websocket.CloseStatus(err)))
	}
	c.log.Debug("relay: connection ended", "reason", reason, "err", err)
}

func (c *conn) cleanup() {
	s := c.s
	c.mu.Lock()
	c.closed = true
	active := c.active
	c.active = nil
	if n := len(c.queue); n > 0 {
		s.metrics.drops.add(DropClosed, uint64(n))
	}
	c.unqueueLocked(c.queue)
	c.queue = nil
	if c.idle != nil {
		c.idle.Stop()
	}
	c.mu.Unlock()
	c.cancel()
	for _, a := range active {
		s.finish(a)
		a.leave()
	}
	c.ws.CloseNow()
}

// checkIdle runs from the idle timer: it closes a connection that sent no
// frame for IdleTimeout and has no query open, and otherwise re-arms.
func (c *conn) checkIdle() {
	s := c.s
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	since := s.now() - time.Duration(c.lastRead.Load())
	if since < s.cfg.IdleTimeout || len(c.active) > 0 {
		c.idle.Reset(max(s.cfg.IdleTimeout-since, s.cfg.IdleTimeout/8))
		c.mu.Unlock()
		return
	}
	s.wg.Add(1) // the handler is still running, so this is not a late Add
	c.mu.Unlock()
	defer s.wg.Done()
	s.metrics.refusals.add(string(wire.RuleIdle), 1)
	c.log.Debug("relay: idle timeout")
	c.ws.Close(websocket.StatusNormalClosure, string(wire.RuleIdle)+": no frame for "+s.cfg.IdleTimeout.String())
}

// goAway delivers what is queued, then closes with 1001 (shutdown).
func (c *conn) goAway(ctx context.Context) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		idle := len(c.queue) == 0 && !c.writing || c.closed
		c.mu.Unlock()
		if idle || ctx.Err() != nil {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	c.ws.Close(websocket.StatusGoingAway, string(wire.RuleShuttingDown)+": the relay is shutting down")
}

func (c *conn) handle(typ websocket.MessageType, b []byte) {
	s := c.s
	if typ != websocket.MessageBinary {
		s.metrics.framesIn.add("text", 1)
		c.sendError(0, s.refusal(wire.CodeBadFrame, wire.RuleBadFrame, "text message; frames are binary"))
		return
	}
	if c.batches && len(b) > 0 && wire.FrameType(b[0]) == wire.FrameBatch {
		// A client on SubprotocolBatch may send its frames together too:
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
	a := &asker{sink: c, id: id, client: c.key}
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

func (c *conn) sendError(id uint32, e *wire.RefusedError) {
	c.push(wire.AppendError(nil, id, e.Code, e.Message))
}

// reply, end and fail make conn a sink.

func (c *conn) reply(a *asker, r reply, flags wire.ReplyFlags) {
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
	case wire.FrameType(fr[0]) == wire.FrameReply:
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
		if wire.FrameType(fr[0]) == wire.FrameReply {
			c.qdata--
			bytes += len(fr)
		} else {
			c.qctrl--
		}
	}
	c.qbytes -= bytes
	c.s.queued.Add(-int64(bytes))
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
// after frame i alone, or with batches (SubprotocolBatch) after as many as
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
