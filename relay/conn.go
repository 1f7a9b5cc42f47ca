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

	batches bool // the client chose wire.SubprotocolBatch (or Stream): frames queued together go in one message
	streams bool // the client chose wire.SubprotocolStream: EXCHANGE frames are read
}

// batchInBufs lends the reader of a wire.SubprotocolBatch connection a buffer
// for a message longer than a frame (a client's BATCH is at most
// wire.MaxBatch bytes; one more tells a longer one).
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
	hello := s.cfg.hello(c.lim)
	if c.streams {
		hello.Version = wire.VersionStream
	}
	start := c.pushLocked(wire.AppendHello(nil, hello)) && c.claimWriterLocked()
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
